// AstBuilder::literal_display: the AST of a literal display the parser saw
// collapsed (lang/packed_token_stream.h), built from the packed tokens.
//
// It must be exactly the tree the builder makes from the full parse tree:
// the same nodes (a List, Tuple or Set of Constants; `-5` is Unary(Neg, 5),
// and only -9223372036854775808 folds into one Constant, as factor() does),
// the same spans, the same errors (an integer literal too large). The parser
// driver re-parses a statement in full when building it reported an error,
// so any message comes from the usual path anyway.
#include "MSLParser.h"
#include "lang/ast_builder.h"
#include "lang/packed_token_stream.h"

namespace msl {

using namespace ast;
using G = grammar::MSLParser;

namespace {

ExprPtr negate(const Span& minus, ExprPtr operand) {
  auto u = make_node<Unary>(Span::merge(minus, operand->span));
  u->op = UnaryOp::Neg;
  u->operand = std::move(operand);
  return u;
}

bool opens(size_t t) { return t == G::OPEN_PAREN || t == G::OPEN_BRACK || t == G::OPEN_BRACE; }
bool closes(size_t t) { return t == G::CLOSE_PAREN || t == G::CLOSE_BRACK || t == G::CLOSE_BRACE; }

// The number of elements of the display from `open` to `close`, so that its
// vector is made once at its final size (a million-element literal has no
// doubled vector's slack, nor a copy to shrink it).
size_t element_count(const PackedTokenStream& tokens, size_t open, size_t close) {
  size_t n = 0;
  bool expect = true;
  for (size_t i = open + 1; i < close; ++i) {
    size_t t = tokens.raw_type(i);
    if (t == G::COMMA) {
      expect = true;
      continue;
    }
    if (expect) ++n;
    expect = false;
    if (opens(t)) {
      for (int level = 1; level > 0;) {
        size_t u = tokens.raw_type(++i);
        level += opens(u) ? 1 : closes(u) ? -1 : 0;
      }
    }
  }
  return n;
}

}  // namespace

ExprPtr AstBuilder::literal_display(size_t open, size_t close, int& depth) {
  const PackedTokenStream& tokens = *collapsed_;
  std::vector<ExprPtr> elts;
  elts.reserve(element_count(tokens, open, close));
  int deepest = 0;
  for (size_t i = open + 1; i < close; ++i) {
    size_t type = tokens.raw_type(i);
    if (type == G::COMMA) continue;
    if (opens(type)) {
      size_t end = i + 1;
      for (int level = 1;; ++end) {
        size_t t = tokens.raw_type(end);
        level += opens(t) ? 1 : closes(t) ? -1 : 0;
        if (level == 0) break;
      }
      int d = 0;
      elts.push_back(literal_display(i, end, d));
      deepest = std::max(deepest, d);
      i = end;
      continue;
    }
    Span span = tokens.raw_span(i);
    ExprPtr e;
    int d = 1;
    if (type == G::MINUS) {
      Span minus = span;
      ++i;
      type = tokens.raw_type(i);
      span = tokens.raw_span(i);
      if (type == G::INTEGER) {
        e = integer_constant(tokens.raw_text(i), span, true);
        if (e->as<Constant>()->int_value < 0) {
          e->span = Span::merge(minus, e->span);
        } else {
          e = negate(minus, std::move(e));
          d = 2;
        }
      } else {
        e = negate(minus, float_constant(tokens.raw_text(i), span));
        d = 2;
      }
    } else if (type == G::INTEGER) {
      e = integer_constant(tokens.raw_text(i), span, false);
    } else if (type == G::FLOAT_NUMBER) {
      e = float_constant(tokens.raw_text(i), span);
    } else {
      auto c = make_node<Constant>(span);
      c->value_kind = type == G::ELLIPSIS ? ConstKind::Ellipsis
                      : type == G::NONE   ? ConstKind::None
                      : type == G::TRUE   ? ConstKind::True
                                          : ConstKind::False;
      e = std::move(c);
    }
    elts.push_back(std::move(e));
    deepest = std::max(deepest, d);
  }
  depth = deepest + 1;
  Span span = Span::merge(tokens.raw_span(open), tokens.raw_span(close));
  switch (tokens.raw_type(open)) {
    case G::OPEN_BRACK: {
      auto l = make_node<List>(span);
      l->elts = std::move(elts);
      return l;
    }
    case G::OPEN_PAREN: {
      auto t = make_node<Tuple>(span);
      t->elts = std::move(elts);
      return t;
    }
    default: {
      auto s = make_node<ast::Set>(span);
      s->elts = std::move(elts);
      return s;
    }
  }
}

}  // namespace msl
