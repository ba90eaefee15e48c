#include "lang/packed_token_stream.h"

#include "MSLParser.h"
#include "lang/source_char_stream.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <stdexcept>

namespace msl {

using antlr4::CommonToken;
using antlr4::Token;

namespace {

// CommonToken's explicit text (empty when the text comes from the input
// stream). It is protected, and getText() cannot tell the two apart.
struct TextOf : CommonToken {
  static const std::string& of(const CommonToken& t) { return t.*(&TextOf::_text); }
};

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

uint32_t narrow(size_t v) {
  if (v == std::numeric_limits<size_t>::max()) return kNone;
  if (v >= kNone) throw std::length_error("source too large (more than 4 GiB)");
  return static_cast<uint32_t>(v);
}

size_t widen(uint32_t v) { return v == kNone ? std::numeric_limits<size_t>::max() : v; }

}  // namespace

PackedTokenStream::PackedTokenStream(antlr4::TokenSource* source)
    : source_(source), input_(source->getInputStream()) {
  if (auto* chars = dynamic_cast<SourceCharStream*>(input_)) {
    line_starts_.push_back(0);
    for (size_t i = 0, n = chars->size(); i < n; ++i)
      if (chars->at(i) == '\n') line_starts_.push_back(narrow(i + 1));
    line_starts_.shrink_to_fit();
  }
  for (;;) {
    std::unique_ptr<Token> t = source->nextToken();
    auto* common = dynamic_cast<CommonToken*>(t.get());
    if (common == nullptr) throw std::logic_error("token source made a token that is not a CommonToken");
    Packed p;
    p.start = narrow(t->getStartIndex());
    p.stop = narrow(t->getStopIndex());
    uint32_t line = narrow(t->getLine()), col = narrow(t->getCharPositionInLine()), dline, dcol;
    if (!derived_position(p.start, dline, dcol) || dline != line || dcol != col)
      positions_.emplace(narrow(packed_.size()), std::make_pair(line, col));
    size_t type = t->getType();
    if (type != Token::EOF && type >= kEofType) throw std::logic_error("token type out of range");
    p.type = type == Token::EOF ? kEofType : static_cast<uint16_t>(type);
    p.flags = 0;
    if (t->getChannel() != Token::DEFAULT_CHANNEL) throw std::logic_error("token off the default channel");
    antlr4::CharStream* in = t->getInputStream();
    if (in != nullptr) {
      if (in != input_) throw std::logic_error("token from another input stream");
      p.flags |= kHasInput;
    }
    const std::string& text = TextOf::of(*common);
    if (!text.empty()) {
      // Kept only where reading the input would give something else.
      bool same = in != nullptr && p.start != kNone && p.stop != kNone && p.stop < in->size() &&
                  in->getText(antlr4::misc::Interval(widen(p.start), widen(p.stop))) == text;
      if (!same) {
        p.flags |= kHasText;
        texts_.emplace(packed_.size(), text);
      }
    }
    packed_.push_back(p);
    if (type == Token::EOF) break;
  }
  find_displays();
  find_blocks();
}

namespace {
using G = grammar::MSLParser;

size_t closer_of(size_t open) {
  return open == G::OPEN_PAREN ? G::CLOSE_PAREN : open == G::OPEN_BRACK ? G::CLOSE_BRACK : G::CLOSE_BRACE;
}
bool is_opener(size_t t) { return t == G::OPEN_PAREN || t == G::OPEN_BRACK || t == G::OPEN_BRACE; }
bool is_closer(size_t t) { return t == G::CLOSE_PAREN || t == G::CLOSE_BRACK || t == G::CLOSE_BRACE; }
bool is_literal(size_t t) {
  return t == G::INTEGER || t == G::FLOAT_NUMBER || t == G::NONE || t == G::TRUE || t == G::FALSE ||
         t == G::ELLIPSIS;
}
// A bracket after one of these opens a call or subscript, not a display.
bool ends_atom(size_t t) { return is_literal(t) || is_closer(t) || t == G::NAME || t == G::STRING; }
}  // namespace

// One pass with a stack of open brackets. A bracket is a literal display
// when it follows no atom, holds literal elements separated by commas (a
// trailing one allowed; a parenthesis needs one, else it only groups) and
// closes with its own kind; only the outermost displays are recorded.
void PackedTokenStream::find_displays() {
  struct Frame {
    size_t open, closer, elements = 0, found_mark;
    bool display, expect_element = true, comma = false;
  };
  std::vector<Frame> stack;
  std::vector<std::pair<size_t, size_t>> found;
  for (size_t i = 0; i < packed_.size(); ++i) {
    size_t t = type_at(i);
    if (is_opener(t)) {
      if (!stack.empty() && !stack.back().expect_element) stack.back().display = false;
      bool after_atom = i > 0 && ends_atom(type_at(i - 1));
      stack.push_back(Frame{i, closer_of(t), 0, found.size(), !after_atom});
      continue;
    }
    if (stack.empty()) continue;
    if (is_closer(t)) {
      Frame f = stack.back();
      stack.pop_back();
      bool ok = f.display && t == f.closer && f.elements > 0 && (t != G::CLOSE_PAREN || f.comma);
      if (ok) {
        found.resize(f.found_mark);
        found.emplace_back(f.open, i);
      }
      if (!stack.empty()) {
        Frame& parent = stack.back();
        if (ok && parent.expect_element) {
          ++parent.elements;
          parent.expect_element = false;
        } else {
          parent.display = false;
        }
      }
      continue;
    }
    Frame& f = stack.back();
    if (!f.display) continue;
    if (t == G::COMMA && !f.expect_element) {
      f.expect_element = true;
      f.comma = true;
    } else if (f.expect_element && is_literal(t)) {
      ++f.elements;
      f.expect_element = false;
    } else if (f.expect_element && t == G::MINUS && i + 1 < packed_.size() &&
               (type_at(i + 1) == G::INTEGER || type_at(i + 1) == G::FLOAT_NUMBER)) {
      ++f.elements;
      f.expect_element = false;
      ++i;
    } else {
      f.display = false;
    }
  }
  for (auto [open, close] : found) {
    packed_[open].flags |= kDisplayOpen;
    packed_[close].flags |= kDisplayClose;
    close_of_open_.emplace(static_cast<uint32_t>(open), static_cast<uint32_t>(close));
    open_of_close_.emplace(static_cast<uint32_t>(close), static_cast<uint32_t>(open));
  }
}

// INDENT/DEDENT pairs around at least one whole statement (`INDENT stmt
// NEWLINE DEDENT`, or a nested block's DEDENT last); those from error
// recovery (`INDENT DEDENT` for a missing block) are left alone.
void PackedTokenStream::find_blocks() {
  std::vector<size_t> open;
  for (size_t i = 0; i < packed_.size(); ++i) {
    size_t t = type_at(i);
    if (t == G::INDENT) {
      open.push_back(i);
    } else if (t == G::DEDENT && !open.empty()) {
      size_t indent = open.back();
      open.pop_back();
      size_t first = indent + 1, last = i - 1;
      if (last <= first) continue;
      size_t lt = type_at(last);
      if (lt != G::NEWLINE && lt != G::DEDENT) continue;
      if (packed_[first].flags & (kBlockFirst | kBlockLast) || packed_[last].flags & (kBlockFirst | kBlockLast)) continue;
      packed_[first].flags |= kBlockFirst;
      packed_[last].flags |= kBlockLast;
      last_of_first_.emplace(static_cast<uint32_t>(first), static_cast<uint32_t>(last));
      first_of_last_.emplace(static_cast<uint32_t>(last), static_cast<uint32_t>(first));
    }
  }
}

bool PackedTokenStream::hides_block_from(size_t index) const {
  return collapse_ && (packed_[index].flags & kBlockFirst) && !expanded_.count(static_cast<uint32_t>(index));
}

bool PackedTokenStream::hides_block_to(size_t index) const {
  if (!collapse_ || !(packed_[index].flags & kBlockLast)) return false;
  return !expanded_.count(first_of_last_.at(static_cast<uint32_t>(index)));
}

size_t PackedTokenStream::seen_type(size_t index) const {
  if (hides_block_from(index)) return G::PASS;
  if (hides_block_to(index)) return G::NEWLINE;
  return type_at(index);
}

size_t PackedTokenStream::collapsed_block_end(size_t first) const {
  if (first >= packed_.size() || !(packed_[first].flags & kBlockFirst)) return 0;
  if (expanded_.count(static_cast<uint32_t>(first))) return 0;
  return last_of_first_.at(static_cast<uint32_t>(first)) + 1;
}

size_t PackedTokenStream::display_close(size_t open) const {
  if (open >= packed_.size() || !(packed_[open].flags & kDisplayOpen)) return 0;
  return close_of_open_.at(static_cast<uint32_t>(open));
}

std::string PackedTokenStream::raw_text(size_t index) const {
  const Packed& p = packed_[index];
  if (p.flags & kHasText) return texts_.at(index);
  if (!(p.flags & kHasInput)) return "";
  bool inside = p.start != kNone && p.stop != kNone && p.start < input_->size() && p.stop < input_->size();
  return inside ? input_->getText(antlr4::misc::Interval(widen(p.start), widen(p.stop))) : "<EOF>";
}

Span PackedTokenStream::raw_span(size_t index) const {
  uint32_t line, col;
  position(index, line, col);
  Span s;
  s.line = s.end_line = line;
  s.col = col + 1;
  uint32_t length = 0;
  for (char c : raw_text(index)) length += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  s.end_col = s.col + (length == 0 ? 1 : length);
  return s;
}

Token* PackedTokenStream::make(size_t index) const {
  const Packed& p = packed_[index];
  antlr4::CharStream* in = (p.flags & kHasInput) ? input_ : nullptr;
  size_t type = p.type == kEofType ? Token::EOF : p.type;
  auto t = std::make_unique<CommonToken>(std::make_pair(source_, in), type, Token::DEFAULT_CHANNEL, widen(p.start),
                                         widen(p.stop));
  uint32_t line, col;
  position(index, line, col);
  t->setLine(line);
  t->setCharPositionInLine(col);
  t->setTokenIndex(index);
  if (p.flags & kHasText) t->setText(texts_.at(index));
  Token* raw = t.get();
  made_[index] = std::move(t);
  return raw;
}

Token* PackedTokenStream::get(size_t index) const {
  if (index >= packed_.size()) throw antlr4::IndexOutOfBoundsException("token index out of range");
  if (hides_block_from(index) || hides_block_to(index)) {
    auto found = made_standins_.find(index);
    if (found != made_standins_.end()) return found->second.get();
    const Packed& p = packed_[index];
    bool pass = hides_block_from(index);
    auto t = std::make_unique<CommonToken>(std::make_pair(source_, static_cast<antlr4::CharStream*>(nullptr)),
                                           pass ? G::PASS : G::NEWLINE, Token::DEFAULT_CHANNEL, widen(p.start),
                                           widen(p.stop));
    uint32_t line, col;
    position(index, line, col);
    t->setLine(line);
    t->setCharPositionInLine(col);
    t->setTokenIndex(index);
    t->setText(pass ? "pass" : "\n");
    Token* raw = t.get();
    made_standins_[index] = std::move(t);
    return raw;
  }
  auto it = made_.find(index);
  if (it != made_.end()) return it->second.get();
  return make(index);
}

void PackedTokenStream::release_tokens() {
  decltype(made_)().swap(made_);
  decltype(made_standins_)().swap(made_standins_);
}

bool PackedTokenStream::derived_position(uint32_t start, uint32_t& line, uint32_t& col) const {
  if (line_starts_.empty() || start == kNone) return false;
  auto after = std::upper_bound(line_starts_.begin(), line_starts_.end(), start);
  line = static_cast<uint32_t>(after - line_starts_.begin());
  col = start - *(after - 1);
  return true;
}

void PackedTokenStream::position(size_t index, uint32_t& line, uint32_t& col) const {
  auto found = positions_.find(static_cast<uint32_t>(index));
  if (found != positions_.end()) {
    line = found->second.first;
    col = found->second.second;
    return;
  }
  derived_position(packed_[index].start, line, col);
}

size_t PackedTokenStream::type_at(size_t index) const {
  uint16_t t = packed_[index].type;
  return t == kEofType ? Token::EOF : t;
}

size_t PackedTokenStream::next(size_t index) const {
  if (hides_block_from(index)) return last_of_first_.at(static_cast<uint32_t>(index));
  if (collapse_ && (packed_[index].flags & kDisplayOpen)) return close_of_open_.at(static_cast<uint32_t>(index));
  return index + 1 < packed_.size() ? index + 1 : index;
}

size_t PackedTokenStream::prev(size_t index) const {
  if (hides_block_to(index)) return first_of_last_.at(static_cast<uint32_t>(index));
  if (collapse_ && (packed_[index].flags & kDisplayClose)) return open_of_close_.at(static_cast<uint32_t>(index));
  return index - 1;
}

void PackedTokenStream::consume() {
  if (seen_type(p_) == Token::EOF) throw antlr4::IllegalStateException("cannot consume EOF");
  p_ = next(p_);
}

size_t PackedTokenStream::LA(ssize_t i) {
  if (i == 0) return 0;
  if (i < 0) {
    size_t at = p_;
    for (ssize_t k = 0; k < -i; ++k) {
      if (at == 0) return Token::INVALID_TYPE;
      at = prev(at);
    }
    return seen_type(at);
  }
  size_t at = p_;
  for (ssize_t k = 1; k < i; ++k) at = next(at);
  return seen_type(at);
}

Token* PackedTokenStream::LT(ssize_t k) {
  if (k == 0) return nullptr;
  if (k < 0) {
    size_t at = p_;
    for (ssize_t j = 0; j < -k; ++j) {
      if (at == 0) return nullptr;
      at = prev(at);
    }
    return get(at);
  }
  size_t at = p_;
  for (ssize_t j = 1; j < k; ++j) at = next(at);
  return get(at);
}

std::string PackedTokenStream::getText(const antlr4::misc::Interval& interval) {
  if (interval.a < 0 || interval.b < 0) return "";
  size_t start = static_cast<size_t>(interval.a);
  size_t stop = std::min(static_cast<size_t>(interval.b), packed_.size() - 1);
  std::string out;
  for (size_t i = start; i <= stop; ++i) {
    if (type_at(i) == Token::EOF) break;
    out += raw_text(i);  // as CommonToken::getText
  }
  return out;
}

std::string PackedTokenStream::getText() { return getText(antlr4::misc::Interval(0, ssize_t(packed_.size()) - 1)); }

std::string PackedTokenStream::getText(antlr4::RuleContext* ctx) { return getText(ctx->getSourceInterval()); }

std::string PackedTokenStream::getText(Token* start, Token* stop) {
  if (start == nullptr || stop == nullptr) return "";
  return getText(antlr4::misc::Interval(ssize_t(start->getTokenIndex()), ssize_t(stop->getTokenIndex())));
}

}  // namespace msl
