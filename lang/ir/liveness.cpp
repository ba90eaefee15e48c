// Last uses of a graph's values (see liveness.h).
#include "lang/ir/liveness.h"

#include <unordered_map>
#include <unordered_set>

namespace msl::ir {

namespace {

// The values of g closures need: free variables of g's nested graphs owned
// by g, and the values of g they are computed from.
std::unordered_set<const Node*> captured_values(const FuncGraph& g) {
  std::unordered_set<const Node*> pinned;
  std::vector<const Node*> stack;
  for (FuncGraph* h : nested_graphs(g)) {
    if (h == &g) continue;
    for (Node* fv : free_variables(*h))
      if (fv->graph() == &g) stack.push_back(fv);
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!pinned.insert(n).second) continue;
    for (const Node* in : n->inputs())
      if (in->graph() == &g && !in->is_constant()) stack.push_back(in);
  }
  return pinned;
}

}  // namespace

Liveness liveness(const FuncGraph& g) {
  Liveness lv;
  lv.order = topo_order(g);
  lv.release.resize(lv.order.size());
  std::unordered_set<const Node*> pinned = captured_values(g);
  if (const Node* out = g.output()) pinned.insert(out);
  std::unordered_map<const Node*, size_t> last_use;
  for (size_t k = 0; k < lv.order.size(); ++k) {
    const Node* n = lv.order[k];
    if (!n->is_apply()) continue;
    for (const Node* in : n->inputs())
      if (in->graph() == &g && !in->is_constant()) last_use[in] = k;
  }
  for (const auto& [n, k] : last_use)
    if (!pinned.count(n)) lv.release[k].push_back(n);
  return lv;
}

}  // namespace msl::ir
