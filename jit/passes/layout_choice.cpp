#include "jit/passes/layout_choice.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_map>
#include <vector>

#include "jit/passes/rewrite.h"
#include "kernels/primitives.h"

namespace msl::jit {

using ir::IrOp;
using ir::Node;
using kernels::Dims;
using kernels::Prim;

namespace {

class LayoutChooser {
 public:
  LayoutChooser(Specialized& sp, int block)
      : sp_(sp), g_(*sp.graph), b_(block), layout_(fmt::format("nChw{}c", block)) {}

  LayoutReport run() {
    std::vector<Node*> order = ir::topo_order(g_);
    users_ = local_uses(g_, order).users;
    for (Node* n : order)
      if (n->is_apply() && n->graph() == &g_) visit(n);
    g_.set_output(plain(g_.output()));
    return report_;
  }

 private:
  // ---------------------------------------------------------------- types

  const AbsTensor* tensor_of(const Node* n) const { return sp_.tensor_type(n); }

  // The dtypes oneDNN's blocked convolutions, batch norms and pools take
  // (bfloat16 and float16 being mixed precision's activations).
  static bool blockable_dtype(kernels::DType dt) {
    return dt == kernels::DType::Float32 || kernels::is_half(dt);
  }

  // A floating-point NCHW CPU tensor whose channels fill whole blocks (the
  // blocked layout is oneDNN's on the CPU; other devices keep NCHW).
  bool blockable(const AbsTensor* t) const {
    return t && t->device == kernels::DeviceType::CPU && blockable_dtype(t->dtype) &&
           t->shape.size() == 4 && t->shape[1] > 0 &&
           t->shape[1] % b_ == 0 && t->shape.product() > 0;
  }

  Dims blocked_shape(const Dims& s) const { return {s[0], s[1] / b_, s[2], s[3], b_}; }

  AbsValue blocked_type(const AbsTensor& t) const { return abs_tensor(t.dtype, blocked_shape(t.shape)); }

  // ------------------------------------------------------ node making

  Node* emit(Prim p, std::vector<Node*> args, kernels::Attrs attrs, const Node* like, AbsValue type) {
    Node* n = g_.apply(p, std::move(args), like->name(), like->loc(), std::move(attrs));
    sp_.types[n->callee()->id()] = abstract_of_constant(n->callee()->value());
    sp_.types[n->id()] = std::move(type);
    return n;
  }

  Node* emit(IrOp op, std::vector<Node*> args, const Node* like, AbsValue type) {
    Node* n = g_.apply(op, std::move(args), like->name(), like->loc());
    sp_.types[n->callee()->id()] = abstract_of_constant(n->callee()->value());
    sp_.types[n->id()] = std::move(type);
    return n;
  }

  Node* reshape(Node* x, const Dims& shape, const Node* like, kernels::DType dt) {
    return emit(Prim::reshape, {x}, {{"shape", shape.vec()}}, like, abs_tensor(dt, shape));
  }

  kernels::Attrs with_layout(const ir::PrimRef& pr) const {
    kernels::Attrs a = pr.attrs;
    a.set("layout", layout_);
    return a;
  }

  // `v`'s value in NCHW: `v` itself, its rebuilt node, or a reorder of its
  // blocked node (made once).
  Node* plain(Node* v) {
    if (auto it = plain_.find(v); it != plain_.end()) return it->second;
    auto it = blocked_.find(v);
    if (it == blocked_.end()) return v;
    const AbsTensor& t = *tensor_of(v);
    Node* p;
    if (t.shape[2] * t.shape[3] == 1) {
      p = reshape(it->second, t.shape, v, t.dtype);
    } else {
      p = emit(Prim::from_blocked, {it->second}, {}, v, abs_tensor(t.dtype, t.shape));
      ++report_.from_blocked;
    }
    return plain_[v] = p;
  }

  // `v`'s value blocked (`v` blockable): its blocked node, or a reorder of
  // its NCHW value (made once).
  Node* blocked(Node* v) {
    if (auto it = blocked_.find(v); it != blocked_.end()) return it->second;
    const AbsTensor& t = *tensor_of(v);
    Node* b;
    if (t.shape[2] * t.shape[3] == 1) {
      b = reshape(plain(v), blocked_shape(t.shape), v, t.dtype);
    } else {
      b = emit(Prim::to_blocked, {plain(v)}, {{"block", int64_t(b_)}}, v, blocked_type(t));
      ++report_.to_blocked;
    }
    return blocked_[v] = b;
  }

  bool has_blocked(const Node* v) const { return blocked_.count(v) > 0; }

  // Blocked when there is such a node, else NCHW: what a oneDNN operand
  // taking either layout is given.
  Node* either(Node* v) { return has_blocked(v) ? blocked_.at(v) : plain(v); }

  // For ordering-only operands (update_state, depend's later inputs): any
  // node computing the value, without making a reorder for it.
  Node* existing(Node* v) {
    if (auto it = plain_.find(v); it != plain_.end()) return it->second;
    if (auto it = blocked_.find(v); it != blocked_.end()) return it->second;
    return v;
  }

  // ------------------------------------------------------------ visiting

  void visit(Node* n) {
    const ir::PrimRef* pr = n->callee()->as_prim();
    bool done = false;
    if (pr && !pr->attrs.has("layout")) {
      if (is_elementwise(pr->prim))
        done = elementwise(n, *pr);
      else
        switch (pr->prim) {
          case Prim::conv2d:
          case Prim::conv2d_backprop_input:
          case Prim::conv2d_bias:
          case Prim::conv2d_bn:
          case Prim::conv2d_bn_add: done = conv(n, *pr); break;
          case Prim::conv2d_backprop_filter: done = conv_filter(n, *pr); break;
          case Prim::batch_norm: done = batch_norm(n, *pr, 1); break;
          case Prim::batch_norm_grad: done = batch_norm(n, *pr, 2); break;
          case Prim::reduce_sum: case Prim::reduce_max: case Prim::reduce_min: done = reduce(n, *pr); break;
          case Prim::broadcast_to: done = broadcast(n, *pr); break;
          case Prim::max_pool2d: done = max_pool(n, *pr, 1); break;
          case Prim::max_pool2d_grad: done = max_pool(n, *pr, 2); break;
          // A dtype conversion is elementwise (mixed precision's casts
          // between bfloat16 activations and float32 batch-norm gradients).
          case Prim::cast: done = elementwise(n, *pr); break;
          default: break;
        }
    } else if (n->is_call_of(IrOp::depend)) {
      done = depend(n);
    } else if (n->is_call_of(IrOp::tuple_getitem)) {
      done = tuple_item(n);
    }
    if (done) {
      ++report_.blocked;
    } else {
      keep_plain(n);
    }
  }

  // `n` computes in NCHW; its operands are their NCHW values.
  void keep_plain(Node* n) {
    bool ordering = n->is_call_of(IrOp::update_state) || n->is_call_of(IrOp::depend);
    std::vector<Node*> in = n->inputs();
    bool changed = false;
    for (size_t i = 1; i < in.size(); ++i) {
      Node* a = ordering && (i > 1 || n->is_call_of(IrOp::update_state)) ? existing(in[i]) : plain(in[i]);
      changed |= a != in[i];
      in[i] = a;
    }
    if (!changed) return;
    Node* r = g_.apply(std::move(in), n->name(), n->loc());
    if (auto it = sp_.types.find(n->id()); it != sp_.types.end()) sp_.types[r->id()] = it->second;
    plain_[n] = r;
  }

  bool single_group(const ir::PrimRef& pr) const { return pr.attrs.get_int("groups", 1) == 1; }

  // conv2d (x, w), conv2d_backprop_input (dy, w) and the fused inference
  // contractions of fuse_epilogue (conv2d_bias, conv2d_bn, conv2d_bn_add):
  // the activation operand, and conv2d_bn_add's residual (its last), read
  // blocked where they are, the result blocked; weights and per-channel
  // parameters as they were.
  bool conv(Node* n, const ir::PrimRef& pr) {
    const AbsTensor* y = tensor_of(n);
    const AbsTensor* x = tensor_of(n->arg(0));
    if (!blockable(y) || !x || x->dtype != y->dtype || x->shape.size() != 4 || !single_group(pr)) return false;
    std::vector<Node*> args{either(n->arg(0))};
    size_t residual = pr.prim == Prim::conv2d_bn_add ? n->num_args() - 1 : n->num_args();
    for (size_t i = 1; i < n->num_args(); ++i) args.push_back(i == residual ? either(n->arg(i)) : plain(n->arg(i)));
    blocked_[n] = emit(pr.prim, std::move(args), with_layout(pr), n, blocked_type(*y));
    return true;
  }

  // conv2d_backprop_filter (dy, x): blocked operands read as they are, the
  // weight gradient in its own layout.
  bool conv_filter(Node* n, const ir::PrimRef& pr) {
    if (!single_group(pr) || (!has_blocked(n->arg(0)) && !has_blocked(n->arg(1)))) return false;
    plain_[n] = emit(pr.prim, {either(n->arg(0)), either(n->arg(1))}, with_layout(pr), n, sp_.types.at(n->id()));
    return true;
  }

  // max_pool2d (x) and max_pool2d_grad (x, dy): blocked when one of the
  // data operands is, the other reordered in.
  bool max_pool(Node* n, const ir::PrimRef& pr, size_t data) {
    const AbsTensor* out = tensor_of(n);
    if (!blockable(out)) return false;
    bool any = false;
    for (size_t i = 0; i < data; ++i) {
      const AbsTensor* t = tensor_of(n->arg(i));
      if (!blockable(t) || t->shape[1] != out->shape[1]) return false;
      any |= has_blocked(n->arg(i));
    }
    if (!any) return false;
    std::vector<Node*> args;
    for (size_t i = 0; i < data; ++i) args.push_back(blocked(n->arg(i)));
    blocked_[n] = emit(pr.prim, std::move(args), with_layout(pr), n, blocked_type(*out));
    return true;
  }

  // True when every user of `n` is tuple_getitem with a constant index: a
  // tuple whose first item changes layout cannot be handed on whole.
  bool only_items_used(const Node* n) const {
    auto it = users_.find(n);
    if (it == users_.end()) return true;
    for (const Node* u : it->second)
      if (!u->is_call_of(IrOp::tuple_getitem) || u->arg(0) != n || !u->arg(1)->is_constant()) return false;
    return n != g_.output();
  }

  // batch_norm (x, gamma, beta, mean, var) and batch_norm_grad (dy, x,
  // gamma, mean, var): the first `data` operands and item 0 blocked.
  bool batch_norm(Node* n, const ir::PrimRef& pr, size_t data) {
    const AbsTuple* out = nullptr;
    if (auto it = sp_.types.find(n->id()); it != sp_.types.end()) out = it->second.get_if<AbsTuple>();
    if (!out || out->items.empty() || n->num_args() != 5 || !only_items_used(n)) return false;
    const AbsTensor* y = out->items[0].get_if<AbsTensor>();
    if (!blockable(y)) return false;
    for (size_t i = 0; i < data; ++i) {
      const AbsTensor* t = tensor_of(n->arg(i));
      if (!t || t->shape != y->shape || t->dtype != y->dtype) return false;
    }
    std::vector<Node*> args;
    for (size_t i = 0; i < 5; ++i) args.push_back(i < data ? blocked(n->arg(i)) : plain(n->arg(i)));
    AbsTuple type = *out;
    type.items[0] = blocked_type(*y);
    tuples_[n] = emit(pr.prim, std::move(args), with_layout(pr), n, std::move(type));
    return true;
  }

  bool tuple_item(Node* n) {
    auto it = tuples_.find(n->arg(0));
    if (it == tuples_.end()) return false;
    const int64_t* index = std::get_if<int64_t>(&n->arg(1)->value());
    if (!index) return false;
    const AbsTuple& tuple = *sp_.types.at(it->second->id()).get_if<AbsTuple>();
    Node* item = emit(IrOp::tuple_getitem, {it->second, n->arg(1)}, n, tuple.items.at(size_t(*index)));
    (*index == 0 ? blocked_ : plain_)[n] = item;
    return true;
  }

  bool depend(Node* n) {
    if (!has_blocked(n->arg(0))) return false;
    std::vector<Node*> args{blocked_.at(n->arg(0))};
    for (size_t i = 1; i < n->num_args(); ++i) args.push_back(existing(n->arg(i)));
    blocked_[n] = emit(IrOp::depend, std::move(args), n, sp_.types.at(blocked_.at(n->arg(0))->id()));
    return true;
  }

  // An elementwise primitive over a blocked-able result shape runs blocked
  // when at least as many of its full-shape operands are blocked as not and
  // every broadcast operand has a blocked form that is a reshape.
  bool elementwise(Node* n, const ir::PrimRef& pr) {
    const AbsTensor* out = tensor_of(n);
    if (!blockable(out)) return false;
    const Dims& s = out->shape;
    enum Kind { Keep, Full, Reshape };
    std::vector<Kind> kind(n->num_args(), Keep);
    std::vector<Dims> shape5(n->num_args());
    int with = 0, without = 0;
    for (size_t i = 0; i < n->num_args(); ++i) {
      Node* a = n->arg(i);
      auto it = sp_.types.find(a->id());
      if (it == sp_.types.end()) return false;
      const AbsTensor* t = it->second.get_if<AbsTensor>();
      if (!t) {
        if (!it->second.is<AbsScalar>()) return false;
        continue;  // a number broadcasts in any layout
      }
      if (!blockable_dtype(t->dtype) || t->shape.size() > 4) return false;
      if (t->shape.size() == 0) continue;
      Dims a4 = aligned4(t->shape);
      for (int d = 0; d < 4; ++d)
        if (a4[d] != 1 && a4[d] != s[d]) return false;
      if (a4 == s) {
        if (t->shape.size() != 4) return false;
        kind[i] = Full;
        (has_blocked(a) ? with : without) += 1;
      } else if (std::optional<Dims> r = broadcast_shape(a4)) {
        kind[i] = Reshape;
        shape5[i] = *r;
      } else {
        return false;
      }
    }
    if (with == 0 || with < without) return false;
    std::vector<Node*> args;
    for (size_t i = 0; i < n->num_args(); ++i) {
      Node* a = n->arg(i);
      if (kind[i] == Full)
        args.push_back(blocked(a));
      else if (kind[i] == Reshape)
        args.push_back(reshape(plain(a), shape5[i], a, tensor_of(a)->dtype));
      else
        args.push_back(plain(a));
    }
    blocked_[n] = emit(pr.prim, std::move(args), pr.attrs, n, blocked_type(*out));
    return true;
  }

  // A shape of rank <= 4 right-aligned to 4-D, as broadcasting reads it.
  static Dims aligned4(const Dims& s) {
    Dims a;
    for (int d = s.size(); d < 4; ++d) a.push_back(1);
    for (int64_t d : s) a.push_back(d);
    return a;
  }

  // The 5-D shape of an operand broadcast to a blocked result, `a4` its
  // shape aligned to 4-D, when reshaping it is enough: constant along C
  // ([.., 1, h, w] -> [.., 1, h, w, 1]) or constant along H and W
  // ([n, C, 1, 1] -> [n, C/b, 1, 1, b]); nullopt when it varies along both
  // (that would take a reorder).
  std::optional<Dims> broadcast_shape(const Dims& a4) const {
    if (a4[1] == 1) return Dims{a4[0], 1, a4[2], a4[3], 1};
    if (a4[2] == 1 && a4[3] == 1) return blocked_shape(a4);
    return std::nullopt;
  }

  // broadcast_to of a per-channel tensor (a mean's gradient) whose users
  // are all elementwise: the blocked view of its reshape.
  bool broadcast(Node* n, const ir::PrimRef& pr) {
    const AbsTensor* out = tensor_of(n);
    const AbsTensor* t = tensor_of(n->arg(0));
    if (!blockable(out) || !t || t->dtype != out->dtype || t->shape.size() > 4) return false;
    auto it = users_.find(n);
    if (it == users_.end() || n == g_.output()) return false;
    for (const Node* u : it->second) {
      const ir::PrimRef* up = u->callee()->as_prim();
      if (!up || !is_elementwise(up->prim)) return false;
    }
    std::optional<Dims> r = broadcast_shape(aligned4(t->shape));
    if (!r) return false;
    Dims s5 = blocked_shape(out->shape);
    kernels::Attrs attrs = pr.attrs;
    attrs.set("shape", s5.vec());
    Node* x = reshape(plain(n->arg(0)), *r, n->arg(0), t->dtype);
    blocked_[n] = emit(pr.prim, {x}, std::move(attrs), n, abs_tensor(out->dtype, s5));
    return true;
  }

  // A reduction over H and W, or over C, of a blocked tensor reduces the
  // 5-D tensor (C is dims 1 and 4 there); what is left has NCHW's order.
  bool reduce(Node* n, const ir::PrimRef& pr) {
    Node* x = n->arg(0);
    const AbsTensor* xt = tensor_of(x);
    const AbsTensor* out = tensor_of(n);
    if (!has_blocked(x) || !xt || !out || xt->shape.size() != 4) return false;
    std::vector<int64_t> axes = pr.attrs.get_ints("axes");
    bool keep = pr.attrs.get_bool("keep_dims", false);
    bool all = axes.empty();
    bool on[4] = {all, all, all, all};
    for (int64_t a : axes) {
      if (a < -4 || a > 3) return false;
      on[a < 0 ? a + 4 : a] = true;
    }
    if (!on[1] && !(on[2] && on[3])) return false;
    std::vector<int64_t> axes5;
    if (!all) {
      for (int d = 0; d < 4; ++d)
        if (on[d]) axes5.push_back(d);
      if (on[1]) axes5.push_back(4);
    }
    Dims x5 = blocked_shape(xt->shape), r5;
    for (int d = 0; d < 5; ++d) {
      bool reduced = all || on[d == 4 ? 1 : d];
      if (!reduced)
        r5.push_back(x5[d]);
      else if (keep)
        r5.push_back(1);
    }
    kernels::Attrs attrs = pr.attrs;
    attrs.set("axes", axes5);
    Node* r = emit(pr.prim, {blocked_.at(x)}, std::move(attrs), n, abs_tensor(out->dtype, r5));
    plain_[n] = r5 == out->shape ? r : reshape(r, out->shape, n, out->dtype);
    return true;
  }

  Specialized& sp_;
  ir::FuncGraph& g_;
  int b_;
  std::string layout_;
  std::unordered_map<const Node*, std::vector<Node*>> users_;
  std::unordered_map<const Node*, Node*> plain_, blocked_, tuples_;
  LayoutReport report_;
};

}  // namespace

LayoutReport run_layout_choice(ir::IrModule&, Specialized& sp, int block) {
  if (block <= 1 || ir::nested_graphs(*sp.graph).size() != 1) return {};
  return LayoutChooser(sp, block).run();
}

}  // namespace msl::jit
