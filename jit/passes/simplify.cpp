// Algebraic and zero simplification (see simplify.h).
#include "jit/passes/simplify.h"

#include <vector>

#include "jit/passes/node_rewriter.h"

namespace msl::jit {

using namespace msl::ir;
using kernels::Prim;

namespace {

bool is_zero_sens(const Node* n) {
  if (n->is_constant()) return std::holds_alternative<NoneValue>(n->value());
  return (n->is_call_of(IrOp::zeros_like) && n->num_args() == 1) ||
         (n->is_call_of(IrOp::env_new) && n->num_args() == 0);
}

bool is_tuple(const Node* n) { return n->is_call_of(IrOp::make_tuple); }

// Whether `c` is the Python scalar `value` (an int or float constant).
bool is_scalar(const Node* c, double value) {
  if (!c->is_constant()) return false;
  if (auto i = std::get_if<int64_t>(&c->value())) return static_cast<double>(*i) == value;
  if (auto d = std::get_if<double>(&c->value())) return *d == value;
  return false;
}

Node* grad_add(FuncGraph& h, Node* n, Rewriter& rw, EffectQuery& effect) {
  Node* a = n->arg(0);
  Node* b = n->arg(1);
  if (is_zero_sens(a) && !effect(a)) return b;
  if (is_zero_sens(b) && !effect(b)) return a;
  if (is_known_tensor(a) && is_known_tensor(b)) return rw.build(h, Prim::add, {a, b}, n);
  if (is_tuple(a) && is_tuple(b) && a->num_args() == b->num_args()) {
    std::vector<Node*> items;
    for (size_t i = 0; i < a->num_args(); ++i) items.push_back(rw.build(h, {n->callee(), a->arg(i), b->arg(i)}, n));
    return rw.build(h, IrOp::make_tuple, std::move(items), n);
  }
  return nullptr;
}

Node* zeros_like(FuncGraph& h, Node* n, Rewriter& rw) {
  Node* t = n->arg(0);
  if (!is_tuple(t)) return nullptr;
  std::vector<Node*> items;
  for (size_t i = 0; i < t->num_args(); ++i) items.push_back(rw.build(h, {n->callee(), t->arg(i)}, n));
  return rw.build(h, IrOp::make_tuple, std::move(items), n);
}

// x for op(x, identity) and op(identity, x) when x is surely a tensor.
Node* identity_operand(const Node* n, double identity) {
  for (size_t i = 0; i < 2; ++i) {
    Node* x = n->arg(i);
    if (is_scalar(n->arg(1 - i), identity) && x->is_apply() && is_known_tensor(x)) return x;
  }
  return nullptr;
}

Node* select_branch(Node* n, EffectQuery& effect) {
  const bool* cond = n->arg(0)->is_constant() ? std::get_if<bool>(&n->arg(0)->value()) : nullptr;
  if (!cond) return nullptr;
  Node* dropped = *cond ? n->arg(2) : n->arg(1);
  if (effect(dropped)) return nullptr;
  return *cond ? n->arg(1) : n->arg(2);
}

}  // namespace

bool run_simplify(IrModule& m, FuncGraph& g) {
  EffectQuery effect;
  return rewrite_nodes(m, g, [&](FuncGraph& h, Node* n, Rewriter& rw) -> Node* {
    if (n->is_call_of(IrOp::grad_add) && n->num_args() == 2) return grad_add(h, n, rw, effect);
    if (n->is_call_of(IrOp::zeros_like) && n->num_args() == 1) return zeros_like(h, n, rw);
    if (n->is_call_of(IrOp::switch_) && n->num_args() == 3) return select_branch(n, effect);
    const PrimRef* p = called_prim(n);
    if (p && n->num_args() == 2 && p->attrs.empty()) {
      if (p->prim == Prim::mul) return identity_operand(n, 1.0);
      if (p->prim == Prim::add) return identity_operand(n, 0.0);
    }
    return nullptr;
  });
}

}  // namespace msl::jit
