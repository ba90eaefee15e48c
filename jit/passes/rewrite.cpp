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

namespace {

// One rebuilding walk; `all` collects every replacement made so far, so a
// later walk also re-points nodes created in between.
bool rebuild_once(IrModule& m, FuncGraph& g, Subst& all) {
  auto resolve = [&](Node* n) {
    for (auto it = all.find(n); it != all.end(); it = all.find(n)) n = it->second;
    return n;
  };
  bool changed = false;
  for (FuncGraph* h : nested_graphs(g)) {
    for (Node* n : topo_order(*h)) {
      if (!n->is_apply() || all.count(n)) continue;
      std::vector<Node*> ins;
      ins.reserve(n->inputs().size());
      bool diff = false;
      for (Node* in : n->inputs()) {
        ins.push_back(resolve(in));
        diff |= ins.back() != in;
      }
      if (diff) {
        all[n] = m.new_apply(h, std::move(ins), n->name(), n->loc());
        changed = true;
      }
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

}  // namespace

bool rebuild_with(IrModule& m, FuncGraph& g, const Subst& subst) {
  // Replacement nodes may themselves name replaced nodes (a rule built them
  // from the old inputs); they only become reachable after a walk, so walk
  // until nothing reachable names a replaced node.
  Subst all = subst;
  bool changed = false;
  for (int round = 0; round < 64 && rebuild_once(m, g, all); ++round) changed = true;
  return changed;
}

}  // namespace msl::jit
