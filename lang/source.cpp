#include "lang/source.h"

#include <algorithm>

namespace msl {

namespace {

// "\r\n" and a lone "\r" become "\n", as Python reads source (universal
// newlines), string literals included; columns do not change, since the
// removed "\r"s end lines.
void to_universal_newlines(std::string& text) {
  size_t out = text.find('\r');
  if (out == std::string::npos) return;
  for (size_t i = out; i < text.size(); ++i) {
    if (text[i] != '\r')
      text[out++] = text[i];
    else if (i + 1 >= text.size() || text[i + 1] != '\n')
      text[out++] = '\n';
  }
  text.resize(out);
}

}  // namespace

SourceFile::SourceFile(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) {
  to_universal_newlines(text_);
  // Exactly one entry a line: a script of a million short lines holds no
  // slack of a doubled vector.
  line_starts_.reserve(1 + static_cast<size_t>(std::count(text_.begin(), text_.end(), '\n')));
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
