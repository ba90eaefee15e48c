// Lowering of loops (the scheme is in lower.h).
//
// while / for-range become a tail-recursive loop graph
//     loop(counter?, carried...) = switch(cond, @body, @exit)()
// whose body is lowered with a continuation (LoopFrame): falling off the
// end of the body and `continue` are a tail call of @loop with the current
// values (and the next counter); an `if` whose branch leaves the body takes
// the rest of the body into both branches, as `if ... return` does.
//
// The exit graph (the loop's normal end, not reached by `break`) runs the
// loop's else clause. The loop's result depends on whether its body (or
// else clause) returns from the function:
//   * It does not: the result is the tuple of the carried values, unpacked
//     after the loop. @exit returns the loop parameters; `break` returns
//     the current values.
//   * It does (anywhere, nested loops included): the statements after the
//     loop become a graph @after(carried...) nested in the enclosing graph
//     (continuation-passing). @exit and `break` tail-call it, `return v`
//     makes v the body's result, and the enclosing graph returns the loop's
//     result. Every path then yields the function's result, so no flag or
//     placeholder value is needed (a placeholder would break the join of
//     abstract values in jit/specialize), and a return in an inner loop
//     returns from the function because the inner loop's result is the
//     outer body's result. The rest is lowered once, never duplicated.
//
// `for x in SEQ` over a sequence of known length (a tuple or list display,
// a local tuple/list value, a global or attribute naming a Python list or
// tuple or a cell container, CellList or SequentialCell) is unrolled, as
// MindSpore does: the body is lowered once per item
// with the target bound to that item, straight into the enclosing graph.
// So is `for i in range(n)` with n a compile-time value (at most
// kMaxUnrolledRange items) when its body needs `i` as a compile-time value
// (in getattr/hasattr/str or an f-string: getattr(self, f"layer{i}"));
// other range loops stay loops.
// A body with break/continue/return gets one graph per item instead, each
// playing the part of @loop for the previous one (continue = call the
// next item's graph), with the same exit and continuation as above.
#include <algorithm>
#include <cstdint>
#include <functional>

#include "lang/ir/lower.h"

#include "lang/ir/lower_impl.h"

namespace msl::ir::lower_detail {

bool is_range_call(const ast::Expr& it, const Env& env) {
  const ast::Call* c = it.kind == ast::ExprKind::Call ? it.as<ast::Call>() : nullptr;
  return c && c->func->kind == ast::ExprKind::Name && c->func->as<ast::Name>()->id == "range" && !env.lookup("range");
}

namespace {

// Whether `e` reads the variable `name`.
bool mentions(const ast::Expr* e, const std::string& name) {
  if (!e) return false;
  using K = ast::ExprKind;
  switch (e->kind) {
    case K::Name: return e->as<ast::Name>()->id == name;
    case K::Attribute: return mentions(e->as<ast::Attribute>()->value.get(), name);
    case K::Subscript:
      return mentions(e->as<ast::Subscript>()->value.get(), name) ||
             mentions(e->as<ast::Subscript>()->index.get(), name);
    case K::Call: {
      bool m = mentions(e->as<ast::Call>()->func.get(), name);
      for (const ast::Arg& a : e->as<ast::Call>()->args) m = m || mentions(a.value.get(), name);
      return m;
    }
    case K::Binary: return mentions(e->as<ast::Binary>()->left.get(), name) || mentions(e->as<ast::Binary>()->right.get(), name);
    case K::Unary: return mentions(e->as<ast::Unary>()->operand.get(), name);
    case K::Tuple: {
      for (const ast::ExprPtr& x : e->as<ast::Tuple>()->elts)
        if (mentions(x.get(), name)) return true;
      return false;
    }
    case K::FString: {
      for (const ast::FStringPart& p : e->as<ast::FString>()->parts)
        if (p.is_field && mentions(p.expr.get(), name)) return true;
      return false;
    }
    default: return false;
  }
}

// Whether `e` uses `name` where graph mode needs a compile-time value: in
// an argument of getattr/hasattr/str or a field of an f-string
// (`getattr(self, "layer" + str(i))`, `getattr(self, f"conv{i}")`).
bool needs_constant(const ast::Expr* e, const std::string& name) {
  if (!e) return false;
  using K = ast::ExprKind;
  switch (e->kind) {
    case K::FString: return mentions(e, name);
    case K::Call: {
      const ast::Call& c = *e->as<ast::Call>();
      if (c.func->kind == ast::ExprKind::Name) {
        const std::string& f = c.func->as<ast::Name>()->id;
        if (f == "getattr" || f == "hasattr" || f == "str")
          for (const ast::Arg& a : c.args)
            if (mentions(a.value.get(), name)) return true;
      }
      if (needs_constant(c.func.get(), name)) return true;
      for (const ast::Arg& a : c.args)
        if (needs_constant(a.value.get(), name)) return true;
      return false;
    }
    case K::Attribute: return needs_constant(e->as<ast::Attribute>()->value.get(), name);
    case K::Subscript:
      return needs_constant(e->as<ast::Subscript>()->value.get(), name) ||
             needs_constant(e->as<ast::Subscript>()->index.get(), name);
    case K::Binary:
      return needs_constant(e->as<ast::Binary>()->left.get(), name) ||
             needs_constant(e->as<ast::Binary>()->right.get(), name);
    case K::Unary: return needs_constant(e->as<ast::Unary>()->operand.get(), name);
    case K::Tuple: {
      for (const ast::ExprPtr& x : e->as<ast::Tuple>()->elts)
        if (needs_constant(x.get(), name)) return true;
      return false;
    }
    default: return false;
  }
}

// The one expression a simple statement evaluates (`x`, `a = x`, `a += x`,
// `return x`), or null.
const ast::Expr* simple_value(const ast::Stmt& s) {
  switch (s.kind) {
    case ast::StmtKind::Expr: return s.as<ast::ExprStmt>()->value.get();
    case ast::StmtKind::Assign: return s.as<ast::Assign>()->value.get();
    case ast::StmtKind::AugAssign: return s.as<ast::AugAssign>()->value.get();
    case ast::StmtKind::Return: return s.as<ast::Return>()->value.get();
    default: return nullptr;
  }
}

bool body_needs_constant(const ast::Body& body, const std::string& name) {
  for (const auto& s : body) {
    if (const ast::Expr* v = simple_value(*s)) {
      if (needs_constant(v, name)) return true;
    } else if (s->kind == ast::StmtKind::If) {
      const ast::If* i = s->as<ast::If>();
      if (needs_constant(i->test.get(), name) || body_needs_constant(i->body, name) ||
          body_needs_constant(i->orelse, name))
        return true;
    }
  }
  return false;
}

// A break or continue of the loop the statements belong to (looking
// through ifs, not into nested loops), or null.
const ast::Stmt* first_jump(const ast::Body& body) {
  for (auto& s : body) {
    if (s->kind == ast::StmtKind::Break || s->kind == ast::StmtKind::Continue) return s.get();
    if (s->kind != ast::StmtKind::If) continue;
    if (const ast::Stmt* j = first_jump(s->as<ast::If>()->body)) return j;
    if (const ast::Stmt* j = first_jump(s->as<ast::If>()->orelse)) return j;
  }
  return nullptr;
}

}  // namespace

void FnLowerer::tail_call(FuncGraph* g, std::vector<Node*> call, const Span& s) {
  // The next iteration (or the continuation) runs after this one's effects.
  bool effect = effects_ || state_of(g);
  if (effect) order_after_state(g, call);
  Node* t = g->apply(call, "", loc(s));
  if (effect) sequence(g, t);
  set_out(g, t);
}

void FnLowerer::loop_continue(FuncGraph* g, Env& env, const Span& s) {
  const LoopFrame& f = *loop_;
  std::vector<Node*> next{constant(f.loop, s)};
  if (f.counter) next.push_back(g->apply(kernels::Prim::add, {f.counter, f.step}, f.counter->name(), loc(s)));
  for (auto& n : f.carried) next.push_back(env.lookup(n));
  tail_call(g, std::move(next), s);
}

// The loop's normal end (not by break): the else clause, then the result
// tuple, or the continuation @after when the loop returns.
void FnLowerer::loop_else(const ast::Body& orelse, FuncGraph* xg, Env& xenv, const LoopFrame& frame, const Span& s) {
  if (const ast::Stmt* j = first_jump(orelse))
    unsupported(j->span, std::string(j->kind == ast::StmtKind::Break ? "'break'" : "'continue'") +
                             " in the 'else' clause of a loop");
  if (frame.after) {
    // Falling off the end of the else clause goes on after the loop: a
    // frame whose `continue` is the call of @after.
    LoopFrame to_after;
    to_after.loop = frame.after;
    to_after.carried = frame.carried;
    LoopFrame* outer = loop_;
    loop_ = &to_after;
    finish(pointers(orelse), xg, xenv, s);
    loop_ = outer;
    return;
  }
  stmts(pointers(orelse), xg, xenv);  // no exits: the loop does not return
  std::vector<Node*> values;
  for (auto& n : frame.carried) values.push_back(xenv.lookup(n));
  set_out(xg, xg->apply(IrOp::make_tuple, values, "", loc(s)));
}

void FnLowerer::loop_break(FuncGraph* g, Env& env, const Span& s) {
  const LoopFrame& f = *loop_;
  std::vector<Node*> values;
  for (auto& n : f.carried) values.push_back(env.lookup(n));
  if (f.after) {
    values.insert(values.begin(), constant(f.after, s));
    tail_call(g, std::move(values), s);
  } else {
    set_out(g, g->apply(IrOp::make_tuple, values, "", loc(s)));
  }
}

int64_t FnLowerer::constant_range_count(const ast::Expr& it, const Env& env) const {
  if (!ctx_->evaluate || it.kind != ast::ExprKind::Call) return -1;
  const ast::Call& c = *it.as<ast::Call>();
  if (c.args.empty() || c.args.size() > 3) return -1;
  std::vector<int64_t> bounds;
  for (const ast::Arg& a : c.args) {
    if (a.kind != ast::Arg::Kind::Positional || !is_static_arg(*a.value, env)) return -1;
    ResolvedName r = ctx_->evaluate(*a.value, env.all_aliases());
    const int64_t* v = r.kind == ResolvedName::Kind::Constant ? std::get_if<int64_t>(&r.value) : nullptr;
    if (!v) return -1;
    bounds.push_back(*v);
  }
  int64_t start = bounds.size() > 1 ? bounds[0] : 0, stop = bounds.size() > 1 ? bounds[1] : bounds[0];
  int64_t step = bounds.size() > 2 ? bounds[2] : 1;
  if (step == 0) return -1;
  int64_t n = step > 0 ? (stop > start ? (stop - start + step - 1) / step : 0)
                       : (start > stop ? (start - stop - step - 1) / -step : 0);
  return n <= kMaxUnrolledRange ? n : -1;
}

// while cond: body      and      for target in range(...): body
bool FnLowerer::loop_stmt(const ast::Stmt& s, const Stmts& rest, FuncGraph* g, Env& env) {
  bool is_for = s.kind == ast::StmtKind::For;
  const ast::Body& body = is_for ? s.as<ast::For>()->body : s.as<ast::While>()->body;
  const ast::Body& orelse = is_for ? s.as<ast::For>()->orelse : s.as<ast::While>()->orelse;
  if (is_for && !is_range_call(*s.as<ast::For>()->iter, env)) return for_sequence(*s.as<ast::For>(), rest, g, env);
  // `for i in range(n)` whose body needs `i` at compile time (getattr(self,
  // f"layer{i}")) is unrolled, as MindSpore unrolls its for loops, when n
  // is a constant (range() of constants: sequence_items) and small.
  if (is_for && s.as<ast::For>()->target->kind == ast::ExprKind::Name &&
      body_needs_constant(body, s.as<ast::For>()->target->as<ast::Name>()->id) && constant_range_count(*s.as<ast::For>()->iter, env) >= 0)
    return for_sequence(*s.as<ast::For>(), rest, g, env);
  bool returns = contains_return(body) || contains_return(orelse);
  size_t effects_before = effect_count_;

  // For-range: the counter is an extra leading loop parameter.
  std::string target;
  Node *start = nullptr, *stop = nullptr, *step = nullptr;
  if (is_for) {
    auto* f = s.as<ast::For>();
    if (f->target->kind != ast::ExprKind::Name) unsupported(f->target->span, "'for' loop with a tuple target");
    target = f->target->as<ast::Name>()->id;
    const ast::Expr& it = *f->iter;
    const ast::Call* c = it.as<ast::Call>();
    if (c->args.empty() || c->args.size() > 3) unsupported(it.span, "range() with this number of arguments");
    std::vector<Node*> a;
    for (auto& arg : c->args) {
      if (arg.kind != ast::Arg::Kind::Positional) unsupported(arg.span, "this argument of range()");
      a.push_back(expr(*arg.value, g, env));
    }
    start = a.size() == 1 ? constant(int64_t{0}, it.span) : a[0];
    stop = a.size() == 1 ? a[0] : a[1];
    step = a.size() == 3 ? a[2] : constant(int64_t{1}, it.span);
  }

  LoopFrame frame;
  // Loop-carried: names assigned in the body (or the else clause) that are
  // bound before the loop.
  std::set<std::string> assigned = assigned_names(body), in_else = assigned_names(orelse);
  assigned.insert(in_else.begin(), in_else.end());
  for (auto& n : assigned)
    if (n != target && env.lookup(n)) frame.carried.push_back(n);

  FuncGraph* loop = m_.new_graph(g->name() + (is_for ? "_for" : "_while"), g, loc(s.span));
  frame.loop = loop;
  frame.step = step;
  Env lenv{&env, {}};
  frame.counter = is_for ? loop->add_param(target, loc(s.span)) : nullptr;
  for (auto& n : frame.carried) {
    lenv.vars[n] = loop->add_param(n, loc(s.span));
  }
  Node* cond = is_for ? loop->apply(kernels::Prim::less, {frame.counter, stop}, "", loc(s.span))
                      : expr(*s.as<ast::While>()->test, loop, lenv);

  Env aenv{&env, {}};  // the scope of @after: the carried names are its parameters
  if (returns) {
    frame.after = m_.new_graph(loop->name() + "_after", g, loc(s.span));
    for (auto& n : frame.carried) aenv.vars[n] = frame.after->add_param(n, loc(s.span));
  }

  FuncGraph* bg = m_.new_graph(loop->name() + "_body", loop, loc(s.span));
  Env benv{&lenv, {}};
  if (is_for) benv.vars[target] = frame.counter;
  LoopFrame* outer = loop_;
  loop_ = &frame;
  finish(pointers(body), bg, benv, s.span);  // falling off the end: the next iteration
  loop_ = outer;

  FuncGraph* xg = m_.new_graph(loop->name() + "_exit", loop, loc(s.span));
  Env xenv{&lenv, {}};
  loop_else(orelse, xg, xenv, frame, s.span);

  Node* sw = loop->apply(IrOp::switch_, {cond, constant(bg, s.span), constant(xg, s.span)}, "", loc(s.span));
  Node* body_call = loop->apply({sw}, "", loc(s.span));
  bool effect = effects_ || effect_count_ != effects_before;  // the body or the else clause has effects
  if (effect) sequence(loop, body_call);
  set_out(loop, body_call);

  std::vector<Node*> init{constant(loop, s.span)};
  if (is_for) init.push_back(start);
  for (auto& n : frame.carried) init.push_back(env.lookup(n));
  if (frame.after) {
    // The loop's result is the function's (or the enclosing loop body's).
    tail_call(g, std::move(init), s.span);
    finish(rest, frame.after, aenv, s.span);
    return true;
  }
  if (effect) order_after_state(g, init);
  Node* res = g->apply(init, "", loc(s.span));
  if (effect) sequence(g, res);
  for (size_t i = 0; i < frame.carried.size(); ++i)
    env.vars[frame.carried[i]] =
        g->apply(IrOp::tuple_getitem, {res, constant(static_cast<int64_t>(i), s.span)}, frame.carried[i], loc(s.span));
  return false;
}

// for target in SEQ: body, unrolled. The items are computed once, before
// the first iteration (Python evaluates the iterable first).
bool FnLowerer::for_sequence(const ast::For& f, const Stmts& rest, FuncGraph* g, Env& env) {
  if (const ast::Stmt* j = first_jump(f.orelse))
    unsupported(j->span, std::string(j->kind == ast::StmtKind::Break ? "'break'" : "'continue'") +
                             " in the 'else' clause of a loop");
  std::vector<Node*> items = sequence_items(*f.iter, g, env);
  Stmts body = pointers(f.body);
  if (!contains_exit(f.body) || items.empty()) {
    // Straight-line: the body once per item, in g (no exits: stmts never
    // sets g's output), then the else clause, which always runs.
    for (Node* item : items) {
      assign(*f.target, item, g, env);
      stmts(body, g, env);
    }
    if (f.orelse.empty()) return false;
    Stmts tail = pointers(f.orelse);
    tail.insert(tail.end(), rest.begin(), rest.end());
    finish(tail, g, env, f.span);  // the else clause may return: it takes the rest along
    return true;
  }
  // With exits, item k is a graph @..._iterk(carried...) whose `continue`
  // (and end) tail-calls item k+1's, and the last one's @..._exit (the
  // else clause, then the result tuple or, when the body returns, the
  // continuation @..._after): a loop graph per item instead of one
  // recursive graph.
  LoopFrame frame;
  std::set<std::string> assigned = assigned_names(f.body), in_else = assigned_names(f.orelse);
  assigned.insert(in_else.begin(), in_else.end());
  for (auto& n : assigned)
    if (env.lookup(n)) frame.carried.push_back(n);
  bool returns = contains_return(f.body) || contains_return(f.orelse);
  size_t effects_before = effect_count_;
  std::string base = g->name() + "_for";
  Loc l = loc(f.span);
  auto with_carried = [&](FuncGraph* x, Env& xenv) {
    for (auto& n : frame.carried) xenv.vars[n] = x->add_param(n, l);
  };
  std::vector<FuncGraph*> iters;
  std::vector<Env> ienv(items.size());
  for (size_t k = 0; k < items.size(); ++k) {
    iters.push_back(m_.new_graph(base + "_iter" + std::to_string(k), g, l));
    ienv[k].parent = &env;
    with_carried(iters[k], ienv[k]);
  }
  Env aenv{&env, {}};
  if (returns) {
    frame.after = m_.new_graph(base + "_after", g, l);
    with_carried(frame.after, aenv);
  }
  Env xenv{&env, {}};
  FuncGraph* xg = m_.new_graph(base + "_exit", g, l);
  with_carried(xg, xenv);
  LoopFrame* outer = loop_;
  for (size_t k = 0; k < items.size(); ++k) {
    frame.loop = k + 1 < items.size() ? iters[k + 1] : xg;
    loop_ = &frame;
    assign(*f.target, items[k], iters[k], ienv[k]);
    finish(body, iters[k], ienv[k], f.span);
    loop_ = outer;
  }
  loop_else(f.orelse, xg, xenv, frame, f.span);
  std::vector<Node*> init{constant(iters[0], f.span)};
  for (auto& n : frame.carried) init.push_back(env.lookup(n));
  if (returns) {
    tail_call(g, std::move(init), f.span);
    finish(rest, frame.after, aenv, f.span);
    return true;
  }
  bool effect = effects_ || effect_count_ != effects_before;  // an item's body or the else clause has effects
  if (effect) order_after_state(g, init);
  Node* res = g->apply(init, "", l);
  if (effect) sequence(g, res);
  for (size_t i = 0; i < frame.carried.size(); ++i)
    env.vars[frame.carried[i]] =
        g->apply(IrOp::tuple_getitem, {res, constant(static_cast<int64_t>(i), f.span)}, frame.carried[i], l);
  return false;
}

std::vector<Node*> FnLowerer::sequence_items(const ast::Expr& seq, FuncGraph* g, Env& env, const char* what) {
  std::vector<Node*> items;
  std::string dotted;
  const ast::Call* call = seq.kind == ast::ExprKind::Call ? seq.as<ast::Call>() : nullptr;
  bool positional = call != nullptr;
  for (size_t i = 0; call && i < call->args.size(); ++i) positional = positional && call->args[i].kind == ast::Arg::Kind::Positional;
  if (is_range_call(seq, env)) {
    // range(...) of constants: its numbers (a comprehension, zip(range(n), xs)).
    std::vector<int64_t> bounds;
    for (const auto& a : call->args) {
      Node* v = a.kind == ast::Arg::Kind::Positional ? expr(*a.value, g, env) : nullptr;
      if (!v || !v->is_constant() || !std::holds_alternative<int64_t>(v->value()))
        unsupported(a.span, std::string(what) + " over range() of values known only at run time");
      bounds.push_back(std::get<int64_t>(v->value()));
    }
    if (bounds.empty() || bounds.size() > 3) fail(call->span, "range expected 1 to 3 arguments");
    int64_t start = bounds.size() > 1 ? bounds[0] : 0, stop = bounds.size() > 1 ? bounds[1] : bounds[0];
    int64_t step = bounds.size() > 2 ? bounds[2] : 1;
    if (step == 0) fail(call->span, "range() arg 3 must not be zero");
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) items.push_back(constant(i, seq.span));
    return items;
  }
  if (positional && is_builtin_call(*call, "enumerate", env, resolve_) && !call->args.empty() && call->args.size() <= 2) {
    // enumerate(seq[, start]) of a sequence of known length: (i, item) pairs.
    int64_t start = 0;
    if (call->args.size() == 2) {
      Node* s = expr(*call->args[1].value, g, env);
      if (!s->is_constant() || !std::holds_alternative<int64_t>(s->value()))
        unsupported(call->args[1].span, "an enumerate() start known only at run time");
      start = std::get<int64_t>(s->value());
    }
    std::vector<Node*> inner = sequence_items(*call->args[0].value, g, env, what);
    for (size_t i = 0; i < inner.size(); ++i)
      items.push_back(g->apply(IrOp::make_tuple, {constant(start + static_cast<int64_t>(i), seq.span), inner[i]}, "",
                               loc(seq.span)));
    return items;
  }
  if (positional && is_builtin_call(*call, "zip", env, resolve_) && !call->args.empty()) {
    // zip(a, b, ...) of sequences of known length: tuples, as long as the shortest.
    std::vector<std::vector<Node*>> seqs;
    size_t n = SIZE_MAX;
    for (const ast::Arg& a : call->args) {
      seqs.push_back(sequence_items(*a.value, g, env, what));
      n = std::min(n, seqs.back().size());
    }
    for (size_t i = 0; i < n; ++i) {
      std::vector<Node*> tuple;
      for (auto& s : seqs) tuple.push_back(s[i]);
      items.push_back(g->apply(IrOp::make_tuple, tuple, "", loc(seq.span)));
    }
    return items;
  }
  if (resolve_ && dotted_name(seq, env, dotted)) {
    ResolvedName r = resolve_(dotted);
    if (r.kind == ResolvedName::Kind::Sequence || !r.items.empty()) {
      for (size_t i = 0; i < r.items.size(); ++i)
        items.push_back(resolved_node(r.items[i], "item " + std::to_string(i) + " of '" + dotted + "'", seq.span));
      return items;
    }
  }
  if (call && is_static_call(seq, env)) {
    // A call evaluated at compile time (self.cfg.items(), np.arange(3)):
    // its items, if it gives a sequence.
    ResolvedName r = ctx_->evaluate(seq, env.all_aliases());
    if (r.kind == ResolvedName::Kind::Sequence) {
      // Items that are tuples themselves ((key, value) pairs) are tuples of
      // the graph, so a loop target can unpack them.
      std::function<Node*(const ResolvedName&, const std::string&)> item = [&](const ResolvedName& x,
                                                                               const std::string& what_item) {
        if (x.kind != ResolvedName::Kind::Sequence) return resolved_node(x, what_item, seq.span);
        std::vector<Node*> parts;
        for (size_t k = 0; k < x.items.size(); ++k) parts.push_back(item(x.items[k], what_item));
        return g->apply(IrOp::make_tuple, parts, "", loc(seq.span));
      };
      for (size_t i = 0; i < r.items.size(); ++i)
        items.push_back(item(r.items[i], "item " + std::to_string(i) + " of this call"));
      return items;
    }
  }
  Node* v = expr(seq, g, env);
  if (const std::vector<ConstValue>* keys = dict_keys(v)) {
    for (const ConstValue& k : *keys) items.push_back(constant(k, seq.span));  // a dict iterates its keys
    return items;
  }
  if (!v->is_call_of(IrOp::make_tuple) && !v->is_call_of(IrOp::make_list))
    fail(seq.span, std::string(what) + " over a value whose length is not known at compile time is not supported in graph mode",
         "graph mode iterates over range(...) and unrolls loops over tuples and lists of known length");
  size_t n = v->inputs().size() - 1;
  for (size_t i = 0; i < n; ++i)
    items.push_back(g->apply(IrOp::tuple_getitem, {v, constant(static_cast<int64_t>(i), seq.span)}, "", loc(seq.span)));
  return items;
}

}  // namespace msl::ir::lower_detail
