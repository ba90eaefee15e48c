// Last uses of a graph's values (see liveness.h).
#include "lang/ir/liveness.h"

#include <functional>
#include <queue>
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

bool writes_operand(const Node* n) {
  if (!n->is_apply()) return false;
  const PrimRef* p = n->callee()->as_prim();
  return p && kernels::prim_def(p->prim).kind == kernels::PrimKind::InPlace;
}

// topo_order with in-place writes deferred while other nodes are ready;
// ties keep topo_order's positions.
std::vector<Node*> schedule(const FuncGraph& g) {
  std::vector<Node*> dfs = topo_order(g);
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < dfs.size(); ++i) index[dfs[i]] = i;
  std::vector<int> pending(dfs.size(), 0);
  std::vector<std::vector<size_t>> users(dfs.size());
  bool any_write = false;
  for (size_t i = 0; i < dfs.size(); ++i) {
    any_write |= writes_operand(dfs[i]);
    for (const Node* in : dfs[i]->inputs()) {
      auto it = index.find(in);
      if (it == index.end()) continue;
      ++pending[i];
      users[it->second].push_back(i);
    }
  }
  if (!any_write) return dfs;
  using MinHeap = std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>>;
  MinHeap reads, writes;
  auto ready = [&](size_t i) { (writes_operand(dfs[i]) ? writes : reads).push(i); };
  for (size_t i = 0; i < dfs.size(); ++i)
    if (pending[i] == 0) ready(i);
  std::vector<Node*> order;
  order.reserve(dfs.size());
  while (!reads.empty() || !writes.empty()) {
    MinHeap& from = reads.empty() ? writes : reads;
    size_t i = from.top();
    from.pop();
    order.push_back(dfs[i]);
    for (size_t u : users[i])
      if (--pending[u] == 0) ready(u);
  }
  return order;
}

}  // namespace

Liveness liveness(const FuncGraph& g) {
  Liveness lv;
  lv.order = schedule(g);
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
