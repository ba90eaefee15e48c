// The token source the parser reads: the generated MSLLexer plus Python's
// layout rules.
//
// MSLLexer (from MSL.g4) recognises single tokens. IndentLexer pulls them and
//  1. drops whitespace, comments and `\`-newline continuations;
//  2. drops line breaks inside brackets (implicit line joining) and on blank
//     or comment-only lines, and turns the others into NEWLINE;
//  3. compares each logical line's indentation with a stack of open levels
//     (tabs advance to the next multiple of 8, as in Python) and emits
//     INDENT/DEDENT; tabs and spaces mixed inconsistently, an unexpected
//     indent, a dedent to no known level and a missing indented block after
//     `if x:` are IndentationErrors;
//  4. tracks open brackets as (char, position), so a mismatched or unclosed
//     bracket is reported where it was opened;
//  5. scans string bodies by hand after the prefix and quote that MSLLexer
//     matched, so an unterminated triple-quoted string is reported where it
//     opened;
//  6. reports invalid characters and malformed numbers, and drops or
//     repairs those tokens so the parser does not report the same mistake a
//     second time.
// At end of input it emits the pending NEWLINE and one DEDENT per open level.
//
// Lexical errors are collected, never thrown. After one the lexer goes on,
// except past kMaxNesting brackets or indentation levels, where it stops (EOF)
// so that no later stage can recurse that deep.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "MSLLexer.h"
#include "antlr4-runtime.h"
#include "lang/diagnostics.h"

namespace msl {

// The span of a token: 1-based, end exclusive, multi-line for strings.
// NEWLINE, INDENT, DEDENT and EOF get a one-column span at their position.
Span token_span(const antlr4::Token& t);

class IndentLexer : public antlr4::TokenSource {
 public:
  struct Options {
    // No NEWLINE/INDENT/DEDENT at all, as if the text were inside brackets:
    // for parse_expression and f-string replacement fields.
    bool expression_mode = false;
    // Position of the first character, for text cut out of a larger file
    // (f-string fields): tokens and diagnostics then point into that file.
    uint32_t start_line = 1;
    uint32_t start_col = 1;
  };

  IndentLexer(antlr4::CharStream* input, SourcePtr source, Options options);

  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return lexer_.getLine(); }
  size_t getCharPositionInLine() override { return lexer_.getCharPositionInLine(); }
  antlr4::CharStream* getInputStream() override { return lexer_.getInputStream(); }
  std::string getSourceName() override { return source_ ? source_->name() : std::string(); }
  antlr4::TokenFactory<antlr4::CommonToken>* getTokenFactory() override { return lexer_.getTokenFactory(); }

  const antlr4::dfa::Vocabulary& vocabulary() const { return lexer_.getVocabulary(); }
  std::vector<Diagnostic>& errors() { return errors_; }

  // Where the text stopped in a way more lines could fix (for the REPL).
  bool eof_in_brackets() const { return eof_in_brackets_; }
  bool eof_in_triple_string() const { return eof_in_triple_string_; }
  bool eof_after_continuation() const { return eof_after_continuation_; }
  bool eof_expecting_block() const { return eof_expecting_block_; }
  // Parser errors at or after this position are consequences of a lexical
  // error (an unclosed bracket swallows the rest of the file into one logical
  // line; a fatal error stops the token stream). Invalid when there is none.
  Span cutoff() const { return cutoff_; }

 private:
  struct Level {
    int col;     // with tabs to multiples of 8
    int altcol;  // with tabs as one column: must order levels the same way
    bool phantom;  // pushed to recover from an error; emits no INDENT/DEDENT
  };
  struct Bracket {
    char32_t ch;
    size_t line, col;  // 1-based
  };

  void error(const antlr4::Token& at, std::string message, std::string help = {},
             const char* type = "SyntaxError");
  void error_at(size_t line, size_t col, size_t len, std::string message, std::string help = {},
                const char* type = "SyntaxError");
  void set_cutoff(size_t line, size_t col);
  std::unique_ptr<antlr4::CommonToken> make(size_t type, std::string text, size_t line, size_t col0,
                                            size_t start, size_t stop);
  // Consumes one character through the lexer so line/column stay right.
  void consume_char();
  std::unique_ptr<antlr4::Token> scan_string(std::unique_ptr<antlr4::Token> start);
  // Handles a default-channel token that is not NEWLINE/EOF; queues it (with
  // any INDENT/DEDENT before it) or drops it.
  void significant(std::unique_ptr<antlr4::Token> t);
  void indentation(const antlr4::Token& first);
  void end_of_line(const antlr4::Token& nl);
  void end_of_input(const antlr4::Token& eof);
  void empty_block(size_t line, size_t col);
  bool close_bracket(const antlr4::Token& t, char32_t ch);

  grammar::MSLLexer lexer_;
  SourcePtr source_;
  Options options_;
  std::vector<Diagnostic> errors_;
  std::deque<std::unique_ptr<antlr4::Token>> pending_;
  std::vector<Level> levels_{{0, 0, false}};
  std::vector<Bracket> brackets_;
  std::string indent_ws_;  // leading whitespace of the current physical line
  bool at_line_start_ = true;  // no significant token yet on this logical line
  bool done_ = false;          // EOF was returned (or a fatal error)
  // About the logical line being read, and the last one ended.
  size_t first_type_ = 0, first_line_ = 0;
  size_t last_type_ = 0, last_line_ = 0, last_end_col_ = 0;
  bool line_has_colon_ = false;  // a ':' outside brackets on this logical line
  // About the previous logical line, for the next line's indentation.
  bool prev_ended_colon_ = false;
  bool block_expected_ = false;        // it ended with ':' and began with a compound keyword
  bool header_missing_colon_ = false;  // it began with a compound keyword and has no ':'
  size_t header_type_ = 0, header_line_ = 0, header_end_line_ = 0, header_end_col_ = 0;
  size_t prev_raw_type_ = 0;
  bool eof_in_brackets_ = false, eof_in_triple_string_ = false, eof_after_continuation_ = false;
  bool eof_expecting_block_ = false;
  Span cutoff_;
};

}  // namespace msl
