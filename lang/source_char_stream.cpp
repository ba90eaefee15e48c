#include "lang/source_char_stream.h"

#include "lang/source.h"
#include "lang/utf8.h"

namespace msl {

SourceCharStream::SourceCharStream(const std::string& whole, std::string name) : name_(std::move(name)) {
  // A leading UTF-8 byte order mark is not part of the text (as
  // ANTLRInputStream::load drops it).
  std::string_view text = whole;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      ascii_ = false;
      break;
    }
  }
  if (ascii_) {
    bytes_ = text;
    size_ = text.size();
    return;
  }
  wide_.reserve(utf8_length(text));
  for (size_t i = 0; i < text.size();) {
    char32_t cp;
    if (!utf8::decode(text, i, cp)) cp = 0xFFFD;  // the front end refuses such text before lexing it
    wide_.push_back(cp);
  }
  size_ = wide_.size();
}

void SourceCharStream::consume() {
  if (p_ >= size_) throw antlr4::IllegalStateException("cannot consume EOF");
  ++p_;
}

size_t SourceCharStream::LA(ssize_t i) {
  if (i == 0) return 0;  // undefined
  ssize_t position = static_cast<ssize_t>(p_);
  if (i < 0) {
    i++;  // LA(-1) is the character before p_
    if (position + i - 1 < 0) return antlr4::IntStream::EOF;
  }
  if (position + i - 1 >= static_cast<ssize_t>(size_)) return antlr4::IntStream::EOF;
  return at(static_cast<size_t>(position + i - 1));
}

std::string SourceCharStream::getSourceName() const {
  return name_.empty() ? antlr4::IntStream::UNKNOWN_SOURCE_NAME : name_;
}

std::string SourceCharStream::getText(const antlr4::misc::Interval& interval) {
  if (interval.a < 0 || interval.b < 0) return "";
  size_t start = static_cast<size_t>(interval.a);
  size_t stop = static_cast<size_t>(interval.b);
  if (stop >= size_) stop = size_ - 1;
  if (start >= size_ || stop < start) return "";
  if (ascii_) return std::string(bytes_.substr(start, stop - start + 1));
  std::string out;
  for (size_t k = start; k <= stop; ++k) utf8::append(out, wide_[k]);
  return out;
}

std::string SourceCharStream::toString() const {
  if (ascii_) return std::string(bytes_);
  std::string out;
  for (char32_t c : wide_) utf8::append(out, c);
  return out;
}

}  // namespace msl
