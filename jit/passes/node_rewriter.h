// Local rewriting, node by node: the driver of the peephole passes
// (inline, partial_elim, tuple_elim, env_elim, simplify), and the small
// pattern queries they share.
//
// rebuild_with() (rewrite.h) applies a substitution decided in advance.
// The peephole passes need more: a rewrite must see the already-rewritten
// form of its inputs, so that rewrites cascade within one run
// (tuple_getitem(tuple_getitem(make_tuple(make_tuple(a)), 0), 0) -> a), and
// the nodes a rewrite builds must never refer to replaced nodes. So
// rewrite_nodes() walks the nest once, depth first (a graph before its
// children, a graph's whole nest before its next sibling, so an inlined
// callee and its closures are copied all rewritten or all not) and each
// graph in topological order, and for every Apply
//   1. re-creates it when one of its inputs was replaced (nodes are
//      immutable), then
//   2. offers the result to the pass's rule, which returns a replacement
//      (built from the node's inputs, which are final) or null; the
//      replacement is offered to the rule again, up to kMaxRuleChain times.
//      A rule builds its new nodes with Rewriter::build, which offers each
//      one to the rule as well, so the pieces of a replacement are
//      rewritten too (env_getitem(env_add(a, b), k, d) builds two reads
//      that resolve at once), up to kMaxBuildDepth nested builds.
// Closures read their enclosing graph's nodes through the same map, so they
// follow the rewrites of their parents. Finally each graph's output is
// re-pointed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// How many successive rewrites of one node a single walk follows; the
// pipeline's fixed-point loop picks up anything beyond.
inline constexpr int kMaxRuleChain = 64;
// How deeply rules may build nodes that are rewritten while being built
// (Rewriter::build); deeper pieces are left for the next walk.
inline constexpr int kMaxBuildDepth = 32;

class Rewriter;
// A rule: `n` is an Apply of graph `h` whose inputs are final. Returns a
// replacement legal where `n` is used (a node of `h` or an enclosing graph,
// or a constant), or null to keep `n`.
using NodeRule = std::function<ir::Node*(ir::FuncGraph& h, ir::Node* n, Rewriter& rw)>;

// What a rule may ask of the walk.
class Rewriter {
 public:
  Rewriter(ir::IrModule& m, const NodeRule& rule) : m_(m), rule_(rule) {}
  // The current replacement of a node visited so far (the node itself when
  // unchanged or not visited yet).
  ir::Node* resolve(ir::Node* n) const;
  // The node the walk re-created `n` from (its inputs were replaced), or
  // `n` itself: analyses made before the walk still apply to it.
  const ir::Node* origin(const ir::Node* n) const;
  // A new Apply of `h` (inputs must be final), already offered to the rule:
  // the node to use in its place. `like` gives the debug name and location.
  ir::Node* build(ir::FuncGraph& h, std::vector<ir::Node*> inputs, const ir::Node* like);
  ir::Node* build(ir::FuncGraph& h, ir::IrOp op, std::vector<ir::Node*> args, const ir::Node* like);
  ir::Node* build(ir::FuncGraph& h, kernels::Prim p, std::vector<ir::Node*> args, const ir::Node* like);

 private:
  friend bool rewrite_nodes(ir::IrModule& m, ir::FuncGraph& g, const NodeRule& rule);
  // Offers `n` (an Apply of h) to the rule until it settles.
  ir::Node* settle(ir::FuncGraph& h, ir::Node* n);

  ir::IrModule& m_;
  const NodeRule& rule_;
  std::unordered_map<const ir::Node*, ir::Node*> replaced_;
  std::unordered_map<const ir::Node*, const ir::Node*> origin_;
  int depth_ = 0;
  bool fired_ = false;
};

// Walks `g` and its nested graphs with `rule`. Returns true when the rule
// replaced any node.
bool rewrite_nodes(ir::IrModule& m, ir::FuncGraph& g, const NodeRule& rule);

// `i` as an index into a tuple of `size` items (negative counting from the
// end), or -1 when out of range.
int64_t tuple_index(int64_t i, size_t size);
// The int value of an int64 constant node (not a bool, not a tensor).
std::optional<int64_t> const_int(const ir::Node* n);
// The kernel primitive `n` calls, or null.
const ir::PrimRef* called_prim(const ir::Node* n);
// Whether `n` surely evaluates to one tensor: a tensor constant, or a call of
// a kernel primitive with one output.
bool is_known_tensor(const ir::Node* n);

// Whether a node is, or depends within its own graph on, an effect
// (rewrite.h: is_effect). A pass must not drop such a node from the only
// path that kept it alive. Nodes `kept` says another path keeps alive
// (anchors.h) hold no effect of their own for this question: the walk
// stops there. Answers are memoized per node.
class EffectQuery {
 public:
  explicit EffectQuery(std::function<bool(const ir::Node*)> kept = nullptr) : kept_(std::move(kept)) {}
  bool operator()(const ir::Node* n);

 private:
  std::function<bool(const ir::Node*)> kept_;
  std::unordered_map<const ir::Node*, bool> memo_;
};

}  // namespace msl::jit
