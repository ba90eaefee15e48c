// matmul: oneDNN for float32 and bfloat16, float32 copies for float16, the
// blocked fallback GEMM for float64 and int32/int64.
//
// Transposes and strided views are handed to oneDNN as strided memory
// descriptors: transpose_a just swaps the two inner strides of a's
// descriptor, and batch broadcasting is oneDNN's own (size-1 batch dims).
// oneDNN takes row- or column-major inner layouts with any leading dimension
// and any batch strides, but for an operand whose inner stride is not 1 it
// only has its reference kernel; the plan then copies that operand (op(a)
// made row-major), which costs less than the reference kernel. The plan,
// including those decisions, is cached per (shapes, strides, dtype).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/contraction_fallback.h"
#include "kernels/dnnl_common.h"
#include "kernels/dnnl_matmul.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels {

namespace {

using onednn::Key;

// The shape of op(t) with the inner two dims swapped when `transposed`.
Dims op_shape(const Dims& s, bool transposed) {
  Dims r = s;
  if (transposed) std::swap(r[r.size() - 1], r[r.size() - 2]);
  return r;
}

// A view of op(t): the inner two dims and strides swapped when `transposed`.
Tensor op_view(const Tensor& t, bool transposed) {
  if (!transposed) return t;
  Dims st = t.strides();
  std::swap(st[st.size() - 1], st[st.size() - 2]);
  return Tensor::view(t, op_shape(t.shape(), true), st, t.offset());
}

// `s` padded on the left with 1s (and strides with 0s) to rank r.
void pad_rank(const Dims& s, const Dims& st, int r, Dims& ps, Dims& pst) {
  ps.resize(0);
  pst.resize(0);
  for (int i = 0; i < r - s.size(); ++i) {
    ps.push_back(1);
    pst.push_back(0);
  }
  for (int i = 0; i < s.size(); ++i) {
    ps.push_back(s[i]);
    pst.push_back(st[i]);
  }
}

struct MatmulPlan {
  dnnl::matmul prim;
  dnnl::memory a, b, c, bias, scratch;
  size_t scratch_bytes = 0;
  bool copy_a = false, copy_b = false;
  bool supported = true;  // false: no fast oneDNN kernel for this dtype here
  std::mutex mu;
};

onednn::PrimitiveCache<MatmulPlan>& plans() {
  static auto* c = new onednn::PrimitiveCache<MatmulPlan>(512);
  return *c;
}

std::shared_ptr<MatmulPlan> make_plan(const Tensor& opa, const Tensor& opb, const Dims& out_shape, DType dt, bool bias,
                                      bool relu) {
  auto plan = std::make_shared<MatmulPlan>();
  // The operands' dtype; a float32 product of bfloat16/float16 operands
  // (a weight gradient) keeps oneDNN's float32 accumulation.
  auto ddt = onednn::dnnl_type(opa.dtype());
  int r = out_shape.size();
  Dims sa, sta, sb, stb;
  pad_rank(opa.shape(), opa.strides(), r, sa, sta);
  pad_rank(opb.shape(), opb.strides(), r, sb, stb);
  dnnl::memory::desc cmd = onednn::plain_md(out_shape, onednn::dnnl_type(dt));
  // The bias as [1, ..., 1, N]: oneDNN broadcasts it over the rest.
  Dims bias_shape;
  bias_shape.resize(r, 1);
  bias_shape[r - 1] = out_shape[r - 1];
  dnnl::memory::desc bias_md = bias ? onednn::plain_md(bias_shape, dnnl::memory::data_type::f32) : dnnl::memory::desc();
  auto attr = onednn::user_scratchpad_attr();
  if (relu) {
    dnnl::post_ops po;
    po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    attr.set_post_ops(po);
  }
  // Strided views first; then copies of whichever operand oneDNN rejects.
  for (int attempt = 0; attempt < 4; ++attempt) {
    bool ca = attempt & 1, cb = attempt & 2;
    if ((ca && opa.is_contiguous()) || (cb && opb.is_contiguous())) continue;
    auto amd = ca ? onednn::plain_md(sa, ddt) : onednn::strided_md(sa, sta, ddt);
    auto bmd = cb ? onednn::plain_md(sb, ddt) : onednn::strided_md(sb, stb, ddt);
    try {
      dnnl::matmul::primitive_desc pd(bias ? dnnl::matmul::desc(amd, bmd, bias_md, cmd) : dnnl::matmul::desc(amd, bmd, cmd),
                                      attr, onednn::engine());
      bool last = (ca || opa.is_contiguous()) && (cb || opb.is_contiguous());
      if (onednn::is_reference(pd) && !(last && dt == DType::Float32)) continue;
      plan->prim = dnnl::matmul(pd);
      plan->a = onednn::unbound(amd);
      plan->b = onednn::unbound(bmd);
      plan->c = onednn::unbound(cmd);
      if (bias) plan->bias = onednn::unbound(bias_md);
      plan->scratch_bytes = pd.scratchpad_desc().get_size();
      plan->scratch = onednn::unbound(pd.scratchpad_desc());
      plan->copy_a = ca;
      plan->copy_b = cb;
      return plan;
    } catch (const dnnl::error&) {
      // Not implemented for this combination: try the next one.
    }
  }
  plan->supported = false;
  return plan;
}


// float16 (and bfloat16 without oneDNN support): float32 copies in and out.
void via_float32(const Tensor& a, const Tensor& b, bool ta, bool tb, const Tensor& out) {
  Tensor a32 = onednn::to_float32(a), b32 = onednn::to_float32(b);
  Tensor o32(DType::Float32, out.shape());
  if (!dnnl_matmul(a32, b32, ta, tb, o32)) throw KernelError("matmul: oneDNN has no float32 kernel for these operands");
  onednn::convert_from_float32(o32.data<float>(), out);
}

bool is_supported(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16 ||
         t == DType::Int32 || t == DType::Int64;
}

}  // namespace

bool dnnl_matmul(const Tensor& a, const Tensor& b, bool ta, bool tb, const Tensor& out, const Tensor* bias, bool relu) {
  Tensor opa = op_view(onednn::with_positive_strides(a), ta), opb = op_view(onednn::with_positive_strides(b), tb);
  int64_t k = opa.dim(opa.ndim() - 1);
  onednn::SerialScope serial(double(out.numel()) * double(k) < double(onednn::kSerialMacs));
  Key key;
  key.add(int64_t(opa.dtype())).add(int64_t(out.dtype())).add(bias != nullptr).add(relu).add(onednn::thread_count());
  key.add(out.shape());
  key.add(opa.shape()).add(opa.strides()).add(opb.shape()).add(opb.strides());
  auto plan = plans().get(key, [&] { return make_plan(opa, opb, out.shape(), out.dtype(), bias, relu); });
  if (!plan->supported) return false;
  if (plan->copy_a) opa = opa.contiguous();
  if (plan->copy_b) opb = opb.contiguous();
  Tensor bias_dense = bias ? bias->contiguous() : Tensor();
  onednn::Scratch scratch(plan->scratch_bytes);
  std::lock_guard<std::mutex> lock(plan->mu);
  onednn::bind(plan->a, opa.raw());
  onednn::bind(plan->b, opb.raw());
  onednn::bind(plan->c, out.raw());
  onednn::bind(plan->scratch, scratch.at(0));
  if (bias) {
    onednn::bind(plan->bias, bias_dense.raw());
    onednn::execute(plan->prim, {{DNNL_ARG_SRC, &plan->a},
                                 {DNNL_ARG_WEIGHTS, &plan->b},
                                 {DNNL_ARG_BIAS, &plan->bias},
                                 {DNNL_ARG_DST, &plan->c},
                                 {DNNL_ARG_SCRATCHPAD, &plan->scratch}});
  } else {
    onednn::execute(plan->prim, {{DNNL_ARG_SRC, &plan->a},
                                 {DNNL_ARG_WEIGHTS, &plan->b},
                                 {DNNL_ARG_DST, &plan->c},
                                 {DNNL_ARG_SCRATCHPAD, &plan->scratch}});
  }
  return true;
}

void infer_matmul(const InferArgs& args) {
  const TensorSpec& a = args.in[0];
  const TensorSpec& b = args.in[1];
  if (a.dtype != b.dtype)
    throw DTypeError(fmt::format("matmul: operands must have the same dtype, got {} and {}",
                                 dtype_display_name(a.dtype), dtype_display_name(b.dtype)));
  if (!is_supported(a.dtype))
    throw DTypeError(fmt::format("matmul: unsupported dtype {}", dtype_display_name(a.dtype)));
  if (a.shape.size() < 2 || b.shape.size() < 2)
    throw ShapeError(fmt::format("matmul: operands must have rank >= 2, got {} @ {}", a.shape.str(), b.shape.str()));
  bool ta = args.attrs.get_bool("transpose_a"), tb = args.attrs.get_bool("transpose_b");
  Dims oa = op_shape(a.shape, ta), ob = op_shape(b.shape, tb);
  int ra = oa.size(), rb = ob.size();
  int64_t m = oa[ra - 2], k = oa[ra - 1], k2 = ob[rb - 2], n = ob[rb - 1];
  if (k != k2) {
    std::string how;
    if (ta || tb) how = fmt::format(" (transpose_a={}, transpose_b={})", ta ? "True" : "False", tb ? "True" : "False");
    throw ShapeError(
        fmt::format("matmul: contracting dimensions differ: {} @ {}{}", a.shape.str(), b.shape.str(), how));
  }
  int r = std::max(ra, rb);
  Dims out;
  for (int i = 0; i < r - 2; ++i) {
    int ia = i - (r - ra), ib = i - (r - rb);
    int64_t da = ia >= 0 ? oa[ia] : 1, db = ib >= 0 ? ob[ib] : 1;
    if (da != db && da != 1 && db != 1)
      throw ShapeError(
          fmt::format("matmul: batch dimensions of {} and {} do not broadcast", a.shape.str(), b.shape.str()));
    out.push_back(da == 1 ? db : da);
  }
  out.push_back(m);
  out.push_back(n);
  int64_t total = 1;
  for (int64_t d : out) {
    if (d > 0 && total > (int64_t(1) << 40) / d)
      throw ShapeError(fmt::format("matmul: the result {} is too large", out.str()));
    total *= d;
  }
  args.out[0] = TensorSpec{a.dtype, out};
}

void cpu_matmul(const KernelArgs& args) {
  const Tensor& a = args.in[0];
  const Tensor& b = args.in[1];
  const Tensor& out = args.out[0];
  bool ta = args.attrs.get_bool("transpose_a"), tb = args.attrs.get_bool("transpose_b");
  if (out.numel() == 0) return;
  int64_t k = ta ? a.dim(a.ndim() - 2) : a.dim(a.ndim() - 1);
  if (k == 0) {
    std::memset(out.raw(), 0, out.nbytes());
    return;
  }
  switch (out.dtype()) {
    case DType::Float32:
      if (!dnnl_matmul(a, b, ta, tb, out)) throw KernelError("matmul: oneDNN has no float32 kernel for these operands");
      break;
    case DType::BFloat16:
      if (!dnnl_matmul(a, b, ta, tb, out)) via_float32(a, b, ta, tb, out);
      break;
    case DType::Float16: via_float32(a, b, ta, tb, out); break;
    default: fallback::matmul(a, b, ta, tb, out); break;
  }
}

}  // namespace msl::kernels
