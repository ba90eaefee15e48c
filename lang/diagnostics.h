// The one diagnostics format used everywhere (syntax errors, tracebacks, later
// graph-mode errors):
//
//   file:line:col: error: Message.
//       source line
//       ^^^^
//   help: what to do about it
//
// The library never prints: diagnostics are values handed to a sink that the
// driver, the REPL or an embedding host supplies.
#pragma once

#include <string>
#include <vector>

#include "lang/source.h"

namespace msl {

struct Diagnostic {
  enum class Severity { Error, Warning, Note };
  Severity severity = Severity::Error;
  SourcePtr source;  // may be null for errors without a file (usage errors)
  Span span;
  std::string message;  // without the "error: " prefix
  std::string help;     // optional: one line on how to fix it
  // The Python exception type this becomes when raised: "SyntaxError",
  // "IndentationError", ...
  std::string error_type = "SyntaxError";
};

// Renders the source line of `span` with a caret (or a run of carets for a
// one-line span) under it, indented by `indent` spaces. Empty when the line is
// not available.
std::string render_source_excerpt(const SourceFile& src, const Span& span, int indent);

// The full text of one diagnostic in the format above, ending in '\n'.
std::string format_diagnostic(const Diagnostic& d);


}  // namespace msl
