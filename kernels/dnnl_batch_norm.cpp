// batch_norm and batch_norm_grad: oneDNN for float32 and bfloat16 data,
// float32 copies for float16, per-channel loops in double for float64.
//
// x is [N, C, ...spatial] (rank 2 to 5), normalized per channel over N and
// the spatial dims; ranks 2 and 3 are presented to oneDNN as [N, C, L, 1],
// the same memory. oneDNN's kernel for plain NCHW is a scalar loop hundreds
// of times slower than its JIT kernels for channel-blocked data (500 ms
// against 1 ms for a 32x64x56x56 batch here), so the data is reordered into
// nChw16c and back, costing about two extra passes over memory. The
// per-channel parameters may be any float dtype (mixed precision keeps them
// in float32 beside float16 data); oneDNN wants them as float32, so they are
// converted into a small scratch buffer and the statistics converted back to
// the dtypes of the mean/var inputs.
//
// training=true normalizes with the batch statistics and returns the batch
// mean and the biased batch variance: the saved statistics batch_norm_grad
// consumes. The moving averages (with the unbiased variance) are composed
// above this layer. training=false uses the given mean/var and returns
// copies of them, so the primitive has three outputs in both modes.
//
// With a `layout` attribute (blocked_layout.h) x, dy and the data results
// are channel-blocked rank-5 tensors: oneDNN runs on them as nChw16c /
// nChw8c with no reorder at all; the float64 loops run on plain copies.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/blocked_layout.h"
#include "kernels/dnnl_common.h"
#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "kernels/primitives.h"

namespace msl::kernels {

namespace {

using dnnl::memory;
using onednn::Key;

constexpr const char* kParamNames[] = {"gamma", "beta", "mean", "var"};

// Checks x (rank 2..5, float) and the [C] float parameters in[first..first+count).
void check_inputs(const char* op, const TensorSpec& x, std::span<const TensorSpec> params, const char* const* names) {
  if (x.shape.size() < 2 || x.shape.size() > 5)
    throw ShapeError(fmt::format("{}: x must have rank 2 to 5 (N, C, ...), got {}", op, x.shape.str()));
  if (!is_floating(x.dtype)) throw DTypeError(fmt::format("{}: unsupported dtype {}", op, dtype_display_name(x.dtype)));
  Dims c{x.shape[1]};
  for (size_t i = 0; i < params.size(); ++i) {
    if (!is_floating(params[i].dtype))
      throw DTypeError(
          fmt::format("{}: {} has unsupported dtype {}", op, names[i], dtype_display_name(params[i].dtype)));
    if (params[i].shape != c)
      throw ShapeError(fmt::format("{}: {} must have shape {} (the channels of x {}), got {}", op, names[i], c.str(),
                                   x.shape.str(), params[i].shape.str()));
  }
}

double epsilon_attr(const char* op, const Attrs& attrs) {
  double eps = attrs.get_float("epsilon", 1e-5);
  if (!(eps >= 0) || !std::isfinite(eps))
    throw ValueError(fmt::format("{}: epsilon must be finite and >= 0, got {}", op, eps));
  return eps;
}

// x as [N, C, S] with S the product of the spatial dims.
struct Layout {
  int64_t n, c, s;
};

Layout layout_of(const Dims& x) {
  int64_t s = 1;
  for (int i = 2; i < x.size(); ++i) s *= x[i];
  return {x[0], x[1], s};
}

// The dims oneDNN sees: 4-D for ranks 2..4, 5-D for rank 5.
Dims dnnl_dims(const Dims& x) {
  if (x.size() == 5) return x;
  return {x[0], x[1], x.size() >= 3 ? x[2] : 1, x.size() >= 4 ? x[3] : 1};
}

// ------------------------------------------------------------------ oneDNN

enum class BnOp : int { Training, Inference, Backward };

// The data tensors pass through `to_inner` into the primitive's layout and
// the result through `from_inner` back to NCHW, unless the layouts agree.
struct BnPlan {
  bool supported = false;
  bool reordered = false;
  dnnl::primitive prim;
  dnnl::reorder to_inner, from_inner;
  memory user_in, user_out;  // NCHW tensors, when reordered
  memory src, dst, diff_dst, diff_src, scale, shift, mean, var, diff_scale, diff_shift, scratchpad;
  size_t in0_offset = 0, in1_offset = 0, out_offset = 0, scratchpad_offset = 0, scratch_bytes = 0;
  std::mutex mu;
};

onednn::PrimitiveCache<BnPlan>& bn_plans() {
  static auto* c = new onednn::PrimitiveCache<BnPlan>(128);
  return *c;
}

// `block` > 0: the data is already blocked nChw{block}c ([N, C, H, W] dims).
std::shared_ptr<BnPlan> make_plan(BnOp op, const Dims& dims, DType dt, float eps, int64_t block) {
  auto plan = std::make_shared<BnPlan>();
  auto ddt = onednn::dnnl_type(dt);
  memory::dims md_dims(dims.begin(), dims.end());
  bool five = dims.size() == 5;
  int64_t spatial = dims.product() / std::max<int64_t>(1, dims[0] * dims[1]);
  // oneDNN's NCHW normalization kernel is a slow scalar loop; its JIT
  // kernels take channels-blocked (or channels-last) data. Without spatial
  // extent channels-last is the same memory as NCHW, so nothing moves.
  memory::desc user = onednn::plain_md(dims, ddt);
  memory::desc data =
      block         ? onednn::blocked_md(dims, block, ddt)
      : spatial == 1 ? memory::desc(md_dims, ddt, five ? memory::format_tag::ndhwc : memory::format_tag::nhwc)
                   : memory::desc(md_dims, ddt, five ? memory::format_tag::nCdhw16c : memory::format_tag::nChw16c);
  memory::desc param = onednn::plain_md(Dims{dims[1]}, memory::data_type::f32);
  using F = dnnl::normalization_flags;
  F flags = F::use_scale | F::use_shift;
  auto attr = onednn::user_scratchpad_attr();
  try {
    auto fwd_prop = op == BnOp::Inference ? dnnl::prop_kind::forward_inference : dnnl::prop_kind::forward_training;
    dnnl::batch_normalization_forward::primitive_desc fwd(
        dnnl::batch_normalization_forward::desc(fwd_prop, data, eps,
                                                op == BnOp::Inference ? flags | F::use_global_stats : flags),
        attr, onednn::engine());
    memory::desc scratch_md = fwd.scratchpad_desc();
    if (op == BnOp::Backward) {
      dnnl::batch_normalization_backward::primitive_desc bwd(
          dnnl::batch_normalization_backward::desc(dnnl::prop_kind::backward, data, data, eps, flags), attr,
          onednn::engine(), fwd);
      if (dt != DType::Float32 && onednn::is_reference(bwd)) return plan;
      plan->prim = dnnl::batch_normalization_backward(bwd);
      scratch_md = bwd.scratchpad_desc();
    } else {
      if (dt != DType::Float32 && onednn::is_reference(fwd)) return plan;
      plan->prim = dnnl::batch_normalization_forward(fwd);
    }
    for (memory* m : {&plan->src, &plan->dst, &plan->diff_dst, &plan->diff_src}) *m = onednn::unbound(data);
    for (memory* m : {&plan->scale, &plan->shift, &plan->mean, &plan->var, &plan->diff_scale, &plan->diff_shift})
      *m = onednn::unbound(param);
    onednn::ScratchLayout layout;
    if (spatial != 1 && !block) {
      plan->reordered = true;
      plan->user_in = onednn::unbound(user);
      plan->user_out = onednn::unbound(user);
      plan->to_inner = dnnl::reorder(plan->user_in, plan->src);
      plan->from_inner = dnnl::reorder(plan->dst, plan->user_out);
      plan->in0_offset = layout.add(data.get_size());
      if (op == BnOp::Backward) plan->in1_offset = layout.add(data.get_size());
      plan->out_offset = layout.add(data.get_size());
    }
    plan->scratchpad = onednn::unbound(scratch_md);
    plan->scratchpad_offset = layout.add(scratch_md.get_size());
    plan->scratch_bytes = layout.total;
    plan->supported = true;
  } catch (const dnnl::error&) {
    // Not implemented for this dtype here.
  }
  return plan;
}

std::shared_ptr<BnPlan> plan_for(BnOp op, const Dims& dims, DType dt, double eps, int64_t block) {
  Key key;
  key.add(int64_t(op)).add(int64_t(dt)).add(onednn::thread_count()).add(dims).add(block);
  float e = static_cast<float>(eps);
  int32_t bits;
  std::memcpy(&bits, &e, 4);
  key.add(bits);
  return bn_plans().get(key, [&] { return make_plan(op, dims, dt, e, block); });
}

// Float32 copies of the [C] parameters, side by side in one scratch buffer.
struct Params {
  onednn::Scratch buf;
  float* p[5];
  Params(int64_t c, std::initializer_list<const Tensor*> ts) : buf(sizeof(float) * size_t(c) * 5) {
    int i = 0;
    for (const Tensor* t : ts) {
      p[i] = reinterpret_cast<float*>(buf.at(sizeof(float) * size_t(c) * size_t(i)));
      if (t) onednn::convert_to_float32(*t, p[i]);
      ++i;
    }
    for (; i < 5; ++i) p[i] = reinterpret_cast<float*>(buf.at(sizeof(float) * size_t(c) * size_t(i)));
  }
};

// Binds `inner` to the tensor data, or to scratch filled by a reorder from it.
void bind_input(BnPlan& plan, const memory& inner, const Tensor& t, const onednn::Scratch& scratch, size_t offset) {
  if (!plan.reordered) return onednn::bind(inner, t.raw());
  onednn::bind(plan.user_in, t.raw());
  onednn::bind(inner, scratch.at(offset));
  onednn::execute(plan.to_inner, {{DNNL_ARG_FROM, &plan.user_in}, {DNNL_ARG_TO, &inner}});
}

void bind_output(BnPlan& plan, const memory& inner, const Tensor& t, const onednn::Scratch& scratch) {
  onednn::bind(inner, plan.reordered ? static_cast<void*>(scratch.at(plan.out_offset)) : t.raw());
}

void finish_output(BnPlan& plan, const memory& inner, const Tensor& t) {
  if (!plan.reordered) return;
  onednn::bind(plan.user_out, t.raw());
  onednn::execute(plan.from_inner, {{DNNL_ARG_FROM, &inner}, {DNNL_ARG_TO, &plan.user_out}});
}

// Forward through oneDNN; x and y are float32 or bfloat16. False when
// oneDNN has no fast kernel for the dtype.
// block > 0: x and y are blocked.
bool dnnl_forward(bool training, const Tensor& x, const Tensor* in, double eps, std::span<Tensor> out,
                  const Tensor& y, int64_t block) {
  Dims dims = block ? logical_shape("batch_norm", "x", x.shape(), block, false) : dnnl_dims(x.shape());
  onednn::SerialScope serial(x.numel() < onednn::kSerialElements);
  auto plan = plan_for(training ? BnOp::Training : BnOp::Inference, dims, x.dtype(), eps, block);
  if (!plan->supported) return false;
  int64_t c = dims[1];
  Tensor xc = x.contiguous();
  Params prm(c, {&in[1], &in[2], training ? nullptr : &in[3], training ? nullptr : &in[4]});
  onednn::Scratch scratch(plan->scratch_bytes);
  {
    std::lock_guard<std::mutex> lock(plan->mu);
    bind_input(*plan, plan->src, xc, scratch, plan->in0_offset);
    bind_output(*plan, plan->dst, y, scratch);
    onednn::bind(plan->scale, prm.p[0]);
    onednn::bind(plan->shift, prm.p[1]);
    onednn::bind(plan->mean, prm.p[2]);
    onednn::bind(plan->var, prm.p[3]);
    onednn::bind(plan->scratchpad, scratch.at(plan->scratchpad_offset));
    onednn::execute(plan->prim, {{DNNL_ARG_SRC, &plan->src},
                                 {DNNL_ARG_DST, &plan->dst},
                                 {DNNL_ARG_SCALE, &plan->scale},
                                 {DNNL_ARG_SHIFT, &plan->shift},
                                 {DNNL_ARG_MEAN, &plan->mean},
                                 {DNNL_ARG_VARIANCE, &plan->var},
                                 {DNNL_ARG_SCRATCHPAD, &plan->scratchpad}});
    finish_output(*plan, plan->dst, y);
  }
  if (training) {
    onednn::convert_from_float32(prm.p[2], out[1]);
    onednn::convert_from_float32(prm.p[3], out[2]);
  }
  return true;
}

// Backward through oneDNN; dy, x and dx are float32 or bfloat16.
bool dnnl_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean, const Tensor& var,
                   double eps, const Tensor& dx, std::span<Tensor> out, int64_t block) {
  Dims dims = block ? logical_shape("batch_norm_grad", "x", x.shape(), block, false) : dnnl_dims(x.shape());
  onednn::SerialScope serial(x.numel() < onednn::kSerialElements);
  auto plan = plan_for(BnOp::Backward, dims, x.dtype(), eps, block);
  if (!plan->supported) return false;
  int64_t c = dims[1];
  Tensor xc = x.contiguous(), dyc = dy.contiguous();
  Params prm(c, {&gamma, &mean, &var});
  onednn::Scratch scratch(plan->scratch_bytes);
  {
    std::lock_guard<std::mutex> lock(plan->mu);
    bind_input(*plan, plan->src, xc, scratch, plan->in0_offset);
    bind_input(*plan, plan->diff_dst, dyc, scratch, plan->in1_offset);
    bind_output(*plan, plan->diff_src, dx, scratch);
    onednn::bind(plan->scale, prm.p[0]);
    // oneDNN 2.6 insists on a shift argument here, though the gradient
    // does not depend on beta; it is only read.
    onednn::bind(plan->shift, prm.p[0]);
    onednn::bind(plan->mean, prm.p[1]);
    onednn::bind(plan->var, prm.p[2]);
    onednn::bind(plan->diff_scale, prm.p[3]);
    onednn::bind(plan->diff_shift, prm.p[4]);
    onednn::bind(plan->scratchpad, scratch.at(plan->scratchpad_offset));
    onednn::execute(plan->prim, {{DNNL_ARG_SRC, &plan->src},
                                 {DNNL_ARG_DIFF_DST, &plan->diff_dst},
                                 {DNNL_ARG_SCALE, &plan->scale},
                                 {DNNL_ARG_SHIFT, &plan->shift},
                                 {DNNL_ARG_MEAN, &plan->mean},
                                 {DNNL_ARG_VARIANCE, &plan->var},
                                 {DNNL_ARG_DIFF_SRC, &plan->diff_src},
                                 {DNNL_ARG_DIFF_SCALE, &plan->diff_scale},
                                 {DNNL_ARG_DIFF_SHIFT, &plan->diff_shift},
                                 {DNNL_ARG_SCRATCHPAD, &plan->scratchpad}});
    finish_output(*plan, plan->diff_src, dx);
  }
  onednn::convert_from_float32(prm.p[3], out[1]);
  onednn::convert_from_float32(prm.p[4], out[2]);
  return true;
}

// --------------------------------------------------------- float64 loops

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) v[static_cast<size_t>(i)] = t.item_at(i);
  return v;
}

void store(const std::vector<double>& v, const Tensor& t) {
  for (size_t i = 0; i < v.size(); ++i) store_from_double(t.raw(), t.dtype(), static_cast<int64_t>(i), v[i]);
}

// Runs f(c) for every channel, channels split across threads.
template <class F>
void each_channel(const Layout& l, F&& f) {
  parallel_for(l.c, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(1, l.n * l.s)), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) f(c);
  });
}

void forward_f64(bool training, const Tensor* in, double eps, std::span<Tensor> out) {
  Tensor x = in[0].contiguous();
  Layout l = layout_of(x.shape());
  const double* xp = x.data<double>();
  double* yp = out[0].data<double>();
  std::vector<double> gamma = as_doubles(in[1]), beta = as_doubles(in[2]);
  std::vector<double> mean = as_doubles(in[3]), var = as_doubles(in[4]);
  double m = double(l.n * l.s);
  each_channel(l, [&](int64_t c) {
    size_t ci = static_cast<size_t>(c);
    if (training) {
      double s = 0;
      for (int64_t n = 0; n < l.n; ++n)
        for (int64_t i = 0; i < l.s; ++i) s += xp[(n * l.c + c) * l.s + i];
      double mu = s / m, q = 0;
      for (int64_t n = 0; n < l.n; ++n)
        for (int64_t i = 0; i < l.s; ++i) {
          double d = xp[(n * l.c + c) * l.s + i] - mu;
          q += d * d;
        }
      mean[ci] = mu;
      var[ci] = q / m;
    }
    double inv = 1.0 / std::sqrt(var[ci] + eps), a = gamma[ci] * inv, b = beta[ci] - mean[ci] * a;
    for (int64_t n = 0; n < l.n; ++n)
      for (int64_t i = 0; i < l.s; ++i) {
        int64_t k = (n * l.c + c) * l.s + i;
        yp[k] = xp[k] * a + b;
      }
  });
  if (training) {
    store(mean, out[1]);
    store(var, out[2]);
  }
}

void backward_f64(const Tensor* in, double eps, std::span<Tensor> out) {
  Tensor dy = in[0].contiguous(), x = in[1].contiguous();
  Layout l = layout_of(x.shape());
  const double* dyp = dy.data<double>();
  const double* xp = x.data<double>();
  double* dxp = out[0].data<double>();
  std::vector<double> gamma = as_doubles(in[2]), mean = as_doubles(in[3]), var = as_doubles(in[4]);
  std::vector<double> dgamma(static_cast<size_t>(l.c)), dbeta(static_cast<size_t>(l.c));
  double m = double(l.n * l.s);
  each_channel(l, [&](int64_t c) {
    size_t ci = static_cast<size_t>(c);
    double inv = 1.0 / std::sqrt(var[ci] + eps), db = 0, dg = 0;
    for (int64_t n = 0; n < l.n; ++n)
      for (int64_t i = 0; i < l.s; ++i) {
        int64_t k = (n * l.c + c) * l.s + i;
        db += dyp[k];
        dg += dyp[k] * (xp[k] - mean[ci]) * inv;
      }
    dbeta[ci] = db;
    dgamma[ci] = dg;
    double a = gamma[ci] * inv;
    for (int64_t n = 0; n < l.n; ++n)
      for (int64_t i = 0; i < l.s; ++i) {
        int64_t k = (n * l.c + c) * l.s + i;
        double xhat = (xp[k] - mean[ci]) * inv;
        dxp[k] = a * (dyp[k] - db / m - xhat * dg / m);
      }
  });
  store(dgamma, out[1]);
  store(dbeta, out[2]);
}

}  // namespace

namespace {

// x's logical shape: with a layout, x must be blocked (rank 5).
TensorSpec logical_spec(const char* op, const TensorSpec& x, int64_t block) {
  if (!block) return x;
  return TensorSpec{x.dtype, logical_shape(op, "x", x.shape, block, false)};
}

}  // namespace

void infer_batch_norm(const InferArgs& args) {
  const char* op = "batch_norm";
  int64_t block = layout_block(op, args.attrs);
  TensorSpec x = logical_spec(op, args.in[0], block);
  check_inputs(op, x, args.in.subspan(1), kParamNames);
  epsilon_attr(op, args.attrs);
  const Dims& xs = x.shape;
  Layout l = layout_of(xs);
  if (args.attrs.get_bool("training") && l.c > 0 && l.n * l.s == 0)
    throw ValueError(fmt::format("{}: training needs at least one value per channel, got an input {}", op, xs.str()));
  args.out[0] = args.in[0];
  args.out[1] = TensorSpec{args.in[3].dtype, Dims{xs[1]}};
  args.out[2] = TensorSpec{args.in[4].dtype, Dims{xs[1]}};
}

void cpu_batch_norm(const KernelArgs& args) {
  bool training = args.attrs.get_bool("training");
  double eps = epsilon_attr("batch_norm", args.attrs);
  int64_t block = layout_block("batch_norm", args.attrs);
  const Tensor* in = args.in.data();
  if (!training) {
    copy_strided(in[3], args.out[1]);
    copy_strided(in[4], args.out[2]);
  }
  if (args.out[0].numel() == 0) return;
  DType dt = in[0].dtype();
  if (dt == DType::Float64) {
    if (!block) return forward_f64(training, in, eps, args.out);
    // The loops run on NCHW: plain copies in and out.
    Tensor plain_in[5] = {unblock(in[0]), in[1], in[2], in[3], in[4]};
    Tensor plain_out[3] = {Tensor(dt, plain_in[0].shape()), args.out[1], args.out[2]};
    forward_f64(training, plain_in, eps, plain_out);
    return block_into(plain_out[0], args.out[0]);
  }
  if (dt != DType::Float16 && dnnl_forward(training, in[0], in, eps, args.out, args.out[0], block)) return;
  if (dt == DType::Float32) throw KernelError("batch_norm: oneDNN has no float32 kernel for this input");
  // float32 copies keep the layout: the conversion is elementwise.
  Tensor x32 = onednn::to_float32(in[0]);
  Tensor y32(DType::Float32, x32.shape());
  if (!dnnl_forward(training, x32, in, eps, args.out, y32, block))
    throw KernelError("batch_norm: oneDNN has no float32 kernel for this input");
  onednn::convert_from_float32(y32.data<float>(), args.out[0]);
}

void infer_batch_norm_grad(const InferArgs& args) {
  const char* op = "batch_norm_grad";
  static constexpr const char* names[] = {"gamma", "saved_mean", "saved_var"};
  int64_t block = layout_block(op, args.attrs);
  const TensorSpec& dy = args.in[0];
  TensorSpec x = logical_spec(op, args.in[1], block);
  check_inputs(op, x, args.in.subspan(2), names);
  if (dy.dtype != x.dtype)
    throw DTypeError(fmt::format("{}: dy and x dtypes differ: {} and {}", op, dtype_display_name(dy.dtype),
                                 dtype_display_name(x.dtype)));
  if (dy.shape != args.in[1].shape)
    throw ShapeError(fmt::format("{}: dy has shape {} but x has shape {}", op, dy.shape.str(), args.in[1].shape.str()));
  epsilon_attr(op, args.attrs);
  args.out[0] = args.in[1];
  args.out[1] = TensorSpec{args.in[2].dtype, Dims{x.shape[1]}};
  args.out[2] = TensorSpec{args.in[2].dtype, Dims{x.shape[1]}};
}

void cpu_batch_norm_grad(const KernelArgs& args) {
  double eps = epsilon_attr("batch_norm_grad", args.attrs);
  int64_t block = layout_block("batch_norm_grad", args.attrs);
  const Tensor* in = args.in.data();
  if (args.out[0].numel() == 0) {
    // No values: the parameter gradients are empty sums.
    for (int i = 1; i < 3; ++i) std::memset(args.out[i].raw(), 0, args.out[i].nbytes());
    return;
  }
  DType dt = in[1].dtype();
  if (dt == DType::Float64) {
    if (!block) return backward_f64(in, eps, args.out);
    Tensor plain_in[5] = {unblock(in[0]), unblock(in[1]), in[2], in[3], in[4]};
    Tensor plain_out[3] = {Tensor(dt, plain_in[1].shape()), args.out[1], args.out[2]};
    backward_f64(plain_in, eps, plain_out);
    return block_into(plain_out[0], args.out[0]);
  }
  if (dt != DType::Float16 && dnnl_backward(in[0], in[1], in[2], in[3], in[4], eps, args.out[0], args.out, block))
    return;
  if (dt == DType::Float32) throw KernelError("batch_norm_grad: oneDNN has no float32 kernel for this input");
  Tensor dy32 = onednn::to_float32(in[0]), x32 = onednn::to_float32(in[1]);
  Tensor dx32(DType::Float32, x32.shape());
  if (!dnnl_backward(dy32, x32, in[2], in[3], in[4], eps, dx32, args.out, block))
    throw KernelError("batch_norm_grad: oneDNN has no float32 kernel for this input");
  onednn::convert_from_float32(dx32.data<float>(), args.out[0]);
}

}  // namespace msl::kernels
