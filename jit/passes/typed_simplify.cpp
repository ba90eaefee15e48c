// Type-directed no-op removal (typed_simplify.h).
#include "jit/passes/typed_simplify.h"

#include <set>

#include "jit/passes/rewrite.h"

namespace msl::jit {

using namespace msl::ir;
using kernels::Prim;

namespace {

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
    if (!same_type(sp_.tensor_type(n->arg(k)), sp_.tensor_type(n))) return false;
    replace(n, n->arg(k));
    return true;
  }

  // n -> its operand k cast to n's dtype when the two differ only in dtype
  // (x + z promoted: a bfloat16 gradient plus a float32 zero).
  bool replace_by_cast_arg(FuncGraph& h, Node* n, size_t k) {
    const AbsTensor* a = sp_.tensor_type(n->arg(k));
    const AbsTensor* t = sp_.tensor_type(n);
    if (!a || !t || a->shape != t->shape) return false;
    if (a->dtype == t->dtype) return replace_by_arg(n, k);
    subst_[n] = h.apply(Prim::cast, {n->arg(k)}, n->name(), n->loc(), kernels::Attrs{{"dtype", t->dtype}});
    return true;
  }

  // The value `n` ends up as after this walk's rewrites.
  Node* current(Node* n) const {
    auto it = subst_.find(n);
    return it == subst_.end() ? n : it->second;
  }

  void visit(FuncGraph& h, Node* n) {
    if (n->is_call_of(IrOp::ones_like) || n->is_call_of(IrOp::zeros_like)) {
      // Of a 0-d tensor (a loss's sensitivity): a constant, so the value
      // it was taken from is no longer needed for its shape.
      const AbsTensor* x = sp_.tensor_type(n->arg(0));
      if (x && x->shape.size() == 0)
        subst_[n] = h.constant(kernels::Tensor::scalar(x->dtype, n->is_call_of(IrOp::ones_like) ? 1.0 : 0.0), n->loc());
      return;
    }
    if (n->is_call_of(IrOp::tuple_getitem)) {
      // An item of the zeros of a tuple (the sensitivity of an output
      // nobody used, e.g. sparse_softmax_cross_entropy's second): the zeros
      // of that item, which no longer need the rest of the tuple.
      const Node* t = n->arg(0);
      if (t->is_call_of(IrOp::zeros_like) && sp_.tensor_type(n)) {
        Node* item = h.apply(IrOp::tuple_getitem, {t->arg(0), n->arg(1)}, "", n->loc());
        subst_[n] = h.apply(IrOp::zeros_like, {item}, n->name(), n->loc());
        zeros_.insert(n);
      }
      return;
    }
    if (n->is_call_of(IrOp::grad_add) && n->num_args() == 2) {
      // A sum of sensitivities with a zero one (a value used twice, one
      // use contributing nothing): the other.
      if (zero(n->arg(1)) && replace_by_cast_arg(h, n, 0)) return;
      if (zero(n->arg(0)) && replace_by_cast_arg(h, n, 1)) return;
      // Of two tensors of its type: the add primitive, which elementwise
      // fusion and the blocked layout take (grad_add, an IR operator for
      // any sensitivities, they do not).
      const AbsTensor* t = sp_.tensor_type(n);
      if (same_type(sp_.tensor_type(n->arg(0)), t) && same_type(sp_.tensor_type(n->arg(1)), t))
        subst_[n] = h.apply(Prim::add, {n->arg(0), n->arg(1)}, n->name(), n->loc());
      return;
    }
    const PrimRef* p = prim_of(n);
    if (!p) return;
    // Zeros reshaped, broadcast or cast are zeros (kept: a consumer that
    // folds them away leaves them dead).
    bool moves_values = p->prim == Prim::reshape || p->prim == Prim::broadcast_to || p->prim == Prim::cast;
    if (moves_values && zero(n->arg(0))) zeros_.insert(n);
    switch (p->prim) {
      case Prim::reshape: replace_by_arg(n, 0); break;
      case Prim::broadcast_to: broadcast_scalar(h, n, *p); break;
      case Prim::cast: cast_round_trip(n); break;
      case Prim::add:
      case Prim::sub:
        if (zero(n->arg(1)) && replace_by_cast_arg(h, n, 0)) break;
        if (p->prim == Prim::add && zero(n->arg(0))) replace_by_cast_arg(h, n, 1);
        break;
      case Prim::mul:
        // A product with zeros is those zeros (taken as zero even where the
        // other factor is inf or NaN: these are the products of an unused
        // output's zero sensitivity), of the product's type: where the
        // zeros broadcast (a per-channel zero times an activation), the
        // product is kept but known to be zero, so the sums it enters fold.
        if (zero(n->arg(0)) || zero(n->arg(1))) {
          if (!(zero(n->arg(0)) && replace_by_arg(n, 0)) && !(zero(n->arg(1)) && replace_by_arg(n, 1)))
            zeros_.insert(n);
          break;
        }
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
      default: break;
    }
  }

  // broadcast_to(reshape(x)) -> broadcast_to(x) for a one-element x.
  void broadcast_scalar(FuncGraph& h, Node* n, const PrimRef& p) {
    const Node* in = n->arg(0);
    const PrimRef* ip = prim_of(in);
    const AbsTensor* x = ip && ip->prim == Prim::reshape ? sp_.tensor_type(in->arg(0)) : nullptr;
    if (x && x->shape.product() == 1)
      subst_[n] = h.apply(Prim::broadcast_to, {in->arg(0)}, n->name(), n->loc(), p.attrs);
  }

  // cast(cast(a, wide), narrow) -> a when a has dtype `narrow` and `wide`
  // holds every value of it exactly (a bfloat16 gradient through float32
  // and back; the inner cast may be one this walk made).
  void cast_round_trip(Node* n) {
    Node* inner = current(n->arg(0));
    const PrimRef* ip = prim_of(inner);
    if (!ip || ip->prim != Prim::cast) return;
    Node* a = inner->arg(0);
    const AbsTensor* t = sp_.tensor_type(n);
    if (same_type(sp_.tensor_type(a), t) && exact_widening(t->dtype, ip->attrs.get_dtype("dtype", t->dtype)))
      replace(n, a);
  }

  static bool exact_widening(kernels::DType from, kernels::DType to) {
    using kernels::DType;
    switch (from) {
      case DType::BFloat16:
      case DType::Float16: return to == DType::Float32 || to == DType::Float64;
      case DType::Float32: return to == DType::Float64;
      default: return false;
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
