// Environment elimination (see env_elim.h).
#include "jit/passes/env_elim.h"

#include <optional>

#include "jit/passes/anchors.h"
#include "jit/passes/node_rewriter.h"

namespace msl::jit {

using namespace msl::ir;

namespace {

bool is_env_new(const Node* n) { return n->is_call_of(IrOp::env_new) && n->num_args() == 0; }

Node* getitem(FuncGraph& h, Node* n, Rewriter& rw, EffectQuery& effect) {
  Node* env = n->arg(0);
  Node* key = n->arg(1);
  Node* dflt = n->arg(2);
  std::optional<int64_t> k = const_int(key);
  if (!k) return nullptr;
  if (is_env_new(env)) return dflt;
  if (env->is_call_of(IrOp::env_setitem) && env->num_args() == 3) {
    std::optional<int64_t> set = const_int(env->arg(1));
    if (!set) return nullptr;
    if (*set == *k) return effect(env->arg(0)) ? nullptr : env->arg(2);
    if (effect(env->arg(2))) return nullptr;
    return rw.build(h, {n->callee(), env->arg(0), key, dflt}, n);
  }
  if (env->is_call_of(IrOp::env_add) && env->num_args() == 2 && dflt->is_call_of(IrOp::zeros_like)) {
    Node* a = rw.build(h, {n->callee(), env->arg(0), key, dflt}, n);
    Node* b = rw.build(h, {n->callee(), env->arg(1), key, dflt}, n);
    return rw.build(h, IrOp::grad_add, {a, b}, n);
  }
  return nullptr;
}

Node* add(Node* n) {
  if (is_env_new(n->arg(0))) return n->arg(1);
  if (is_env_new(n->arg(1))) return n->arg(0);
  return nullptr;
}

}  // namespace

bool run_env_elim(IrModule& m, FuncGraph& g) {
  Anchors anchors(g);
  std::optional<EffectQuery> check;
  return rewrite_nodes(m, g, [&](FuncGraph& h, Node* n, Rewriter& rw) -> Node* {
    if (!check) check.emplace(drop_check(anchors, rw));
    if (n->is_call_of(IrOp::env_getitem) && n->num_args() == 3) return getitem(h, n, rw, *check);
    if (n->is_call_of(IrOp::env_add) && n->num_args() == 2) return add(n);
    return nullptr;
  });
}

}  // namespace msl::jit
