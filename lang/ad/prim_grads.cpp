// Synthesized J graphs that do not come from a primal graph: J_p of a kernel
// primitive (calling its gradient rule), the wrappers that give partial
// applications the J calling convention, and grad_graph for the API layer.
//
//   J_p(x1..xn)  = make_tuple(out, partial(@B_p, x1..xn, out)), out = p(x1..xn)
//   B_p(x1..xn, out, dout) = r = RULE(x1..xn, out, dout)
//                            make_tuple(env_new(), r[0], ..., r[n-1])
//   (variadic p: r = RULE(make_tuple(x1..xn), out, dout), dx_i = r[0][i])
//
//   Jpartial_k_m(Jf, a1..ak, b1..bm) = pair = Jf(a1..ak, b1..bm)
//                            make_tuple(pair[0], partial(@Bpartial_k_m, pair[1]))
//   Bpartial_k_m(bp, dout) = r = bp(dout)
//                            make_tuple(env{-1: r[0], -2: r[1], .., -1-k: r[k]},
//                                       r[k+1], ..., r[k+m])
// so J(partial(f, a..)) = partial(@Jpartial_k_m, Jf, Ja..) returns, when
// called, a bprop whose first item is the partial value's own sensitivity:
// an env holding the sensitivity of f at key -1 and of bound argument i at
// key -1-i (see grad.h).
//
// These graphs are top level and shared; they have no source location (the
// nodes that call them carry the primal one).
#include "lang/ad/grad_impl.h"

namespace msl::ad {

using ir::FuncGraph;
using ir::IrOp;
using ir::Loc;
using ir::Node;

namespace {
Node* item(FuncGraph* g, Node* t, int64_t i) { return g->apply(IrOp::tuple_getitem, {t, g->constant(i)}); }
}  // namespace

FuncGraph* GradTransformer::Impl::j_prim(const ir::PrimRef& p, int num_inputs, const Loc& loc) {
  const kernels::PrimDef& def = kernels::prim_def(p.prim);
  const std::string name = def.name;
  bool variadic = def.inputs < 0;
  if (variadic && num_inputs < 0)
    fail("the variadic primitive '" + name + "' used as a value cannot be differentiated", loc);
  int n = num_inputs < 0 ? def.inputs : num_inputs;
  // An in-place primitive takes the effect state as one extra last input.
  bool with_state = def.kind == kernels::PrimKind::InPlace && n == def.inputs + 1;
  if (!variadic && n != def.inputs && !with_state)
    fail("primitive '" + name + "' takes " + std::to_string(def.inputs) + " inputs, got " + std::to_string(n), loc);
  for (auto& [q, qn, jp] : jprims)
    if (q.prim == p.prim && qn == n && q.attrs.items() == p.attrs.items()) return jp;

  ir::ConstValue rule = rule_for ? rule_for(p) : ir::ConstValue{};
  if (std::holds_alternative<ir::NoneValue>(rule)) fail("no gradient rule for primitive '" + name + "'", loc);

  FuncGraph* jp = m.new_graph("J_" + name);
  FuncGraph* bp = m.new_graph("B_" + name);
  bp->flags().set("is_bprop", true);
  std::vector<Node*> call{jp->constant(p)}, bound{jp->constant(bp)};
  for (int i = 0; i < n; ++i) {
    Node* x = jp->add_param("x" + std::to_string(i + 1));
    call.push_back(x);
    bound.push_back(x);
  }
  Node* out = jp->apply(std::move(call), "out");
  bound.push_back(out);
  jp->set_output(jp->apply(IrOp::make_tuple, {out, jp->apply(IrOp::partial, std::move(bound))}));

  std::vector<Node*> xs;
  for (int i = 0; i < n; ++i) xs.push_back(bp->add_param("x" + std::to_string(i + 1)));
  Node* bout = bp->add_param("out");
  Node* dout = bp->add_param("dout");
  int tensor_inputs = with_state ? n - 1 : n;
  std::vector<Node*> rule_call{bp->constant(rule)};
  if (variadic)
    rule_call.push_back(bp->apply(IrOp::make_tuple, xs));
  else
    rule_call.insert(rule_call.end(), xs.begin(), xs.begin() + tensor_inputs);
  rule_call.push_back(bout);
  rule_call.push_back(dout);
  Node* r = bp->apply(std::move(rule_call), "r");
  Node* grads = variadic ? item(bp, r, 0) : r;
  std::vector<Node*> result{bp->apply(IrOp::env_new, {})};
  for (int i = 0; i < tensor_inputs; ++i) result.push_back(item(bp, grads, i));
  if (with_state) result.push_back(bp->apply(IrOp::zeros_like, {xs.back()}));
  bp->set_output(bp->apply(IrOp::make_tuple, std::move(result)));
  jprims.emplace_back(p, n, jp);
  return jp;
}

FuncGraph* GradTransformer::Impl::partial_wrapper(size_t k, size_t rest) {
  auto key = std::make_pair(k, rest);
  if (auto it = partial_wrappers.find(key); it != partial_wrappers.end()) return it->second;
  std::string suffix = std::to_string(k) + "_" + std::to_string(rest);
  FuncGraph* w = m.new_graph("Jpartial_" + suffix);
  FuncGraph* b = m.new_graph("Bpartial_" + suffix);
  b->flags().set("is_bprop", true);
  partial_wrappers[key] = w;

  Node* f = w->add_param("f");
  std::vector<Node*> call{f};
  for (size_t i = 0; i < k + rest; ++i) call.push_back(w->add_param(i < k ? "a" : "b"));
  Node* pair = w->apply(std::move(call), "pair");
  Node* back = w->apply(IrOp::partial, {w->constant(b), item(w, pair, 1)});
  w->set_output(w->apply(IrOp::make_tuple, {item(w, pair, 0), back}));

  Node* bprop = b->add_param("bp");
  Node* dout = b->add_param("dout");
  Node* r = b->apply({bprop, dout}, "r");
  Node* self = b->apply(IrOp::env_new, {});
  for (size_t i = 0; i <= k; ++i)
    self = b->apply(IrOp::env_setitem, {self, b->constant(partial_key(i)), item(b, r, static_cast<int64_t>(i))});
  std::vector<Node*> result{self};
  for (size_t i = k + 1; i <= k + rest; ++i) result.push_back(item(b, r, static_cast<int64_t>(i)));
  b->set_output(b->apply(IrOp::make_tuple, std::move(result)));
  return w;
}

int GradTransformer::Impl::static_arity(const Node* f) {
  if (FuncGraph* h = f->as_graph()) return static_cast<int>(h->params().size());
  if (const ir::PrimRef* p = f->as_prim()) {
    const kernels::PrimDef& def = kernels::prim_def(p->prim);
    return def.inputs < 0 ? -1 : def.inputs + (def.kind == kernels::PrimKind::InPlace ? 1 : 0);
  }
  if (f->is_call_of(IrOp::partial) && f->num_args() >= 1) {
    int inner = static_arity(f->arg(0));
    int bound = static_cast<int>(f->num_args()) - 1;
    return inner < bound ? -1 : inner - bound;
  }
  return -1;
}

FuncGraph* GradTransformer::Impl::grad_graph(FuncGraph* g, bool sens_param) {
  if (!g) throw GradError("grad of a null graph", "");
  if (!fvs(g).empty() || g->parent())
    fail("grad_graph needs a top-level graph; @" + g->name() + " is nested in another graph", g->loc());
  if (auto it = grad_graphs.find({g, sens_param}); it != grad_graphs.end()) return it->second;
  FuncGraph* jg = j_graph(g);
  Loc loc = g->loc().valid() ? g->loc() : (g->output() ? g->output()->loc() : Loc{});
  FuncGraph* gg = m.new_graph("grad_" + g->name(), nullptr, loc);
  std::vector<Node*> call{gg->constant(jg, loc)};
  for (Node* p : g->params()) call.push_back(gg->add_param(p->name(), p->loc()));
  Node* sens = sens_param ? gg->add_param("sens", loc) : nullptr;
  Node* pair = gg->apply(std::move(call), "", loc);
  Node* out = op_apply(gg, IrOp::tuple_getitem, {pair, gg->constant(int64_t{0}, loc)}, loc, "out");
  Node* bprop = op_apply(gg, IrOp::tuple_getitem, {pair, gg->constant(int64_t{1}, loc)}, loc);
  if (!sens) sens = op_apply(gg, IrOp::ones_like, {out}, loc);
  Node* r = gg->apply({bprop, sens}, "", loc);
  std::vector<Node*> grads;
  for (size_t i = 0; i < g->params().size(); ++i)
    grads.push_back(op_apply(gg, IrOp::tuple_getitem, {r, gg->constant(static_cast<int64_t>(i + 1), loc)}, loc));
  Node* dxs = op_apply(gg, IrOp::make_tuple, std::move(grads), loc);
  gg->set_output(op_apply(gg, IrOp::make_tuple, {out, dxs}, loc));
  grad_graphs[{g, sens_param}] = gg;
  return gg;
}

}  // namespace msl::ad
