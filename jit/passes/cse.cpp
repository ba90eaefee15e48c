// Common-subexpression elimination (see cse.h).
#include "jit/passes/cse.h"

#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/passes/rewrite.h"

namespace msl::jit {

using namespace msl::ir;

namespace {

// A key that is equal exactly for constants CSE considers equal.
std::string const_key(const ConstValue& v) {
  std::string key = std::to_string(v.index()) + ":";
  if (auto d = std::get_if<double>(&v)) {
    uint64_t bits;
    std::memcpy(&bits, d, sizeof bits);
    return key + std::to_string(bits);
  }
  // Host objects: by identity (their printed names need not be unique).
  if (auto h = std::get_if<HostRef>(&v)) return key + std::to_string(reinterpret_cast<uintptr_t>(h->get()));
  return key + const_value_str(v);
}

// Random draws and collectives: two equal calls are two different events.
bool is_event(const Node* n) {
  const PrimRef* p = n->is_apply() ? n->callee()->as_prim() : nullptr;
  return p && (kernels::is_random(p->prim) || kernels::is_collective(p->prim));
}

// Whether calling `g` twice with the same arguments surely gives the same
// result: no effect or random primitive in it, its nested graphs or the
// graphs it calls, and no call of a computed callee. `memo` holds finished
// answers; a graph under examination counts as pure (recursion).
bool is_pure_graph(const FuncGraph* g, std::unordered_map<const FuncGraph*, bool>& memo) {
  if (auto it = memo.find(g); it != memo.end()) return it->second;
  memo[g] = true;
  bool pure = true;
  for (FuncGraph* h : nested_graphs(*g))
    for (Node* n : topo_order(*h)) {
      if (!pure) break;
      if (!n->is_apply()) continue;
      if (is_effect(n) || is_event(n)) pure = false;
      else if (FuncGraph* callee = n->callee()->as_graph()) pure = is_pure_graph(callee, memo);
      else if (!n->callee()->is_constant() || n->callee()->as_host()) pure = false;
    }
  memo[g] = pure;
  return pure;
}

bool never_merged(const Node* n, std::unordered_map<const FuncGraph*, bool>& pure_memo) {
  if (is_effect(n) || is_event(n)) return true;
  const Node* callee = n->callee();
  if (!callee->is_constant()) return true;  // a computed function: unknown body
  if (callee->as_host()) return true;       // host code may have effects
  if (FuncGraph* g = callee->as_graph()) return !is_pure_graph(g, pure_memo);
  return false;
}

}  // namespace

bool run_cse(IrModule& m, FuncGraph& g) {
  Subst subst;
  std::unordered_map<const FuncGraph*, bool> pure_memo;
  auto resolve = [&](Node* n) {
    for (auto it = subst.find(n); it != subst.end(); it = subst.find(n)) n = it->second;
    return n;
  };
  for (FuncGraph* h : nested_graphs(g)) {
    std::map<std::string, Node*> consts;
    std::map<std::vector<const Node*>, Node*> applies;
    auto merge_const = [&](Node* c) {
      auto [it, fresh] = consts.emplace(const_key(c->value()), c);
      // The kept constant must be legal wherever `c` is used: `c` is owned by
      // this graph (so used only here and in nested graphs) or the kept one
      // is module-level.
      if (!fresh && it->second != c && (c->graph() == h || !it->second->graph())) subst[c] = it->second;
    };
    for (Node* n : topo_order(*h)) {
      if (n->is_constant()) merge_const(n);
      if (!n->is_apply()) continue;
      // Graph-less constants are not in the order: meet them at their use.
      for (Node* in : n->inputs())
        if (in->is_constant() && !subst.count(in)) merge_const(in);
      if (never_merged(n, pure_memo)) continue;
      std::vector<const Node*> key;
      for (Node* in : n->inputs()) key.push_back(resolve(in));
      auto [it, fresh] = applies.emplace(std::move(key), n);
      if (!fresh) subst[n] = it->second;
    }
  }
  if (subst.empty()) return false;
  rebuild_with(m, g, subst);
  return true;
}

}  // namespace msl::jit
