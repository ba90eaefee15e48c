#include "lang/source.h"

namespace msl {

SourceFile::SourceFile(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
  // A trailing newline does not start a new line of its own.
  if (line_starts_.size() > 1 && line_starts_.back() == text_.size()) line_starts_.pop_back();
}

std::string_view SourceFile::line_text(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  size_t start = line_starts_[line - 1];
  size_t end = text_.find('\n', start);
  if (end == std::string::npos) end = text_.size();
  std::string_view v(text_.data() + start, end - start);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

}  // namespace msl
