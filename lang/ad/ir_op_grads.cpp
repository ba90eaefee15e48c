// The IR operators' derivatives, applied inline by the J transform (no
// gradient rule, no call): the forward side computes the operator on the
// J-values, the backward side turns the output's sensitivity `s` into
// contributions to the operands.
//
//   operator                    operands' sensitivities
//   make_tuple/make_list(a..)   a_i += s[i]
//   tuple_getitem(t, i)         t += tuple_setitem(zeros_like(Jt), i, s)
//   switch(c, a, b)             a += switch(Jc, s, zeros_like(s)), b likewise
//   partial(f, a..)             f += env_getitem(s, -1, zeros_like(Jf)),
//                               a_i += env_getitem(s, -1-i, zeros_like(Ja_i))
//                               (see grad.h)
//   depend(x, u)                x += s
//   env_setitem(e, k, v)        e += env_setitem(s, k, zeros_like(Jv)),
//                               v += env_getitem(s, k, zeros_like(Jv))
//   env_getitem(e, k, d)        e += env_setitem(env_new(), k, s)
//   env_add/grad_add(a, b)      a += s, b += s
//   tuple_setitem(t, i, v)      t += tuple_setitem(s, i, zeros_like(Jv)),
//                               v += s[i]
//   tuple_len, is_none, stop_gradient, zeros_like, ones_like, env_new,
//   update_state, print, J:
//                               none (effects stay in JG, in their order,
//                               because J-values thread the same state)
// switch takes zeros_like of the sensitivity rather than of the unchosen
// branch so that both branches' sensitivities have the structure of `s`
// (a branch may be a closure whose zero is an env).
#include "lang/ad/grad_impl.h"

namespace msl::ad {

using ir::FuncGraph;
using ir::IrOp;
using ir::Loc;
using ir::Node;

namespace {
Loc loc_or(const Node* n, const Loc& fallback) { return n->loc().valid() ? n->loc() : fallback; }
}  // namespace

Node* GradTransformer::Impl::forward_ir_op(GraphCtx& c, Node* n, IrOp op) {
  FuncGraph* jg = c.jg;
  Loc loc = loc_or(n, c.g->loc());
  int arity = ir::ir_op_arity(op);
  if (arity >= 0 && n->num_args() != static_cast<size_t>(arity))
    fail(std::string(ir::ir_op_name(op)) + " takes " + std::to_string(arity) + " arguments, got " +
             std::to_string(n->num_args()),
         loc);
  if (op == IrOp::partial) {
    if (n->num_args() < 1) fail("partial takes at least 1 argument, got 0", loc);
    Node* f = n->arg(0);
    size_t k = n->num_args() - 1;
    int total = static_arity(f);
    if (total < 0)
      fail("partial over a function whose number of arguments is not known here cannot be differentiated", loc);
    if (static_cast<size_t>(total) < k)
      fail("partial binds " + std::to_string(k) + " arguments but the function takes " + std::to_string(total), loc);
    std::vector<Node*> ins{jg->constant(partial_wrapper(k, static_cast<size_t>(total) - k), loc),
                           jvalue(jg, f, loc, total)};
    for (size_t i = 1; i < n->num_args(); ++i) ins.push_back(jvalue(jg, n->arg(i), loc));
    return op_apply(jg, IrOp::partial, std::move(ins), loc, n->name());
  }
  if (op == IrOp::J) {
    // The J-value of J(h) is J of the closure Jh: J(J(h)), known statically
    // only for a constant graph that captures nothing.
    // A host object's J is resolved at run time, so is J of that.
    if (n->arg(0)->as_host()) return op_apply(jg, IrOp::J, {jvalue(jg, n->arg(0), loc)}, loc);
    FuncGraph* h = n->arg(0)->as_graph();
    if (!h || !fvs(h).empty())
      fail("J of J is not supported here: the operand of J must be a constant graph without free variables", loc);
    return jg->constant(j_graph(j_graph(h)), loc);
  }
  std::vector<Node*> ins{jg->constant(op, loc)};
  for (size_t i = 0; i < n->num_args(); ++i) ins.push_back(jvalue(jg, n->arg(i), loc));
  return jg->apply(std::move(ins), n->name(), loc);
}

void GradTransformer::Impl::backward_ir_op(GraphCtx& c, Node* n, IrOp op, Node* s) {
  FuncGraph* bg = c.bg;
  Loc loc = loc_or(n, c.g->loc());
  auto cint = [&](int64_t i) { return bg->constant(i, loc); };
  auto item = [&](Node* t, Node* i) { return op_apply(bg, IrOp::tuple_getitem, {t, i}, loc); };
  auto zeros = [&](Node* v) { return op_apply(bg, IrOp::zeros_like, {v}, loc); };
  auto jv = [&](Node* x) { return jvalue(bg, x, loc); };
  // Adds a contribution built by `make` to operand x, building nothing
  // when x's sensitivity would be dropped anyway.
  auto give = [&](Node* x, auto make) {
    if (wants_sens(x)) add_sens(c, x, make(), loc);
  };
  switch (op) {
    case IrOp::make_tuple:
    case IrOp::make_list:
      for (size_t i = 0; i < n->num_args(); ++i)
        give(n->arg(i), [&] { return item(s, cint(static_cast<int64_t>(i))); });
      break;
    case IrOp::tuple_getitem:
    case IrOp::list_getitem:
      give(n->arg(0), [&] { return op_apply(bg, IrOp::tuple_setitem, {zeros(jv(n->arg(0))), jv(n->arg(1)), s}, loc); });
      break;
    case IrOp::switch_: {
      if (!wants_sens(n->arg(1)) && !wants_sens(n->arg(2))) break;
      Node* zero = zeros(s);
      Node* cond = jv(n->arg(0));
      give(n->arg(1), [&] { return op_apply(bg, IrOp::switch_, {cond, s, zero}, loc); });
      give(n->arg(2), [&] { return op_apply(bg, IrOp::switch_, {cond, zero, s}, loc); });
      break;
    }
    case IrOp::partial:
      for (size_t i = 0; i < n->num_args(); ++i)
        give(n->arg(i), [&] {
          return op_apply(bg, IrOp::env_getitem, {s, cint(partial_key(i)), zeros(jv(n->arg(i)))}, loc);
        });
      break;
    case IrOp::depend: give(n->arg(0), [&] { return s; }); break;
    case IrOp::env_setitem: {
      Node* e = n->arg(0);
      Node* v = n->arg(2);
      give(e, [&] { return op_apply(bg, IrOp::env_setitem, {s, jv(n->arg(1)), zeros(jv(v))}, loc); });
      give(v, [&] { return op_apply(bg, IrOp::env_getitem, {s, jv(n->arg(1)), zeros(jv(v))}, loc); });
      break;
    }
    case IrOp::env_getitem:
      give(n->arg(0), [&] {
        return op_apply(bg, IrOp::env_setitem, {op_apply(bg, IrOp::env_new, {}, loc), jv(n->arg(1)), s}, loc);
      });
      break;
    case IrOp::env_add:
    case IrOp::grad_add:
      give(n->arg(0), [&] { return s; });
      give(n->arg(1), [&] { return s; });
      break;
    case IrOp::tuple_setitem: {
      Node* v = n->arg(2);
      give(n->arg(0), [&] { return op_apply(bg, IrOp::tuple_setitem, {s, jv(n->arg(1)), zeros(jv(v))}, loc); });
      give(v, [&] { return item(s, jv(n->arg(1))); });
      break;
    }
    case IrOp::tuple_len:
    case IrOp::is_none:
    case IrOp::stop_gradient:
    case IrOp::zeros_like:
    case IrOp::ones_like:
    case IrOp::env_new:
    case IrOp::update_state:
    case IrOp::print:
    case IrOp::J: break;
  }
}

}  // namespace msl::ad
