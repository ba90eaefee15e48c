// Shared rewriting helper of the clean-up passes.
//
// Nodes are immutable, so a pass never edits one: it decides a substitution
// (old node -> replacement) and rebuild_with() re-creates every node of the
// graph nest whose inputs changed, in the same IrModule, then re-points each
// graph's output (FuncGraph::set_output). Graphs are processed parents
// first, so a closure that captured a rebuilt node of its enclosing graph is
// re-pointed to the new node. Nodes that do not change are kept (same id),
// and the old nodes simply become unreachable.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

using Subst = std::unordered_map<const ir::Node*, ir::Node*>;

// Rebuilds `g` and the graphs nested in it with `subst` applied to every
// input and output (chains a -> b -> c are followed). A replacement must be
// legal where the replaced node is used (a constant, or a node of the same
// or an enclosing graph). `rebuilt` (may be null) is told of every node
// re-created with new inputs (a pass keeping a types side table copies the
// old node's type). Returns true when any output changed.
using RebuiltFn = std::function<void(const ir::Node* old, const ir::Node* rebuilt)>;
bool rebuild_with(ir::IrModule& m, ir::FuncGraph& g, const Subst& subst, const RebuiltFn& rebuilt = {});

// Who uses the nodes of one graph, for the fusion passes: `users` lists the
// Apply nodes of `order` (the graph's topo_order) using each node, once per
// use; `escapes` holds the nodes whose value leaves the body (the output,
// values nested graphs read), which no rewrite of the body may remove.
struct LocalUses {
  std::unordered_map<const ir::Node*, std::vector<ir::Node*>> users;
  std::set<const ir::Node*> escapes;
};
LocalUses local_uses(const ir::FuncGraph& g, const std::vector<ir::Node*>& order);

// The value every element of constant `n` equals, looking through a
// broadcast_to of it (a gradient's seed): a number, or a tensor of at least
// one element, all equal (a NaN among several elements equals nothing);
// nullopt for anything else.
// `floating_only` also refuses integer and bool tensors.
std::optional<double> uniform_constant(const ir::Node* n, bool floating_only = false);

// True for a node on the effect chain: an Apply of update_state, print or
// depend, or of an InPlace kernel primitive (assign) — see lang/ir/node.h.
bool is_effect(const ir::Node* n);

}  // namespace msl::jit
