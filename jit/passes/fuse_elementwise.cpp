#include "jit/passes/fuse_elementwise.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "jit/passes/rewrite.h"
#include "kernels/primitives.h"

namespace msl::jit {

using codegen::EwOp;
using ir::Node;

kernels::Tensor FusedElementwise::run(const std::vector<kernels::Tensor>& inputs) const {
  std::vector<kernels::Tensor> dense;
  std::vector<const float*> ptrs;
  for (const kernels::Tensor& t : inputs) {
    dense.push_back(t.is_contiguous() ? t : t.contiguous());
    ptrs.push_back(dense.back().data<float>());
  }
  kernels::Tensor out(kernels::DType::Float32, shape_);
  codegen::ElementwiseJit::instance().run(program_, ptrs.data(), out.data<float>(), out.numel());
  return out;
}

namespace {

bool ew_op(const Node* n, EwOp& op) {
  if (!n->is_apply()) return false;
  const ir::PrimRef* p = n->callee()->as_prim();
  if (!p || !p->attrs.empty()) return false;
  using kernels::Prim;
  switch (p->prim) {
    case Prim::add: op = EwOp::Add; return true;
    case Prim::sub: op = EwOp::Sub; return true;
    case Prim::mul: op = EwOp::Mul; return true;
    case Prim::div: op = EwOp::Div; return true;
    case Prim::neg: op = EwOp::Neg; return true;
    case Prim::relu: op = EwOp::Relu; return true;
    case Prim::relu_grad: op = EwOp::ReluGrad; return true;
    case Prim::maximum: op = EwOp::Max; return true;
    case Prim::minimum: op = EwOp::Min; return true;
    case Prim::exp: op = EwOp::Exp; return true;
    case Prim::sigmoid: op = EwOp::Sigmoid; return true;
    case Prim::tanh: op = EwOp::Tanh; return true;
    default: return false;
  }
}

// A number or a one-element float tensor constant, as float32.
bool float_constant(const Node* n, float& v) {
  if (!n->is_constant()) return false;
  const ir::ConstValue& c = n->value();
  if (auto d = std::get_if<double>(&c)) return v = static_cast<float>(*d), true;
  if (auto i = std::get_if<int64_t>(&c)) return v = static_cast<float>(*i), true;
  if (auto t = std::get_if<kernels::Tensor>(&c); t && t->numel() == 1 && kernels::is_floating(t->dtype()))
    return v = static_cast<float>(t->item()), true;
  return false;
}

class Fuser {
 public:
  Fuser(ir::IrModule& m, Specialized& sp) : m_(m), sp_(sp), g_(*sp.graph) {}

  size_t run() {
    std::vector<Node*> order = ir::topo_order(g_);
    for (size_t i = 0; i < order.size(); ++i) position_[order[i]] = i;
    count_users(order);
    jit::Subst subst;
    size_t clusters = 0;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* root = *it;
      if (taken_.count(root) || !fusible(root)) continue;
      std::set<Node*> cluster = grow(root);
      if (cluster.size() < 2) continue;
      subst[root] = emit(root, cluster);
      taken_.insert(cluster.begin(), cluster.end());
      ++clusters;
    }
    if (clusters) jit::rebuild_with(m_, g_, subst);
    return clusters;
  }

 private:
  const AbsTensor* tensor_type(const Node* n) const {
    auto it = sp_.types.find(n->id());
    return it == sp_.types.end() ? nullptr : it->second.get_if<AbsTensor>();
  }

  bool fusible(const Node* n) const {
    EwOp op;
    if (!ew_op(n, op)) return false;
    const AbsTensor* t = tensor_type(n);
    if (!t || t->dtype != kernels::DType::Float32) return false;
    for (size_t i = 0; i < n->num_args(); ++i) {
      float c;
      if (float_constant(n->arg(i), c)) continue;
      const AbsTensor* a = tensor_type(n->arg(i));
      if (!a || a->dtype != kernels::DType::Float32 || a->shape != t->shape) return false;
    }
    return true;
  }

  // Uses by nodes of g_ (per user node), and uses that leave g_'s body (its
  // output, nested graphs).
  void count_users(const std::vector<Node*>& order) {
    for (Node* n : order)
      if (n->is_apply())
        for (Node* in : n->inputs()) users_[in].push_back(n);
    escapes_.insert(g_.output());
    for (ir::FuncGraph* h : ir::nested_graphs(g_)) {
      if (h == &g_) continue;
      for (Node* n : ir::topo_order(*h))
        for (Node* in : n->inputs())
          if (in->graph() == &g_) escapes_.insert(in);
    }
  }

  std::set<Node*> grow(Node* root) {
    std::set<Node*> cluster{root};
    bool changed = true;
    while (changed) {
      changed = false;
      for (Node* member : std::vector<Node*>(cluster.begin(), cluster.end()))
        for (size_t i = 0; i < member->num_args(); ++i) {
          Node* a = member->arg(i);
          if (cluster.count(a) || taken_.count(a) || escapes_.count(a) || a->graph() != &g_ || !fusible(a)) continue;
          if (tensor_type(a)->shape != tensor_type(root)->shape) continue;
          const std::vector<Node*>& us = users_[a];
          if (!std::all_of(us.begin(), us.end(), [&](Node* u) { return cluster.count(u) > 0; })) continue;
          cluster.insert(a);
          changed = true;
        }
    }
    return cluster;
  }

  Node* emit(Node* root, const std::set<Node*>& cluster) {
    std::vector<Node*> members(cluster.begin(), cluster.end());
    std::sort(members.begin(), members.end(), [&](Node* a, Node* b) { return position_[a] < position_[b]; });
    codegen::EwProgram p;
    std::map<const Node*, int> value;
    std::vector<Node*> inputs;
    auto operand = [&](Node* a) {
      if (auto it = value.find(a); it != value.end()) return it->second;
      float c;
      int v = float_constant(a, c) ? p.constant(c) : p.input(static_cast<int>(inputs.size()));
      if (!a->is_constant() || !float_constant(a, c)) inputs.push_back(a);
      value[a] = v;
      return v;
    };
    for (Node* n : members) {
      EwOp op;
      ew_op(n, op);
      int a = operand(n->arg(0));
      value[n] = n->num_args() == 2 ? p.binary(op, a, operand(n->arg(1))) : p.unary(op, a);
    }
    p.output = value[root];
    const AbsTensor* t = tensor_type(root);
    auto host = std::make_shared<const FusedElementwise>(std::move(p), t->shape, members.size());
    std::vector<Node*> call{g_.constant(ir::HostRef(host), root->loc())};
    call.insert(call.end(), inputs.begin(), inputs.end());
    Node* fused = g_.apply(call, root->name(), root->loc());
    sp_.types[fused->id()] = sp_.types.at(root->id());
    return fused;
  }

  ir::IrModule& m_;
  Specialized& sp_;
  ir::FuncGraph& g_;
  std::unordered_map<const Node*, size_t> position_;
  std::unordered_map<const Node*, std::vector<Node*>> users_;
  std::set<const Node*> escapes_;
  std::set<Node*> taken_;
};

}  // namespace

size_t run_fuse_elementwise(ir::IrModule& m, Specialized& sp) { return Fuser(m, sp).run(); }

}  // namespace msl::jit
