// Source text and positions.
//
// Every diagnostic, traceback frame and AST node points into a SourceFile by
// (line, column). Lines and columns are 1-based; a column counts Unicode code
// points, not bytes, so a caret lines up under non-ASCII identifiers and
// string contents in a UTF-8 terminal.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace msl {

struct Span {
  uint32_t line = 0;      // 1-based; 0 means "no position"
  uint32_t col = 0;       // 1-based, in code points
  uint32_t end_line = 0;  // inclusive line of the last character
  uint32_t end_col = 0;   // exclusive column after the last character

  bool valid() const { return line != 0; }
  static Span merge(const Span& a, const Span& b) {
    Span s = a;
    s.end_line = b.end_line;
    s.end_col = b.end_col;
    return s;
  }
};

// One loaded source text: a file, a `-c` snippet, a REPL entry or an
// embedding call. Shared by every AST node and compiled function made from it,
// so it lives as long as any of them. Line endings are Python's universal
// newlines: "\r\n" and a lone "\r" are stored as "\n".
class SourceFile {
 public:
  SourceFile(std::string name, std::string text);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  // The text of line `line` (1-based) without its newline; empty if out of range.
  std::string_view line_text(uint32_t line) const;
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }

 private:
  std::string name_;
  std::string text_;
  std::vector<size_t> line_starts_;
};

using SourcePtr = std::shared_ptr<const SourceFile>;

// Number of code points in a UTF-8 string (invalid bytes count as one each).
size_t utf8_length(std::string_view s);

}  // namespace msl
