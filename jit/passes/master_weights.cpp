// Convolutions reading float32 master weights (see master_weights.h).
#include "jit/passes/master_weights.h"

#include "jit/passes/node_rewriter.h"
#include "jit/passes/rewrite.h"
#include "kernels/primitives.h"

namespace msl::jit {

using ir::Node;
using kernels::DType;
using kernels::Prim;

namespace {

class MasterWeights {
 public:
  MasterWeights(ir::IrModule& m, Specialized& sp) : m_(m), sp_(sp), g_(*sp.graph) {}

  size_t run() {
    std::vector<Node*> order = ir::topo_order(g_);
    LocalUses uses = local_uses(g_, order);
    Subst subst;
    for (Node* n : order) {
      const ir::PrimRef* pr = called_prim(n);
      if (!pr) continue;
      if ((pr->prim == Prim::conv2d || pr->prim == Prim::conv2d_backprop_input) && n->num_args() == 2) {
        if (Node* w = master_weight(n)) subst[n] = emit(pr->prim, {n->arg(0), w}, pr->attrs, n);
      } else if (pr->prim == Prim::cast && n->num_args() == 1) {
        Node* f = n->arg(0);
        const ir::PrimRef* fp = called_prim(f);
        if (!fp || fp->prim != Prim::conv2d_backprop_filter || fp->attrs.has("dtype") || uses.escapes.count(f))
          continue;
        auto users = uses.users.find(f);
        if (users == uses.users.end() || users->second.size() != 1) continue;
        const AbsTensor *grad = cpu_tensor(f), *out = cpu_tensor(n);
        if (!grad || !out || !kernels::is_half(grad->dtype) || out->dtype != DType::Float32) continue;
        kernels::Attrs attrs = fp->attrs;
        attrs.set("dtype", DType::Float32);
        subst[n] = emit(Prim::conv2d_backprop_filter, {f->arg(0), f->arg(1)}, std::move(attrs), n);
      }
    }
    if (!subst.empty()) rebuild_with(m_, g_, subst, sp_.keep_types());
    return subst.size();
  }

 private:
  const AbsTensor* cpu_tensor(const Node* n) const {
    const AbsTensor* t = sp_.tensor_type(n);
    return t && t->device == kernels::DeviceType::CPU ? t : nullptr;
  }

  // The float32 weight `conv` reads through cast(w) to its activations'
  // low-precision dtype, or null.
  Node* master_weight(const Node* conv) const {
    Node* c = conv->arg(1);
    const ir::PrimRef* cp = called_prim(c);
    if (!cp || cp->prim != Prim::cast || c->num_args() != 1) return nullptr;
    const AbsTensor *act = cpu_tensor(conv->arg(0)), *low_w = cpu_tensor(c), *w = cpu_tensor(c->arg(0));
    if (!act || !low_w || !w || !kernels::is_half(act->dtype) || low_w->dtype != act->dtype ||
        w->dtype != DType::Float32)
      return nullptr;
    return c->arg(0);
  }

  Node* emit(Prim p, std::vector<Node*> args, kernels::Attrs attrs, const Node* like) {
    Node* r = g_.apply(p, std::move(args), like->name(), like->loc(), std::move(attrs));
    sp_.types[r->callee()->id()] = abstract_of_constant(r->callee()->value());
    sp_.types[r->id()] = sp_.types.at(like->id());
    return r;
  }

  ir::IrModule& m_;
  Specialized& sp_;
  ir::FuncGraph& g_;
};

}  // namespace

size_t run_master_weights(ir::IrModule& m, Specialized& sp) { return MasterWeights(m, sp).run(); }

}  // namespace msl::jit
