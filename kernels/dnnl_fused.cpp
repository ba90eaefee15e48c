// The fused contractions graph mode rewrites epilogues into
// (jit/passes/fuse_epilogue.h): matmul_bias, conv2d_bias, conv2d_bn and
// conv2d_bn_add.
//
//   matmul_bias(a, b, bias)   act(op(a) @ op(b) + bias), bias over the last dim
//   conv2d_bias(x, w, bias)   act(conv2d(x, w) + bias), bias per output channel
//   conv2d_bn(x, w, gamma, beta, mean, var)
//                             act(batch_norm(conv2d(x, w)) with the given
//                             statistics, i.e. inference)
//   conv2d_bn_add(x, w, gamma, beta, mean, var, residual)
//                             act(that batch norm + residual): a ResNet
//                             block's end
// with act = activation "none" or "relu".
//
// They exist so that one oneDNN primitive writes the final result: the bias
// is oneDNN's bias argument, the residual a `sum` post-op (dst is filled
// with it first) and ReLU an eltwise post-op, applied while the output
// block is still in registers, where op by op the output makes more round
// trips through memory (add, relu). conv2d_bn applies the normalization
// as per-channel post-ops, y * s + (beta - mean * s) with s = gamma /
// sqrt(var + eps): folding s into the weights instead (w' = w * s) is a
// pass over every weight per call, which at small batches costs more than
// the normalization it saves (ResNet-50 inference at batch 8: 36 ms per
// forward folded, against 26 ms for conv2d + batch_norm op by op). The
// folding remains the route when oneDNN has no kernel with those post-ops.
// Nothing is cached across calls since the parameters may change.
//
// Float32 only: the pass only makes them from float32 graphs (the other
// float dtypes would need the conversion routes of the plain kernels, which
// cost more than the epilogue saves). When oneDNN has no kernel for a
// configuration, or the plain conv2d would take its few-channel direct
// kernel, the plain primitive runs and the epilogue follows as one loop, so
// results never depend on the route. There are no gradients
// (stdlib/msl/_bprop/fused.msl says so): the primitives appear after
// autodiff, where nothing differentiates them.
//
// The convolutions take conv2d's `layout` attribute (blocked_layout.h):
// under nChw16c / nChw8c, x and conv2d_bn_add's residual may arrive plain
// or channel-blocked and the result leaves blocked, so that an inference
// graph's activations stay in the layout oneDNN computes in. Blocked
// operands are described to oneDNN as they are and the primitive is
// created with their tags (JIT kernels take them: no activation reorder);
// where that fails or lands on a reference kernel, format_tag::any and the
// plan's reorders take over. The other routes run on plain temporaries.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/blocked_layout.h"
#include "kernels/conv_few_channels.h"
#include "kernels/dnnl_common.h"
#include "kernels/dnnl_conv_plan.h"
#include "kernels/dnnl_matmul.h"
#include "kernels/dnnl_window.h"
#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "kernels/primitives.h"

namespace msl::kernels {

namespace {

using dnnl::memory;
using onednn::Key;

enum class Activation : int { None, Relu };

Activation activation_attr(const char* op, const Attrs& attrs) {
  std::string a = attrs.get_str("activation", "none");
  if (a == "none") return Activation::None;
  if (a == "relu") return Activation::Relu;
  throw ValueError(fmt::format("{}: activation must be 'none' or 'relu', got '{}'", op, a));
}

void check_float32(const char* op, const char* name, const TensorSpec& t) {
  if (t.dtype != DType::Float32)
    throw DTypeError(fmt::format("{}: {} must be Float32, got {}", op, name, dtype_display_name(t.dtype)));
}

// Whether `bias` holds exactly `n` values along axis `axis_from_end` (0: the
// last) of a result of rank `rank`, every other dim 1: broadcasting it adds
// bias[i] to the i-th slice along that axis.
bool is_channel_bias(const Dims& bias, int64_t n, int axis_from_end, int rank) {
  if (bias.size() < axis_from_end + 1 || bias.size() > rank) return false;
  for (int i = 0; i < bias.size(); ++i) {
    bool channel = i == bias.size() - 1 - axis_from_end;
    if (bias[i] != (channel ? n : 1)) return false;
  }
  return true;
}

// The post-ops after the bias: with `scaled` (conv2d_bn) a per-channel
// scale and shift ([1, C, 1, 1] operands), `sum` adds what dst held before
// (the residual, copied there first), then the activation.
dnnl::primitive_attr epilogue_attr(Activation act, bool sum = false, const memory::desc* scaled = nullptr) {
  dnnl::primitive_attr attr = onednn::user_scratchpad_attr();
  dnnl::post_ops po;
  if (scaled) {
    po.append_binary(dnnl::algorithm::binary_mul, *scaled);
    po.append_binary(dnnl::algorithm::binary_add, *scaled);
  }
  if (sum) po.append_sum(1.0f);
  if (act == Activation::Relu) po.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  if (po.len() > 0) attr.set_post_ops(po);
  return attr;
}

// out (contiguous float32) += bias[channel] (+ residual, contiguous, of
// out's shape, when given), then the activation; the channel of an element
// is (index / inner) % channels. The route taken when oneDNN cannot run the
// fused primitive.
void add_bias_activation(const Tensor& out, const float* bias, int64_t channels, int64_t inner, Activation act,
                         const float* residual = nullptr) {
  float* p = out.data<float>();
  int64_t outer = channels > 0 && inner > 0 ? out.numel() / (channels * inner) : 0;
  parallel_for(outer * channels, 1 + (int64_t(1) << 14) / std::max<int64_t>(inner, 1), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      float b = bias[r % channels];
      float* row = p + r * inner;
      const float* res = residual ? residual + r * inner : nullptr;
      for (int64_t i = 0; i < inner; ++i) {
        float v = row[i] + b;
        if (res) v += res[i];
        row[i] = act == Activation::Relu && !(v > 0.0f) ? 0.0f : v;
      }
    }
  });
}

// ------------------------------------------------------------ conv2d_bias

// The blocks (0: plain NCHW) of a fused convolution's activations.
struct ConvBlocks {
  int64_t x = 0, y = 0, residual = 0;
};

// A call's geometry (from the logical shapes), its operands' blocking and
// its result's shape: the `layout` attribute's contract, shared by the
// shape inference and the kernels.
struct FusedConvCall {
  ConvGeom g;
  ConvBlocks bl;
  Dims out_shape;
};

FusedConvCall fused_conv_call(const char* op, const Dims& x, const Dims& w, const Dims* residual, const Attrs& attrs) {
  ForwardConvCall f = forward_conv_call(op, x, w, attrs);
  const int64_t block = f.y_block;
  FusedConvCall c;
  c.g = f.g;
  c.out_shape = f.out_shape;
  c.bl.x = f.x_block;
  c.bl.y = block;
  Dims y = c.g.y_shape();
  if (residual) {
    Dims r = block ? logical_shape(op, "residual", *residual, block, true) : *residual;
    if (r != y)
      throw ShapeError(fmt::format("{}: the residual must have the result's {}shape {}, got {}", op,
                                   block ? "logical " : "", y.str(), residual->str()));
    c.bl.residual = block && residual->size() == 5 ? block : 0;
  }
  return c;
}

// A forward convolution with bias and post-ops, oneDNN choosing the
// weight layout and, for plain operands, the activation layouts; user
// memory (x, w, y) is reordered into and out of them through one scratch
// buffer, as conv2d does.
struct ConvBiasPlan : onednn::ConvOperands {
  dnnl::convolution_forward prim;
  memory bias;
  memory scale, shift;  // the scaled (conv2d_bn) post-ops' operands
  // With the sum post-op and a reordered dst: the (contiguous) residual
  // and its reorder straight into dst's layout.
  memory residual;
  dnnl::reorder residual_in;
};

onednn::PrimitiveCache<ConvBiasPlan>& conv_plans() {
  static auto* c = new onednn::PrimitiveCache<ConvBiasPlan>(256);
  return *c;
}

// `scaled`: no bias, act(conv * scale + shift [+ sum]) instead.
std::shared_ptr<ConvBiasPlan> make_conv_plan(const ConvGeom& g, const Tensor& x, const Tensor& w, Activation act,
                                             bool sum, const ConvBlocks& bl, bool scaled) {
  auto plan = std::make_shared<ConvBiasPlan>();
  const auto f32 = memory::data_type::f32;
  Dims xs = g.x_shape(), ys = g.y_shape(), ws = g.w_shape();
  Dims wd = g.groups == 1 ? ws : Dims{g.groups, g.o / g.groups, g.c / g.groups, g.kh, g.kw};
  memory::desc bias_md = onednn::plain_md(Dims{g.o}, f32);
  memory::desc channel_md = onednn::plain_md(Dims{1, g.o, 1, 1}, f32);
  memory::dims strides{g.win.sh, g.win.sw}, dil{g.win.dh - 1, g.win.dw - 1};
  memory::dims pad_l{g.win.pt, g.win.pl}, pad_r{g.win.pb, g.win.pr};
  memory::desc x_any = onednn::any_md(xs, f32), y_any = onednn::any_md(ys, f32);
  memory::desc x_blk = bl.x ? onednn::blocked_md(xs, bl.x, f32) : x_any;
  memory::desc y_blk = bl.y ? onednn::blocked_md(ys, bl.y, f32) : y_any;
  memory::desc inner[3], scratch_md;
  // forward_training although nothing is saved: for forward_inference
  // oneDNN's convolution_auto picks its direct kernel over Winograd for
  // ResNet's 3x3 64-channel layers, and the fused conv then ran 2x slower
  // than the plain conv2d (which asks for training) plus its epilogue.
  auto create = [&](const memory::desc& x_md, const memory::desc& y_md) {
    auto desc = scaled ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                                         onednn::conv_algorithm(g), x_md, onednn::any_md(wd, f32),
                                                         y_md, strides, dil, pad_l, pad_r)
                       : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                                         onednn::conv_algorithm(g), x_md, onednn::any_md(wd, f32),
                                                         bias_md, y_md, strides, dil, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc pd(desc, epilogue_attr(act, sum, scaled ? &channel_md : nullptr),
                                                 onednn::engine());
    inner[0] = pd.src_desc(), inner[1] = pd.weights_desc(), inner[2] = pd.dst_desc();
    scratch_md = pd.scratchpad_desc();
    plan->prim = dnnl::convolution_forward(pd);
    return !onednn::is_reference(pd);
  };
  bool created = false;
  if (bl.x || bl.y) {
    // The blocked layouts themselves, so that no activation is reordered;
    // a reference kernel is slower than the reorders of the any path.
    try {
      created = create(x_blk, y_blk);
    } catch (const dnnl::error&) {
    }
  }
  if (!created) {
    try {
      // A reference kernel with the scale post-ops is slower than folding
      // the scale into the weights (the caller's route without a plan).
      if (!create(x_any, y_any) && scaled) return plan;
    } catch (const dnnl::error&) {
      return plan;
    }
  }
  memory::desc user[3] = {bl.x ? x_blk : onednn::strided_md(xs, x.strides(), f32),
                          onednn::conv_weights_md(ws, w.strides(), g.groups, f32),
                          bl.y ? y_blk : onednn::plain_md(ys, f32)};
  plan->plan_operands(user, inner, scratch_md);
  if (sum && plan->reordered[2]) {
    // The residual, contiguous, in its own layout.
    plan->residual =
        onednn::unbound(bl.residual ? onednn::blocked_md(ys, bl.residual, f32) : onednn::plain_md(ys, f32));
    plan->residual_in = dnnl::reorder(plan->residual, plan->inner[2]);
  }
  plan->bias = onednn::unbound(bias_md);
  plan->scale = onednn::unbound(channel_md);
  plan->shift = onednn::unbound(channel_md);
  plan->supported = true;
  return plan;
}

// act(conv(x, w) + bias [+ residual]) into out; with `scale`,
// act(conv(x, w) * scale + bias [+ residual]) (bias: the shift). False
// when oneDNN has no (non-reference, for `scale`) kernel.
bool dnnl_conv_bias(const ConvGeom& g, const ConvBlocks& bl, const Tensor& x_any, const Tensor& w_any,
                    const float* bias, Activation act, const Tensor* residual, const Tensor& out,
                    const float* scale = nullptr) {
  // oneDNN's blocked descriptors are dense: a strided blocked input is copied.
  Tensor x = bl.x ? x_any.contiguous() : onednn::with_positive_strides(x_any);
  Tensor w = onednn::with_positive_strides(w_any);
  double macs = double(g.n * g.o) * double(g.win.ho * g.win.wo) * double(g.c / g.groups * g.kh * g.kw);
  onednn::SerialScope serial(macs < double(onednn::kSerialMacs));
  Key key;
  key.add(int64_t(act)).add(residual != nullptr).add(scale != nullptr).add(onednn::thread_count());
  key.add(bl.x).add(bl.y).add(bl.residual);
  onednn::add_conv_geometry(key, g).add(x.strides()).add(w.strides());
  auto plan =
      conv_plans().get(key, [&] { return make_conv_plan(g, x, w, act, residual != nullptr, bl, scale != nullptr); });
  if (!plan->supported) return false;
  onednn::Scratch scratch(plan->scratch_bytes);
  std::lock_guard<std::mutex> lock(plan->mu);
  const memory* args[3];
  plan->bind_operands({&x, &w, &out}, scratch, args);
  // The sum post-op adds what dst holds: the residual, put there first.
  Tensor residual_dense;
  if (residual && plan->reordered[2]) {
    residual_dense = residual->is_contiguous() ? *residual : residual->contiguous();
    onednn::bind(plan->residual, residual_dense.raw());
    onednn::execute(plan->residual_in, {{DNNL_ARG_FROM, &plan->residual}, {DNNL_ARG_TO, &plan->inner[2]}});
  } else if (residual && bl.y && !bl.residual) {
    block_into(*residual, out);
  } else if (residual) {
    copy_strided(*residual, out);  // the same layout (blocked ones have the same 5-D shape)
  }
  if (scale) {
    onednn::bind(plan->scale, scale);
    onednn::bind(plan->shift, bias);
    onednn::execute(plan->prim, {{DNNL_ARG_SRC, args[0]},
                                 {DNNL_ARG_WEIGHTS, args[1]},
                                 {DNNL_ARG_DST, args[2]},
                                 {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, &plan->scale},
                                 {DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, &plan->shift},
                                 {DNNL_ARG_SCRATCHPAD, &plan->scratchpad}});
  } else {
    onednn::bind(plan->bias, bias);
    onednn::execute(plan->prim, {{DNNL_ARG_SRC, args[0]},
                                 {DNNL_ARG_WEIGHTS, args[1]},
                                 {DNNL_ARG_BIAS, &plan->bias},
                                 {DNNL_ARG_DST, args[2]},
                                 {DNNL_ARG_SCRATCHPAD, &plan->scratchpad}});
  }
  plan->finish_result();
  return true;
}

// w * scale[output channel] (a new contiguous tensor), in double until the
// final rounding: conv2d_bn's normalization folded into the weights.
Tensor fold_scale(const Tensor& w_any, const float* scale) {
  Tensor w = w_any.contiguous(), folded(DType::Float32, w.shape());
  int64_t o = w.dim(0), per_channel = w.numel() / std::max<int64_t>(o, 1);
  const float* src = w.data<float>();
  float* dst = folded.data<float>();
  parallel_for(o, std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(per_channel, 1)),
               [&](int64_t lo, int64_t hi) {
                 for (int64_t c = lo; c < hi; ++c)
                   for (int64_t i = 0; i < per_channel; ++i)
                     dst[c * per_channel + i] = static_cast<float>(double(src[c * per_channel + i]) * scale[c]);
               });
  return folded;
}

// act(conv2d(x, w) [* scale] + bias [+ residual]) into out, bias (and
// scale) holding one float per output channel.
void run_conv_bias(const char* op, const KernelArgs& args, const Tensor& w_arg, const float* bias, Activation act,
                   const Tensor* residual = nullptr, const float* scale = nullptr) {
  const Tensor& x = args.in[0];
  const Tensor& out = args.out[0];
  if (out.numel() == 0) return;
  FusedConvCall c = fused_conv_call(op, x.shape(), w_arg.shape(), residual ? &residual->shape() : nullptr, args.attrs);
  const ConvGeom& g = c.g;
  bool few = few_channel_conv_applies(g.x_shape(), w_arg.shape(), g.win, g.groups);
  bool dnnl = !few && x.numel() > 0 && w_arg.numel() > 0;
  if (dnnl && dnnl_conv_bias(g, c.bl, x, w_arg, bias, act, residual, out, scale)) return;
  Tensor w = scale ? fold_scale(w_arg, scale) : w_arg;
  if (scale && dnnl && dnnl_conv_bias(g, c.bl, x, w, bias, act, residual, out)) return;
  // The plain convolution (its few-channel kernel, or zeros for an empty
  // reduction), then the epilogue, on plain temporaries of blocked operands.
  Attrs conv_attrs;
  for (const char* name : {"stride", "padding", "dilation", "groups", "pad_mode"})
    if (const AttrValue* v = args.attrs.find(name)) conv_attrs.set(name, *v);
  Tensor in[2] = {c.bl.x ? unblock(x) : x, w};
  Tensor y = execute1(Prim::conv2d, in, conv_attrs);
  Tensor res = !residual ? Tensor() : c.bl.residual ? unblock(*residual) : residual->contiguous();
  add_bias_activation(y, bias, g.o, g.win.ho * g.win.wo, act, residual ? res.data<float>() : nullptr);
  if (c.bl.y)
    block_into(y, out);
  else
    copy_strided(y, out);
}

// The convolution of the first two inputs (and the residual's shape, for
// conv2d_bn_add), then the fused checks; sets the result's spec and
// returns its logical shape.
Dims infer_conv(const char* op, const InferArgs& args, bool residual = false) {
  check_float32(op, "the input", args.in[0]);
  check_float32(op, "the weight", args.in[1]);
  FusedConvCall c =
      fused_conv_call(op, args.in[0].shape, args.in[1].shape, residual ? &args.in[6].shape : nullptr, args.attrs);
  activation_attr(op, args.attrs);
  args.out[0] = TensorSpec{DType::Float32, c.out_shape};
  return c.g.y_shape();
}

double epsilon_attr(const char* op, const Attrs& attrs) {
  double eps = attrs.get_float("epsilon", 1e-5);
  if (!(eps >= 0) || !std::isfinite(eps))
    throw ValueError(fmt::format("{}: epsilon must be finite and >= 0, got {}", op, eps));
  return eps;
}

}  // namespace

void infer_matmul_bias(const InferArgs& args) {
  const char* op = "matmul_bias";
  check_float32(op, "a", args.in[0]);
  check_float32(op, "b", args.in[1]);
  check_float32(op, "the bias", args.in[2]);
  infer_matmul(InferArgs{Prim::matmul, args.in.subspan(0, 2), args.attrs, args.out});
  activation_attr(op, args.attrs);
  const Dims& out = args.out[0].shape;
  if (!is_channel_bias(args.in[2].shape, out[out.size() - 1], 0, out.size()))
    throw ShapeError(fmt::format("{}: the bias must have shape ({},) (or leading 1s) to add to the result {}, got {}",
                                 op, out[out.size() - 1], out.str(), args.in[2].shape.str()));
}

void cpu_matmul_bias(const KernelArgs& args) {
  const Tensor &a = args.in[0], &b = args.in[1], &bias = args.in[2], &out = args.out[0];
  bool ta = args.attrs.get_bool("transpose_a"), tb = args.attrs.get_bool("transpose_b");
  Activation act = activation_attr("matmul_bias", args.attrs);
  if (out.numel() == 0) return;
  int64_t k = ta ? a.dim(a.ndim() - 2) : a.dim(a.ndim() - 1);
  if (k > 0 && dnnl_matmul(a, b, ta, tb, out, &bias, act == Activation::Relu)) return;
  Attrs mm{{"transpose_a", ta}, {"transpose_b", tb}};
  Tensor in[2] = {a, b};
  copy_strided(execute1(Prim::matmul, in, mm), out);
  Tensor bias_dense = bias.contiguous();
  add_bias_activation(out, bias_dense.data<float>(), out.dim(out.ndim() - 1), 1, act);
}

void infer_conv2d_bias(const InferArgs& args) {
  const char* op = "conv2d_bias";
  Dims y = infer_conv(op, args);
  check_float32(op, "the bias", args.in[2]);
  if (!is_channel_bias(args.in[2].shape, y[1], 2, 4) && !is_channel_bias(args.in[2].shape, y[1], 0, 1))
    throw ShapeError(fmt::format("{}: the bias must have shape ({},) or (1, {}, 1, 1) for the result {}, got {}", op,
                                 y[1], y[1], y.str(), args.in[2].shape.str()));
}

void cpu_conv2d_bias(const KernelArgs& args) {
  Tensor bias = args.in[2].contiguous();
  run_conv_bias("conv2d_bias", args, args.in[1], bias.data<float>(), activation_attr("conv2d_bias", args.attrs));
}

void infer_conv2d_bn(const InferArgs& args) {
  bool add = args.prim == Prim::conv2d_bn_add;
  const char* op = add ? "conv2d_bn_add" : "conv2d_bn";
  if (add) check_float32(op, "the residual", args.in[6]);
  Dims y = infer_conv(op, args, add);
  epsilon_attr(op, args.attrs);
  constexpr const char* kNames[] = {"gamma", "beta", "mean", "var"};
  for (int i = 0; i < 4; ++i) {
    check_float32(op, kNames[i], args.in[2 + i]);
    if (args.in[2 + i].shape != Dims{y[1]})
      throw ShapeError(fmt::format("{}: {} must have shape ({},) (the output channels of {}), got {}", op, kNames[i],
                                   y[1], y.str(), args.in[2 + i].shape.str()));
  }
}

void cpu_conv2d_bn(const KernelArgs& args) {
  const char* op = args.prim == Prim::conv2d_bn ? "conv2d_bn" : "conv2d_bn_add";
  Activation act = activation_attr(op, args.attrs);
  double eps = epsilon_attr(op, args.attrs);
  const Tensor& w = args.in[1];
  int64_t o = w.dim(0);
  Tensor gamma = args.in[2].contiguous(), beta = args.in[3].contiguous(), mean = args.in[4].contiguous(),
         var = args.in[5].contiguous();
  // Per output channel: the scale s and the shift beta - mean * s.
  std::vector<float> scale(static_cast<size_t>(o)), shift(static_cast<size_t>(o));
  const float *gp = gamma.data<float>(), *bp = beta.data<float>(), *mp = mean.data<float>(), *vp = var.data<float>();
  for (int64_t c = 0; c < o; ++c) {
    double s = double(gp[c]) / std::sqrt(double(vp[c]) + eps);
    scale[static_cast<size_t>(c)] = static_cast<float>(s);
    shift[static_cast<size_t>(c)] = static_cast<float>(double(bp[c]) - double(mp[c]) * s);
  }
  run_conv_bias(op, args, w, shift.data(), act, args.prim == Prim::conv2d_bn_add ? &args.in[6] : nullptr,
                scale.data());
}

void infer_conv2d_bn_add(const InferArgs& args) { infer_conv2d_bn(args); }

void cpu_conv2d_bn_add(const KernelArgs& args) { cpu_conv2d_bn(args); }

}  // namespace msl::kernels
