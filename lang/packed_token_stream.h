// The token stream the parser reads: every token of the source, packed.
//
// ANTLR's CommonTokenStream keeps one heap-allocated CommonToken per token
// for the whole parse (about 100 bytes each, 50-100 bytes per source byte).
// This stream lexes everything up front too (the lexer's diagnostics must all
// be known before the parser's are merged), but keeps each token as a 12-byte
// record and makes the CommonToken the parser asks for on demand. The parser
// driver calls release_tokens() between top-level statements, once nothing
// points at the tokens of the statements before, so only one statement's
// tokens exist as objects at a time.
//
// Apart from memory it behaves as CommonTokenStream over a source whose
// tokens are all on the default channel (IndentLexer drops the others): same
// indexes, same LT/LA/seek/get semantics, the same token objects' fields.
//
// Literal displays: a bracketed display whose elements are all number,
// True/False/None/... literals (a leading '-' allowed) or such displays,
// `[1, -2.5, (3, 4)]`, can hold millions of tokens as one expression, and
// ANTLR would build about 15 parse tree nodes per element. The stream finds
// them up front (the outermost ones), and while set_collapse(true) holds it
// hides their contents: the parser sees `[` `]`, an empty display, and the
// AST builder fills it from the packed tokens (display_close, raw_type,
// raw_text, raw_span). The parser driver turns this on only for the fast
// first parse of a statement; the one that reports syntax errors sees every
// token, so diagnostics do not change.
//
// Blocks: in the same way a whole indented block looks like
// `INDENT pass NEWLINE DEDENT` to the fast parse, so a statement's tree never
// holds the statements of its blocks: the builder leaves the block's body
// for later (AstBuilder::take_deferred), and the driver parses its
// statements one at a time after expand_block(), releasing each one's tree
// before the next. Memory then follows the largest simple statement, not the
// largest compound one (a whole program inside `def main():`).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "antlr4-runtime.h"
#include "lang/source.h"

namespace msl {

class PackedTokenStream : public antlr4::TokenStream {
 public:
  // Reads every token of `source` (through EOF).
  explicit PackedTokenStream(antlr4::TokenSource* source);

  // Frees the token objects made so far; tokens are made again if asked for.
  // No Token* obtained before may be used after.
  void release_tokens();

  // The parser will not look at tokens before `index` again (but for a
  // few before it): their storage may be freed.
  void release_before(size_t index) { packed_.release_before(index); }

  // Literal displays and blocks (see above): shown collapsed while on.
  void set_collapse(bool on) { collapse_ = on; }
  bool has_collapsible() const { return !close_of_open_.empty() || !last_of_first_.empty(); }
  // The index of the closing bracket of the literal display opened at
  // `open`, or 0 when no such display starts there.
  size_t display_close(size_t open) const;
  // A token's type, text and span without making its object.
  size_t raw_type(size_t index) const { return type_at(index); }
  std::string raw_text(size_t index) const;
  Span raw_span(size_t index) const;  // for one-line tokens (numbers, keywords, operators)

  // Blocks (see above). `first` is the index of the block's first token
  // (after its INDENT). The index of its DEDENT when the fast parse saw the
  // block collapsed, else 0.
  size_t collapsed_block_end(size_t first) const;
  // From now on the block's statements are seen, for parsing them.
  void expand_block(size_t first) { expanded_.insert(static_cast<uint32_t>(first)); }

  // antlr4::IntStream
  void consume() override;
  size_t LA(ssize_t i) override;
  ssize_t mark() override { return 0; }
  void release(ssize_t) override {}
  size_t index() override { return p_; }
  void seek(size_t index) override { p_ = index < packed_.size() ? index : packed_.size() - 1; }
  size_t size() override { return packed_.size(); }
  std::string getSourceName() const override { return source_->getSourceName(); }

  // antlr4::TokenStream
  antlr4::Token* LT(ssize_t k) override;
  antlr4::Token* get(size_t index) const override;
  antlr4::TokenSource* getTokenSource() const override { return source_; }
  std::string getText(const antlr4::misc::Interval& interval) override;
  std::string getText() override;
  std::string getText(antlr4::RuleContext* ctx) override;
  std::string getText(antlr4::Token* start, antlr4::Token* stop) override;

 private:
  // One token: its fields as CommonToken holds them, in 12 bytes. Offsets
  // are 32-bit (sources are limited to 4 GiB); start/stop of kNone mean
  // "none" (synthetic tokens at offset 0 end at -1). The line and column
  // are those of `start` (line_starts_), except for the tokens in
  // positions_ (synthetic ones, an embedded expression's).
  struct Packed {
    uint32_t start, stop;
    uint16_t type;
    uint8_t flags;
  };
  // The tokens in chunks of kChunk: no doubled vector's slack or copy while
  // lexing, and the chunks the parser has left behind can be freed.
  class Chunks {
   public:
    static constexpr size_t kShift = 14, kChunk = size_t(1) << kShift;
    size_t size() const { return size_; }
    Packed& operator[](size_t i) { return chunk(i)[i & (kChunk - 1)]; }
    const Packed& operator[](size_t i) const { return chunk(i)[i & (kChunk - 1)]; }
    void push_back(const Packed& p) {
      if ((size_ & (kChunk - 1)) == 0) chunks_.push_back(std::make_unique<Packed[]>(kChunk));
      chunks_.back()[size_ & (kChunk - 1)] = p;
      ++size_;
    }
    // Frees the chunks that end at least a chunk before `index`.
    void release_before(size_t index) {
      for (size_t c = released_; (c + 2) * kChunk <= index && c + 1 < chunks_.size(); c = ++released_)
        chunks_[c].reset();
    }

   private:
    Packed* chunk(size_t i) const {
      Packed* c = chunks_[i >> kShift].get();
      if (c == nullptr) throw std::logic_error("token " + std::to_string(i) + " was released");
      return c;
    }
    std::vector<std::unique_ptr<Packed[]>> chunks_;
    size_t size_ = 0, released_ = 0;
  };

  static constexpr uint8_t kHasInput = 1;  // text read from the input stream
  static constexpr uint8_t kHasText = 2;   // text in texts_ (differs from the input)
  static constexpr uint8_t kDisplayOpen = 4;   // opens a literal display (in close_of_open_)
  static constexpr uint8_t kDisplayClose = 8;  // closes one (in open_of_close_)
  static constexpr uint8_t kBlockFirst = 16;   // first token of a block (in last_of_first_)
  static constexpr uint8_t kBlockLast = 32;    // last token of a block, before its DEDENT
  static constexpr uint16_t kEofType = 0xffff;

  size_t type_at(size_t index) const;
  // The token's line (1-based) and column (0-based), as the lexer set them.
  void position(size_t index, uint32_t& line, uint32_t& col) const;
  // The line and column of character `start` (false when unknown).
  bool derived_position(uint32_t start, uint32_t& line, uint32_t& col) const;
  antlr4::Token* make(size_t index) const;
  void find_displays();
  void find_blocks();
  // Is index the first or last token of a block the parser sees collapsed?
  bool hides_block_from(size_t index) const;
  bool hides_block_to(size_t index) const;
  size_t seen_type(size_t index) const;
  // The token after / before `index` as the parser sees it.
  size_t next(size_t index) const;
  size_t prev(size_t index) const;

  antlr4::TokenSource* source_;
  antlr4::CharStream* input_;
  Chunks packed_;
  std::unordered_map<size_t, std::string> texts_;  // explicit texts, by token index (rare)
  std::vector<uint32_t> line_starts_;  // the character index where each line starts
  std::unordered_map<uint32_t, std::pair<uint32_t, uint32_t>> positions_;  // (line, col) not derived from start
  std::unordered_map<uint32_t, uint32_t> close_of_open_, open_of_close_;
  std::unordered_map<uint32_t, uint32_t> last_of_first_, first_of_last_;
  std::unordered_set<uint32_t> expanded_;
  bool collapse_ = false;
  size_t p_ = 0;
  // Token objects made since the last release_tokens(), by index.
  mutable std::unordered_map<size_t, std::unique_ptr<antlr4::CommonToken>> made_;
  // The `pass` and NEWLINE standing for collapsed blocks, by index.
  mutable std::unordered_map<size_t, std::unique_ptr<antlr4::CommonToken>> made_standins_;
};

}  // namespace msl
