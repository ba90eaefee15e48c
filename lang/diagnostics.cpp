// The one diagnostics format (see diagnostics.h).
//
// The caret line is computed in display columns: a tab advances to the next
// multiple of 8 (and is printed as spaces, so both lines agree), East Asian
// wide characters take two columns, combining marks none. Invalid UTF-8 and
// control characters are shown as U+FFFD / '?', never sent to the terminal raw.
#include <algorithm>

#include "lang/diagnostics.h"
#include "lang/utf8.h"

namespace msl {

std::string render_source_excerpt(const SourceFile& src, const Span& span, int indent) {
  if (!span.valid() || span.line > src.line_count()) return {};
  std::string_view line = src.line_text(span.line);
  if (span.line == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // the lexer skips a BOM
  uint32_t last_col = span.end_line == span.line ? span.end_col : UINT32_MAX;
  std::string shown;
  int width = 0, caret_begin = -1, caret_end = -1;
  uint32_t col = 1;
  for (size_t i = 0; i < line.size(); ++col) {
    if (col == span.col) caret_begin = width;
    if (col == last_col) caret_end = width;
    char32_t cp;
    if (!utf8::decode(line, i, cp)) cp = 0xFFFD;
    if (cp == '\t') {
      int next = (width / 8 + 1) * 8;
      shown.append(static_cast<size_t>(next - width), ' ');
      width = next;
    } else if (cp < 0x20 || cp == 0x7F) {
      shown += '?';
      ++width;
    } else {
      utf8::append(shown, cp);
      width += utf8::display_width(cp);
    }
  }
  if (caret_begin < 0) caret_begin = width;  // at the end of the line (a missing ':')
  if (caret_end < 0) caret_end = width;
  int carets = std::max(1, caret_end - caret_begin);
  std::string pad(static_cast<size_t>(std::max(indent, 0)), ' ');
  while (!shown.empty() && (shown.back() == ' ' || shown.back() == '\t')) shown.pop_back();
  return (shown.empty() ? "" : pad + shown) + "\n" + pad + std::string(static_cast<size_t>(caret_begin), ' ') +
         std::string(static_cast<size_t>(carets), '^') + "\n";
}

std::string format_diagnostic(const Diagnostic& d) {
  std::string out;
  if (d.source) {
    out += d.source->name();
    if (d.span.valid()) out += ":" + std::to_string(d.span.line) + ":" + std::to_string(d.span.col);
    out += ": ";
  }
  switch (d.severity) {
    case Diagnostic::Severity::Error: out += "error: "; break;
    case Diagnostic::Severity::Warning: out += "warning: "; break;
    case Diagnostic::Severity::Note: out += "note: "; break;
  }
  out += d.message + "\n";
  if (d.source && d.span.valid()) out += render_source_excerpt(*d.source, d.span, 4);
  if (!d.help.empty()) out += "help: " + d.help + "\n";
  return out;
}

}  // namespace msl
