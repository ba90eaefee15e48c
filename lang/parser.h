// Entry points of the front end: text → tokens → AST, with syntax diagnostics.
//
// The grammar is lang/MSL.g4; ANTLR generates the lexer and parser at build
// time. INDENT/DEDENT/NEWLINE tokens come from the lexer (lang/indent_lexer.*),
// which also tracks bracket nesting, so a syntax error report can say where an
// unclosed bracket was opened. After an error the parser skips to the end of
// the logical line (and the block it opens) and goes on, so independent errors
// in one file are all reported in one run, without cascades.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lang/ast.h"
#include "lang/diagnostics.h"

namespace msl {

struct ParseResult {
  std::unique_ptr<ast::Module> module;  // null when errors is non-empty
  std::vector<Diagnostic> errors;       // in source order, at most one per line
};

// Parses a whole file (or `-c` snippet, or one REPL entry).
ParseResult parse_module(SourcePtr source);

// Parses a single expression (the whole text must be one expression, possibly
// surrounded by whitespace/newlines). The expression is the only statement of
// the returned module, as an ast::ExprStmt.
ParseResult parse_expression(SourcePtr source);

// For the REPL: is `text` a complete entry, or does it need more lines (an
// open bracket, a trailing backslash, an unterminated triple-quoted string,
// a compound statement header, or a block not yet closed by an empty line)?
enum class InputStatus { Complete, Incomplete };
InputStatus interactive_input_status(const std::string& text);

// The text printed by `msl --emit=tokens`: one token per line,
// `line:col TYPE 'text'`, including NEWLINE/INDENT/DEDENT. Lexical errors go
// to `errors`.
std::string dump_tokens(SourcePtr source, std::vector<Diagnostic>& errors);

// Nesting limit for brackets, blocks and nested expressions: deeper input is a
// SyntaxError ("too many nested parentheses"), never a stack overflow.
constexpr int kMaxNesting = 200;

}  // namespace msl
