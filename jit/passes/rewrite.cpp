// rebuild_with(): re-create the nodes of a graph nest under a substitution.
#include "jit/passes/rewrite.h"

#include <vector>

namespace msl::jit {

using namespace msl::ir;

bool is_effect(const Node* n) {
  if (!n->is_apply()) return false;
  if (n->is_call_of(IrOp::update_state) || n->is_call_of(IrOp::print) || n->is_call_of(IrOp::depend)) return true;
  const PrimRef* p = n->callee()->as_prim();
  return p && kernels::prim_def(p->prim).kind == kernels::PrimKind::InPlace;
}

bool rebuild_with(IrModule& m, FuncGraph& g, const Subst& subst) {
  Subst rebuilt;
  auto resolve = [&](Node* n) {
    for (auto it = subst.find(n); it != subst.end(); it = subst.find(n)) n = it->second;
    if (auto it = rebuilt.find(n); it != rebuilt.end()) n = it->second;
    return n;
  };
  bool changed = false;
  for (FuncGraph* h : nested_graphs(g)) {
    for (Node* n : topo_order(*h)) {
      if (!n->is_apply()) continue;
      std::vector<Node*> ins;
      ins.reserve(n->inputs().size());
      bool diff = false;
      for (Node* in : n->inputs()) {
        ins.push_back(resolve(in));
        diff |= ins.back() != in;
      }
      if (diff) rebuilt[n] = m.new_apply(h, std::move(ins), n->name(), n->loc());
    }
    if (Node* out = h->output()) {
      Node* r = resolve(out);
      if (r != out) {
        h->set_output(r);
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace msl::jit
