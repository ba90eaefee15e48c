// Tuple simplification (see tuple_elim.h).
#include "jit/passes/tuple_elim.h"

#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "jit/passes/anchors.h"
#include "jit/passes/node_rewriter.h"
#include "jit/passes/rewrite.h"

namespace msl::jit {

using namespace msl::ir;

namespace {

// Whether dropping the items of `tup` other than `keep` (-1: all of them)
// would drop an effect.
bool drops_effect(const Node* tup, int64_t keep, EffectQuery& effect) {
  for (size_t k = 0; k < tup->num_args(); ++k)
    if (static_cast<int64_t>(k) != keep && effect(tup->arg(k))) return true;
  return false;
}

Node* getitem(FuncGraph& h, Node* n, Rewriter& rw, EffectQuery& effect) {
  Node* tup = n->arg(0);
  std::optional<int64_t> idx = const_int(n->arg(1));
  if (!idx) return nullptr;
  if (tup->is_call_of(IrOp::make_tuple)) {
    int64_t i = tuple_index(*idx, tup->num_args());
    if (i < 0 || drops_effect(tup, i, effect)) return nullptr;
    return tup->arg(static_cast<size_t>(i));
  }
  if (tup->is_call_of(IrOp::depend) && tup->num_args() == 2 && tup->arg(0)->is_call_of(IrOp::make_tuple)) {
    // A tuple ordered after an effect (the gradients passed to one
    // optimizer updater after another's update): the item, ordered after it.
    Node* items = tup->arg(0);
    int64_t i = tuple_index(*idx, items->num_args());
    if (i < 0 || drops_effect(items, i, effect)) return nullptr;
    return rw.build(h, {tup->callee(), items->arg(static_cast<size_t>(i)), tup->arg(1)}, n);
  }
  if (tup->is_call_of(IrOp::tuple_setitem) && tup->num_args() == 3) {
    std::optional<int64_t> set = const_int(tup->arg(1));
    if (!set || *set < 0 || *idx < 0) return nullptr;
    if (*set == *idx) return effect(tup->arg(0)) ? nullptr : tup->arg(2);
    if (effect(tup->arg(2))) return nullptr;
    return rw.build(h, {n->callee(), tup->arg(0), n->arg(1)}, n);
  }
  return nullptr;
}

Node* setitem(FuncGraph& h, Node* n, Rewriter& rw, EffectQuery& effect) {
  Node* tup = n->arg(0);
  std::optional<int64_t> idx = const_int(n->arg(1));
  if (!idx || !tup->is_call_of(IrOp::make_tuple)) return nullptr;
  int64_t i = tuple_index(*idx, tup->num_args());
  if (i < 0 || effect(tup->arg(static_cast<size_t>(i)))) return nullptr;
  std::vector<Node*> ins = tup->inputs();
  ins[static_cast<size_t>(i) + 1] = n->arg(2);
  return rw.build(h, std::move(ins), n);
}

Node* len(FuncGraph& h, Node* n, Rewriter& rw, EffectQuery& effect) {
  Node* tup = n->arg(0);
  if (tup->is_call_of(IrOp::make_tuple)) {
    if (drops_effect(tup, -1, effect)) return nullptr;
    return h.constant(static_cast<int64_t>(tup->num_args()), n->loc());
  }
  if (tup->is_call_of(IrOp::tuple_setitem) && tup->num_args() == 3 && !effect(tup->arg(2)))
    return rw.build(h, {n->callee(), tup->arg(0)}, n);
  return nullptr;
}

}  // namespace

bool run_tuple_elim(IrModule& m, FuncGraph& g) {
  Anchors anchors(g);
  std::optional<EffectQuery> check;
  return rewrite_nodes(m, g, [&](FuncGraph& h, Node* n, Rewriter& rw) -> Node* {
    if (!check) check.emplace(drop_check(anchors, rw));
    EffectQuery& effect = *check;
    // Malformed arities are the verifier's to report, not ours to read past.
    if (n->is_call_of(IrOp::tuple_getitem) && n->num_args() == 2) return getitem(h, n, rw, effect);
    if (n->is_call_of(IrOp::tuple_setitem) && n->num_args() == 3) return setitem(h, n, rw, effect);
    if (n->is_call_of(IrOp::tuple_len) && n->num_args() == 1) return len(h, n, rw, effect);
    return nullptr;
  });
}

}  // namespace msl::jit
