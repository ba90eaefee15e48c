// Type-directed no-op removal (typed_simplify.h).
#include "jit/passes/typed_simplify.h"

#include <set>

#include "jit/passes/rewrite.h"

namespace msl::jit {

using namespace msl::ir;
using kernels::Prim;

namespace {

const AbsTensor* tensor_type(const Specialized& sp, const Node* n) {
  auto it = sp.types.find(n->id());
  return it == sp.types.end() ? nullptr : it->second.get_if<AbsTensor>();
}

bool same_type(const AbsTensor* a, const AbsTensor* b) {
  return a && b && a->dtype == b->dtype && a->shape == b->shape;
}

const PrimRef* prim_of(const Node* n) { return n->is_apply() ? n->callee()->as_prim() : nullptr; }

// The rewrites of one walk over the graphs; `zeros` remembers the nodes
// found (or made) to be all zeros, so a chain of them folds in one walk.
class Simplifier {
 public:
  explicit Simplifier(const Specialized& sp) : sp_(sp) {}

  Subst run() {
    for (FuncGraph* h : nested_graphs(*sp_.graph))
      for (Node* n : topo_order(*h)) visit(*h, n);
    return std::move(subst_);
  }

 private:
  bool zero(const Node* n) const {
    return n->is_call_of(IrOp::zeros_like) || zeros_.count(n) || uniform_constant(n) == 0.0;
  }
  bool one(const Node* n) const { return n->is_call_of(IrOp::ones_like) || uniform_constant(n) == 1.0; }

  // n -> by, keeping track of zeros.
  void replace(Node* n, Node* by) {
    subst_[n] = by;
    if (zero(by)) zeros_.insert(n);
  }

  // n -> its operand k when that has n's type (no broadcast or promotion).
  bool replace_by_arg(Node* n, size_t k) {
    if (!same_type(tensor_type(sp_, n->arg(k)), tensor_type(sp_, n))) return false;
    replace(n, n->arg(k));
    return true;
  }

  void visit(FuncGraph& h, Node* n) {
    if (n->is_call_of(IrOp::ones_like) || n->is_call_of(IrOp::zeros_like)) {
      // Of a 0-d tensor (a loss's sensitivity): a constant, so the value
      // it was taken from is no longer needed for its shape.
      const AbsTensor* x = tensor_type(sp_, n->arg(0));
      if (x && x->shape.size() == 0)
        subst_[n] = h.constant(kernels::Tensor::scalar(x->dtype, n->is_call_of(IrOp::ones_like) ? 1.0 : 0.0), n->loc());
      return;
    }
    if (n->is_call_of(IrOp::tuple_getitem)) {
      // An item of the zeros of a tuple (the sensitivity of an output
      // nobody used, e.g. sparse_softmax_cross_entropy's second): the zeros
      // of that item, which no longer need the rest of the tuple.
      const Node* t = n->arg(0);
      if (t->is_call_of(IrOp::zeros_like) && tensor_type(sp_, n)) {
        Node* item = h.apply(IrOp::tuple_getitem, {t->arg(0), n->arg(1)}, "", n->loc());
        subst_[n] = h.apply(IrOp::zeros_like, {item}, n->name(), n->loc());
        zeros_.insert(n);
      }
      return;
    }
    const PrimRef* p = prim_of(n);
    if (!p) return;
    switch (p->prim) {
      case Prim::reshape: replace_by_arg(n, 0); break;
      case Prim::add:
      case Prim::sub:
        if (!(zero(n->arg(1)) && replace_by_arg(n, 0)) && p->prim == Prim::add && zero(n->arg(0))) replace_by_arg(n, 1);
        break;
      case Prim::mul:
        // A product with zeros is those zeros (taken as zero even where the
        // other factor is inf or NaN: these are the products of an unused
        // output's zero sensitivity).
        if (zero(n->arg(0)) && replace_by_arg(n, 0)) break;
        if (zero(n->arg(1)) && replace_by_arg(n, 1)) break;
        if (one(n->arg(1)) && replace_by_arg(n, 0)) break;
        if (one(n->arg(0))) replace_by_arg(n, 1);
        break;
      // Linear in the zero operand: neg(z), relu_grad(z, y), and
      // (log_)softmax_grad(y, z) = y * (z - sum(z * y)) (= z - exp(y) * sum(z)).
      case Prim::neg:
      case Prim::relu_grad:
        if (zero(n->arg(0))) replace_by_arg(n, 0);
        break;
      case Prim::softmax_grad:
      case Prim::log_softmax_grad:
        if (n->num_args() == 2 && zero(n->arg(1))) replace_by_arg(n, 1);
        break;
      case Prim::broadcast_to: {
        const Node* in = n->arg(0);
        const PrimRef* ip = prim_of(in);
        const AbsTensor* x = ip && ip->prim == Prim::reshape ? tensor_type(sp_, in->arg(0)) : nullptr;
        if (x && x->shape.product() == 1)
          subst_[n] = h.apply(Prim::broadcast_to, {in->arg(0)}, n->name(), n->loc(), p->attrs);
        break;
      }
      default: break;
    }
  }

  const Specialized& sp_;
  Subst subst_;
  std::set<const Node*> zeros_;
};

}  // namespace

bool run_typed_simplify(IrModule& m, const Specialized& sp) {
  Subst subst = Simplifier(sp).run();
  if (subst.empty()) return false;
  rebuild_with(m, *sp.graph, subst);
  return true;
}

}  // namespace msl::jit
