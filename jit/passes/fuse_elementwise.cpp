#include "jit/passes/fuse_elementwise.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

#include "jit/passes/rewrite.h"
#include "kernels/errors.h"
#include "kernels/shape_util.h"
#include "kernels/primitives.h"

namespace msl::jit {

using codegen::EwOp;
using ir::Node;

namespace {

bool ew_op(const Node* n, EwOp& op) {
  if (!n->is_apply()) return false;
  const ir::PrimRef* p = n->callee()->as_prim();
  if (!p || !p->attrs.empty()) return false;
  using kernels::Prim;
  switch (p->prim) {
#define MSL_X(e, prim, arity) \
  case Prim::prim:            \
    op = EwOp::e;             \
    return true;
    MSL_EW_OPS(MSL_X)
#undef MSL_X
    default: return false;
  }
}

// How a loop over `out` reads an operand of `shape` (see EwIndexing): full
// when it has out's elements; broadcast when, right-aligned to out and
// leaving aside the dims of size 1 in out, the operand's dims that are not
// 1 are
//   one contiguous block: count is the block's product and inner the
//       product of the dims after it ([C] over [N, C]: (1, C); [1, C, 1, 1]
//       over [N, C, H, W]: (H*W, C); [N, 1] over [N, C]: (C, N));
//   a block and a trailing block that ends at out's last dim, only
//       broadcast dims between them: count and lane are the blocks'
//       products, inner the product of the dims after the first block
//       (a channel-blocked per-channel operand [1, C/16, 1, 1, 16] over
//       [N, C/16, H, W, 16]: (H*W*16, C/16, 16));
// no dims left: a scalar. nullopt for the rest ([C, 1, W, 1] over [N, C,
// H, W, 2] would need three divisions).
std::optional<codegen::EwIndexing> indexing_of(const kernels::Dims& shape, const kernels::Dims& out) {
  if (shape.size() > out.size()) return std::nullopt;
  if (shape == out) return codegen::EwIndexing{};
  // The runs of kept (operand dim == out dim) and broadcast (operand dim 1)
  // dims, dims of size 1 in out skipped: [first, last] is the first kept
  // run, [lane_first, out.size()) the trailing one.
  const int offset = out.size() - shape.size();
  int first = -1, last = -1, lane_first = -1;
  bool broadcast_after_first = false;
  for (int d = 0; d < out.size(); ++d) {
    int64_t sd = d < offset ? 1 : shape[d - offset], od = out[d];
    if (sd != od && sd != 1) return std::nullopt;
    if (od == 1) continue;
    if (sd == 1) {
      if (lane_first >= 0) return std::nullopt;  // a broadcast dim after the trailing block
      broadcast_after_first = first >= 0;
      continue;
    }
    if (first < 0) first = d;
    if (!broadcast_after_first)
      last = d;
    else if (lane_first < 0)
      lane_first = d;
  }
  if (first < 0) return codegen::EwIndexing{1, 1};
  int64_t count = 1, inner = 1, lane = 1;
  for (int d = first; d <= last; ++d) count *= out[d];
  for (int d = last + 1; d < out.size(); ++d) inner *= out[d];
  if (lane_first >= 0)
    for (int d = lane_first; d < out.size(); ++d) lane *= out[d];
  if (count * lane == out.product()) return codegen::EwIndexing{};
  if (inner < 1 || count < 1) return std::nullopt;  // no elements
  return codegen::EwIndexing{inner, count, lane}.normalized();
}

// Adds a node's broadcast pattern to a cluster's: full and scalars fit any,
// otherwise they must be equal (one pattern per loop).
bool join_pattern(codegen::EwIndexing& cluster, const codegen::EwIndexing& node) {
  if (node.full() || node.scalar()) return true;
  if (cluster.full()) cluster = node;
  return cluster == node;
}

class Fuser {
 public:
  Fuser(ir::IrModule& m, Specialized& sp) : m_(m), sp_(sp), g_(*sp.graph) {}

  size_t run() {
    std::vector<Node*> order = ir::topo_order(g_);
    for (size_t i = 0; i < order.size(); ++i) position_[order[i]] = i;
    jit::LocalUses uses = jit::local_uses(g_, order);
    users_ = std::move(uses.users);
    escapes_ = std::move(uses.escapes);
    jit::Subst subst;
    size_t clusters = 0;
    // First whole connected groups of fusible nodes (a gradient's results
    // and everything they share), when that is convex.
    for (std::set<Node*>& group : connected_groups(order)) {
      if (!convex(group) || !one_pattern(group)) continue;
      std::vector<Node*> sums = sums_of(group);
      if (group.size() + sums.size() < 2) continue;
      emit(group, sums, subst);
      taken_.insert(group.begin(), group.end());
      ++clusters;
    }
    // Then clusters grown from single roots.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* root = *it;
      if (taken_.count(root) || !fusible(root)) continue;
      std::set<Node*> cluster = grow(root);
      std::vector<Node*> sums = sums_of(cluster);
      if (cluster.size() + sums.size() < 2) continue;
      emit(cluster, sums, subst);
      taken_.insert(cluster.begin(), cluster.end());
      ++clusters;
    }
    if (clusters) jit::rebuild_with(m_, g_, subst, sp_.keep_types());
    return clusters;
  }

 private:
  const AbsTensor* tensor_type(const Node* n) const { return sp_.tensor_type(n); }

  bool fusible(const Node* n) const { return pattern(n).has_value(); }

  // A number or a float tensor constant whose elements are all equal
  // (uniform_constant), as float32, remembered: a constant tensor is
  // scanned once.
  bool constant(const Node* n, float& v) const {
    auto it = constants_.find(n);
    if (it == constants_.end()) {
      std::optional<double> u = uniform_constant(n, true);
      it = constants_.emplace(n, u ? std::optional<float>(static_cast<float>(*u)) : std::nullopt).first;
    }
    if (it->second) v = *it->second;
    return it->second.has_value();
  }

  // The broadcast pattern of a fusible node's operands (full() when none
  // broadcasts with count > 1); nullopt when the node is not fusible.
  std::optional<codegen::EwIndexing> pattern(const Node* n) const {
    EwOp op;
    if (!ew_op(n, op)) return std::nullopt;
    const AbsTensor* t = tensor_type(n);
    if (!t || t->dtype != kernels::DType::Float32) return std::nullopt;
    codegen::EwIndexing joined;
    for (size_t i = 0; i < n->num_args(); ++i) {
      float c;
      if (constant(n->arg(i), c)) continue;
      const AbsTensor* a = tensor_type(n->arg(i));
      if (!a || a->dtype != kernels::DType::Float32) return std::nullopt;
      std::optional<codegen::EwIndexing> how = indexing_of(a->shape, t->shape);
      if (!how || !join_pattern(joined, *how)) return std::nullopt;
    }
    return joined;
  }

  bool one_pattern(const std::set<Node*>& cluster) const {
    codegen::EwIndexing joined;
    for (Node* n : cluster)
      if (!join_pattern(joined, *pattern(n))) return false;
    return true;
  }

  // How a loop over `shape` sums into r when r is a float32 reduce_sum of
  // an operand of that shape whose kept elements are one EwIndexing
  // pattern: the kept dims (the rest as 1), read like a broadcast operand,
  // form one block ([N, C, H, W] over (0, 2, 3): (H*W, C); [N, C] over 0:
  // (1, C); everything: a scalar) or a block and a trailing block
  // ([N, C/16, H, W, 16] over (0, 2, 3): (H*W*16, C/16, 16)); the result's
  // elements are in that order. nullopt otherwise, and when only dims of
  // size 1 are reduced (nothing to sum).
  std::optional<codegen::EwIndexing> sum_pattern(const Node* r, const kernels::Dims& shape) const {
    const ir::PrimRef* p = r->is_apply() ? r->callee()->as_prim() : nullptr;
    if (!p || p->prim != kernels::Prim::reduce_sum || r->num_args() != 1) return std::nullopt;
    const AbsTensor *t = tensor_type(r), *a = tensor_type(r->arg(0));
    if (!t || !a || t->dtype != kernels::DType::Float32 || a->dtype != kernels::DType::Float32 || a->shape != shape)
      return std::nullopt;
    const int rank = shape.size();
    std::vector<bool> reduced(static_cast<size_t>(rank), false);
    std::vector<int64_t> axes;
    try {
      axes = p->attrs.get_ints("axes");
      for (int64_t ax : axes) reduced[static_cast<size_t>(kernels::normalize_axis("reduce_sum", ax, rank))] = true;
    } catch (const kernels::ValueError&) {
      return std::nullopt;
    }
    kernels::Dims kept;
    for (int d = 0; d < rank; ++d) kept.push_back(axes.empty() || reduced[static_cast<size_t>(d)] ? 1 : shape[d]);
    std::optional<codegen::EwIndexing> how = indexing_of(kept, shape);
    if (!how || how->full() || t->shape.product() != how->elements()) return std::nullopt;
    return how;
  }

  // The reduce_sums a cluster's loop computes besides its outputs: those
  // of a member, or of a full-shaped input that no cluster can hold (a
  // matmul's result), whose pattern fits the cluster's and whose result
  // does not lead back into it (softmax's sum feeds its own division).
  std::vector<Node*> sums_of(const std::set<Node*>& cluster) {
    const kernels::Dims& shape = tensor_type(*cluster.begin())->shape;
    codegen::EwIndexing joined;
    for (Node* n : cluster) join_pattern(joined, *pattern(n));
    std::set<Node*> operands(cluster.begin(), cluster.end());
    for (Node* n : cluster)
      for (size_t i = 0; i < n->num_args(); ++i)
        if (Node* a = n->arg(i); !cluster.count(a) && !fusible(a)) operands.insert(a);
    std::vector<Node*> sums;
    for (Node* a : operands)
      for (Node* u : users_[a]) {
        std::optional<codegen::EwIndexing> how;
        if (summed_.count(u) || u->graph() != &g_ || !(how = sum_pattern(u, shape))) continue;
        if (std::find(sums.begin(), sums.end(), u) != sums.end() || !join_pattern(joined, *how) ||
            reaches_cluster(u, cluster))
          continue;
        sums.push_back(u);
      }
    std::sort(sums.begin(), sums.end(), [&](Node* a, Node* b) { return position_[a] < position_[b]; });
    return sums;
  }

  // Whether a path of users leads from `from` (outside the cluster) back to
  // a cluster member: absorbing a producer whose other users do that would
  // make the cluster depend on itself.
  bool reaches_cluster(Node* from, const std::set<Node*>& cluster) {
    std::vector<Node*> work{from};
    std::set<Node*> seen{from};
    while (!work.empty()) {
      Node* n = work.back();
      work.pop_back();
      for (Node* u : users_[n]) {
        if (cluster.count(u)) return true;
        if (seen.insert(u).second) work.push_back(u);
      }
    }
    return false;
  }

  std::set<Node*> grow(Node* root) {
    std::set<Node*> cluster{root};
    codegen::EwIndexing joined = *pattern(root);
    bool changed = true;
    while (changed) {
      changed = false;
      for (Node* member : std::vector<Node*>(cluster.begin(), cluster.end()))
        for (size_t i = 0; i < member->num_args(); ++i) {
          Node* a = member->arg(i);
          if (cluster.count(a) || taken_.count(a) || a->graph() != &g_ || !fusible(a)) continue;
          if (tensor_type(a)->shape != tensor_type(root)->shape) continue;
          codegen::EwIndexing with_a = joined;
          if (!join_pattern(with_a, *pattern(a))) continue;
          bool convex = true;
          for (Node* u : users_[a])
            if (!cluster.count(u) && reaches_cluster(u, cluster)) convex = false;
          if (!convex) continue;
          cluster.insert(a);
          joined = with_a;
          changed = true;
        }
    }
    return cluster;
  }

  // The fusible nodes joined by producer-consumer edges of one shape.
  std::vector<std::set<Node*>> connected_groups(const std::vector<Node*>& order) {
    std::unordered_map<Node*, Node*> parent;
    std::function<Node*(Node*)> find = [&](Node* n) {
      Node* r = parent[n];
      if (r == n) return n;
      return parent[n] = find(r);
    };
    for (Node* n : order)
      if (fusible(n)) parent[n] = n;
    for (Node* n : order) {
      if (!parent.count(n)) continue;
      for (size_t i = 0; i < n->num_args(); ++i) {
        Node* a = n->arg(i);
        if (parent.count(a) && tensor_type(a)->shape == tensor_type(n)->shape) parent[find(a)] = find(n);
      }
    }
    std::map<Node*, std::set<Node*>> groups;
    for (Node* n : order)
      if (parent.count(n)) groups[find(n)].insert(n);
    std::vector<std::set<Node*>> out;
    for (auto& [root, members] : groups) out.push_back(std::move(members));
    return out;
  }

  bool convex(const std::set<Node*>& cluster) {
    for (Node* m : cluster)
      for (Node* u : users_[m])
        if (!cluster.count(u) && reaches_cluster(u, cluster)) return false;
    return true;
  }

  // A member is an output when something outside the cluster (its sums
  // aside) uses it.
  bool is_output(Node* n, const std::set<Node*>& cluster, const std::vector<Node*>& sums) {
    if (escapes_.count(n)) return true;
    for (Node* u : users_[n])
      if (!cluster.count(u) && std::find(sums.begin(), sums.end(), u) == sums.end()) return true;
    return false;
  }

  // Replaces the cluster's outputs and sums (in `subst`) by the fused
  // node, or by tuple_getitem of it when there are several.
  void emit(const std::set<Node*>& cluster, const std::vector<Node*>& sums, jit::Subst& subst) {
    std::vector<Node*> members(cluster.begin(), cluster.end());
    std::sort(members.begin(), members.end(), [&](Node* a, Node* b) { return position_[a] < position_[b]; });
    const kernels::Dims shape = tensor_type(members.back())->shape;
    codegen::EwProgram p;
    std::map<const Node*, int> value;
    std::vector<Node*> inputs, outputs;
    auto operand = [&](Node* a) {
      if (auto it = value.find(a); it != value.end()) return it->second;
      float c;
      int v;
      if (constant(a, c)) {
        v = p.constant(c);
      } else {
        v = p.input(static_cast<int>(inputs.size()), *indexing_of(tensor_type(a)->shape, shape));
        inputs.push_back(a);
      }
      value[a] = v;
      return v;
    };
    for (Node* n : members) {
      EwOp op;
      ew_op(n, op);
      int a = operand(n->arg(0));
      value[n] = n->num_args() == 2 ? p.binary(op, a, operand(n->arg(1))) : p.unary(op, a);
      if (is_output(n, cluster, sums)) {
        p.outputs.push_back(value[n]);
        outputs.push_back(n);
      }
    }
    std::vector<kernels::Dims> sum_shapes;
    for (Node* r : sums) {
      // An input summed but not otherwise read by the cluster is read here.
      p.reductions.push_back(codegen::EwReduction{operand(r->arg(0)), *sum_pattern(r, shape)});
      sum_shapes.push_back(tensor_type(r)->shape);
      outputs.push_back(r);
      summed_.insert(r);
    }
    Node* last = members.back();
    auto host = std::make_shared<const FusedElementwise>(std::move(p), shape, members.size() + sums.size(),
                                                         std::move(sum_shapes));
    std::vector<Node*> call{g_.constant(ir::HostRef(host), last->loc())};
    // Outputs of clusters fused before this one are named by their fused
    // nodes already, so one rebuilding walk settles the graph.
    for (Node* in : inputs) {
      for (auto it = subst.find(in); it != subst.end(); it = subst.find(in)) in = it->second;
      call.push_back(in);
    }
    Node* fused = g_.apply(call, outputs.size() == 1 ? outputs[0]->name() : "", last->loc());
    if (outputs.size() == 1) {
      sp_.types[fused->id()] = sp_.types.at(outputs[0]->id());
      subst[outputs[0]] = fused;
      return;
    }
    std::vector<AbsValue> items;
    for (size_t k = 0; k < outputs.size(); ++k) {
      Node* item = g_.apply(ir::IrOp::tuple_getitem, {fused, g_.constant(static_cast<int64_t>(k))}, outputs[k]->name(),
                            outputs[k]->loc());
      sp_.types[item->id()] = sp_.types.at(outputs[k]->id());
      items.push_back(sp_.types.at(outputs[k]->id()));
      subst[outputs[k]] = item;
    }
    sp_.types[fused->id()] = abs_tuple(std::move(items));
  }

  ir::IrModule& m_;
  Specialized& sp_;
  ir::FuncGraph& g_;
  std::unordered_map<const Node*, size_t> position_;
  std::unordered_map<const Node*, std::vector<Node*>> users_;
  std::set<const Node*> escapes_;
  std::set<Node*> taken_;
  std::set<const Node*> summed_;  // reduce_sums a fused loop computes
  mutable std::unordered_map<const Node*, std::optional<float>> constants_;
};

}  // namespace

size_t run_fuse_elementwise(ir::IrModule& m, Specialized& sp) { return Fuser(m, sp).run(); }

}  // namespace msl::jit
