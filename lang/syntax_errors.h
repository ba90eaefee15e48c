// How the parser reports and recovers from syntax errors.
//
// SyntaxErrorStrategy replaces ANTLR's DefaultErrorStrategy in the second
// (LL) parsing stage, which only runs on statements that failed the fast SLL
// stage. It
//  1. turns each ANTLR error (no viable alternative, mismatched, missing or
//     extraneous token) into a Diagnostic with a Python-like message, chosen
//     from the offending token, the token before it, the expected set and the
//     rules being parsed (`Expected ':'.` in an `if` header, `Expected an
//     expression after '+'.`, `Maybe you meant '==' instead of '='?`, ...);
//  2. reports nothing while in error-recovery mode (until a token matches
//     again), and nothing at an INDENT/DEDENT once any error was reported:
//     those are consequences, not causes;
//  3. recovers by skipping to the NEWLINE that ends the logical line, never
//     past it (nor past INDENT/DEDENT), so the enclosing statement list
//     resumes with the next statement, and never deletes a NEWLINE, INDENT or
//     DEDENT to repair a token (that would glue two statements together);
//  4. gives up (TooManySyntaxErrors) after kMaxErrors, so garbage input
//     costs bounded time.
// Which of several diagnostics on one line wins is decided by the caller
// (parser.cpp): lexical errors first, then the parser's, then the AST
// builder's.
#pragma once

#include <memory>
#include <stdexcept>
#include <vector>

#include "antlr4-runtime.h"
#include "lang/diagnostics.h"

namespace msl {

struct TooManySyntaxErrors : std::runtime_error {
  TooManySyntaxErrors() : std::runtime_error("too many syntax errors") {}
};

class SyntaxErrorStrategy : public antlr4::DefaultErrorStrategy {
 public:
  static constexpr size_t kMaxErrors = 1000;

  // `prior` counts errors reported before parsing (the lexer's); `out`
  // receives this strategy's diagnostics.
  SyntaxErrorStrategy(SourcePtr source, size_t prior, std::vector<Diagnostic>* out)
      : source_(std::move(source)), prior_(prior), out_(out) {}

  void reportError(antlr4::Parser* recognizer, const antlr4::RecognitionException& e) override;
  void recover(antlr4::Parser* recognizer, std::exception_ptr e) override;
  void sync(antlr4::Parser* recognizer) override;
  // Leaves error-recovery mode: called before each top-level statement.
  void reset(antlr4::Parser* recognizer) override;

  // Parallel to the diagnostics reported: whether the error was found at the
  // very end of the input (only DEDENTs and EOF left), where more lines might
  // have continued it (the REPL's "incomplete").
  const std::vector<bool>& at_end() const { return at_end_; }

 protected:
  void reportUnwantedToken(antlr4::Parser* recognizer) override;
  void reportMissingToken(antlr4::Parser* recognizer) override;
  antlr4::Token* singleTokenDeletion(antlr4::Parser* recognizer) override;

 private:
  enum class Kind { NoViableAlt, Mismatch, Missing, Unwanted };
  void report(antlr4::Parser* recognizer, antlr4::Token* offending, antlr4::ParserRuleContext* ctx,
              const antlr4::misc::IntervalSet& expected, Kind kind);

  SourcePtr source_;
  size_t prior_;
  std::vector<Diagnostic>* out_;
  size_t seen_ = 0;  // errors seen, reported or not
  std::vector<bool> at_end_;
};

}  // namespace msl
