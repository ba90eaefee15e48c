// Helpers for the lang/ unit tests: run the front end on a string and return
// text that a test can compare exactly (an AST dump, token dump, or the list of
// diagnostics as "line:col: Message.").
#pragma once

#include <memory>
#include <string>

#include "lang/parser.h"

namespace msl::test {

inline SourcePtr source(const std::string& text, const std::string& name = "test.msl") {
  return std::make_shared<SourceFile>(name, text);
}

// "line:col: [Type: ]Message." for each diagnostic, one per line. The type is
// shown when it is not SyntaxError.
inline std::string describe(const std::vector<Diagnostic>& errors) {
  std::string out;
  for (const Diagnostic& d : errors) {
    out += std::to_string(d.span.line) + ":" + std::to_string(d.span.col) + ": ";
    if (d.error_type != "SyntaxError") out += d.error_type + ": ";
    out += d.message + "\n";
  }
  return out;
}

// The AST dump of a module, or its diagnostics when it has errors.
inline std::string ast(const std::string& text) {
  ParseResult r = parse_module(source(text));
  if (!r.errors.empty() || !r.module) return "errors:\n" + describe(r.errors);
  return ast::dump(*r.module);
}

// The dump of a single expression statement's expression, without "Module"
// and the statement line (so tests of expressions stay short).
inline std::string expr(const std::string& text) {
  ParseResult r = parse_expression(source(text));
  if (!r.errors.empty() || !r.module) return "errors:\n" + describe(r.errors);
  const ast::Stmt& s = *r.module->body.at(0);
  return ast::dump(*s.as<ast::ExprStmt>()->value);
}

// The diagnostics of parsing `text` as a module ("" when it parses).
inline std::string errors(const std::string& text) { return describe(parse_module(source(text)).errors); }

inline std::string tokens(const std::string& text) {
  std::vector<Diagnostic> errs;
  std::string out = dump_tokens(source(text), errs);
  if (!errs.empty()) out += "errors:\n" + describe(errs);
  return out;
}

}  // namespace msl::test
