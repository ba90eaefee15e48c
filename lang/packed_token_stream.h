// The token stream the parser reads: every token of the source, packed.
//
// ANTLR's CommonTokenStream keeps one heap-allocated CommonToken per token
// for the whole parse (about 100 bytes each, 50-100 bytes per source byte).
// This stream lexes everything up front too (the lexer's diagnostics must all
// be known before the parser's are merged), but keeps each token as a 20-byte
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
  // One token: its fields as CommonToken holds them. Offsets and positions
  // are 32-bit (sources are limited to 4 GiB); start/stop of kNone mean
  // "none" (synthetic tokens at offset 0 end at -1).
  struct Packed {
    uint32_t start, stop, line, col;
    uint16_t type;
    uint8_t flags;
  };
  static constexpr uint8_t kHasInput = 1;  // text read from the input stream
  static constexpr uint8_t kHasText = 2;   // text in texts_ (differs from the input)
  static constexpr uint8_t kDisplayOpen = 4;   // opens a literal display (in close_of_open_)
  static constexpr uint8_t kDisplayClose = 8;  // closes one (in open_of_close_)
  static constexpr uint8_t kBlockFirst = 16;   // first token of a block (in last_of_first_)
  static constexpr uint8_t kBlockLast = 32;    // last token of a block, before its DEDENT
  static constexpr uint16_t kEofType = 0xffff;

  size_t type_at(size_t index) const;
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
  std::vector<Packed> packed_;
  std::unordered_map<size_t, std::string> texts_;  // explicit texts, by token index (rare)
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
