// Dead nested graphs (see dead_graphs.h).
#include "jit/passes/dead_graphs.h"

#include <unordered_set>
#include <vector>

namespace msl::jit {

using namespace msl::ir;

namespace {

bool is_retired(const FuncGraph& h) {
  const Node* out = h.output();
  return out && out->is_constant() && std::holds_alternative<NoneValue>(out->value());
}

}  // namespace

bool run_dead_graphs(IrModule& m, FuncGraph& g) {
  std::vector<FuncGraph*> nest = nested_graphs(g);
  std::unordered_set<const FuncGraph*> in_nest(nest.begin(), nest.end());
  std::unordered_set<const FuncGraph*> live{&g};
  std::unordered_set<const Node*> seen;
  std::vector<const Node*> todo;
  auto reach_graph = [&](const FuncGraph* k) {
    if (in_nest.count(k) && live.insert(k).second && k->output()) todo.push_back(k->output());
  };
  // Roots: g's output, and nest graphs that graphs outside the nest refer to.
  if (g.output()) todo.push_back(g.output());
  for (const FuncGraph* x : m.graphs()) {
    if (in_nest.count(x)) continue;
    for (const Node* n : topo_order(*x))
      for (const Node* in : n->inputs())
        if (const FuncGraph* k = in->as_graph()) reach_graph(k);
    if (x->output())
      if (const FuncGraph* k = x->output()->as_graph()) reach_graph(k);
  }
  // Node-level reachability, so that nodes kept only by dead closures do not
  // keep other closures alive.
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    if (const FuncGraph* k = n->as_graph()) reach_graph(k);
    for (const Node* in : n->inputs()) todo.push_back(in);
  }
  bool changed = false;
  for (FuncGraph* k : nest) {
    if (live.count(k) || is_retired(*k)) continue;
    k->set_output(m.new_constant(NoneValue{}, k));
    changed = true;
  }
  return changed;
}

}  // namespace msl::jit
