// Lowering of what Python does with tuples and lists whose length the
// lowering knows (a display, a local built from displays, *args): `t1 +
// t2`, `t * 2`, `t[1:]`, `a, *rest = t`, and the list methods that grow or
// shrink a list (`outs.append(y)` rebinds `outs` to the longer list, as
// MindSpore's graph mode does for a list built in construct). A mutating
// list method on a list of unknown length (a loop-carried one) is a
// GraphModeError: run on a copy when the graph runs, it would be lost.
// f-strings are here too: str.format of the values through a host adapter.
#include <algorithm>

#include "lang/ir/lower.h"
#include "lang/ir/lower_impl.h"

namespace msl::ir {
namespace lower_detail {

namespace {

bool is_display(const Node* n) { return n->is_call_of(IrOp::make_tuple) || n->is_call_of(IrOp::make_list); }

std::vector<Node*> items_of(const Node* n) { return {n->inputs().begin() + 1, n->inputs().end()}; }

// A constant int (or None: absent) of a slice bound.
bool bound_of(Node* n, std::optional<int64_t>& out) {
  if (!n->is_constant()) return false;
  if (std::holds_alternative<NoneValue>(n->value())) return true;
  if (!std::holds_alternative<int64_t>(n->value())) return false;
  out = std::get<int64_t>(n->value());
  return true;
}

}  // namespace

Node* FnLowerer::sequence_binop(ast::BinOp op, Node* x, Node* y, const Span& s, FuncGraph* g,
                                const std::string& name) {
  if (op == ast::BinOp::Add && is_display(x) && is_display(y)) {
    if (x->is_call_of(IrOp::make_tuple) != y->is_call_of(IrOp::make_tuple))
      fail(s, "can only concatenate a tuple to a tuple and a list to a list");
    std::vector<Node*> items = items_of(x), more = items_of(y);
    items.insert(items.end(), more.begin(), more.end());
    return g->apply(x->is_call_of(IrOp::make_tuple) ? IrOp::make_tuple : IrOp::make_list, items, name, loc(s));
  }
  if (op == ast::BinOp::Mul && (is_display(x) || is_display(y))) {
    Node* seq = is_display(x) ? x : y;
    Node* n = is_display(x) ? y : x;
    if (!n->is_constant() || !std::holds_alternative<int64_t>(n->value())) return nullptr;
    std::vector<Node*> items, one = items_of(seq);
    for (int64_t k = 0; k < std::get<int64_t>(n->value()); ++k) items.insert(items.end(), one.begin(), one.end());
    return g->apply(seq->is_call_of(IrOp::make_tuple) ? IrOp::make_tuple : IrOp::make_list, items, name, loc(s));
  }
  return nullptr;
}

Node* FnLowerer::sequence_slice(Node* v, const ast::Subscript& s, FuncGraph* g, Env& env, const std::string& name) {
  if (!is_display(v) || s.index->kind != ast::ExprKind::Slice) return nullptr;
  const ast::Slice& sl = *s.index->as<ast::Slice>();
  std::optional<int64_t> b[3];
  const ast::Expr* parts[3] = {sl.lower.get(), sl.upper.get(), sl.step.get()};
  for (int k = 0; k < 3; ++k)
    if (parts[k] && !bound_of(expr(*parts[k], g, env), b[k]))
      unsupported(parts[k]->span, "a slice of a tuple with bounds known only at run time");
  std::vector<Node*> items = items_of(v), out;
  int64_t n = static_cast<int64_t>(items.size()), step = b[2].value_or(1);
  if (step == 0) fail(s.span, "slice step cannot be zero");
  // Python's slice.indices.
  auto clamp = [&](std::optional<int64_t> x, int64_t dflt, int64_t lo, int64_t hi) {
    if (!x) return dflt;
    int64_t i = *x < 0 ? *x + n : *x;
    return std::max(lo, std::min(hi, i));
  };
  int64_t start = step > 0 ? clamp(b[0], 0, 0, n) : clamp(b[0], n - 1, -1, n - 1);
  int64_t stop = step > 0 ? clamp(b[1], n, 0, n) : clamp(b[1], -1, -1, n - 1);
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(items[static_cast<size_t>(i)]);
  return g->apply(v->is_call_of(IrOp::make_tuple) ? IrOp::make_tuple : IrOp::make_list, out, name, loc(s.span));
}

void FnLowerer::starred_assign(const std::vector<ast::ExprPtr>& targets, Node* v, FuncGraph* g, Env& env,
                               const Span& s) {
  if (!is_display(v))
    unsupported(s, "starred assignment from a value whose length is not known at compile time");
  std::vector<Node*> items = items_of(v);
  size_t star = 0;
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i]->kind == ast::ExprKind::Starred) star = i;
  size_t after = targets.size() - star - 1;
  if (items.size() < targets.size() - 1)
    fail(s, "not enough values to unpack (expected at least " + std::to_string(targets.size() - 1) + ", got " +
                std::to_string(items.size()) + ")");
  for (size_t i = 0; i < star; ++i) assign(*targets[i], items[i], g, env);
  std::vector<Node*> middle(items.begin() + static_cast<long>(star), items.end() - static_cast<long>(after));
  assign(*targets[star]->as<ast::Starred>()->value, g->apply(IrOp::make_list, middle, "", loc(s)), g, env);
  for (size_t i = 0; i < after; ++i) assign(*targets[star + 1 + i], items[items.size() - after + i], g, env);
}

Node* FnLowerer::list_method(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name) {
  const ast::Attribute& m = *c.func->as<ast::Attribute>();
  static const char* const kMutating[] = {"append", "extend", "insert", "pop", "remove", "clear", "reverse"};
  bool mutating = false;
  for (const char* k : kMutating) mutating = mutating || m.attr == k;
  if (!mutating || m.value->kind != ast::ExprKind::Name) return nullptr;
  const std::string& target = m.value->as<ast::Name>()->id;
  Node* l = env.lookup(target);
  if (!l) return nullptr;  // a global (self.log): the effect runs when the graph runs
  if (!l->is_call_of(IrOp::make_list)) {
    // A loop-carried list, a parameter or a call's result: a tuple when the
    // graph runs, so the change would be lost. (Tensors have none of these
    // methods.)
    fail(c.func->span,
           "list." + m.attr + "() on '" + target + "', a list whose length is not known at compile time (it changes in "
           "a loop or comes from a call), is not supported in graph mode",
           "build the list in an unrolled loop (for ... in a tuple, a CellList or range of constants) or collect the "
           "values in a tuple");
  }
  std::vector<Node*> args;
  for (const ast::Arg& a : c.args) {
    if (a.kind != ast::Arg::Kind::Positional) unsupported(a.span, "a keyword or '*' argument of list." + m.attr + "()");
    args.push_back(expr(*a.value, g, env));
  }
  std::vector<Node*> items = items_of(l);
  Node* result = constant(NoneValue{}, c.span);
  auto index = [&](Node* n) {
    if (!n->is_constant() || !std::holds_alternative<int64_t>(n->value()))
      fail(c.span, "list." + m.attr + "() in graph mode needs a constant index");
    int64_t i = std::get<int64_t>(n->value()), len = static_cast<int64_t>(items.size());
    return i < 0 ? i + len : i;
  };
  if (m.attr == "append" && args.size() == 1) {
    items.push_back(args[0]);
  } else if (m.attr == "extend" && args.size() == 1 && is_display(args[0])) {
    std::vector<Node*> more = items_of(args[0]);
    items.insert(items.end(), more.begin(), more.end());
  } else if (m.attr == "insert" && args.size() == 2) {
    int64_t i = std::max<int64_t>(0, std::min<int64_t>(index(args[0]), static_cast<int64_t>(items.size())));
    items.insert(items.begin() + i, args[1]);
  } else if (m.attr == "pop" && args.size() <= 1) {
    int64_t i = args.empty() ? static_cast<int64_t>(items.size()) - 1 : index(args[0]);
    if (i < 0 || i >= static_cast<int64_t>(items.size())) fail(c.span, "pop index out of range");
    result = items[static_cast<size_t>(i)];
    items.erase(items.begin() + i);
  } else if (m.attr == "clear" && args.empty()) {
    items.clear();
  } else if (m.attr == "reverse" && args.empty()) {
    std::reverse(items.begin(), items.end());
  } else {
    fail(c.span, "list." + m.attr + "() with these arguments is not supported in graph mode",
         "graph mode supports append(v), extend(tuple or list of known length), insert(i, v), pop([i]), clear() "
         "and reverse() with constant indices");
  }
  env.vars[target] = g->apply(IrOp::make_list, items, target, loc(c.span));
  (void)name;
  return result;
}

Node* FnLowerer::fstring(const ast::FString& f, FuncGraph* g, Env& env, const std::string& name) {
  // The format string: literal text with braces doubled, "{!r:spec}" per
  // field, nested spec fields as "{}" (str.format numbers them in order:
  // the field's value, then the nested values).
  std::string fmt;
  std::vector<Node*> values;
  auto literal = [&](const std::string& text) {
    for (char ch : text) {
      fmt += ch;
      if (ch == '{' || ch == '}') fmt += ch;
    }
  };
  for (const ast::FStringPart& p : f.parts) {
    if (!p.is_field) {
      literal(p.literal);
      continue;
    }
    values.push_back(expr(*p.expr, g, env));
    fmt += "{";
    if (p.conversion) fmt += std::string("!") + p.conversion;
    if (!p.spec.empty()) {
      fmt += ":";
      for (const ast::FStringPart& sp : p.spec) {
        if (!sp.is_field) {
          literal(sp.literal);
          continue;
        }
        if (sp.conversion || !sp.spec.empty()) unsupported(f.span, "a conversion or format spec inside a format spec");
        values.push_back(expr(*sp.expr, g, env));
        fmt += "{}";
      }
    }
    fmt += "}";
  }
  HostAdapter h;
  h.kind = HostAdapter::Kind::Method;
  h.attr = "format";
  std::vector<Node*> call{adapter(h, f.span, "f-string"), constant(fmt, f.span)};
  call.insert(call.end(), values.begin(), values.end());
  return g->apply(call, name, loc(f.span));
}

}  // namespace lower_detail
}  // namespace msl::ir
