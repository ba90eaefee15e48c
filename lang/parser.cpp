// The front end's entry points: text → tokens → parse tree → AST.
//
// parse_module, in steps:
//  1. Refuse text that is not UTF-8 or holds NUL bytes (one diagnostic).
//  2. Lex everything up front (IndentLexer), so every lexical error is known
//     before the parser decides which of its own errors are consequences.
//     The lexer reads the text in place when it is ASCII (SourceCharStream);
//     the tokens are kept packed (PackedTokenStream), 12 bytes each, and
//     those of the statements already built are freed as the loop goes on.
//  3. Parse one top-level statement at a time, each first with SLL prediction
//     and a bail-out error strategy (fast, exact when it succeeds), and only
//     on failure again with full LL and SyntaxErrorStrategy, which reports and
//     recovers. The loop always makes progress, so no input stops it early.
//     The fast stage sees literal displays and blocks collapsed (see
//     packed_token_stream.h); the second one sees every token.
//     A listener bounds the parser's rule nesting (kMaxRuleDepth): past it the
//     parse stops with "Expression too deeply nested." instead of overflowing
//     the stack.
//  4. Build the AST of every statement (AstBuilder) as soon as it is parsed,
//     even after syntax errors, so independent errors in later statements
//     are reported too. Its parse tree and token objects are freed then, and
//     the statements of its collapsed blocks are parsed and built one at a
//     time (build_deferred): memory stays proportional to the source and the
//     AST, plus the largest simple statement's tree. A statement whose build
//     reports an error after a collapsed parse is parsed and built again in
//     full, so its diagnostics are those of the full tree.
//  5. Merge the diagnostics: drop the parser's and builder's errors that lie
//     after an unclosed bracket or fatal lexical error (consequences), keep at
//     most one per line (lexer, then parser, then builder), sort by position.
// No exception leaves these functions: anything unexpected from the ANTLR
// runtime becomes a diagnostic.
#include "lang/parser.h"

#include "MSLParser.h"
#include "antlr4-runtime.h"
#include "lang/ast_builder.h"
#include "lang/indent_lexer.h"
#include "lang/packed_token_stream.h"
#include "lang/source_char_stream.h"
#include "lang/syntax_errors.h"
#include "lang/utf8.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace msl {

using antlr4::ParserRuleContext;
using antlr4::Token;
using G = grammar::MSLParser;

namespace {

// Parser rule nesting: about 20 rules per bracket level (test → or_test → ...
// → atom → testlist_comp → test), for kMaxNesting brackets, plus room for
// nested blocks. Past it, the parse stops (a few hundred bytes of stack per
// level; this stays well under 8 MiB).
constexpr int kMaxRuleDepth = 25 * kMaxNesting + 1000;

struct NestingTooDeep {
  Token* at;
};

class DepthGuard : public antlr4::tree::ParseTreeListener {
 public:
  void enterEveryRule(ParserRuleContext* ctx) override {
    if (++depth_ > kMaxRuleDepth) throw NestingTooDeep{ctx->getStart()};
  }
  void exitEveryRule(ParserRuleContext*) override { --depth_; }
  void visitTerminal(antlr4::tree::TerminalNode*) override {}
  void visitErrorNode(antlr4::tree::ErrorNode*) override {}
  void reset() { depth_ = 0; }

 private:
  int depth_ = 0;
};

// Everything one parse needs, in construction order.
struct Session {
  Session(const SourcePtr& source, const std::string& text, IndentLexer::Options options)
      : input(text, {}), lexer(&input, source, options), tokens(&lexer), parser(&tokens) {
    parser.removeErrorListeners();
    parser.addParseListener(&guard);
  }
  // Frees the parse trees and token objects made so far: nothing may point
  // at them any more.
  void release_statement() {
    parser.setContext(nullptr);
    parser.getTreeTracker().reset();
    tokens.release_tokens();
  }
  SourceCharStream input;
  IndentLexer lexer;
  PackedTokenStream tokens;
  G parser;
  DepthGuard guard;
  std::shared_ptr<antlr4::BailErrorStrategy> bail = std::make_shared<antlr4::BailErrorStrategy>();
};

Diagnostic make_error(const SourcePtr& source, uint32_t line, uint32_t col, std::string message,
                      std::string help = {}) {
  Diagnostic d;
  d.source = source;
  d.span = Span{line, col, line, col + 1};
  d.message = std::move(message);
  d.help = std::move(help);
  return d;
}

// Step 1: the one error for text the lexer cannot take.
bool check_encoding(const SourcePtr& source, std::vector<Diagnostic>& errors) {
  const std::string& text = source->text();
  size_t bad = utf8::first_invalid(text);
  size_t nul = text.find('\0');
  size_t at = std::min(bad, nul);
  if (at == std::string::npos) return true;
  size_t line_start = text.rfind('\n', at == 0 ? 0 : at - 1);
  line_start = (line_start == std::string::npos || at == 0) ? 0 : line_start + 1;
  uint32_t line = 1;
  for (size_t i = 0; i < line_start; ++i) line += text[i] == '\n';
  uint32_t col = static_cast<uint32_t>(utf8_length(std::string_view(text).substr(line_start, at - line_start)) + 1);
  if (at == bad) {
    static const char* hex = "0123456789abcdef";
    unsigned char b = static_cast<unsigned char>(text[at]);
    std::string byte = std::string("0x") + hex[b >> 4] + hex[b & 15];
    errors.push_back(make_error(source, line, col,
                                "Invalid UTF-8 byte " + byte + " at line " + std::to_string(line) + ", column " +
                                    std::to_string(col) + ".",
                                "MSL source files must be UTF-8: re-save the file with UTF-8 encoding"));
  } else {
    errors.push_back(make_error(source, line, col, "Source code cannot contain null bytes."));
  }
  return false;
}

bool before(const Span& a, const Span& b) { return a.line < b.line || (a.line == b.line && a.col < b.col); }

// Step 5.
std::vector<Diagnostic> merge(std::vector<Diagnostic> lexical, std::vector<Diagnostic> syntax,
                              std::vector<Diagnostic> semantic, const Span& cutoff) {
  struct Item {
    Diagnostic d;
    int rank;
    size_t seq;
  };
  std::vector<Item> all;
  size_t seq = 0;
  for (Diagnostic& d : lexical) all.push_back({std::move(d), 0, seq++});
  for (std::vector<Diagnostic>* v : {&syntax, &semantic}) {
    for (Diagnostic& d : *v) {
      if (cutoff.valid() && !before(d.span, cutoff)) continue;
      all.push_back({std::move(d), v == &syntax ? 1 : 2, seq++});
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const Item& a, const Item& b) {
    if (a.d.span.line != b.d.span.line) return a.d.span.line < b.d.span.line;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.seq < b.seq;
  });
  std::vector<Diagnostic> out;
  for (Item& it : all) {
    if (!out.empty() && out.back().span.line == it.d.span.line) continue;
    out.push_back(std::move(it.d));
  }
  return out;
}

Diagnostic internal_error(const SourcePtr& source, const char* what) {
  Diagnostic d = make_error(source, 1, 1, std::string("Internal error in the parser: ") + what + ".");
  d.span = Span{};
  return d;
}

// The fast stage: `rule` with SLL prediction and bail-out, literal displays
// and blocks collapsed when `collapse` (lang/packed_token_stream.h); null
// when it fails. NestingTooDeep and TooManySyntaxErrors go through.
template <class Rule>
auto sll_stage(Session& s, Rule rule, bool collapse) -> decltype(rule()) {
  auto* sim = s.parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  s.parser.setErrorHandler(s.bail);
  sim->setPredictionMode(antlr4::atn::PredictionMode::SLL);
  s.guard.reset();
  s.tokens.set_collapse(collapse);
  try {
    auto ctx = rule();
    s.tokens.set_collapse(false);
    return ctx;
  } catch (const antlr4::ParseCancellationException&) {
  }
  s.tokens.set_collapse(false);
  return nullptr;
}

// Runs `rule` on s.parser: the fast stage first, LL with `strategy` if
// that fails. Throws NestingTooDeep and TooManySyntaxErrors through.
// `clean` tells whether the fast stage succeeded. The second stage always
// sees every token.
template <class Rule>
auto two_stage(Session& s, const std::shared_ptr<SyntaxErrorStrategy>& strategy, Rule rule, bool& clean,
               bool collapse = false) {
  size_t start = s.tokens.index();
  clean = true;
  if (auto ctx = sll_stage(s, rule, collapse)) return ctx;
  clean = false;
  s.tokens.seek(start);
  s.parser.setContext(nullptr);
  strategy->reset(&s.parser);
  s.parser.setErrorHandler(strategy);
  s.parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(antlr4::atn::PredictionMode::LL);
  s.guard.reset();
  return rule();
}

// The fast stage alone, with literal displays and blocks collapsed: null
// when it fails (too deep a nesting included).
template <class Rule>
auto fast_parse(Session& s, Rule rule) -> decltype(rule()) {
  try {
    if (auto ctx = sll_stage(s, rule, true)) return ctx;
  } catch (const NestingTooDeep&) {
    s.tokens.set_collapse(false);
  }
  s.parser.setContext(nullptr);
  return nullptr;
}

// Parses and builds the statements of the blocks that the statement just
// built left for later (and of the blocks in those), one statement at a
// time, each tree released before the next. False when one fails the fast
// parse or reports an error: the caller then parses the whole statement
// again in full, for the usual diagnostics.
bool build_deferred(Session& s, AstBuilder& builder, const std::vector<Diagnostic>& semantic) {
  size_t errors = semantic.size();
  std::vector<AstBuilder::Deferred> work = builder.take_deferred();
  bool ok = true;
  while (ok && !work.empty()) {
    AstBuilder::Deferred d = work.back();
    work.pop_back();
    s.tokens.expand_block(d.first);
    s.tokens.seek(d.first);
    while (ok && s.tokens.index() < d.end) {
      size_t at = s.tokens.index();
      G::StmtContext* ctx = fast_parse(s, [&] { return s.parser.stmt(); });
      if (ctx == nullptr || s.tokens.index() == at || s.tokens.index() > d.end) {
        ok = false;
        break;
      }
      builder.enter(d);
      builder.set_trusted(true);
      builder.set_collapsed(&s.tokens);
      builder.statement(ctx, *d.body);
      s.release_statement();
      ok = semantic.size() == errors;
      for (AstBuilder::Deferred& inner : builder.take_deferred()) work.push_back(inner);
    }
  }
  builder.take_deferred();
  builder.leave_deferred();
  return ok;
}

Diagnostic too_deep(const SourcePtr& source, Token* at) {
  Span sp = at ? token_span(*at) : Span{1, 1, 1, 2};
  Diagnostic d = make_error(source, sp.line, sp.col, "Expression too deeply nested.",
                            "split it into smaller expressions or statements");
  return d;
}

// The diagnostics of one parse before merging, for interactive_input_status.
struct RawErrors {
  std::vector<Diagnostic> lexical, syntax, semantic;
  std::vector<bool> syntax_at_end;
  bool eof_expecting_block = false;
};

ParseResult parse_module_impl(const SourcePtr& source, RawErrors* raw = nullptr) {
  ParseResult result;
  if (!check_encoding(source, result.errors)) return result;
  Session s(source, source->text(), {});
  std::vector<Diagnostic> syntax, semantic;
  auto strategy = std::make_shared<SyntaxErrorStrategy>(source, s.lexer.errors().size(), &syntax);
  auto module = std::make_unique<ast::Module>();
  module->source = source;
  AstBuilder builder(source, &semantic);
  try {
    while (s.tokens.LA(1) != Token::EOF) {
      if (s.tokens.LA(1) == G::DEDENT) {
        s.tokens.consume();  // stray, after a recovered error
        continue;
      }
      size_t start = s.tokens.index();
      bool clean;
      auto rule = [&] { return s.parser.stmt(); };
      G::StmtContext* ctx = two_stage(s, strategy, rule, clean, s.tokens.has_collapsible());
      if (s.tokens.index() == start) s.tokens.consume();
      size_t next = s.tokens.index();
      size_t errors_before = semantic.size(), body_before = module->body.size();
      builder.set_trusted(clean);
      builder.set_collapsed(clean ? &s.tokens : nullptr);
      builder.statement(ctx, module->body);
      s.release_statement();
      bool complete = semantic.size() == errors_before && build_deferred(s, builder, semantic);
      if (clean && s.tokens.has_collapsible() && !complete) {
        // Report it from the full parse tree, as without collapsed displays
        // and blocks.
        builder.take_deferred();
        semantic.resize(errors_before);
        module->body.resize(body_before);
        s.release_statement();
        s.tokens.seek(start);
        ctx = two_stage(s, strategy, rule, clean);
        if (s.tokens.index() == start) s.tokens.consume();
        builder.set_trusted(clean);
        builder.set_collapsed(nullptr);
        builder.statement(ctx, module->body);
        s.release_statement();
      } else {
        s.tokens.seek(next);
      }
      // Nothing seeks back before this statement: free the tokens behind it.
      s.tokens.release_before(start);
    }
  } catch (const NestingTooDeep& e) {
    syntax.push_back(too_deep(source, e.at));
  } catch (const TooManySyntaxErrors&) {
  }
  check_nonlocal_bindings(*module, &semantic);
  if (syntax.empty() && semantic.empty() && s.lexer.errors().empty() && builder.leftover().valid()) {
    // Recovery skipped something without an error being reported: never
    // expected, but never accept such a program either.
    syntax.push_back(make_error(source, builder.leftover().line, builder.leftover().col, "Invalid syntax."));
  }
  if (raw != nullptr) {
    raw->lexical = s.lexer.errors();
    raw->syntax = syntax;
    raw->semantic = semantic;
    raw->syntax_at_end = strategy->at_end();
    raw->syntax_at_end.resize(syntax.size(), false);
    raw->eof_expecting_block = s.lexer.eof_expecting_block();
  }
  result.errors = merge(std::move(s.lexer.errors()), std::move(syntax), std::move(semantic), s.lexer.cutoff());
  if (result.errors.empty()) result.module = std::move(module);
  return result;
}

// Parses `text` as one expression; diagnostics go to `errors` unmerged.
ast::ExprPtr parse_expression_text(const SourcePtr& source, const std::string& text, IndentLexer::Options options,
                                   int fstring_depth, std::vector<Diagnostic>& errors) {
  options.expression_mode = true;
  Session s(source, text, options);
  std::vector<Diagnostic> syntax, semantic;
  auto strategy = std::make_shared<SyntaxErrorStrategy>(source, s.lexer.errors().size(), &syntax);
  G::Eval_inputContext* ctx = nullptr;
  try {
    bool clean;
    ctx = two_stage(s, strategy, [&] { return s.parser.eval_input(); }, clean);
  } catch (const NestingTooDeep& e) {
    syntax.push_back(too_deep(source, e.at));
  } catch (const TooManySyntaxErrors&) {
  }
  ast::ExprPtr e;
  if (ctx != nullptr) {
    AstBuilder builder(source, &semantic, fstring_depth);
    e = builder.eval_input(ctx);
  }
  std::vector<Diagnostic> merged =
      merge(std::move(s.lexer.errors()), std::move(syntax), std::move(semantic), s.lexer.cutoff());
  if (!merged.empty()) e.reset();
  for (Diagnostic& d : merged) errors.push_back(std::move(d));
  return e;
}

}  // namespace

ast::ExprPtr parse_embedded_expression(const SourcePtr& source, const std::string& text, uint32_t line, uint32_t col,
                                       int fstring_depth, std::vector<Diagnostic>* errors) {
  IndentLexer::Options options;
  options.start_line = line;
  options.start_col = col;
  return parse_expression_text(source, text, options, fstring_depth, *errors);
}

// After parsing a large source: hand the freed token storage back to the
// system (glibc keeps freed memory inside its heap, where later allocations
// too large for it cannot use it, and the peak would count it twice).
void trim_after(const SourcePtr& source) {
#ifdef __GLIBC__
  if (source->text().size() >= (size_t(1) << 18)) malloc_trim(0);
#else
  (void)source;
#endif
}

ParseResult parse_module(SourcePtr source) {
  try {
    ParseResult r = parse_module_impl(source);
    trim_after(source);
    return r;
  } catch (const std::exception& e) {
    ParseResult r;
    r.errors.push_back(internal_error(source, e.what()));
    return r;
  } catch (...) {
    ParseResult r;
    r.errors.push_back(internal_error(source, "unknown exception"));
    return r;
  }
}

ParseResult parse_expression(SourcePtr source) {
  ParseResult result;
  try {
    if (!check_encoding(source, result.errors)) return result;
    ast::ExprPtr e = parse_expression_text(source, source->text(), {}, 0, result.errors);
    if (e && result.errors.empty()) {
      result.module = std::make_unique<ast::Module>();
      result.module->source = source;
      auto stmt = std::make_unique<ast::ExprStmt>();
      stmt->span = e->span;
      stmt->value = std::move(e);
      result.module->body.push_back(std::move(stmt));
    }
  } catch (const std::exception& e) {
    result.module.reset();
    result.errors.push_back(internal_error(source, e.what()));
  } catch (...) {
    result.module.reset();
    result.errors.push_back(internal_error(source, "unknown exception"));
  }
  return result;
}

InputStatus interactive_input_status(const std::string& text) {
  try {
    auto source = std::make_shared<SourceFile>("<stdin>", text);
    std::vector<Diagnostic> encoding;
    if (!check_encoding(source, encoding)) return InputStatus::Complete;
    // Does the entry end with an empty line (the REPL's "end of block")?
    bool blank_last_line = false;
    if (!text.empty() && text.back() == '\n') {
      size_t end = text.size() - 1;  // the final '\n'
      size_t prev = end == 0 ? std::string::npos : text.rfind('\n', end - 1);
      size_t begin = prev == std::string::npos ? 0 : prev + 1;
      blank_last_line = end == 0 || std::string_view(text).substr(begin, end - begin).find_first_not_of(" \t\r\f") ==
                                        std::string_view::npos;
    }
    {
      Session s(source, text, {});
      IndentLexer& lx = s.lexer;
      bool open = lx.eof_in_brackets() || lx.eof_in_triple_string() || lx.eof_after_continuation();
      if (open) {
        // Incomplete unless something before the open end is already wrong.
        size_t other = 0;
        for (const Diagnostic& d : lx.errors()) {
          bool eof_kind = d.message.find("was never closed") != std::string::npos ||
                          d.message.rfind("Unterminated triple-quoted", 0) == 0 ||
                          d.message.rfind("Unexpected end of file after line continuation", 0) == 0;
          if (!eof_kind) ++other;
        }
        return other == 0 ? InputStatus::Incomplete : InputStatus::Complete;
      }
      // A decorator line waits for its def/class.
      size_t n = s.tokens.size();
      size_t last = n;
      for (size_t i = n; i-- > 0;) {
        size_t t = s.tokens.get(i)->getType();
        if (t != Token::EOF && t != G::NEWLINE && t != G::INDENT && t != G::DEDENT) {
          last = i;
          break;
        }
      }
      if (last != n) {
        size_t first = last;
        while (first > 0) {
          size_t t = s.tokens.get(first - 1)->getType();
          if (t == G::NEWLINE || t == G::INDENT || t == G::DEDENT) break;
          --first;
        }
        if (s.tokens.get(first)->getType() == G::AT && !blank_last_line) return InputStatus::Incomplete;
      }
    }
    // Parse. A real error (one that more lines cannot fix) completes the
    // entry, so that the REPL reports it; otherwise a compound statement
    // waits for an empty line.
    RawErrors raw;
    ParseResult r = parse_module_impl(source, &raw);
    bool waiting = false;
    if (!r.errors.empty()) {
      if (!raw.semantic.empty()) return InputStatus::Complete;
      for (const Diagnostic& d : raw.lexical) {
        bool block_at_eof = raw.eof_expecting_block && d.message.rfind("Expected an indented block", 0) == 0;
        if (!block_at_eof) return InputStatus::Complete;
        waiting = true;
      }
      for (size_t i = 0; i < raw.syntax.size(); ++i) {
        if (!raw.syntax_at_end[i]) return InputStatus::Complete;
        waiting = true;
      }
    } else if (r.module && !r.module->body.empty()) {
      switch (r.module->body.back()->kind) {
        case ast::StmtKind::If: case ast::StmtKind::While: case ast::StmtKind::For: case ast::StmtKind::Try:
        case ast::StmtKind::FunctionDef: case ast::StmtKind::ClassDef:
          waiting = true;
          break;
        default:
          break;
      }
    }
    return waiting && !blank_last_line ? InputStatus::Incomplete : InputStatus::Complete;
  } catch (...) {
    return InputStatus::Complete;
  }
}

std::string dump_tokens(SourcePtr source, std::vector<Diagnostic>& errors) {
  try {
    if (!check_encoding(source, errors)) return {};
    Session s(source, source->text(), {});
    std::string out;
    const antlr4::dfa::Vocabulary& vocab = s.lexer.vocabulary();
    for (size_t i = 0; i < s.tokens.size(); ++i) {
      Token* t = s.tokens.get(i);
      size_t type = t->getType();
      std::string name = type == Token::EOF     ? "EOF"
                         : type == G::INDENT    ? "INDENT"
                         : type == G::DEDENT    ? "DEDENT"
                         : type == G::NEWLINE   ? "NEWLINE"
                                                : vocab.getDisplayName(type);
      std::string text = type == Token::EOF ? "" : t->getText();
      out += std::to_string(t->getLine()) + ":" + std::to_string(t->getCharPositionInLine() + 1) + " " + name + " " +
             python_repr(text) + "\n";
      s.tokens.seek(i + 1);
      s.tokens.release_tokens();
    }
    for (Diagnostic& d : s.lexer.errors()) errors.push_back(std::move(d));
    return out;
  } catch (const std::exception& e) {
    errors.push_back(internal_error(source, e.what()));
    return {};
  } catch (...) {
    errors.push_back(internal_error(source, "unknown exception"));
    return {};
  }
}

}  // namespace msl
