#include "jit/passes/fuse_epilogue.h"

#include <set>
#include <unordered_map>
#include <vector>

#include "jit/passes/rewrite.h"
#include "kernels/primitives.h"

namespace msl::jit {

using ir::Node;
using kernels::Prim;

namespace {

// The primitive `n` applies (nullptr unless an Apply of a PrimRef constant).
const ir::PrimRef* prim_of(const Node* n) { return n->is_apply() ? n->callee()->as_prim() : nullptr; }

bool applies(const Node* n, Prim p) {
  const ir::PrimRef* r = prim_of(n);
  return r && r->prim == p;
}

// One recognised pattern: `last` is replaced by `prim`(inputs) [attrs].
struct Match {
  Node* last = nullptr;
  Prim prim = Prim::matmul_bias;
  std::vector<Node*> inputs;
  kernels::Attrs attrs;
  std::vector<Node*> chain;  // the nodes the fused node absorbs
};

class EpilogueFuser {
 public:
  EpilogueFuser(ir::IrModule& m, Specialized& sp) : m_(m), sp_(sp), g_(*sp.graph) {}

  size_t run() {
    std::vector<Node*> order = ir::topo_order(g_);
    jit::LocalUses uses = jit::local_uses(g_, order);
    users_ = std::move(uses.users);
    escapes_ = std::move(uses.escapes);
    std::vector<Match> matches;
    for (Node* n : order) {
      Match mt;
      if (match(n, mt)) {
        taken_.insert(mt.chain.begin(), mt.chain.end());
        matches.push_back(std::move(mt));
      }
    }
    if (matches.empty()) return 0;
    Subst fused;
    for (Match& mt : matches) fused[mt.last] = emit(mt);
    rebuild_with(m_, g_, fused, sp_.keep_types());
    return matches.size();
  }

 private:
  const AbsTensor* f32_tensor(const Node* n) const {
    const AbsTensor* t = sp_.tensor_type(n);
    return t && t->dtype == kernels::DType::Float32 ? t : nullptr;
  }

  // The one user of `n` when it has exactly one use, nothing outside the
  // root graph's body reads it and no other match took that user.
  Node* sole_user(Node* n) const {
    if (escapes_.count(n)) return nullptr;
    auto it = users_.find(n);
    if (it == users_.end() || it->second.size() != 1) return nullptr;
    Node* u = it->second[0];
    return taken_.count(u) ? nullptr : u;
  }

  // The other operand of `add` when it adds `product` to a bias of shape
  // `bias_ok`, the add not broadcasting the product.
  template <class BiasOk>
  Node* bias_operand(Node* add, Node* product, BiasOk bias_ok) const {
    if (!applies(add, Prim::add) || !prim_of(add)->attrs.empty() || add->num_args() != 2) return nullptr;
    Node* bias = add->arg(0) == product ? add->arg(1) : add->arg(0);
    if (bias == product) return nullptr;
    const AbsTensor *b = f32_tensor(bias), *sum = f32_tensor(add), *p = f32_tensor(product);
    if (!b || !sum || !p || sum->shape != p->shape || !bias_ok(b->shape, p->shape)) return nullptr;
    return bias;
  }

  bool match(Node* product, Match& mt) {
    const ir::PrimRef* pr = prim_of(product);
    if (!pr || (pr->prim != Prim::matmul && pr->prim != Prim::conv2d) || !f32_tensor(product)) return false;
    for (size_t i = 0; i < product->num_args(); ++i)
      if (!f32_tensor(product->arg(i))) return false;
    Node* next = sole_user(product);
    if (!next) return false;
    bool is_conv = pr->prim == Prim::conv2d;
    mt.attrs = pr->attrs;
    mt.inputs = {product->arg(0), product->arg(1)};
    mt.chain = {product, next};
    Node* result = next;
    if (Node* bias = bias_operand(next, product, is_conv ? conv_bias_ok : matmul_bias_ok)) {
      mt.prim = is_conv ? Prim::conv2d_bias : Prim::matmul_bias;
      mt.inputs.push_back(bias);
    } else if (is_conv && (result = normalized_value(next, product, mt))) {
      mt.prim = Prim::conv2d_bn;
      if (Node* add = sole_user(result)) {
        Node* residual = add->num_args() == 2 ? (add->arg(0) == result ? add->arg(1) : add->arg(0)) : nullptr;
        if (residual && bias_operand(add, result, same_shape)) {
          mt.prim = Prim::conv2d_bn_add;
          mt.inputs.push_back(residual);
          mt.chain.push_back(add);
          result = add;
        }
      }
    } else {
      return false;
    }
    std::string act = "none";
    Node* relu = sole_user(result);
    if (relu && applies(relu, Prim::relu) && prim_of(relu)->attrs.empty() && f32_tensor(relu)) {
      act = "relu";
      result = relu;
      mt.chain.push_back(relu);
    }
    mt.attrs.set("activation", act);
    mt.last = result;
    return true;
  }

  // Pattern 3: `bn` is batch_norm[training=False](product, gamma, beta,
  // mean, var) whose only user is tuple_getitem(bn, 0); returns that item
  // and adds the parameters and epsilon to `mt`.
  Node* normalized_value(Node* bn, Node* product, Match& mt) {
    const ir::PrimRef* r = prim_of(bn);
    if (!r || r->prim != Prim::batch_norm || r->attrs.get_bool("training") || bn->num_args() != 5 ||
        bn->arg(0) != product)
      return nullptr;
    const AbsTensor* y = f32_tensor(product);
    for (size_t i = 1; i < 5; ++i) {
      const AbsTensor* t = f32_tensor(bn->arg(i));
      if (!t || t->shape != kernels::Dims{y->shape[1]} || bn->arg(i) == product) return nullptr;
    }
    Node* item = sole_user(bn);
    if (!item || !item->is_call_of(ir::IrOp::tuple_getitem) || item->num_args() != 2 || item->arg(0) != bn ||
        !item->arg(1)->is_constant())
      return nullptr;
    const int64_t* index = std::get_if<int64_t>(&item->arg(1)->value());
    if (!index || *index != 0 || !f32_tensor(item)) return nullptr;
    for (size_t i = 1; i < 5; ++i) mt.inputs.push_back(bn->arg(i));
    mt.attrs.set("epsilon", r->attrs.get_float("epsilon", 1e-5));
    mt.chain.push_back(item);
    return item;
  }

  static bool matmul_bias_ok(const kernels::Dims& bias, const kernels::Dims& out) {
    if (bias.size() < 1 || bias.size() > out.size() || bias[bias.size() - 1] != out[out.size() - 1]) return false;
    for (int i = 0; i + 1 < bias.size(); ++i)
      if (bias[i] != 1) return false;
    return true;
  }

  // A residual of the result's own shape.
  static bool same_shape(const kernels::Dims& residual, const kernels::Dims& out) { return residual == out; }

  // A per-channel bias of an NCHW result: (1, C, 1, 1), as the library's
  // Conv2d reshapes it, or (C, 1, 1). A (C,) operand would broadcast along
  // W instead.
  static bool conv_bias_ok(const kernels::Dims& bias, const kernels::Dims& out) {
    if (bias.size() < 3 || bias.size() > 4 || bias[bias.size() - 3] != out[1]) return false;
    return bias[bias.size() - 1] == 1 && bias[bias.size() - 2] == 1 && (bias.size() == 3 || bias[0] == 1);
  }

  Node* emit(const Match& mt) {
    Node* fused = g_.apply(mt.prim, mt.inputs, mt.last->name(), mt.last->loc(), mt.attrs);
    sp_.types[fused->callee()->id()] = abstract_of_constant(fused->callee()->value());
    sp_.types[fused->id()] = sp_.types.at(mt.last->id());
    return fused;
  }

  ir::IrModule& m_;
  Specialized& sp_;
  ir::FuncGraph& g_;
  std::unordered_map<const Node*, std::vector<Node*>> users_;
  std::set<const Node*> escapes_;
  std::set<const Node*> taken_;
};

}  // namespace

size_t run_fuse_epilogue(ir::IrModule& m, Specialized& sp) { return EpilogueFuser(m, sp).run(); }

}  // namespace msl::jit
