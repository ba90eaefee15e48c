// conv2d and its two gradients: oneDNN for float32 and bfloat16, float32
// copies for float16, im2col + the fallback GEMM for float64; the float32
// forward of inputs with a few channels by a direct kernel
// (conv_few_channels.cpp).
//
// oneDNN picks the activation and weight layouts it is fastest with
// (format_tag::any, typically nChw16c / OIhw16i16o on AVX-512) and the
// algorithm (convolution_auto: Winograd F(4x4, 3x3) where its heuristics
// expect it to beat direct convolution, e.g. 3x3 stride-1 layers with 64+
// channels; direct elsewhere, and always below 4x4 outputs:
// onednn::conv_algorithm). MSL tensors are NCHW with MindSpore's
// [O, C/groups, kh, kw] weights, so a call reorders what differs from the
// chosen layouts into scratch memory and the result back; user descriptors
// carry the input strides, so a strided input costs no extra copy. The plan
// (primitive, reorders, scratch layout) is cached per configuration; the
// reordered weights are not, as weights change every step.
//
// With a `layout` attribute (blocked_layout.h) activations may arrive and
// always leave channel-blocked. Blocked operands are described to oneDNN as
// nChw16c / nChw8c, and the primitive is created with that tag for them
// (format_tag::any for weights and plain operands), so when the primitive
// takes the layout (JIT kernels do) nothing is reordered; if creation fails
// or lands on a reference kernel, format_tag::any and the plan's reorders
// take over. The other paths run on plain temporaries (run_conv).
#include <fmt/format.h>

#include <cstring>

#include "kernels/blocked_layout.h"
#include "kernels/contraction_fallback.h"
#include "kernels/conv_single_tap.h"
#include "kernels/conv_small_output.h"
#include "kernels/conv_few_channels.h"
#include "kernels/dnnl_common.h"
#include "kernels/dnnl_conv_plan.h"
#include "kernels/dnnl_window.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels {

namespace {

using dnnl::memory;
using onednn::Key;

// Mixed precision on the CPU: a bfloat16/float16 activation with its
// float32 master weight (graph mode reads the weight without a cast of its
// own: oneDNN converts it while reordering it into the kernel's layout).
bool low_precision_with_master(const TensorSpec& act, const TensorSpec& w) {
  return is_half(act.dtype) && w.dtype == DType::Float32 &&
         act.device == DeviceType::CPU && w.device == DeviceType::CPU;
}

DType check_dtypes(const char* op, const TensorSpec& a, const char* an, const TensorSpec& b, const char* bn) {
  if (a.dtype != b.dtype)
    throw DTypeError(fmt::format("{}: {} and {} dtypes differ: {} and {}", op, an, bn, dtype_display_name(a.dtype),
                                 dtype_display_name(b.dtype)));
  if (!is_floating(a.dtype)) throw DTypeError(fmt::format("{}: unsupported dtype {}", op, dtype_display_name(a.dtype)));
  return a.dtype;
}

Dims shape_attr(const char* op, const Attrs& attrs, const char* name) {
  std::vector<int64_t> v = attrs.get_ints(name);
  if (v.size() != 4) throw ValueError(fmt::format("{}: {} must have 4 entries, got {}", op, name, ints_str(v)));
  for (int64_t d : v)
    if (d < 0) throw ValueError(fmt::format("{}: {} must not be negative, got {}", op, name, ints_str(v)));
  return Dims(v);
}

void check_dy(const char* op, const Dims& dy, const ConvGeom& g) {
  if (dy != g.y_shape())
    throw ShapeError(fmt::format("{}: dy has shape {} but the convolution of an input {} with a weight {} gives {}", op,
                                 dy.str(), g.x_shape().str(), g.w_shape().str(), g.y_shape().str()));
}

// ------------------------------------------------------------------ oneDNN

// Arguments in the order (input 0, input 1, output) of each op.
constexpr int kArgs[3][3] = {
    {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
    {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
    {DNNL_ARG_DIFF_DST, DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS},
};

struct ConvPlan : onednn::ConvOperands {
  dnnl::primitive prim;
};

onednn::PrimitiveCache<ConvPlan>& conv_plans() {
  static auto* c = new onednn::PrimitiveCache<ConvPlan>(256);
  return *c;
}

// The block size (0: plain) of each of run_conv's operands (in0, in1, out).
struct Blocking {
  int64_t b[3] = {0, 0, 0};
  bool any() const { return b[0] || b[1] || b[2]; }
};

// The primitive and the layouts it works in, for given activation descriptors.
struct Created {
  dnnl::primitive prim;
  memory::desc inner[3], scratch;
  bool reference = false;
};

// Creates op's primitive with activation descriptors x_md and y_md (logical
// dims, a format tag or any); throws dnnl::error where oneDNN has none.
Created create_primitive(ConvOp op, const ConvGeom& g, const memory::desc& x_md, const memory::desc& w_md,
                         const memory::desc& y_md) {
  memory::dims strides{g.win.sh, g.win.sw}, dil{g.win.dh - 1, g.win.dw - 1};
  memory::dims pad_l{g.win.pt, g.win.pl}, pad_r{g.win.pb, g.win.pr};
  const auto alg = onednn::conv_algorithm(g);
  auto attr = onednn::user_scratchpad_attr();
  Created c;
  // The forward hint has weights of the activations' dtype (a float32
  // weight gradient of bfloat16 activations has no forward of its own).
  memory::desc w_fwd = w_md.data_type() == x_md.data_type()
                           ? w_md
                           : memory::desc(w_md.dims(), x_md.data_type(), memory::format_tag::any);
  dnnl::convolution_forward::primitive_desc fwd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, x_md, w_fwd, y_md, strides, dil, pad_l,
                                      pad_r),
      attr, onednn::engine());
  const dnnl::primitive_desc* pd = &fwd;
  dnnl::convolution_backward_data::primitive_desc bwd_data;
  dnnl::convolution_backward_weights::primitive_desc bwd_weights;
  switch (op) {
    case ConvOp::Forward:
      c.inner[0] = fwd.src_desc(), c.inner[1] = fwd.weights_desc(), c.inner[2] = fwd.dst_desc();
      c.prim = dnnl::convolution_forward(fwd);
      break;
    case ConvOp::BackpropInput:
      bwd_data = dnnl::convolution_backward_data::primitive_desc(
          dnnl::convolution_backward_data::desc(alg, x_md, w_md, y_md, strides, dil, pad_l, pad_r), attr,
          onednn::engine(), fwd);
      c.inner[0] = bwd_data.diff_dst_desc(), c.inner[1] = bwd_data.weights_desc(), c.inner[2] = bwd_data.diff_src_desc();
      c.prim = dnnl::convolution_backward_data(bwd_data);
      pd = &bwd_data;
      break;
    case ConvOp::BackpropFilter:
      bwd_weights = dnnl::convolution_backward_weights::primitive_desc(
          dnnl::convolution_backward_weights::desc(alg, x_md, w_md, y_md, strides, dil, pad_l, pad_r), attr,
          onednn::engine(), fwd);
      c.inner[0] = bwd_weights.diff_dst_desc(), c.inner[1] = bwd_weights.src_desc();
      c.inner[2] = bwd_weights.diff_weights_desc();
      c.prim = dnnl::convolution_backward_weights(bwd_weights);
      pd = &bwd_weights;
      break;
  }
  c.reference = onednn::is_reference(*pd);
  c.scratch = pd->scratchpad_desc();
  return c;
}

// Which of the operands (in0, in1, out) of `op` is x and which y.
int x_operand(ConvOp op) { return op == ConvOp::Forward ? 0 : op == ConvOp::BackpropInput ? 2 : 1; }
int y_operand(ConvOp op) { return op == ConvOp::Forward ? 2 : 0; }

// in0 holds activations (x or dy); the weight operand (in1 of the forward
// and backward-data convolutions, the backward-filter's result) may be
// float32 with bfloat16/float16 activations: the primitive then reads the
// converted weight (a reorder does both) or writes a float32 gradient.
std::shared_ptr<ConvPlan> make_plan(ConvOp op, const ConvGeom& g, const Tensor& in0, const Tensor& in1,
                                    const Tensor& out, const Blocking& bl) {
  auto plan = std::make_shared<ConvPlan>();
  DType dt = in0.dtype();
  auto ddt = onednn::dnnl_type(dt);
  auto wdt = onednn::dnnl_type(conv_weight_dtype(op, in1, out));
  Dims xs = g.x_shape(), ys = g.y_shape(), ws = g.w_shape();
  Dims wd = g.groups == 1 ? ws : Dims{g.groups, g.o / g.groups, g.c / g.groups, g.kh, g.kw};
  memory::desc x_any = onednn::any_md(xs, ddt), y_any = onednn::any_md(ys, ddt);
  // The kernel's weights are in the activations' dtype, its weight gradient
  // in the one asked for.
  memory::desc w_any = onednn::any_md(wd, op == ConvOp::BackpropFilter ? wdt : ddt);
  int64_t xb = bl.b[x_operand(op)], yb = bl.b[y_operand(op)];
  memory::desc x_blk = xb ? onednn::blocked_md(xs, xb, ddt) : x_any;
  memory::desc y_blk = yb ? onednn::blocked_md(ys, yb, ddt) : y_any;
  Created c;
  bool created = false;
  if (bl.any()) {
    // The blocked layouts themselves, so that no activation is reordered;
    // a reference kernel is slower than the reorders of the any path.
    try {
      c = create_primitive(op, g, x_blk, w_any, y_blk);
      created = !c.reference;
    } catch (const dnnl::error&) {
    }
  }
  if (!created && op == ConvOp::BackpropFilter && g.groups == 1 && dt == DType::Float32) {
    // Both activations get reordered anyway on this path, and for a few
    // input channels `any` settles on a slower kernel than the channels-last
    // one (LeNet's 6 -> 16 layer: the AVX2 kernel on nChw8c, 236-279 us per
    // batch of 64, against 143 us NHWC; 1 and 3 channels time the same).
    try {
      auto nhwc = memory::format_tag::nhwc;
      c = create_primitive(op, g, onednn::tagged_md(xs, ddt, nhwc), w_any, onednn::tagged_md(ys, ddt, nhwc));
      created = !c.reference;
    } catch (const dnnl::error&) {
    }
  }
  if (!created) {
    try {
      c = create_primitive(op, g, x_any, w_any, y_any);
    } catch (const dnnl::error&) {
      return plan;  // not implemented for this dtype here
    }
  }
  // bfloat16 on a CPU without its kernels lands on the reference code:
  // converting to float32 is faster.
  if (dt != DType::Float32 && c.reference) return plan;
  plan->prim = c.prim;
  // User-side descriptors: the actual input strides (blocked operands are
  // contiguous), contiguous outputs.
  memory::desc user[3];
  auto activation = [&](int i, const Dims& logical, const Tensor* t) {
    if (bl.b[i]) return onednn::blocked_md(logical, bl.b[i], ddt);
    return t ? onednn::strided_md(logical, t->strides(), ddt) : onednn::plain_md(logical, ddt);
  };
  switch (op) {
    case ConvOp::Forward:
      user[0] = activation(0, xs, &in0);
      user[1] = onednn::conv_weights_md(ws, in1.strides(), g.groups, wdt);
      user[2] = activation(2, ys, nullptr);
      break;
    case ConvOp::BackpropInput:
      user[0] = activation(0, ys, &in0);
      user[1] = onednn::conv_weights_md(ws, in1.strides(), g.groups, wdt);
      user[2] = activation(2, xs, nullptr);
      break;
    case ConvOp::BackpropFilter:
      user[0] = activation(0, ys, &in0);
      user[1] = activation(1, xs, &in1);
      user[2] = onednn::conv_weights_md(ws, contiguous_strides(ws), g.groups, wdt);
      break;
  }
  plan->plan_operands(user, c.inner, c.scratch);
  plan->supported = true;
  return plan;
}

bool dnnl_conv(ConvOp op, const ConvGeom& g, const Tensor& in0_any, const Tensor& in1_any, const Tensor& out,
               const Blocking& bl) {
  // oneDNN's blocked descriptors are dense: a strided blocked input is copied.
  Tensor in0 = bl.b[0] ? in0_any.contiguous() : onednn::with_positive_strides(in0_any);
  Tensor in1 = bl.b[1] ? in1_any.contiguous() : onednn::with_positive_strides(in1_any);
  double macs = double(g.n * g.o) * double(g.win.ho * g.win.wo) * double(g.c / g.groups * g.kh * g.kw);
  onednn::SerialScope serial(macs < double(onednn::kSerialMacs));
  Key key;
  key.add(int64_t(op)).add(int64_t(in0.dtype())).add(int64_t(in1.dtype())).add(int64_t(out.dtype()));
  key.add(onednn::thread_count());
  key.add(bl.b[0]).add(bl.b[1]).add(bl.b[2]);
  onednn::add_conv_geometry(key, g).add(in0.strides()).add(in1.strides());
  auto plan = conv_plans().get(key, [&] { return make_plan(op, g, in0, in1, out, bl); });
  if (!plan->supported) return false;
  onednn::Scratch scratch(plan->scratch_bytes);
  std::lock_guard<std::mutex> lock(plan->mu);
  const dnnl::memory* args[3];
  plan->bind_operands({&in0, &in1, &out}, scratch, args);
  const int* ids = kArgs[static_cast<int>(op)];
  onednn::execute(plan->prim,
                  {{ids[0], args[0]}, {ids[1], args[1]}, {ids[2], args[2]}, {DNNL_ARG_SCRATCHPAD, &plan->scratchpad}});
  plan->finish_result();
  return true;
}

// A contiguous blocked tensor of a single pixel seen as the plain tensor
// it equals: with H = W = 1, (n*(C/b) + c/b)*b + c%b is n*C + c.
Tensor pixel_as_plain(const Tensor& blocked) {
  Tensor t = blocked.contiguous();
  Dims shape{t.dim(0), t.dim(1) * t.dim(4), 1, 1};
  return Tensor::view(t, shape, contiguous_strides(shape), t.offset());
}

void run_conv(ConvOp op, const ConvGeom& g, const Tensor& in0_arg, const Tensor& in1_arg, const Tensor& out_arg,
              Blocking bl = {}) {
  if (out_arg.numel() == 0) return;
  // An empty operand leaves every output element an empty sum.
  if (in0_arg.numel() == 0 || in1_arg.numel() == 0) {
    std::memset(out_arg.raw(), 0, out_arg.nbytes());
    return;
  }
  Tensor in0 = in0_arg, in1 = in1_arg, out = out_arg;
  if (bl.any() && g.h == 1 && g.w == 1 && g.win.ho == 1 && g.win.wo == 1) {
    // Single pixels: blocked memory is plain memory (the output, a fresh
    // contiguous tensor, is written through the view).
    if (bl.b[0]) in0 = pixel_as_plain(in0);
    if (bl.b[1]) in1 = pixel_as_plain(in1);
    if (bl.b[2]) out = pixel_as_plain(out);
    bl = Blocking{};
  }
  // The activations' dtype; a float32 weight (forward, backward data) or
  // weight gradient (backward filter) may come with bfloat16/float16 ones.
  DType dt = in0.dtype();
  bool few_channels = dt == DType::Float32 && op == ConvOp::Forward &&
                      few_channel_conv_applies(g.x_shape(), g.w_shape(), g.win, g.groups);
  bool small_backprop_input = dt == DType::Float32 && op == ConvOp::BackpropInput && g.c / g.groups < 4;
  if (bl.any() && (dt == DType::Float64 || few_channels || small_backprop_input)) {
    // Paths without blocked kernels run on plain copies.
    Tensor a = bl.b[0] ? unblock(in0) : in0, b = bl.b[1] ? unblock(in1) : in1;
    Tensor o = bl.b[2] ? Tensor(dt, op == ConvOp::Forward ? g.y_shape() : g.x_shape()) : out;
    run_conv(op, g, a, b, o);
    if (bl.b[2]) block_into(o, out);
    return;
  }
  if (dt == DType::Float64) {
    switch (op) {
      case ConvOp::Forward: fallback::conv2d_f64(in0, in1, g.win, g.groups, out); break;
      case ConvOp::BackpropInput: fallback::conv2d_backprop_input_f64(in0, in1, g.win, g.groups, out); break;
      case ConvOp::BackpropFilter: fallback::conv2d_backprop_filter_f64(in0, in1, g.win, g.groups, out); break;
    }
    return;
  }
  if (few_channels) return few_channel_conv2d(in0, in1, g.win, out);
  if (small_backprop_input) {
    // oneDNN pads a handful of input channels to its 16-channel blocks and
    // its backward-data kernel then runs 10-15x slower than the forward (a
    // LeNet's first layer: 3.2 ms against 0.3 ms); the im2col fallback in
    // float64 takes 0.7 ms and rounds once.
    Tensor dy = execute1(Prim::cast, std::span<const Tensor>(&in0, 1), Attrs{{"dtype", DType::Float64}});
    Tensor w = execute1(Prim::cast, std::span<const Tensor>(&in1, 1), Attrs{{"dtype", DType::Float64}});
    Tensor dx(DType::Float64, out.shape());
    fallback::conv2d_backprop_input_f64(dy, w, g.win, g.groups, dx);
    copy_strided(execute1(Prim::cast, std::span<const Tensor>(&dx, 1), Attrs{{"dtype", DType::Float32}}), out);
    return;
  }
  if (single_tap_conv(op, g, in0, in1, out)) return;
  if (op == ConvOp::BackpropFilter && small_output_filter_grad(g, in0, bl.b[0], in1, bl.b[1], out)) return;
  if (dt != DType::Float16 && dnnl_conv(op, g, in0, in1, out, bl)) return;
  if (dt == DType::Float32) throw KernelError("conv2d: oneDNN has no float32 kernel for this configuration");
  Tensor a = onednn::to_float32(in0), b = onednn::to_float32(in1);
  Tensor o = out.dtype() == DType::Float32 && out.is_contiguous() ? out : Tensor(DType::Float32, out.shape());
  if (!dnnl_conv(op, g, a, b, o, bl)) throw KernelError("conv2d: oneDNN has no float32 kernel for this configuration");
  if (o.raw() != out.raw()) onednn::convert_from_float32(o.data<float>(), out);
}

// A call's geometry (from the logical shapes), its operands' blocking and
// its result's shape.
struct Call {
  ConvGeom g;
  Blocking bl;
  Dims out_shape;
};

// The logical shape of an activation operand, noting its block in bl.b[i].
Dims activation(const char* op, const char* what, const Dims& shape, int64_t block, Blocking& bl, int i) {
  if (!block) return shape;
  bl.b[i] = shape.size() == 5 ? block : 0;
  return logical_shape(op, what, shape, block, true);
}

Call forward_call(const Attrs& attrs, const Dims& x, const Dims& w) {
  ForwardConvCall f = forward_conv_call("conv2d", x, w, attrs);
  Call c;
  c.g = f.g;
  c.bl.b[0] = f.x_block;
  c.bl.b[2] = f.y_block;
  c.out_shape = f.out_shape;
  return c;
}

Call backprop_input_call(const Attrs& attrs, const Dims& dy, const Dims& w) {
  const char* op = "conv2d_backprop_input";
  int64_t block = layout_block(op, attrs);
  Call c;
  c.g = conv_geometry(op, shape_attr(op, attrs, "input_shape"), w, attrs);
  check_dy(op, activation(op, "dy", dy, block, c.bl, 0), c.g);
  c.out_shape = c.g.x_shape();
  if (block) c.out_shape = blocked_shape(op, "dx", c.out_shape, block), c.bl.b[2] = block;
  return c;
}

Call backprop_filter_call(const Attrs& attrs, const Dims& dy, const Dims& x) {
  const char* op = "conv2d_backprop_filter";
  int64_t block = layout_block(op, attrs);
  Call c;
  c.g = conv_geometry(op, activation(op, "input", x, block, c.bl, 1), shape_attr(op, attrs, "filter_shape"), attrs);
  check_dy(op, activation(op, "dy", dy, block, c.bl, 0), c.g);
  c.out_shape = c.g.w_shape();
  return c;
}

}  // namespace

void infer_conv2d(const InferArgs& args) {
  DType dt = low_precision_with_master(args.in[0], args.in[1])
                 ? args.in[0].dtype
                 : check_dtypes("conv2d", args.in[0], "input", args.in[1], "weight");
  args.out[0] = TensorSpec{dt, forward_call(args.attrs, args.in[0].shape, args.in[1].shape).out_shape};
}

void cpu_conv2d(const KernelArgs& args) {
  Call c = forward_call(args.attrs, args.in[0].shape(), args.in[1].shape());
  run_conv(ConvOp::Forward, c.g, args.in[0], args.in[1], args.out[0], c.bl);
}

void infer_conv2d_backprop_input(const InferArgs& args) {
  DType dt = low_precision_with_master(args.in[0], args.in[1])
                 ? args.in[0].dtype
                 : check_dtypes("conv2d_backprop_input", args.in[0], "dy", args.in[1], "weight");
  args.out[0] = TensorSpec{dt, backprop_input_call(args.attrs, args.in[0].shape, args.in[1].shape).out_shape};
}

void cpu_conv2d_backprop_input(const KernelArgs& args) {
  Call c = backprop_input_call(args.attrs, args.in[0].shape(), args.in[1].shape());
  run_conv(ConvOp::BackpropInput, c.g, args.in[0], args.in[1], args.out[0], c.bl);
}

void infer_conv2d_backprop_filter(const InferArgs& args) {
  DType dt = check_dtypes("conv2d_backprop_filter", args.in[0], "dy", args.in[1], "input");
  if (args.attrs.has("dtype")) {
    // The weight gradient in float32 from low-precision activations (the
    // master weight's gradient, accumulated in float32).
    DType want = args.attrs.get_dtype("dtype", dt);
    if (want != dt && !(want == DType::Float32 && low_precision_with_master(args.in[0], TensorSpec{want, {}})))
      throw DTypeError(fmt::format("conv2d_backprop_filter: dtype must be the inputs' ({}) or, for bfloat16 or "
                                   "float16 inputs on the CPU, Float32; got {}",
                                   dtype_display_name(dt), dtype_display_name(want)));
    dt = want;
  }
  args.out[0] = TensorSpec{dt, backprop_filter_call(args.attrs, args.in[0].shape, args.in[1].shape).out_shape};
}

void cpu_conv2d_backprop_filter(const KernelArgs& args) {
  Call c = backprop_filter_call(args.attrs, args.in[0].shape(), args.in[1].shape());
  run_conv(ConvOp::BackpropFilter, c.g, args.in[0], args.in[1], args.out[0], c.bl);
}

}  // namespace msl::kernels
