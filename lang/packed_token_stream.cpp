#include "lang/packed_token_stream.h"

#include <limits>
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
  for (;;) {
    std::unique_ptr<Token> t = source->nextToken();
    auto* common = dynamic_cast<CommonToken*>(t.get());
    if (common == nullptr) throw std::logic_error("token source made a token that is not a CommonToken");
    Packed p;
    p.start = narrow(t->getStartIndex());
    p.stop = narrow(t->getStopIndex());
    p.line = narrow(t->getLine());
    p.col = narrow(t->getCharPositionInLine());
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
  packed_.shrink_to_fit();
}

Token* PackedTokenStream::make(size_t index) const {
  const Packed& p = packed_[index];
  antlr4::CharStream* in = (p.flags & kHasInput) ? input_ : nullptr;
  size_t type = p.type == kEofType ? Token::EOF : p.type;
  auto t = std::make_unique<CommonToken>(std::make_pair(source_, in), type, Token::DEFAULT_CHANNEL, widen(p.start),
                                         widen(p.stop));
  t->setLine(p.line);
  t->setCharPositionInLine(p.col);
  t->setTokenIndex(index);
  if (p.flags & kHasText) t->setText(texts_.at(index));
  Token* raw = t.get();
  if (index >= window_base_) {
    size_t slot = index - window_base_;
    if (window_.size() <= slot) window_.resize(slot + 1);
    window_[slot] = std::move(t);
  } else {
    stray_[index] = std::move(t);
  }
  return raw;
}

Token* PackedTokenStream::get(size_t index) const {
  if (index >= packed_.size()) throw antlr4::IndexOutOfBoundsException("token index out of range");
  if (index >= window_base_) {
    size_t slot = index - window_base_;
    if (slot < window_.size() && window_[slot]) return window_[slot].get();
  } else {
    auto it = stray_.find(index);
    if (it != stray_.end()) return it->second.get();
  }
  return make(index);
}

void PackedTokenStream::release_tokens() {
  window_.clear();
  window_.shrink_to_fit();
  stray_.clear();
  window_base_ = p_;
}

size_t PackedTokenStream::type_at(size_t index) const {
  uint16_t t = packed_[index].type;
  return t == kEofType ? Token::EOF : t;
}

void PackedTokenStream::consume() {
  if (type_at(p_) == Token::EOF) throw antlr4::IllegalStateException("cannot consume EOF");
  if (p_ + 1 < packed_.size()) ++p_;
}

size_t PackedTokenStream::LA(ssize_t i) {
  if (i == 0) return 0;
  if (i < 0) {
    if (static_cast<size_t>(-i) > p_) return Token::INVALID_TYPE;
    return type_at(p_ + i);
  }
  size_t at = p_ + static_cast<size_t>(i) - 1;
  return type_at(at < packed_.size() ? at : packed_.size() - 1);
}

Token* PackedTokenStream::LT(ssize_t k) {
  if (k == 0) return nullptr;
  if (k < 0) {
    if (static_cast<size_t>(-k) > p_) return nullptr;
    return get(p_ + k);
  }
  size_t at = p_ + static_cast<size_t>(k) - 1;
  return get(at < packed_.size() ? at : packed_.size() - 1);
}

std::string PackedTokenStream::getText(const antlr4::misc::Interval& interval) {
  if (interval.a < 0 || interval.b < 0) return "";
  size_t start = static_cast<size_t>(interval.a);
  size_t stop = std::min(static_cast<size_t>(interval.b), packed_.size() - 1);
  std::string out;
  for (size_t i = start; i <= stop; ++i) {
    if (type_at(i) == Token::EOF) break;
    const Packed& p = packed_[i];
    if (p.flags & kHasText) {
      out += texts_.at(i);
    } else if (p.flags & kHasInput) {  // as CommonToken::getText
      bool inside = p.start != kNone && p.stop != kNone && p.start < input_->size() && p.stop < input_->size();
      out += inside ? input_->getText(antlr4::misc::Interval(widen(p.start), widen(p.stop))) : "<EOF>";
    }
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
