// Type-directed no-op removal (typed_simplify.h).
#include "jit/passes/typed_simplify.h"

#include "jit/passes/rewrite.h"

namespace msl::jit {

using namespace msl::ir;
using kernels::Prim;

namespace {

const AbsTensor* tensor_type(const Specialized& sp, const Node* n) {
  auto it = sp.types.find(n->id());
  return it == sp.types.end() ? nullptr : it->second.get_if<AbsTensor>();
}

bool same_type(const AbsTensor* a, const AbsTensor* b) { return a && b && a->dtype == b->dtype && a->shape == b->shape; }

bool all_equal_to(const Node* n, double v, IrOp like_op) {
  if (n->is_call_of(like_op)) return true;
  if (!n->is_constant()) return false;
  auto t = std::get_if<kernels::Tensor>(&n->value());
  if (!t || !t->defined()) return false;
  for (int64_t i = 0; i < t->numel(); ++i)
    if (t->item_at(i) != v) return false;
  return true;
}

const PrimRef* prim_of(const Node* n) { return n->is_apply() ? n->callee()->as_prim() : nullptr; }

}  // namespace

bool run_typed_simplify(IrModule& m, const Specialized& sp) {
  Subst subst;
  for (FuncGraph* h : nested_graphs(*sp.graph)) {
    for (Node* n : topo_order(*h)) {
      if (n->is_call_of(IrOp::ones_like) || n->is_call_of(IrOp::zeros_like)) {
        // Of a 0-d tensor (a loss's sensitivity): a constant, so the value
        // it was taken from is no longer needed for its shape.
        const AbsTensor* x = tensor_type(sp, n->arg(0));
        if (x && x->shape.size() == 0)
          subst[n] = h->constant(kernels::Tensor::scalar(x->dtype, n->is_call_of(IrOp::ones_like) ? 1.0 : 0.0),
                                 n->loc());
        continue;
      }
      const PrimRef* p = prim_of(n);
      if (!p) continue;
      const AbsTensor* out = tensor_type(sp, n);
      switch (p->prim) {
        case Prim::reshape:
          if (same_type(tensor_type(sp, n->arg(0)), out)) subst[n] = n->arg(0);
          break;
        case Prim::add:
        case Prim::sub:
          if (all_equal_to(n->arg(1), 0.0, IrOp::zeros_like) && same_type(tensor_type(sp, n->arg(0)), out))
            subst[n] = n->arg(0);
          else if (p->prim == Prim::add && all_equal_to(n->arg(0), 0.0, IrOp::zeros_like) &&
                   same_type(tensor_type(sp, n->arg(1)), out))
            subst[n] = n->arg(1);
          break;
        case Prim::mul:
          if (all_equal_to(n->arg(1), 1.0, IrOp::ones_like) && same_type(tensor_type(sp, n->arg(0)), out))
            subst[n] = n->arg(0);
          else if (all_equal_to(n->arg(0), 1.0, IrOp::ones_like) && same_type(tensor_type(sp, n->arg(1)), out))
            subst[n] = n->arg(1);
          break;
        case Prim::broadcast_to: {
          const Node* in = n->arg(0);
          const PrimRef* ip = prim_of(in);
          const AbsTensor* x = ip && ip->prim == Prim::reshape ? tensor_type(sp, in->arg(0)) : nullptr;
          if (x && x->shape.product() == 1)
            subst[n] = h->apply(Prim::broadcast_to, {in->arg(0)}, n->name(), n->loc(), p->attrs);
          break;
        }
        default: break;
      }
    }
  }
  if (subst.empty()) return false;
  rebuild_with(m, *sp.graph, subst);
  return true;
}

}  // namespace msl::jit
