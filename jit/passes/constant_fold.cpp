// Constant folding (see constant_fold.h).
#include "jit/passes/constant_fold.h"

#include <optional>
#include <span>
#include <vector>

#include "jit/passes/rewrite.h"
#include "jit/specialize.h"

namespace msl::jit {

using namespace msl::ir;
using kernels::DType;
using kernels::Prim;
using kernels::Tensor;

namespace {

bool foldable_prim(const PrimRef& p) {
  // A collective on constants still exchanges data at run time: every
  // process must make the same calls, and a cached graph would skip them.
  if (kernels::is_random(p.prim) || kernels::is_collective(p.prim)) return false;
  const kernels::PrimDef& def = kernels::prim_def(p.prim);
  return def.kind != kernels::PrimKind::InPlace && def.outputs == 1;
}

// The folded value of `n` (callee resolved to a primitive, arguments to
// constants), or nothing when it cannot or should not be folded.
std::optional<Tensor> fold(const PrimRef& p, const std::vector<Node*>& args) {
  const Tensor* first = nullptr;
  for (Node* a : args) {
    if (!a->is_constant()) return std::nullopt;
    if (!first) first = std::get_if<Tensor>(&a->value());
  }
  // Python arithmetic on numbers (`-1`, `2 * 3`) has a number as result:
  // the specializer folds it. Folded here it would become a tensor.
  if (!first && p.attrs.empty() && is_scalar_arithmetic(p.prim, args.size())) return std::nullopt;
  std::vector<Tensor> in;
  in.reserve(args.size());
  for (Node* a : args) {
    const ConstValue& v = a->value();
    if (auto t = std::get_if<Tensor>(&v)) {
      if (!t->defined()) return std::nullopt;
      in.push_back(*t);
    } else if (auto b = std::get_if<bool>(&v)) {
      in.push_back(Tensor::scalar(first ? first->dtype() : DType::Bool, *b ? 1.0 : 0.0));
    } else if (auto i = std::get_if<int64_t>(&v)) {
      in.push_back(Tensor::scalar(first ? first->dtype() : DType::Int64, static_cast<double>(*i)));
    } else if (auto d = std::get_if<double>(&v)) {
      in.push_back(Tensor::scalar(first ? first->dtype() : DType::Float32, *d));
    } else {
      return std::nullopt;
    }
  }
  try {
    std::vector<kernels::TensorSpec> specs;
    for (const Tensor& t : in) specs.push_back(t.spec());
    std::vector<kernels::TensorSpec> out_specs;
    kernels::infer(p.prim, std::span<const kernels::TensorSpec>(specs), p.attrs, out_specs);
    if (out_specs.size() != 1 || out_specs[0].shape.product() > kMaxFoldElements) return std::nullopt;
    std::vector<Tensor> out;
    kernels::execute(p.prim, std::span<const Tensor>(in), p.attrs, out);
    if (out.size() != 1) return std::nullopt;
    return out[0].clone();  // never share storage with an input (views)
  } catch (...) {
    return std::nullopt;  // left for run time, where the error has a location
  }
}

}  // namespace

bool run_constant_fold(IrModule& m, FuncGraph& g) {
  Subst subst;
  auto resolve = [&](Node* n) {
    for (auto it = subst.find(n); it != subst.end(); it = subst.find(n)) n = it->second;
    return n;
  };
  for (FuncGraph* h : nested_graphs(g)) {
    for (Node* n : topo_order(*h)) {
      if (!n->is_apply()) continue;
      const PrimRef* p = resolve(n->callee())->as_prim();
      if (!p || !foldable_prim(*p)) continue;
      std::vector<Node*> args;
      for (size_t i = 0; i < n->num_args(); ++i) args.push_back(resolve(n->arg(i)));
      if (std::optional<Tensor> t = fold(*p, args)) subst[n] = h->constant(std::move(*t), n->loc());
    }
  }
  if (subst.empty()) return false;
  rebuild_with(m, g, subst);
  return true;
}

}  // namespace msl::jit
