// Dead-code elimination (see dce.h).
#include "jit/passes/dce.h"

#include <unordered_map>
#include <variant>

#include "jit/passes/rewrite.h"

namespace msl::jit {

using namespace msl::ir;

bool run_dce(IrModule& m, FuncGraph& g) {
  Subst subst;
  for (FuncGraph* h : nested_graphs(g)) {
    // Whether a node of h is, or depends within h on, an effect.
    std::unordered_map<const Node*, bool> effect;
    for (Node* n : topo_order(*h)) {
      bool e = is_effect(n);
      for (Node* in : n->inputs())
        if (auto it = effect.find(in); it != effect.end()) e |= it->second;
      effect[n] = e;
    }
    for (Node* n : topo_order(*h)) {
      if (!n->is_call_of(IrOp::tuple_getitem)) continue;
      Node* tup = n->arg(0);
      const int64_t* idx = std::get_if<int64_t>(&n->arg(1)->value());
      if (!tup->is_call_of(IrOp::make_tuple) || !idx || !n->arg(1)->is_constant()) continue;
      if (*idx < 0 || static_cast<size_t>(*idx) >= tup->num_args()) continue;
      bool drops_effect = false;
      for (size_t i = 0; i < tup->num_args(); ++i) {
        auto it = effect.find(tup->arg(i));
        if (i != static_cast<size_t>(*idx) && it != effect.end() && it->second) drops_effect = true;
      }
      if (!drops_effect) subst[n] = tup->arg(static_cast<size_t>(*idx));
    }
  }
  if (subst.empty()) return false;
  rebuild_with(m, g, subst);
  return true;
}

}  // namespace msl::jit
