// The character stream the lexer reads: the source text, by code point.
//
// ANTLR's ANTLRInputStream converts the whole text to UTF-32 up front (4
// bytes per character, and the 4.9 runtime's converter leaves the string's
// capacity at several times that: about 20 bytes per source byte for the
// whole parse). This stream reads an ASCII text in place, byte by byte (it
// points into the caller's string, which must outlive it), and converts
// only a text with other characters, into a UTF-32 copy of exactly its
// length. Indexes, LA/seek/getText, the EOF behaviour and the dropped
// leading byte order mark are those of ANTLRInputStream.
#pragma once

#include <string>
#include <string_view>

#include "antlr4-runtime.h"

namespace msl {

class SourceCharStream : public antlr4::CharStream {
 public:
  SourceCharStream(const std::string& text, std::string name);

  void consume() override;
  size_t LA(ssize_t i) override;
  ssize_t mark() override { return -1; }
  void release(ssize_t) override {}
  size_t index() override { return p_; }
  void seek(size_t index) override { p_ = index < size_ ? index : size_; }
  size_t size() override { return size_; }
  std::string getSourceName() const override;
  std::string getText(const antlr4::misc::Interval& interval) override;
  std::string toString() const override;

  // The code point at index i < size().
  size_t at(size_t i) const { return ascii_ ? static_cast<unsigned char>(bytes_[i]) : wide_[i]; }

 private:
  std::string_view bytes_;  // the text, when it is all ASCII
  std::u32string wide_;     // the text's code points otherwise
  bool ascii_ = true;
  size_t size_ = 0;
  size_t p_ = 0;
  std::string name_;
};

}  // namespace msl
