// Parse tree → AST (lang/ast.h).
//
// AstBuilder walks the ANTLR parse tree of one statement at a time and
// produces ast nodes with spans. It is also where the checks that a context-
// free grammar cannot express live, each reported as a SyntaxError:
//  - assignment, augmented-assignment, annotated, `del` and `for` targets
//    ("Cannot assign to function call.", starred targets);
//  - parameter and argument order, duplicate parameters, repeated keywords;
//  - `return`/`break`/`continue`/`nonlocal` in the wrong place;
//  - constructs that MSL leaves out (`with`, `yield`, `async`, `await`,
//    multiple inheritance, class keywords, relative imports);
//  - literal values (64-bit ints, string escapes, f-string fields, whose
//    expressions are parsed by a recursive call of the parser);
//  - expression depth: no expression is nested deeper than kMaxExprDepth
//    levels, so every recursive consumer of the AST (interpreter, printers,
//    graph lowering, destructors) has a bounded stack.
//
// The builder also runs on trees that have syntax errors (so several
// independent errors are reported in one run): a statement whose subtree
// holds an ANTLR error node or an unfinished rule is skipped silently, since
// the parser has already reported it.
//
// Left-deep chains (`a + b + c`, `a.b.c`, `f()()`) are folded iteratively;
// rules that wrap a single rule (`test → or_test → … → atom`) are walked
// through in a loop, so the builder's own recursion is a few frames per
// bracket level, not one per grammar rule.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "MSLParser.h"
#include "lang/ast.h"
#include "lang/diagnostics.h"

namespace msl {

class PackedTokenStream;

// No expression in an AST is nested deeper than this (counting every node on
// the path from the expression statement's root to a leaf). Python accepts
// longer chains, but a few thousand levels is where recursive consumers of
// the tree start to risk their stack; 100000-term sums are refused with
// "Expression too deeply nested." instead.
constexpr int kMaxExprDepth = 2000;

// Thrown by the builder to abandon the statement being built. A null
// diagnostic message means "already reported" (by the lexer or parser).
struct BuildError {
  Diagnostic diagnostic;
};

class AstBuilder {
 public:
  using G = grammar::MSLParser;

  // `fstring_depth` counts f-strings nested in replacement fields.
  AstBuilder(SourcePtr source, std::vector<Diagnostic>* errors, int fstring_depth = 0)
      : source_(std::move(source)), errors_(errors), fstring_depth_(fstring_depth) {}

  // Appends the statement(s) of `ctx` to `out`. On an error, reports it
  // (unless already reported) and appends nothing.
  void statement(G::StmtContext* ctx, ast::Body& out);
  // A whole eval_input (parse_expression, f-string fields): null on error.
  ast::ExprPtr eval_input(G::Eval_inputContext* ctx);

  // The statements that follow parsed without any error (so their trees hold
  // no error nodes, and the per-node scan for them can be skipped).
  void set_trusted(bool trusted) { trusted_ = trusted; }
  // The statements that follow were parsed with literal displays and blocks
  // collapsed (lang/packed_token_stream.h): an empty display atom whose
  // bracket opens one in `tokens` is built from its packed tokens, and a
  // collapsed block is left for later (take_deferred). Null: none were.
  void set_collapsed(const PackedTokenStream* tokens) { collapsed_ = tokens; }

 private:
  struct Scope {
    int function_depth = 0;  // enclosing defs/lambdas (lambdas do not matter here)
    int loop_depth = 0;      // enclosing loop bodies in the current function
    int class_depth = 0;     // enclosing class bodies
  };

 public:
  // A block the fast parse saw collapsed: its statements, tokens [first,
  // end), go to `body` (inside a node already built, so the address holds),
  // built in `scope`.
  struct Deferred {
    ast::Body* body;
    size_t first, end;
    Scope scope;
  };
  std::vector<Deferred> take_deferred() { return std::move(deferred_); }
  // Builds the statements that follow into a deferred block / the module.
  void enter(const Deferred& d) { scope_ = d.scope; }
  void leave_deferred() { scope_ = Scope{}; }

  // --- used by fstring.cpp
  [[noreturn]] void fail(const Span& span, std::string message, std::string help = {});
  [[noreturn]] void fail_silently();
  const SourcePtr& source() const { return source_; }
  // Where the first `leftover` (see MSL.g4) was, if any: there must be a
  // syntax error reported for it.
  const Span& leftover() const { return leftover_; }
  int fstring_depth() const { return fstring_depth_; }
  std::vector<Diagnostic>* errors() { return errors_; }
  // Records the nesting depth of a finished node (1 + deepest child), and
  // fails when it is over kMaxExprDepth.
  ast::ExprPtr finish(ast::ExprPtr e);

 private:
  void check(antlr4::ParserRuleContext* ctx);
  template <class T>
  T* need(T* p) {
    if (p == nullptr) fail_silently();
    return p;
  }

  // statements
  void simple_statement(G::Small_stmtContext* ctx, ast::Body& out);
  ast::StmtPtr expr_statement(G::Expr_stmtContext* ctx);
  ast::StmtPtr import_statement(G::Import_stmtContext* ctx);
  ast::StmtPtr compound(G::Compound_stmtContext* ctx);
  ast::StmtPtr if_statement(G::If_stmtContext* ctx);
  ast::StmtPtr while_statement(G::While_stmtContext* ctx);
  ast::StmtPtr for_statement(G::For_stmtContext* ctx);
  ast::StmtPtr try_statement(G::Try_stmtContext* ctx);
  ast::StmtPtr function(G::FuncdefContext* ctx, std::vector<ast::ExprPtr> decorators);
  ast::StmtPtr class_def(G::ClassdefContext* ctx, std::vector<ast::ExprPtr> decorators);
  ast::StmtPtr decorated(G::DecoratedContext* ctx);
  void suite(G::SuiteContext* ctx, ast::Body& out);
  void loop_body(G::SuiteContext* ctx, ast::Body& out);

  // expressions
  ast::ExprPtr expr(antlr4::ParserRuleContext* ctx);
  ast::ExprPtr binary_chain(antlr4::ParserRuleContext* ctx);
  ast::ExprPtr bool_chain(antlr4::ParserRuleContext* ctx, ast::BoolOpKind op);
  ast::ExprPtr comparison(G::ComparisonContext* ctx);
  ast::ExprPtr factor(G::FactorContext* ctx);
  ast::ExprPtr power(G::PowerContext* ctx);
  ast::ExprPtr atom_expr(G::Atom_exprContext* ctx);
  ast::ExprPtr atom(G::AtomContext* ctx);
  ast::ExprPtr strings(G::AtomContext* ctx);
  ast::ExprPtr sequence(antlr4::ParserRuleContext* ctx, bool parenthesized);  // testlist-like
  ast::ExprPtr testlist_comp(G::Testlist_compContext* ctx, ast::ExprKind kind, const Span& span);
  ast::ExprPtr dict_or_set(G::DictorsetmakerContext* ctx, const Span& span);
  ast::ExprPtr subscript_index(G::SubscriptlistContext* ctx);
  ast::ExprPtr lambda(antlr4::ParserRuleContext* ctx);
  void call_args(G::ArglistContext* ctx, std::vector<ast::Arg>& args, bool class_bases);
  std::vector<ast::Comprehension> comprehension(G::Comp_forContext* ctx);
  void parameters(G::TypedargslistContext* ctx, ast::Parameters& params);
  void lambda_parameters(G::VarargslistContext* ctx, ast::Parameters& params);
  void add_parameter(ast::Parameters& params, ast::Param p, int stars, bool& seen_default, bool& seen_star,
                     bool& seen_kwarg, const Span& span);
  ast::ExprPtr integer(antlr4::Token* tok, bool negated);
  // Unfinished (no depth recorded) literal constants.
  ast::ExprPtr integer_constant(const std::string& spelling, const Span& span, bool negated);
  ast::ExprPtr float_constant(const std::string& spelling, const Span& span);
  // literal_display.cpp: the display from token `open` to `close`, and its depth.
  ast::ExprPtr literal_display(size_t open, size_t close, int& depth);

  // targets
  void check_target(const ast::Expr& e, const char* verb, bool allow_star = false);
  void check_starred(const ast::Expr& e);
  void forbid_starred(const ast::Expr& e);

  SourcePtr source_;
  std::vector<Diagnostic>* errors_;
  int fstring_depth_;
  Scope scope_;
  std::unordered_map<const ast::Expr*, int> depth_;
  Span leftover_;
  bool trusted_ = false;
  const PackedTokenStream* collapsed_ = nullptr;
  std::vector<Deferred> deferred_;
};

// `nonlocal x` needs an enclosing function that binds x (Python's symtable
// rule): reports "No binding for nonlocal 'x' found." for each that has none.
void check_nonlocal_bindings(const ast::Module& module, std::vector<Diagnostic>* errors);

// A new AST node of type T at `span`: how the builders (ast_builder.cpp,
// literal_display.cpp) make every node.
template <class T>
std::unique_ptr<T> make_node(const Span& span) {
  auto n = std::make_unique<T>();
  n->span = span;
  return n;
}

// Span helpers shared with fstring.cpp.
Span span_of(antlr4::ParserRuleContext* ctx);
Span span_of(antlr4::tree::TerminalNode* node);

// Decodes one backslash escape of a non-raw string at text[i] == '\\' into
// `out`, advancing i. Returns an empty string on success, else the error
// message (and leaves i after the bad escape).
std::string decode_escape(std::string_view text, size_t& i, std::string& out);

// Line and column (1-based, code points) of byte `offset` of `token`'s text.
void position_in_token(antlr4::Token* token, size_t offset, uint32_t& line, uint32_t& col);

// fstring.cpp: appends the parts of the f-string `token` (its whole text,
// prefix and quotes included) to `parts`.
void append_fstring_parts(AstBuilder& b, antlr4::Token* token, std::vector<ast::FStringPart>& parts);

// parser.cpp: parses `text`, found at (line, col) of `source`, as one
// expression (an f-string replacement field). Diagnostics go to `errors`,
// at their real position in `source`. Null on error.
ast::ExprPtr parse_embedded_expression(const SourcePtr& source, const std::string& text, uint32_t line,
                                       uint32_t col, int fstring_depth, std::vector<Diagnostic>* errors);

}  // namespace msl
