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
  // Roots: g's output, and nest graphs that graphs outside the nest refer
  // to. A graph that captures values can only be named within its parent's
  // scope (g's top-level nest); one that captures nothing may be named from
  // anywhere, so only when such a graph would be dead is the module scanned.
  if (g.output()) todo.push_back(g.output());
  auto propagate = [&] {
    while (!todo.empty()) {
      const Node* n = todo.back();
      todo.pop_back();
      if (!seen.insert(n).second) continue;
      if (const FuncGraph* k = n->as_graph()) reach_graph(k);
      for (const Node* in : n->inputs()) todo.push_back(in);
    }
  };
  auto scan = [&](const std::vector<FuncGraph*>& graphs) {
    for (const FuncGraph* x : graphs) {
      if (in_nest.count(x)) continue;
      for (const Node* n : topo_order(*x))
        for (const Node* in : n->inputs())
          if (const FuncGraph* k = in->as_graph()) reach_graph(k);
      if (x->output())
        if (const FuncGraph* k = x->output()->as_graph()) reach_graph(k);
    }
  };
  const FuncGraph* top = &g;
  while (top->parent()) top = top->parent();
  if (top != &g) scan(nested_graphs(*top));
  propagate();
  bool closed_dead = false;
  for (FuncGraph* k : nest)
    if (!live.count(k) && !is_retired(*k) && free_variables(*k).empty()) closed_dead = true;
  if (closed_dead) {
    scan(m.graphs());
    propagate();
  }
  bool changed = false;
  for (FuncGraph* k : nest) {
    if (live.count(k) || is_retired(*k)) continue;
    k->set_output(m.new_constant(NoneValue{}, k));
    m.remove_graph(k);
    changed = true;
  }
  return changed;
}

}  // namespace msl::jit
