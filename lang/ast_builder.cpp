// AstBuilder: parse tree → AST, plus the syntax checks the grammar cannot
// express. See ast_builder.h for what is checked and why the walk is
// iterative where chains can be long.
#include "lang/ast_builder.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "lang/indent_lexer.h"
#include "lang/packed_token_stream.h"
#include "lang/utf8.h"

namespace msl {

using antlr4::ParserRuleContext;
using antlr4::Token;
using antlr4::tree::ParseTree;
using antlr4::tree::TerminalNode;
using G = grammar::MSLParser;
using namespace ast;

// ------------------------------------------------------------------ helpers

Span span_of(TerminalNode* node) { return token_span(*node->getSymbol()); }

Span span_of(ParserRuleContext* ctx) {
  Span a = token_span(*ctx->getStart());
  Token* stop = ctx->getStop();
  if (stop == nullptr || stop->getTokenIndex() == INVALID_INDEX ||
      stop->getTokenIndex() < ctx->getStart()->getTokenIndex())
    return a;
  return Span::merge(a, token_span(*stop));
}

void position_in_token(Token* token, size_t offset, uint32_t& line, uint32_t& col) {
  std::string text = token->getText();
  line = static_cast<uint32_t>(token->getLine());
  col = static_cast<uint32_t>(token->getCharPositionInLine() + 1);
  for (size_t i = 0; i < text.size() && i < offset;) {
    char32_t cp = 0;
    utf8::decode(text, i, cp);
    if (cp == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
}

namespace {

Span merge(const Span& a, const Span& b) { return Span::merge(a, b); }

size_t token_type(ParseTree* t) {
  auto* term = dynamic_cast<TerminalNode*>(t);
  return term ? term->getSymbol()->getType() : 0;
}

ParserRuleContext* as_rule(ParseTree* t) { return dynamic_cast<ParserRuleContext*>(t); }

BinOp binop_of(size_t type) {
  switch (type) {
    case G::ADD: case G::ADD_ASSIGN: return BinOp::Add;
    case G::MINUS: case G::SUB_ASSIGN: return BinOp::Sub;
    case G::STAR: case G::MULT_ASSIGN: return BinOp::Mul;
    case G::AT: case G::AT_ASSIGN: return BinOp::MatMul;
    case G::DIV: case G::DIV_ASSIGN: return BinOp::Div;
    case G::IDIV: case G::IDIV_ASSIGN: return BinOp::FloorDiv;
    case G::MOD: case G::MOD_ASSIGN: return BinOp::Mod;
    case G::POWER: case G::POWER_ASSIGN: return BinOp::Pow;
    case G::LEFT_SHIFT: case G::LEFT_SHIFT_ASSIGN: return BinOp::LShift;
    case G::RIGHT_SHIFT: case G::RIGHT_SHIFT_ASSIGN: return BinOp::RShift;
    case G::OR_OP: case G::OR_ASSIGN: return BinOp::BitOr;
    case G::XOR: case G::XOR_ASSIGN: return BinOp::BitXor;
    default: return BinOp::BitAnd;
  }
}

// What a target is called in "Cannot assign to ...".
const char* target_noun(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Call: return "function call";
    case ExprKind::Constant: {
      switch (e.as<Constant>()->value_kind) {
        case ConstKind::None: return "None";
        case ConstKind::True: return "True";
        case ConstKind::False: return "False";
        case ConstKind::Ellipsis: return "ellipsis";
        default: return "literal";
      }
    }
    case ExprKind::FString: return "f-string expression";
    case ExprKind::Tuple: return "tuple";
    case ExprKind::List: return "list";
    case ExprKind::Dict: return "dict literal";
    case ExprKind::Set: return "set display";
    case ExprKind::ListComp: return "list comprehension";
    case ExprKind::SetComp: return "set comprehension";
    case ExprKind::DictComp: return "dict comprehension";
    case ExprKind::GeneratorExp: return "generator expression";
    case ExprKind::Compare: return "comparison";
    case ExprKind::IfExp: return "conditional expression";
    case ExprKind::Lambda: return "lambda";
    case ExprKind::Starred: return "starred";
    case ExprKind::Name: return "name";
    case ExprKind::Attribute: return "attribute";
    case ExprKind::Subscript: return "subscript";
    default: return "expression";
  }
}

template <class F>
void for_each_part_child(const FStringPart& p, F& f) {
  if (p.expr) f(p.expr.get());
  for (const FStringPart& s : p.spec) for_each_part_child(s, f);
}

template <class F>
void for_each_generator_child(const std::vector<Comprehension>& gens, F& f) {
  for (const Comprehension& c : gens) {
    f(c.target.get());
    f(c.iter.get());
    for (const ExprPtr& e : c.ifs) f(e.get());
  }
}

template <class F>
void for_each_param_child(const Parameters& ps, F& f) {
  auto one = [&](const Param& p) {
    if (p.default_value) f(p.default_value.get());
    if (p.annotation) f(p.annotation.get());
  };
  for (const Param& p : ps.positional) one(p);
  if (ps.vararg) one(*ps.vararg);
  for (const Param& p : ps.kwonly) one(p);
  if (ps.kwarg) one(*ps.kwarg);
}

// Calls f(const Expr*) for each direct child expression of e (never null).
template <class F>
void for_each_child(const Expr& e, F&& f) {
  auto g = [&](const Expr* c) {
    if (c) f(c);
  };
  switch (e.kind) {
    case ExprKind::Name: case ExprKind::Constant: break;
    case ExprKind::FString: for (const FStringPart& p : e.as<FString>()->parts) for_each_part_child(p, g); break;
    case ExprKind::Tuple: for (const ExprPtr& c : e.as<Tuple>()->elts) g(c.get()); break;
    case ExprKind::List: for (const ExprPtr& c : e.as<List>()->elts) g(c.get()); break;
    case ExprKind::Set: for (const ExprPtr& c : e.as<ast::Set>()->elts) g(c.get()); break;
    case ExprKind::Dict:
      for (const ExprPtr& c : e.as<Dict>()->keys) g(c.get());
      for (const ExprPtr& c : e.as<Dict>()->values) g(c.get());
      break;
    case ExprKind::ListComp:
      g(e.as<ListComp>()->elt.get());
      for_each_generator_child(e.as<ListComp>()->generators, g);
      break;
    case ExprKind::SetComp:
      g(e.as<SetComp>()->elt.get());
      for_each_generator_child(e.as<SetComp>()->generators, g);
      break;
    case ExprKind::GeneratorExp:
      g(e.as<GeneratorExp>()->elt.get());
      for_each_generator_child(e.as<GeneratorExp>()->generators, g);
      break;
    case ExprKind::DictComp:
      g(e.as<DictComp>()->key.get());
      g(e.as<DictComp>()->value.get());
      for_each_generator_child(e.as<DictComp>()->generators, g);
      break;
    case ExprKind::Attribute: g(e.as<Attribute>()->value.get()); break;
    case ExprKind::Subscript:
      g(e.as<Subscript>()->value.get());
      g(e.as<Subscript>()->index.get());
      break;
    case ExprKind::Slice:
      g(e.as<Slice>()->lower.get());
      g(e.as<Slice>()->upper.get());
      g(e.as<Slice>()->step.get());
      break;
    case ExprKind::Call:
      g(e.as<Call>()->func.get());
      for (const Arg& a : e.as<Call>()->args) g(a.value.get());
      break;
    case ExprKind::Unary: g(e.as<Unary>()->operand.get()); break;
    case ExprKind::Binary:
      g(e.as<Binary>()->left.get());
      g(e.as<Binary>()->right.get());
      break;
    case ExprKind::BoolOp: for (const ExprPtr& c : e.as<BoolOp>()->values) g(c.get()); break;
    case ExprKind::Compare:
      g(e.as<Compare>()->left.get());
      for (const ExprPtr& c : e.as<Compare>()->comparators) g(c.get());
      break;
    case ExprKind::IfExp:
      g(e.as<IfExp>()->test.get());
      g(e.as<IfExp>()->body.get());
      g(e.as<IfExp>()->orelse.get());
      break;
    case ExprKind::Lambda:
      for_each_param_child(e.as<Lambda>()->params, g);
      g(e.as<Lambda>()->body.get());
      break;
    case ExprKind::Starred: g(e.as<Starred>()->value.get()); break;
  }
}

// Counts expr() recursion so that chains the parser accepted (a 5000-deep
// `x**x**...`) cannot take the builder deeper than kMaxExprDepth frames.
struct RecursionGuard {
  int& depth;
  RecursionGuard(int& d, AstBuilder& b, ParserRuleContext* ctx) : depth(d) {
    if (++depth > kMaxExprDepth) {
      --depth;
      b.fail(span_of(ctx), "Expression too deeply nested.", "split it into several statements");
    }
  }
  ~RecursionGuard() { --depth; }
};

thread_local int t_recursion = 0;

}  // namespace

// ------------------------------------------------------------ basic tools

void AstBuilder::fail(const Span& span, std::string message, std::string help) {
  BuildError e;
  e.diagnostic.source = source_;
  e.diagnostic.span = span;
  if (e.diagnostic.span.end_line != e.diagnostic.span.line) {
    // Point at the first line only: the caret line shows one line.
    e.diagnostic.span.end_line = span.line;
    e.diagnostic.span.end_col = span.col + 1;
  }
  e.diagnostic.message = std::move(message);
  e.diagnostic.help = std::move(help);
  throw e;
}

void AstBuilder::fail_silently() { throw BuildError{}; }

void AstBuilder::check(ParserRuleContext* ctx) {
  if (ctx == nullptr || ctx->exception != nullptr) fail_silently();
  if (trusted_) return;
  for (ParseTree* c : ctx->children) {
    if (dynamic_cast<antlr4::tree::ErrorNode*>(c) != nullptr) fail_silently();
  }
}

ExprPtr AstBuilder::finish(ExprPtr e) {
  int deepest = 0;
  std::vector<const Expr*> unknown;
  for_each_child(*e, [&](const Expr* c) {
    auto it = depth_.find(c);
    if (it != depth_.end()) {
      deepest = std::max(deepest, it->second);
      depth_.erase(it);  // c has its parent now: only e's depth is asked for again
    } else {
      unknown.push_back(c);
    }
  });
  // Trees made elsewhere (f-string fields) are measured once, bottom-up.
  for (const Expr* c : unknown) {
    std::vector<std::pair<const Expr*, bool>> stack{{c, false}};
    while (!stack.empty()) {
      auto [n, expanded] = stack.back();
      stack.pop_back();
      if (depth_.count(n)) continue;
      if (!expanded) {
        stack.push_back({n, true});
        for_each_child(*n, [&](const Expr* k) {
          if (!depth_.count(k)) stack.push_back({k, false});
        });
      } else {
        int d = 0;
        for_each_child(*n, [&](const Expr* k) { d = std::max(d, depth_[k]); });
        depth_[n] = d + 1;
      }
    }
    deepest = std::max(deepest, depth_[c]);
    depth_.erase(c);
  }
  if (deepest + 1 > kMaxExprDepth) fail(e->span, "Expression too deeply nested.", "split it into several statements");
  depth_[e.get()] = deepest + 1;
  return e;
}

// --------------------------------------------------------------- statements

void AstBuilder::statement(G::StmtContext* ctx, Body& out) {
  depth_.clear();
  // A statement abandoned half-built is destroyed: the blocks it left for
  // later point into it, and must go with it.
  size_t deferred_before = deferred_.size();
  try {
    check(ctx);
    if (G::LeftoverContext* l = ctx->leftover()) {
      // What error recovery skipped: the error is already reported.
      if (!leftover_.valid()) leftover_ = span_of(l);
      return;
    }
    if (G::Simple_stmtContext* s = ctx->simple_stmt()) {
      check(s);
      for (G::Small_stmtContext* small : s->small_stmt()) {
        try {
          simple_statement(small, out);
        } catch (BuildError& e) {
          if (!e.diagnostic.message.empty()) errors_->push_back(std::move(e.diagnostic));
        }
      }
    } else {
      out.push_back(compound(need(ctx->compound_stmt())));
    }
  } catch (BuildError& e) {
    deferred_.resize(deferred_before);
    if (!e.diagnostic.message.empty()) errors_->push_back(std::move(e.diagnostic));
  }
}

ExprPtr AstBuilder::eval_input(G::Eval_inputContext* ctx) {
  try {
    check(ctx);
    ExprPtr e = expr(need(ctx->testlist()));
    forbid_starred(*e);
    return e;
  } catch (BuildError& e) {
    if (!e.diagnostic.message.empty()) errors_->push_back(std::move(e.diagnostic));
    return nullptr;
  }
}

void AstBuilder::forbid_starred(const Expr& e) {
  if (e.kind == ExprKind::Starred) fail(e.span, "Can't use starred expression here.");
}

void AstBuilder::simple_statement(G::Small_stmtContext* ctx, Body& out) {
  check(ctx);
  ParserRuleContext* c = as_rule(need(ctx->children.empty() ? nullptr : ctx->children[0]));
  need(c);
  check(c);
  Span span = span_of(ctx);
  switch (c->getRuleIndex()) {
    case G::RuleExpr_stmt:
      out.push_back(expr_statement(static_cast<G::Expr_stmtContext*>(c)));
      return;
    case G::RulePass_stmt:
      out.push_back(make_node<Pass>(span));
      return;
    case G::RuleBreak_stmt:
      if (scope_.loop_depth == 0) fail(span, "'break' outside loop.", "'break' can only be used inside a 'for' or 'while' loop");
      out.push_back(make_node<Break>(span));
      return;
    case G::RuleContinue_stmt:
      if (scope_.loop_depth == 0)
        fail(span, "'continue' not properly in loop.", "'continue' can only be used inside a 'for' or 'while' loop");
      out.push_back(make_node<Continue>(span));
      return;
    case G::RuleReturn_stmt: {
      auto* r = static_cast<G::Return_stmtContext*>(c);
      if (scope_.function_depth == 0) fail(span, "'return' outside function.");
      auto s = make_node<Return>(span);
      if (r->testlist_star_expr()) {
        s->value = expr(r->testlist_star_expr());
        forbid_starred(*s->value);
      }
      out.push_back(std::move(s));
      return;
    }
    case G::RuleRaise_stmt: {
      auto* r = static_cast<G::Raise_stmtContext*>(c);
      auto s = make_node<Raise>(span);
      auto tests = r->test();
      if (!tests.empty()) s->exc = expr(tests[0]);
      if (tests.size() > 1) s->cause = expr(tests[1]);
      out.push_back(std::move(s));
      return;
    }
    case G::RuleDel_stmt: {
      auto* d = static_cast<G::Del_stmtContext*>(c);
      G::ExprlistContext* list = need(d->exprlist());
      check(list);
      auto s = make_node<Del>(span);
      for (ParseTree* child : list->children) {
        if (ParserRuleContext* r = as_rule(child)) {
          ExprPtr t = expr(r);
          check_target(*t, "delete");
          s->targets.push_back(std::move(t));
        }
      }
      out.push_back(std::move(s));
      return;
    }
    case G::RuleYield_stmt:
      fail(span, "'yield' is not supported in MSL.", "build and return a list instead");
    case G::RuleImport_stmt:
      out.push_back(import_statement(static_cast<G::Import_stmtContext*>(c)));
      return;
    case G::RuleGlobal_stmt: {
      auto s = make_node<Global>(span);
      for (TerminalNode* n : static_cast<G::Global_stmtContext*>(c)->NAME()) s->names.push_back(n->getText());
      out.push_back(std::move(s));
      return;
    }
    case G::RuleNonlocal_stmt: {
      if (scope_.function_depth == 0 && scope_.class_depth == 0)
        fail(span, "'nonlocal' declaration not allowed at module level.", "use 'global' at module level");
      auto s = make_node<Nonlocal>(span);
      for (TerminalNode* n : static_cast<G::Nonlocal_stmtContext*>(c)->NAME()) s->names.push_back(n->getText());
      out.push_back(std::move(s));
      return;
    }
    case G::RuleAssert_stmt: {
      auto* a = static_cast<G::Assert_stmtContext*>(c);
      auto s = make_node<Assert>(span);
      auto tests = a->test();
      s->test = expr(need(tests.empty() ? nullptr : tests[0]));
      if (tests.size() > 1) s->msg = expr(tests[1]);
      out.push_back(std::move(s));
      return;
    }
    default:
      fail_silently();
  }
}

StmtPtr AstBuilder::expr_statement(G::Expr_stmtContext* ctx) {
  Span span = span_of(ctx);
  auto lists = ctx->testlist_star_expr();
  if (lists.empty()) fail_silently();
  if (G::AnnassignContext* ann = ctx->annassign()) {
    check(ann);
    auto s = make_node<AnnAssign>(span);
    s->target = expr(lists[0]);
    switch (s->target->kind) {
      case ExprKind::Name: case ExprKind::Attribute: case ExprKind::Subscript: break;
      case ExprKind::Tuple: fail(s->target->span, "Only single target (not tuple) can be annotated.");
      case ExprKind::List: fail(s->target->span, "Only single target (not list) can be annotated.");
      default: fail(s->target->span, "Illegal target for annotation.");
    }
    s->annotation = expr(need(ann->test()));
    if (ann->yield_expr()) fail(span_of(ann->yield_expr()), "'yield' is not supported in MSL.", "build and return a list instead");
    if (ann->testlist_star_expr()) {
      s->value = expr(ann->testlist_star_expr());
      forbid_starred(*s->value);
    }
    return s;
  }
  if (G::AugassignContext* aug = ctx->augassign()) {
    check(aug);
    auto s = make_node<AugAssign>(span);
    s->target = expr(lists[0]);
    if (s->target->kind != ExprKind::Name && s->target->kind != ExprKind::Attribute &&
        s->target->kind != ExprKind::Subscript) {
      fail(s->target->span,
           std::string("'") + target_noun(*s->target) + "' is an illegal expression for augmented assignment.");
    }
    s->op = binop_of(token_type(aug->children.at(0)));
    if (!ctx->yield_expr().empty()) fail(span_of(ctx->yield_expr(0)), "'yield' is not supported in MSL.", "build and return a list instead");
    s->value = expr(need(ctx->testlist()));
    return s;
  }
  // Expression statement or assignment chain: the parts between the '='s.
  std::vector<ExprPtr> parts;
  for (ParseTree* child : ctx->children) {
    ParserRuleContext* r = as_rule(child);
    if (r == nullptr) continue;
    if (r->getRuleIndex() == G::RuleYield_expr)
      fail(span_of(r), "'yield' is not supported in MSL.", "build and return a list instead");
    parts.push_back(expr(r));
  }
  if (parts.empty()) fail_silently();
  if (parts.size() == 1) {
    forbid_starred(*parts[0]);
    auto s = make_node<ExprStmt>(span);
    s->value = std::move(parts[0]);
    return s;
  }
  auto s = make_node<Assign>(span);
  s->value = std::move(parts.back());
  parts.pop_back();
  forbid_starred(*s->value);
  for (ExprPtr& t : parts) check_target(*t, "assign to");
  s->targets = std::move(parts);
  return s;
}

void AstBuilder::check_target(const Expr& e, const char* verb, bool allow_star) {
  bool del = std::string(verb) == "delete";
  switch (e.kind) {
    case ExprKind::Name: case ExprKind::Attribute: case ExprKind::Subscript:
      return;
    case ExprKind::Tuple: case ExprKind::List: {
      const auto& elts = e.kind == ExprKind::Tuple ? e.as<Tuple>()->elts : e.as<List>()->elts;
      int stars = 0;
      for (const ExprPtr& x : elts) {
        if (x->kind == ExprKind::Starred && !del) {
          if (++stars > 1) fail(x->span, "Multiple starred expressions in assignment.");
          check_target(*x, verb, true);
        } else {
          check_target(*x, verb);
        }
      }
      return;
    }
    case ExprKind::Starred:
      if (del) fail(e.span, "Cannot delete starred.");
      if (!allow_star) fail(e.span, "Starred assignment target must be in a list or tuple.");
      check_target(*e.as<Starred>()->value, verb);
      return;
    default:
      fail(e.span, std::string("Cannot ") + verb + " " + target_noun(e) + ".");
  }
}

StmtPtr AstBuilder::import_statement(G::Import_stmtContext* ctx) {
  check(ctx);
  Span span = span_of(ctx);
  if (G::Import_nameContext* in = ctx->import_name()) {
    check(in);
    auto s = make_node<Import>(span);
    G::Dotted_as_namesContext* names = need(in->dotted_as_names());
    check(names);
    for (G::Dotted_as_nameContext* d : names->dotted_as_name()) {
      check(d);
      G::Dotted_nameContext* dn = need(d->dotted_name());
      check(dn);
      ImportAlias a;
      for (TerminalNode* n : dn->NAME()) a.name += (a.name.empty() ? "" : ".") + n->getText();
      if (d->NAME()) a.asname = d->NAME()->getText();
      a.span = span_of(d);
      s->names.push_back(std::move(a));
    }
    return s;
  }
  G::Import_fromContext* f = need(ctx->import_from());
  check(f);
  if (!f->DOT().empty() || !f->ELLIPSIS().empty())
    fail(span, "Relative imports are not supported in MSL.", "import the module by its full dotted name");
  auto s = make_node<ImportFrom>(span);
  G::Dotted_nameContext* dn = need(f->dotted_name());
  check(dn);
  for (TerminalNode* n : dn->NAME()) s->module += (s->module.empty() ? "" : ".") + n->getText();
  if (f->STAR()) {
    if (scope_.function_depth > 0 || scope_.class_depth > 0)
      fail(span_of(f->STAR()), "'import *' only allowed at module level.");
    ImportAlias a;
    a.name = "*";
    a.span = span_of(f->STAR());
    s->names.push_back(std::move(a));
    return s;
  }
  G::Import_as_namesContext* names = need(f->import_as_names());
  check(names);
  for (G::Import_as_nameContext* n : names->import_as_name()) {
    check(n);
    auto ids = n->NAME();
    if (ids.empty()) fail_silently();
    ImportAlias a;
    a.name = ids[0]->getText();
    if (ids.size() > 1) a.asname = ids[1]->getText();
    a.span = span_of(n);
    s->names.push_back(std::move(a));
  }
  return s;
}

// ------------------------------------------------------- compound statements

namespace {
// The header span: from the keyword to the ':' (or what there is of it).
Span header_span(TerminalNode* keyword, TerminalNode* colon, ParserRuleContext* fallback_end) {
  Span s = span_of(keyword);
  if (colon != nullptr && colon->getSymbol()->getTokenIndex() != INVALID_INDEX) return merge(s, span_of(colon));
  if (fallback_end != nullptr) return merge(s, span_of(fallback_end));
  return s;
}
}  // namespace

StmtPtr AstBuilder::compound(G::Compound_stmtContext* ctx) {
  check(ctx);
  if (auto* c = ctx->if_stmt()) return if_statement(c);
  if (auto* c = ctx->while_stmt()) return while_statement(c);
  if (auto* c = ctx->for_stmt()) return for_statement(c);
  if (auto* c = ctx->try_stmt()) return try_statement(c);
  if (auto* c = ctx->funcdef()) return function(c, {});
  if (auto* c = ctx->classdef()) return class_def(c, {});
  if (auto* c = ctx->decorated()) return decorated(c);
  if (auto* c = ctx->with_stmt()) {
    check(c);
    fail(header_span(c->WITH(), c->COLON(), nullptr), "'with' statements are not supported in MSL.",
         "open and close the resource explicitly (try/finally)");
  }
  if (auto* c = ctx->async_stmt()) {
    check(c);
    fail(span_of(c->ASYNC()), "'async' is not supported in MSL.", "MSL has no coroutines: use a plain 'def' or 'for'");
  }
  fail_silently();
}

void AstBuilder::suite(G::SuiteContext* ctx, Body& out) {
  check(ctx);
  if (collapsed_ != nullptr && ctx->INDENT() != nullptr) {
    size_t first = ctx->INDENT()->getSymbol()->getTokenIndex() + 1;
    if (size_t end = collapsed_->collapsed_block_end(first)) {
      deferred_.push_back(Deferred{&out, first, end, scope_});
      return;
    }
  }
  if (G::Simple_stmtContext* s = ctx->simple_stmt()) {
    check(s);
    for (G::Small_stmtContext* small : s->small_stmt()) {
      try {
        simple_statement(small, out);
      } catch (BuildError& e) {
        if (!e.diagnostic.message.empty()) errors_->push_back(std::move(e.diagnostic));
      }
    }
    return;
  }
  for (G::StmtContext* st : ctx->stmt()) statement(st, out);
}

void AstBuilder::loop_body(G::SuiteContext* ctx, Body& out) {
  ++scope_.loop_depth;
  try {
    suite(ctx, out);
  } catch (...) {
    --scope_.loop_depth;
    throw;
  }
  --scope_.loop_depth;
}

StmtPtr AstBuilder::if_statement(G::If_stmtContext* ctx) {
  check(ctx);
  auto root = make_node<If>(header_span(ctx->IF(), ctx->COLON(), ctx->test()));
  root->test = expr(need(ctx->test()));
  suite(need(ctx->suite()), root->body);
  If* current = root.get();
  for (G::Elif_clauseContext* e : ctx->elif_clause()) {
    check(e);
    auto next = make_node<If>(header_span(e->ELIF(), e->COLON(), e->test()));
    next->test = expr(need(e->test()));
    suite(need(e->suite()), next->body);
    If* raw = next.get();
    current->orelse.push_back(std::move(next));
    current = raw;
  }
  if (G::Else_clauseContext* e = ctx->else_clause()) {
    check(e);
    suite(need(e->suite()), current->orelse);
  }
  return root;
}

StmtPtr AstBuilder::while_statement(G::While_stmtContext* ctx) {
  check(ctx);
  auto s = make_node<While>(header_span(ctx->WHILE(), ctx->COLON(), ctx->test()));
  s->test = expr(need(ctx->test()));
  loop_body(need(ctx->suite()), s->body);
  if (G::Else_clauseContext* e = ctx->else_clause()) {
    check(e);
    suite(need(e->suite()), s->orelse);
  }
  return s;
}

StmtPtr AstBuilder::for_statement(G::For_stmtContext* ctx) {
  check(ctx);
  auto s = make_node<For>(header_span(ctx->FOR(), ctx->COLON(), ctx->testlist()));
  s->target = expr(need(ctx->exprlist()));
  check_target(*s->target, "assign to");
  s->iter = expr(need(ctx->testlist()));
  loop_body(need(ctx->suite()), s->body);
  if (G::Else_clauseContext* e = ctx->else_clause()) {
    check(e);
    suite(need(e->suite()), s->orelse);
  }
  return s;
}

StmtPtr AstBuilder::try_statement(G::Try_stmtContext* ctx) {
  check(ctx);
  auto s = make_node<Try>(header_span(ctx->TRY(), ctx->COLON(), nullptr));
  suite(need(ctx->suite()), s->body);
  auto blocks = ctx->except_block();
  s->handlers.reserve(blocks.size());
  for (size_t i = 0; i < blocks.size(); ++i) {
    G::Except_blockContext* b = blocks[i];
    check(b);
    G::Except_clauseContext* c = need(b->except_clause());
    check(c);
    // Built in place (the vector never grows past its reserve): a deferred
    // body (take_deferred) is filled in at this address later.
    ExceptHandler& h = s->handlers.emplace_back();
    h.span = header_span(c->EXCEPT(), b->COLON(), c);
    if (c->test()) {
      h.type = expr(c->test());
    } else if (i + 1 < blocks.size()) {
      fail(h.span, "Default 'except:' must be last.", "move the bare 'except:' after the other handlers");
    }
    if (c->NAME()) h.name = c->NAME()->getText();
    suite(need(b->suite()), h.body);
  }
  if (G::Else_clauseContext* e = ctx->else_clause()) {
    check(e);
    suite(need(e->suite()), s->orelse);
  }
  if (G::Finally_clauseContext* f = ctx->finally_clause()) {
    check(f);
    suite(need(f->suite()), s->finalbody);
  }
  return s;
}

StmtPtr AstBuilder::decorated(G::DecoratedContext* ctx) {
  check(ctx);
  std::vector<ExprPtr> decorators;
  for (G::DecoratorContext* d : ctx->decorator()) {
    check(d);
    decorators.push_back(expr(need(d->test())));
  }
  if (G::FuncdefContext* f = ctx->funcdef()) return function(f, std::move(decorators));
  if (G::ClassdefContext* c = ctx->classdef()) return class_def(c, std::move(decorators));
  if (G::Async_stmtContext* a = ctx->async_stmt()) {
    check(a);
    fail(span_of(a->ASYNC()), "'async' is not supported in MSL.", "MSL has no coroutines: use a plain 'def'");
  }
  fail_silently();
}

StmtPtr AstBuilder::function(G::FuncdefContext* ctx, std::vector<ExprPtr> decorators) {
  check(ctx);
  auto s = make_node<FunctionDef>(header_span(ctx->DEF(), ctx->COLON(), ctx->parameters()));
  TerminalNode* name = need(ctx->NAME());
  s->name = name->getText();
  s->name_span = span_of(name);
  s->decorators = std::move(decorators);
  G::ParametersContext* ps = need(ctx->parameters());
  check(ps);
  if (ps->typedargslist()) parameters(ps->typedargslist(), s->params);
  if (ctx->test()) s->returns = expr(ctx->test());
  Scope saved = scope_;
  scope_.function_depth++;
  scope_.loop_depth = 0;
  try {
    suite(need(ctx->suite()), s->body);
  } catch (...) {
    scope_ = saved;
    throw;
  }
  scope_ = saved;
  return s;
}

StmtPtr AstBuilder::class_def(G::ClassdefContext* ctx, std::vector<ExprPtr> decorators) {
  check(ctx);
  auto s = make_node<ClassDef>(header_span(ctx->CLASS(), ctx->COLON(), nullptr));
  TerminalNode* name = need(ctx->NAME());
  s->name = name->getText();
  s->name_span = span_of(name);
  s->decorators = std::move(decorators);
  if (G::ArglistContext* args = ctx->arglist()) {
    std::vector<Arg> bases;
    call_args(args, bases, true);
    if (!bases.empty()) s->base = std::move(bases[0].value);
  }
  Scope saved = scope_;
  scope_.class_depth++;
  scope_.loop_depth = 0;
  try {
    suite(need(ctx->suite()), s->body);
  } catch (...) {
    scope_ = saved;
    throw;
  }
  scope_ = saved;
  return s;
}

// -------------------------------------------------------------- parameters

void AstBuilder::add_parameter(Parameters& ps, Param p, int stars, bool& seen_default, bool& seen_star,
                               bool& seen_kwarg, const Span& span) {
  auto duplicate = [&](const std::string& n) {
    if (n.empty()) return false;
    for (const Param& q : ps.positional) if (q.name == n) return true;
    for (const Param& q : ps.kwonly) if (q.name == n) return true;
    if (ps.vararg && ps.vararg->name == n) return true;
    if (ps.kwarg && ps.kwarg->name == n) return true;
    return false;
  };
  if (duplicate(p.name)) fail(p.span, "Duplicate argument '" + p.name + "' in function definition.");
  if (seen_kwarg) fail(span, "Arguments cannot follow var-keyword argument.", "put '**" + ps.kwarg->name + "' last");
  if (stars == 2) {
    ps.kwarg = std::make_unique<Param>(std::move(p));
    seen_kwarg = true;
  } else if (stars == 1) {
    if (seen_star) fail(span, "* argument may appear only once.");
    seen_star = true;
    if (!p.name.empty()) ps.vararg = std::make_unique<Param>(std::move(p));
  } else if (seen_star) {
    ps.kwonly.push_back(std::move(p));
  } else {
    if (p.default_value) {
      seen_default = true;
    } else if (seen_default) {
      fail(span, "Non-default argument follows default argument.",
           "give '" + p.name + "' a default value too, or move it before the parameters that have one");
    }
    ps.positional.push_back(std::move(p));
  }
}

void AstBuilder::parameters(G::TypedargslistContext* ctx, Parameters& ps) {
  check(ctx);
  bool seen_default = false, seen_star = false, seen_kwarg = false;
  const G::Tfp_itemContext* bare_star = nullptr;
  Span bare_span;
  for (G::Tfp_itemContext* item : ctx->tfp_item()) {
    check(item);
    int stars = item->STAR() ? 1 : item->POWER() ? 2 : 0;
    Param p;
    if (G::TfpdefContext* def = item->tfpdef()) {
      check(def);
      p.name = need(def->NAME())->getText();
      p.span = span_of(def);
      if (def->test()) p.annotation = expr(def->test());
    } else {
      p.span = span_of(item);
      bare_star = item;
      bare_span = p.span;
    }
    if (item->test()) p.default_value = expr(item->test());
    add_parameter(ps, std::move(p), stars, seen_default, seen_star, seen_kwarg, span_of(item));
  }
  if (bare_star != nullptr && ps.kwonly.empty()) fail(bare_span, "Named arguments must follow bare *.");
}

void AstBuilder::lambda_parameters(G::VarargslistContext* ctx, Parameters& ps) {
  check(ctx);
  bool seen_default = false, seen_star = false, seen_kwarg = false;
  bool bare = false;
  Span bare_span;
  for (G::Vfp_itemContext* item : ctx->vfp_item()) {
    check(item);
    int stars = item->STAR() ? 1 : item->POWER() ? 2 : 0;
    Param p;
    if (item->NAME()) {
      p.name = item->NAME()->getText();
      p.span = span_of(item->NAME());
    } else {
      p.span = span_of(item);
      bare = true;
      bare_span = p.span;
    }
    if (item->test()) p.default_value = expr(item->test());
    add_parameter(ps, std::move(p), stars, seen_default, seen_star, seen_kwarg, span_of(item));
  }
  if (bare && ps.kwonly.empty()) fail(bare_span, "Named arguments must follow bare *.");
}

// -------------------------------------------------------------- expressions

ExprPtr AstBuilder::expr(ParserRuleContext* ctx) {
  // Rules that only wrap one other rule (test → or_test → ... → atom) are
  // walked in a loop, not by recursion.
  for (;;) {
    check(ctx);
    if (ctx->children.size() == 1) {
      if (ParserRuleContext* inner = as_rule(ctx->children[0])) {
        ctx = inner;
        continue;
      }
    }
    break;
  }
  RecursionGuard guard(t_recursion, *this, ctx);
  switch (ctx->getRuleIndex()) {
    case G::RuleTest: {
      auto* t = static_cast<G::TestContext*>(ctx);
      auto ors = t->or_test();
      if (ors.size() != 2 || t->test() == nullptr) fail_silently();
      ExprPtr body = expr(ors[0]);
      ExprPtr test = expr(ors[1]);
      ExprPtr orelse = expr(t->test());
      auto e = make_node<IfExp>(merge(body->span, orelse->span));
      e->test = std::move(test);
      e->body = std::move(body);
      e->orelse = std::move(orelse);
      return finish(std::move(e));
    }
    case G::RuleLambdef: case G::RuleLambdef_nocond:
      return lambda(ctx);
    case G::RuleOr_test:
      return bool_chain(ctx, BoolOpKind::Or);
    case G::RuleAnd_test:
      return bool_chain(ctx, BoolOpKind::And);
    case G::RuleNot_test: {
      std::vector<Token*> nots;
      auto* n = static_cast<G::Not_testContext*>(ctx);
      while (n->not_test() != nullptr) {
        check(n);
        nots.push_back(need(n->NOT())->getSymbol());
        n = n->not_test();
      }
      ExprPtr operand = expr(need(static_cast<ParserRuleContext*>(n->comparison())));
      for (size_t i = nots.size(); i-- > 0;) {
        auto u = make_node<Unary>(merge(token_span(*nots[i]), operand->span));
        u->op = UnaryOp::Not;
        u->operand = std::move(operand);
        operand = finish(std::move(u));
      }
      return operand;
    }
    case G::RuleComparison:
      return comparison(static_cast<G::ComparisonContext*>(ctx));
    case G::RuleStar_expr: {
      auto* s = static_cast<G::Star_exprContext*>(ctx);
      ExprPtr value = expr(need(s->expr()));
      auto e = make_node<Starred>(merge(span_of(need(s->STAR())), value->span));
      e->value = std::move(value);
      return finish(std::move(e));
    }
    case G::RuleExpr: case G::RuleXor_expr: case G::RuleAnd_expr: case G::RuleShift_expr:
    case G::RuleArith_expr: case G::RuleTerm:
      return binary_chain(ctx);
    case G::RuleFactor:
      return factor(static_cast<G::FactorContext*>(ctx));
    case G::RulePower:
      return power(static_cast<G::PowerContext*>(ctx));
    case G::RuleAtom_expr:
      return atom_expr(static_cast<G::Atom_exprContext*>(ctx));
    case G::RuleAtom:
      return atom(static_cast<G::AtomContext*>(ctx));
    case G::RuleTestlist: case G::RuleTestlist_star_expr: case G::RuleExprlist:
      return sequence(ctx, false);
    case G::RuleYield_expr:
      fail(span_of(ctx), "'yield' is not supported in MSL.", "build and return a list instead");
    default:
      fail_silently();
  }
}

ExprPtr AstBuilder::binary_chain(ParserRuleContext* ctx) {
  auto& kids = ctx->children;
  if (kids.empty() || kids.size() % 2 == 0) fail_silently();
  ExprPtr left = expr(need(as_rule(kids[0])));
  for (size_t i = 1; i + 1 < kids.size(); i += 2) {
    auto* op = dynamic_cast<TerminalNode*>(kids[i]);
    ExprPtr right = expr(need(as_rule(kids[i + 1])));
    auto b = make_node<Binary>(merge(left->span, right->span));
    b->op = binop_of(need(op)->getSymbol()->getType());
    b->op_span = span_of(op);
    b->left = std::move(left);
    b->right = std::move(right);
    left = finish(std::move(b));
  }
  return left;
}

ExprPtr AstBuilder::bool_chain(ParserRuleContext* ctx, BoolOpKind op) {
  auto e = make_node<BoolOp>(Span{});
  e->op = op;
  for (ParseTree* c : ctx->children) {
    if (ParserRuleContext* r = as_rule(c)) e->values.push_back(expr(r));
  }
  if (e->values.size() < 2) fail_silently();
  e->span = merge(e->values.front()->span, e->values.back()->span);
  return finish(std::move(e));
}

ExprPtr AstBuilder::comparison(G::ComparisonContext* ctx) {
  auto operands = ctx->expr();
  auto ops = ctx->comp_op();
  if (operands.size() != ops.size() + 1) fail_silently();
  auto e = make_node<Compare>(Span{});
  e->left = expr(operands[0]);
  for (size_t i = 0; i < ops.size(); ++i) {
    check(ops[i]);
    auto& k = ops[i]->children;
    size_t t0 = token_type(k.at(0));
    CmpOp op;
    switch (t0) {
      case G::LESS_THAN: op = CmpOp::Lt; break;
      case G::GREATER_THAN: op = CmpOp::Gt; break;
      case G::EQUALS: op = CmpOp::Eq; break;
      case G::GT_EQ: op = CmpOp::Ge; break;
      case G::LT_EQ: op = CmpOp::Le; break;
      case G::NOT_EQ_2: op = CmpOp::Ne; break;
      case G::IN: op = CmpOp::In; break;
      case G::NOT: op = CmpOp::NotIn; break;
      case G::IS: op = k.size() > 1 ? CmpOp::IsNot : CmpOp::Is; break;
      default: fail_silently();
    }
    e->ops.push_back(op);
    e->comparators.push_back(expr(operands[i + 1]));
  }
  e->span = merge(e->left->span, e->comparators.back()->span);
  return finish(std::move(e));
}

ExprPtr AstBuilder::factor(G::FactorContext* ctx) {
  std::vector<Token*> ops;
  G::FactorContext* f = ctx;
  while (f->factor() != nullptr) {
    check(f);
    ops.push_back(need(dynamic_cast<TerminalNode*>(f->children.at(0)))->getSymbol());
    f = f->factor();
  }
  check(f);
  G::PowerContext* p = need(f->power());
  ExprPtr operand;
  // -9223372036854775808: the literal alone does not fit in 64 bits, but
  // directly under a unary minus it is the smallest int.
  if (!ops.empty() && ops.back()->getType() == G::MINUS && p->children.size() == 1) {
    auto* ae = dynamic_cast<G::Atom_exprContext*>(p->children[0]);
    if (ae && ae->children.size() == 1 && ae->atom() && ae->atom()->INTEGER() && ae->atom()->children.size() == 1) {
      check(ae);
      check(ae->atom());
      operand = integer(ae->atom()->INTEGER()->getSymbol(), true);
      if (operand->as<Constant>()->int_value < 0) {
        operand->span = merge(token_span(*ops.back()), operand->span);
        ops.pop_back();
      }
    }
  }
  if (!operand) operand = expr(p);
  for (size_t i = ops.size(); i-- > 0;) {
    auto u = make_node<Unary>(merge(token_span(*ops[i]), operand->span));
    size_t t = ops[i]->getType();
    u->op = t == G::MINUS ? UnaryOp::Neg : t == G::ADD ? UnaryOp::Pos : UnaryOp::Invert;
    u->operand = std::move(operand);
    operand = finish(std::move(u));
  }
  return operand;
}

ExprPtr AstBuilder::power(G::PowerContext* ctx) {
  ExprPtr left = expr(need(ctx->atom_expr()));
  if (ctx->factor() == nullptr) return left;
  ExprPtr right = expr(ctx->factor());
  auto b = make_node<Binary>(merge(left->span, right->span));
  b->op = BinOp::Pow;
  b->op_span = span_of(need(ctx->POWER()));
  b->left = std::move(left);
  b->right = std::move(right);
  return finish(std::move(b));
}

ExprPtr AstBuilder::atom_expr(G::Atom_exprContext* ctx) {
  if (ctx->AWAIT())
    fail(span_of(ctx->AWAIT()), "'await' is not supported in MSL.", "MSL has no coroutines: call the function directly");
  ExprPtr value = expr(need(ctx->atom()));
  for (G::TrailerContext* t : ctx->trailer()) {
    check(t);
    size_t first = token_type(t->children.at(0));
    Span end = span_of(need(dynamic_cast<TerminalNode*>(t->children.back())));
    if (first == G::OPEN_PAREN) {
      auto call = make_node<Call>(merge(value->span, end));
      if (t->arglist()) call_args(t->arglist(), call->args, false);
      call->func = std::move(value);
      value = finish(std::move(call));
    } else if (first == G::OPEN_BRACK) {
      auto sub = make_node<Subscript>(merge(value->span, end));
      sub->index = subscript_index(need(t->subscriptlist()));
      sub->value = std::move(value);
      value = finish(std::move(sub));
    } else {
      TerminalNode* name = need(t->NAME());
      auto attr = make_node<Attribute>(merge(value->span, span_of(name)));
      attr->attr = name->getText();
      attr->attr_span = span_of(name);
      attr->value = std::move(value);
      value = finish(std::move(attr));
    }
  }
  return value;
}

ExprPtr AstBuilder::integer(Token* tok, bool negated) {
  return finish(integer_constant(tok->getText(), token_span(*tok), negated));
}

ExprPtr AstBuilder::integer_constant(const std::string& spelling, const Span& span, bool negated) {
  std::string text;
  for (char c : spelling) {
    if (c != '_') text += c;
  }
  int base = 10;
  size_t i = 0;
  if (text.size() > 1 && text[0] == '0') {
    char p = static_cast<char>(text[1] | 0x20);
    if (p == 'x') base = 16, i = 2;
    if (p == 'o') base = 8, i = 2;
    if (p == 'b') base = 2, i = 2;
  }
  if (i >= text.size()) fail_silently();
  uint64_t value = 0;
  bool overflow = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
    if (d >= base) fail_silently();  // malformed: the lexer reported it
    if (value > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) {
      overflow = true;
    } else {
      value = value * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    }
  }
  auto c = make_node<Constant>(span);
  c->value_kind = ConstKind::Int;
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  if (!overflow && negated && value == limit + 1) {
    c->int_value = std::numeric_limits<int64_t>::min();
  } else if (overflow || value > limit) {
    fail(c->span, "Integer literal too large.",
         "MSL integers are 64-bit: from -9223372036854775808 to 9223372036854775807");
  } else {
    c->int_value = static_cast<int64_t>(value);
  }
  return c;
}

ExprPtr AstBuilder::float_constant(const std::string& spelling, const Span& span) {
  std::string text;
  for (char c : spelling) {
    if (c != '_') text += c;
  }
  double v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    bool tiny = text.find("e-") != std::string::npos || text.find("E-") != std::string::npos;
    v = tiny ? 0.0 : std::numeric_limits<double>::infinity();
  } else if (r.ec != std::errc() || r.ptr != text.data() + text.size()) {
    fail_silently();
  }
  auto c = make_node<Constant>(span);
  c->value_kind = ConstKind::Float;
  c->float_value = v;
  return c;
}

ExprPtr AstBuilder::atom(G::AtomContext* ctx) {
  check(ctx);
  if (ctx->children.empty()) fail_silently();
  Span span = span_of(ctx);
  TerminalNode* first = dynamic_cast<TerminalNode*>(ctx->children[0]);
  if (first == nullptr) fail_silently();
  size_t first_type = first->getSymbol()->getType();
  if (collapsed_ != nullptr && ctx->children.size() == 2 &&
      (first_type == G::OPEN_PAREN || first_type == G::OPEN_BRACK || first_type == G::OPEN_BRACE)) {
    size_t open = first->getSymbol()->getTokenIndex();
    if (size_t close = collapsed_->display_close(open)) {
      int depth = 0;
      ExprPtr e = literal_display(open, close, depth);
      depth_[e.get()] = depth;  // at most 1 + 2 * kMaxNesting: never too deep
      return e;
    }
  }
  switch (first_type) {
    case G::OPEN_PAREN:
      if (ctx->yield_expr()) fail(span_of(ctx->yield_expr()), "'yield' is not supported in MSL.", "build and return a list instead");
      if (ctx->testlist_comp()) return testlist_comp(ctx->testlist_comp(), ExprKind::Tuple, span);
      return finish(make_node<Tuple>(span));
    case G::OPEN_BRACK:
      if (ctx->testlist_comp()) return testlist_comp(ctx->testlist_comp(), ExprKind::List, span);
      return finish(make_node<List>(span));
    case G::OPEN_BRACE:
      if (ctx->dictorsetmaker()) return dict_or_set(ctx->dictorsetmaker(), span);
      return finish(make_node<Dict>(span));
    case G::NAME: {
      auto n = make_node<Name>(span);
      n->id = first->getText();
      return finish(std::move(n));
    }
    case G::INTEGER:
      return integer(first->getSymbol(), false);
    case G::FLOAT_NUMBER:
      return finish(float_constant(first->getText(), span));
    case G::STRING:
      return strings(ctx);
    case G::ELLIPSIS: case G::NONE: case G::TRUE: case G::FALSE: {
      auto c = make_node<Constant>(span);
      size_t t = first->getSymbol()->getType();
      c->value_kind = t == G::ELLIPSIS ? ConstKind::Ellipsis
                      : t == G::NONE   ? ConstKind::None
                      : t == G::TRUE   ? ConstKind::True
                                       : ConstKind::False;
      return finish(std::move(c));
    }
    default:
      fail_silently();
  }
}

// ------------------------------------------------------------------ strings

std::string decode_escape(std::string_view text, size_t& i, std::string& out) {
  if (i + 1 >= text.size()) {
    out += '\\';
    ++i;
    return {};
  }
  char c = text[i + 1];
  auto hex = [&](int n, char32_t& v) {
    v = 0;
    for (int k = 0; k < n; ++k) {
      size_t j = i + 2 + k;
      if (j >= text.size() || !std::isxdigit(static_cast<unsigned char>(text[j]))) return false;
      char h = text[j];
      v = v * 16 + static_cast<char32_t>(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    return true;
  };
  switch (c) {
    case '\n': i += 2; return {};
    case '\r':
      i += 2;
      if (i < text.size() && text[i] == '\n') ++i;
      return {};
    case '\\': out += '\\'; break;
    case '\'': out += '\''; break;
    case '"': out += '"'; break;
    case 'a': out += '\a'; break;
    case 'b': out += '\b'; break;
    case 'f': out += '\f'; break;
    case 'n': out += '\n'; break;
    case 'r': out += '\r'; break;
    case 't': out += '\t'; break;
    case 'v': out += '\v'; break;
    case 'x': case 'u': case 'U': {
      int n = c == 'x' ? 2 : c == 'u' ? 4 : 8;
      char32_t v;
      if (!hex(n, v)) {
        i += 2;
        return std::string("Invalid escape sequence '\\") + c + "': expected " + std::to_string(n) + " hex digits.";
      }
      std::string seq(text.substr(i, static_cast<size_t>(n) + 2));
      i += static_cast<size_t>(n) + 2;
      if (v > 0x10FFFF) return "Invalid escape sequence '" + seq + "': not a Unicode code point.";
      if (v >= 0xD800 && v <= 0xDFFF)
        return "Invalid escape sequence '" + seq + "': surrogate code points cannot be encoded.";
      utf8::append(out, v);
      return {};
    }
    case 'N':
      i += 2;
      return "'\\N{...}' escapes are not supported in MSL.";
    default:
      if (c >= '0' && c <= '7') {
        char32_t v = 0;
        size_t j = i + 1;
        for (int k = 0; k < 3 && j < text.size() && text[j] >= '0' && text[j] <= '7'; ++k, ++j) v = v * 8 + (text[j] - '0');
        i = j;
        utf8::append(out, v);
        return {};
      }
      // Unknown escapes keep their backslash, as in Python.
      out += '\\';
      ++i;
      return {};
  }
  i += 2;
  return {};
}

namespace {
// Prefix letters (lower-cased), quote length, and whether the literal is
// properly closed.
struct StringShape {
  std::string prefix;
  size_t quote_len = 1;
  size_t body_begin = 0, body_end = 0;
  bool closed = false;
};

StringShape shape_of(const std::string& text) {
  StringShape s;
  size_t q = text.find_first_of("'\"");
  if (q == std::string::npos) return s;
  for (size_t i = 0; i < q; ++i) s.prefix += static_cast<char>(text[i] | 0x20);
  char quote = text[q];
  s.quote_len = text.compare(q, 3, std::string(3, quote)) == 0 && text.size() >= q + 6 ? 3 : 1;
  if (text.size() == q + 2 && text[q + 1] == quote) s.quote_len = 1;
  s.body_begin = q + s.quote_len;
  if (text.size() < s.body_begin + s.quote_len) return s;
  size_t end = text.size() - s.quote_len;
  size_t i = s.body_begin;
  while (i < end) i += text[i] == '\\' ? 2 : 1;
  s.closed = i == end && text.compare(end, s.quote_len, std::string(s.quote_len, quote)) == 0;
  s.body_end = end;
  return s;
}
}  // namespace

ExprPtr AstBuilder::strings(G::AtomContext* ctx) {
  auto toks = ctx->STRING();
  bool any_f = false;
  for (TerminalNode* t : toks) {
    StringShape s = shape_of(t->getText());
    if (!s.closed || s.prefix.find('b') != std::string::npos) fail_silently();  // the lexer reported it
    if (s.prefix.find('f') != std::string::npos) any_f = true;
  }
  Span span = merge(span_of(toks.front()), span_of(toks.back()));
  auto decode_plain = [&](Token* tok, std::string& out) {
    std::string text = tok->getText();
    StringShape s = shape_of(text);
    bool raw = s.prefix.find('r') != std::string::npos;
    if (raw) {
      out.append(text, s.body_begin, s.body_end - s.body_begin);
      return;
    }
    std::string_view body(text);
    for (size_t i = s.body_begin; i < s.body_end;) {
      if (text[i] == '\\') {
        size_t at = i;
        std::string err = decode_escape(body.substr(0, s.body_end), i, out);
        if (!err.empty()) {
          Span e;
          position_in_token(tok, at, e.line, e.col);
          e.end_line = e.line;
          e.end_col = e.col + static_cast<uint32_t>(std::min<size_t>(i - at, 10));
          fail(e, err);
        }
      } else {
        out += text[i++];
      }
    }
  };
  if (!any_f) {
    auto c = make_node<Constant>(span);
    c->value_kind = ConstKind::Str;
    for (TerminalNode* t : toks) decode_plain(t->getSymbol(), c->set_str_value());
    return finish(std::move(c));
  }
  auto f = make_node<FString>(span);
  for (TerminalNode* t : toks) {
    StringShape s = shape_of(t->getText());
    if (s.prefix.find('f') != std::string::npos) {
      append_fstring_parts(*this, t->getSymbol(), f->parts);
    } else {
      std::string lit;
      decode_plain(t->getSymbol(), lit);
      if (!f->parts.empty() && !f->parts.back().is_field) {
        f->parts.back().literal += lit;
      } else if (!lit.empty()) {
        FStringPart p;
        p.literal = std::move(lit);
        f->parts.push_back(std::move(p));
      }
    }
  }
  return finish(std::move(f));
}

// ------------------------------------------------------- displays and calls

ExprPtr AstBuilder::sequence(ParserRuleContext* ctx, bool parenthesized) {
  check(ctx);
  std::vector<ExprPtr> elts;
  bool comma = false;
  for (ParseTree* c : ctx->children) {
    if (ParserRuleContext* r = as_rule(c)) {
      elts.push_back(expr(r));
    } else if (token_type(c) == G::COMMA) {
      comma = true;
    }
  }
  if (elts.empty()) fail_silently();
  if (elts.size() == 1 && !comma) return std::move(elts[0]);
  auto t = make_node<Tuple>(parenthesized ? span_of(ctx) : merge(elts.front()->span, elts.back()->span));
  t->elts = std::move(elts);
  return finish(std::move(t));
}

ExprPtr AstBuilder::testlist_comp(G::Testlist_compContext* ctx, ExprKind kind, const Span& span) {
  check(ctx);
  if (G::Comp_forContext* cf = ctx->comp_for()) {
    ParserRuleContext* first = need(as_rule(ctx->children.at(0)));
    ExprPtr elt = expr(first);
    if (elt->kind == ExprKind::Starred) fail(elt->span, "Iterable unpacking cannot be used in comprehension.");
    auto gens = comprehension(cf);
    if (kind == ExprKind::List) {
      auto e = make_node<ListComp>(span);
      e->elt = std::move(elt);
      e->generators = std::move(gens);
      return finish(std::move(e));
    }
    auto e = make_node<GeneratorExp>(span);
    e->elt = std::move(elt);
    e->generators = std::move(gens);
    return finish(std::move(e));
  }
  std::vector<ExprPtr> elts;
  bool comma = false;
  for (ParseTree* c : ctx->children) {
    if (ParserRuleContext* r = as_rule(c)) {
      elts.push_back(expr(r));
    } else if (token_type(c) == G::COMMA) {
      comma = true;
    }
  }
  if (elts.empty()) fail_silently();
  if (kind == ExprKind::Tuple && elts.size() == 1 && !comma) {
    // A parenthesized expression: the node keeps its own span, as in Python.
    forbid_starred(*elts[0]);
    return std::move(elts[0]);
  }
  if (kind == ExprKind::List) {
    auto e = make_node<List>(span);
    e->elts = std::move(elts);
    return finish(std::move(e));
  }
  auto e = make_node<Tuple>(span);
  e->elts = std::move(elts);
  return finish(std::move(e));
}

ExprPtr AstBuilder::dict_or_set(G::DictorsetmakerContext* ctx, const Span& span) {
  check(ctx);
  auto items = ctx->dict_item();
  if (!items.empty()) {
    auto pair = [&](G::Dict_itemContext* item, ExprPtr& key, ExprPtr& value) {
      check(item);
      if (item->POWER()) {
        value = expr(need(item->expr()));
      } else {
        auto tests = item->test();
        if (tests.size() != 2) fail_silently();
        key = expr(tests[0]);
        value = expr(tests[1]);
      }
    };
    if (G::Comp_forContext* cf = ctx->comp_for()) {
      auto e = make_node<DictComp>(span);
      if (items[0]->POWER()) fail(span_of(items[0]), "Dict unpacking cannot be used in dict comprehension.");
      pair(items[0], e->key, e->value);
      e->generators = comprehension(cf);
      return finish(std::move(e));
    }
    auto d = make_node<Dict>(span);
    for (G::Dict_itemContext* item : items) {
      ExprPtr k, v;
      pair(item, k, v);
      d->keys.push_back(std::move(k));
      d->values.push_back(std::move(v));
    }
    return finish(std::move(d));
  }
  if (G::Comp_forContext* cf = ctx->comp_for()) {
    ExprPtr elt = expr(need(as_rule(ctx->children.at(0))));
    if (elt->kind == ExprKind::Starred) fail(elt->span, "Iterable unpacking cannot be used in comprehension.");
    auto e = make_node<SetComp>(span);
    e->elt = std::move(elt);
    e->generators = comprehension(cf);
    return finish(std::move(e));
  }
  auto s = make_node<ast::Set>(span);
  for (ParseTree* c : ctx->children) {
    if (ParserRuleContext* r = as_rule(c)) s->elts.push_back(expr(r));
  }
  return finish(std::move(s));
}

std::vector<Comprehension> AstBuilder::comprehension(G::Comp_forContext* ctx) {
  check(ctx);
  std::vector<Comprehension> gens;
  for (ParseTree* c : ctx->children) {
    ParserRuleContext* r = need(as_rule(c));
    check(r);
    if (r->getRuleIndex() == G::RuleComp_for_clause) {
      auto* f = static_cast<G::Comp_for_clauseContext*>(r);
      if (f->ASYNC()) fail(span_of(f->ASYNC()), "'async' is not supported in MSL.", "MSL has no coroutines");
      Comprehension g;
      g.target = expr(need(f->exprlist()));
      check_target(*g.target, "assign to");
      g.iter = expr(need(f->or_test()));
      gens.push_back(std::move(g));
    } else {
      if (gens.empty()) fail_silently();
      gens.back().ifs.push_back(expr(need(static_cast<G::Comp_ifContext*>(r)->test_nocond())));
    }
  }
  if (gens.empty()) fail_silently();
  return gens;
}

ExprPtr AstBuilder::subscript_index(G::SubscriptlistContext* ctx) {
  check(ctx);
  std::vector<ExprPtr> items;
  bool comma = false;
  for (ParseTree* c : ctx->children) {
    if (token_type(c) == G::COMMA) {
      comma = true;
      continue;
    }
    auto* sub = dynamic_cast<G::SubscriptContext*>(c);
    need(sub);
    check(sub);
    if (sub->COLON() == nullptr) {
      items.push_back(expr(need(sub->test(0))));
      continue;
    }
    auto slice = make_node<Slice>(span_of(sub));
    bool after_colon = false;
    for (ParseTree* k : sub->children) {
      if (token_type(k) == G::COLON) {
        after_colon = true;
      } else if (auto* t = dynamic_cast<G::TestContext*>(k)) {
        (after_colon ? slice->upper : slice->lower) = expr(t);
      } else if (auto* op = dynamic_cast<G::SliceopContext*>(k)) {
        check(op);
        if (op->test()) slice->step = expr(op->test());
      }
    }
    items.push_back(finish(std::move(slice)));
  }
  if (items.empty()) fail_silently();
  if (items.size() == 1 && !comma) return std::move(items[0]);
  auto t = make_node<Tuple>(span_of(ctx));
  t->elts = std::move(items);
  return finish(std::move(t));
}

ExprPtr AstBuilder::lambda(ParserRuleContext* ctx) {
  auto e = make_node<Lambda>(span_of(ctx));
  ParserRuleContext* body = nullptr;
  for (ParseTree* c : ctx->children) {
    ParserRuleContext* r = as_rule(c);
    if (r == nullptr) continue;
    if (r->getRuleIndex() == G::RuleVarargslist) {
      lambda_parameters(static_cast<G::VarargslistContext*>(r), e->params);
    } else {
      body = r;
    }
  }
  e->body = expr(need(body));
  e->span = merge(span_of(ctx), e->body->span);
  return finish(std::move(e));
}

void AstBuilder::call_args(G::ArglistContext* ctx, std::vector<Arg>& args, bool class_bases) {
  check(ctx);
  bool seen_keyword = false, seen_double_star = false;
  auto arguments = ctx->argument();
  for (G::ArgumentContext* a : arguments) {
    check(a);
    Arg arg;
    arg.span = span_of(a);
    auto tests = a->test();
    if (tests.empty()) fail_silently();
    if (a->STAR()) {
      arg.kind = Arg::Kind::Star;
      if (seen_double_star)
        fail(arg.span, "Iterable argument unpacking follows keyword argument unpacking.");
      arg.value = expr(tests[0]);
    } else if (a->POWER()) {
      arg.kind = Arg::Kind::DoubleStar;
      seen_double_star = true;
      arg.value = expr(tests[0]);
    } else if (a->ASSIGN()) {
      arg.kind = Arg::Kind::Keyword;
      ExprPtr key = expr(tests[0]);
      if (key->kind != ExprKind::Name) {
        if (key->kind == ExprKind::Constant && key->as<Constant>()->value_kind != ConstKind::Int &&
            key->as<Constant>()->value_kind != ConstKind::Float && key->as<Constant>()->value_kind != ConstKind::Str &&
            key->as<Constant>()->value_kind != ConstKind::Ellipsis)
          fail(key->span, std::string("Cannot assign to ") + target_noun(*key) + ".");
        fail(arg.span, "Expression cannot contain assignment, perhaps you meant '=='?");
      }
      arg.name = key->as<Name>()->id;
      for (const Arg& prev : args) {
        if (prev.kind == Arg::Kind::Keyword && prev.name == arg.name)
          fail(arg.span, "Keyword argument repeated: '" + arg.name + "'.");
      }
      seen_keyword = true;
      arg.value = expr(need(tests.size() > 1 ? tests[1] : nullptr));
    } else {
      if (seen_double_star) fail(arg.span, "Positional argument follows keyword argument unpacking.");
      if (seen_keyword) fail(arg.span, "Positional argument follows keyword argument.");
      if (G::Comp_forContext* cf = a->comp_for()) {
        if (arguments.size() > 1) fail(arg.span, "Generator expression must be parenthesized.");
        auto g = make_node<GeneratorExp>(arg.span);
        g->elt = expr(tests[0]);
        if (g->elt->kind == ExprKind::Starred) fail(g->elt->span, "Iterable unpacking cannot be used in comprehension.");
        g->generators = comprehension(cf);
        arg.value = finish(std::move(g));
      } else {
        arg.value = expr(tests[0]);
      }
    }
    if (class_bases) {
      if (arg.kind == Arg::Kind::Keyword)
        fail(arg.span, "Class keyword arguments (such as 'metaclass=') are not supported in MSL.",
             "a class statement takes at most one base class and nothing else");
      if (arg.kind != Arg::Kind::Positional) fail(arg.span, "Unpacking in class bases is not supported in MSL.");
      if (!args.empty())
        fail(arg.span, "Multiple inheritance is not supported in MSL.", "a class may have at most one base class");
    }
    args.push_back(std::move(arg));
  }
}

// ------------------------------------------------------- nonlocal bindings

namespace {

// Python's symtable rule for `nonlocal x`: some enclosing function (not a
// class, not the module) must bind x. Walks statements only: names are bound
// by statements, and `nonlocal` is a statement.
class NonlocalCheck {
 public:
  NonlocalCheck(SourcePtr source, std::vector<Diagnostic>* errors) : source_(std::move(source)), errors_(errors) {}

  void module(const Module& m) { block(m.body, {}, {}); }

 private:
  using Names = std::vector<std::string>;

  static bool has(const Names& names, const std::string& n) {
    return std::find(names.begin(), names.end(), n) != names.end();
  }

  static void target_names(const Expr& e, Names& out) {
    switch (e.kind) {
      case ExprKind::Name: out.push_back(e.as<Name>()->id); break;
      case ExprKind::Tuple: for (const ExprPtr& x : e.as<Tuple>()->elts) target_names(*x, out); break;
      case ExprKind::List: for (const ExprPtr& x : e.as<List>()->elts) target_names(*x, out); break;
      case ExprKind::Starred: target_names(*e.as<Starred>()->value, out); break;
      default: break;
    }
  }

  // Names bound, and declared global, by the statements of one scope (not
  // descending into nested functions and classes, whose names they bind).
  static void bindings(const Body& body, Names& bound, Names& globals) {
    for (const StmtPtr& s : body) {
      switch (s->kind) {
        case StmtKind::Assign: for (const ExprPtr& t : s->as<Assign>()->targets) target_names(*t, bound); break;
        case StmtKind::AugAssign: target_names(*s->as<AugAssign>()->target, bound); break;
        case StmtKind::AnnAssign: target_names(*s->as<AnnAssign>()->target, bound); break;
        case StmtKind::Del: for (const ExprPtr& t : s->as<Del>()->targets) target_names(*t, bound); break;
        case StmtKind::Global: for (const std::string& n : s->as<Global>()->names) globals.push_back(n); break;
        case StmtKind::FunctionDef: bound.push_back(s->as<FunctionDef>()->name); break;
        case StmtKind::ClassDef: bound.push_back(s->as<ClassDef>()->name); break;
        case StmtKind::Import:
          for (const ImportAlias& a : s->as<Import>()->names)
            bound.push_back(!a.asname.empty() ? a.asname : a.name.substr(0, a.name.find('.')));
          break;
        case StmtKind::ImportFrom:
          for (const ImportAlias& a : s->as<ImportFrom>()->names) bound.push_back(a.asname.empty() ? a.name : a.asname);
          break;
        case StmtKind::If:
          bindings(s->as<If>()->body, bound, globals);
          bindings(s->as<If>()->orelse, bound, globals);
          break;
        case StmtKind::While:
          bindings(s->as<While>()->body, bound, globals);
          bindings(s->as<While>()->orelse, bound, globals);
          break;
        case StmtKind::For:
          target_names(*s->as<For>()->target, bound);
          bindings(s->as<For>()->body, bound, globals);
          bindings(s->as<For>()->orelse, bound, globals);
          break;
        case StmtKind::Try: {
          const Try* t = s->as<Try>();
          bindings(t->body, bound, globals);
          for (const ExceptHandler& h : t->handlers) {
            if (!h.name.empty()) bound.push_back(h.name);
            bindings(h.body, bound, globals);
          }
          bindings(t->orelse, bound, globals);
          bindings(t->finalbody, bound, globals);
          break;
        }
        default: break;
      }
    }
  }

  // The statements of one scope: checks its `nonlocal`s against `outer`
  // (names bound by enclosing functions) and gives nested functions and
  // classes `inner` (those plus this scope's own, when it is a function).
  void block(const Body& body, const Names& outer, const Names& inner) {
    for (const StmtPtr& s : body) {
      switch (s->kind) {
        case StmtKind::Nonlocal:
          for (const std::string& n : s->as<Nonlocal>()->names) {
            if (!has(outer, n)) {
              Diagnostic d;
              d.source = source_;
              d.span = s->span;
              d.message = "No binding for nonlocal '" + n + "' found.";
              d.help = "'nonlocal' names a variable of an enclosing function";
              errors_->push_back(std::move(d));
              break;
            }
          }
          break;
        case StmtKind::FunctionDef: function(*s->as<FunctionDef>(), inner); break;
        case StmtKind::ClassDef: block(s->as<ClassDef>()->body, inner, inner); break;
        case StmtKind::If:
          block(s->as<If>()->body, outer, inner);
          block(s->as<If>()->orelse, outer, inner);
          break;
        case StmtKind::While:
          block(s->as<While>()->body, outer, inner);
          block(s->as<While>()->orelse, outer, inner);
          break;
        case StmtKind::For:
          block(s->as<For>()->body, outer, inner);
          block(s->as<For>()->orelse, outer, inner);
          break;
        case StmtKind::Try: {
          const Try* t = s->as<Try>();
          block(t->body, outer, inner);
          for (const ExceptHandler& h : t->handlers) block(h.body, outer, inner);
          block(t->orelse, outer, inner);
          block(t->finalbody, outer, inner);
          break;
        }
        default: break;
      }
    }
  }

  void function(const FunctionDef& f, const Names& enclosing) {
    Names bound, globals;
    const Parameters& ps = f.params;
    for (const Param& p : ps.positional) bound.push_back(p.name);
    if (ps.vararg) bound.push_back(ps.vararg->name);
    for (const Param& p : ps.kwonly) bound.push_back(p.name);
    if (ps.kwarg) bound.push_back(ps.kwarg->name);
    bindings(f.body, bound, globals);
    Names inner = enclosing;
    for (const std::string& n : bound) {
      if (!has(globals, n)) inner.push_back(n);
    }
    block(f.body, enclosing, inner);
  }

  SourcePtr source_;
  std::vector<Diagnostic>* errors_;
};

}  // namespace

void check_nonlocal_bindings(const ast::Module& module, std::vector<Diagnostic>* errors) {
  NonlocalCheck(module.source, errors).module(module);
}

}  // namespace msl
