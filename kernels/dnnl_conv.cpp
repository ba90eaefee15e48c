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
#include <fmt/format.h>

#include <cstring>

#include "kernels/contraction_fallback.h"
#include "kernels/conv_single_tap.h"
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

std::shared_ptr<ConvPlan> make_plan(ConvOp op, const ConvGeom& g, DType dt, const Tensor& in0, const Tensor& in1) {
  auto plan = std::make_shared<ConvPlan>();
  auto ddt = onednn::dnnl_type(dt);
  Dims xs = g.x_shape(), ys = g.y_shape(), ws = g.w_shape();
  Dims wd = g.groups == 1 ? ws : Dims{g.groups, g.o / g.groups, g.c / g.groups, g.kh, g.kw};
  memory::desc x_any = onednn::any_md(xs, ddt), y_any = onednn::any_md(ys, ddt), w_any = onednn::any_md(wd, ddt);
  memory::dims strides{g.win.sh, g.win.sw}, dil{g.win.dh - 1, g.win.dw - 1};
  memory::dims pad_l{g.win.pt, g.win.pl}, pad_r{g.win.pb, g.win.pr};
  const auto alg = onednn::conv_algorithm(g);
  auto attr = onednn::user_scratchpad_attr();
  memory::desc inner[3], scratch_md;
  try {
    dnnl::convolution_forward::primitive_desc fwd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, x_any, w_any, y_any, strides, dil,
                                        pad_l, pad_r),
        attr, onednn::engine());
    const dnnl::primitive_desc* pd = &fwd;
    dnnl::convolution_backward_data::primitive_desc bwd_data;
    dnnl::convolution_backward_weights::primitive_desc bwd_weights;
    switch (op) {
      case ConvOp::Forward:
        inner[0] = fwd.src_desc(), inner[1] = fwd.weights_desc(), inner[2] = fwd.dst_desc();
        plan->prim = dnnl::convolution_forward(fwd);
        break;
      case ConvOp::BackpropInput:
        bwd_data = dnnl::convolution_backward_data::primitive_desc(
            dnnl::convolution_backward_data::desc(alg, x_any, w_any, y_any, strides, dil, pad_l, pad_r), attr,
            onednn::engine(), fwd);
        inner[0] = bwd_data.diff_dst_desc(), inner[1] = bwd_data.weights_desc(), inner[2] = bwd_data.diff_src_desc();
        plan->prim = dnnl::convolution_backward_data(bwd_data);
        pd = &bwd_data;
        break;
      case ConvOp::BackpropFilter:
        bwd_weights = dnnl::convolution_backward_weights::primitive_desc(
            dnnl::convolution_backward_weights::desc(alg, x_any, w_any, y_any, strides, dil, pad_l, pad_r), attr,
            onednn::engine(), fwd);
        inner[0] = bwd_weights.diff_dst_desc(), inner[1] = bwd_weights.src_desc();
        inner[2] = bwd_weights.diff_weights_desc();
        plan->prim = dnnl::convolution_backward_weights(bwd_weights);
        pd = &bwd_weights;
        break;
    }
    // bfloat16 on a CPU without its kernels lands on the reference code:
    // converting to float32 is faster.
    if (dt != DType::Float32 && onednn::is_reference(*pd)) return plan;
    scratch_md = pd->scratchpad_desc();
  } catch (const dnnl::error&) {
    return plan;  // not implemented for this dtype here
  }
  // User-side descriptors: the actual input strides, contiguous outputs.
  memory::desc user[3];
  switch (op) {
    case ConvOp::Forward:
      user[0] = onednn::strided_md(xs, in0.strides(), ddt);
      user[1] = onednn::conv_weights_md(ws, in1.strides(), g.groups, ddt);
      user[2] = onednn::plain_md(ys, ddt);
      break;
    case ConvOp::BackpropInput:
      user[0] = onednn::strided_md(ys, in0.strides(), ddt);
      user[1] = onednn::conv_weights_md(ws, in1.strides(), g.groups, ddt);
      user[2] = onednn::plain_md(xs, ddt);
      break;
    case ConvOp::BackpropFilter:
      user[0] = onednn::strided_md(ys, in0.strides(), ddt);
      user[1] = onednn::strided_md(xs, in1.strides(), ddt);
      user[2] = onednn::conv_weights_md(ws, contiguous_strides(ws), g.groups, ddt);
      break;
  }
  plan->plan_operands(user, inner, scratch_md);
  plan->supported = true;
  return plan;
}

bool dnnl_conv(ConvOp op, const ConvGeom& g, const Tensor& in0_any, const Tensor& in1_any, const Tensor& out) {
  Tensor in0 = onednn::with_positive_strides(in0_any), in1 = onednn::with_positive_strides(in1_any);
  double macs = double(g.n * g.o) * double(g.win.ho * g.win.wo) * double(g.c / g.groups * g.kh * g.kw);
  onednn::SerialScope serial(macs < double(onednn::kSerialMacs));
  Key key;
  key.add(int64_t(op)).add(int64_t(out.dtype())).add(onednn::thread_count());
  onednn::add_conv_geometry(key, g).add(in0.strides()).add(in1.strides());
  auto plan = conv_plans().get(key, [&] { return make_plan(op, g, out.dtype(), in0, in1); });
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

void run_conv(ConvOp op, const ConvGeom& g, const Tensor& in0, const Tensor& in1, const Tensor& out) {
  if (out.numel() == 0) return;
  // An empty operand leaves every output element an empty sum.
  if (in0.numel() == 0 || in1.numel() == 0) {
    std::memset(out.raw(), 0, out.nbytes());
    return;
  }
  DType dt = out.dtype();
  if (dt == DType::Float64) {
    switch (op) {
      case ConvOp::Forward: fallback::conv2d_f64(in0, in1, g.win, g.groups, out); break;
      case ConvOp::BackpropInput: fallback::conv2d_backprop_input_f64(in0, in1, g.win, g.groups, out); break;
      case ConvOp::BackpropFilter: fallback::conv2d_backprop_filter_f64(in0, in1, g.win, g.groups, out); break;
    }
    return;
  }
  if (dt == DType::Float32 && op == ConvOp::Forward && few_channel_conv_applies(in0.shape(), in1.shape(), g.win, g.groups))
    return few_channel_conv2d(in0, in1, g.win, out);
  if (dt == DType::Float32 && op == ConvOp::BackpropInput && g.c / g.groups < 4) {
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
  if (dt != DType::Float16 && dnnl_conv(op, g, in0, in1, out)) return;
  if (dt == DType::Float32) throw KernelError("conv2d: oneDNN has no float32 kernel for this configuration");
  Tensor a = onednn::to_float32(in0), b = onednn::to_float32(in1);
  Tensor o(DType::Float32, out.shape());
  if (!dnnl_conv(op, g, a, b, o)) throw KernelError("conv2d: oneDNN has no float32 kernel for this configuration");
  onednn::convert_from_float32(o.data<float>(), out);
}

}  // namespace

void infer_conv2d(const InferArgs& args) {
  DType dt = check_dtypes("conv2d", args.in[0], "input", args.in[1], "weight");
  ConvGeom g = conv_geometry("conv2d", args.in[0].shape, args.in[1].shape, args.attrs);
  args.out[0] = TensorSpec{dt, g.y_shape()};
}

void cpu_conv2d(const KernelArgs& args) {
  ConvGeom g = conv_geometry("conv2d", args.in[0].shape(), args.in[1].shape(), args.attrs);
  run_conv(ConvOp::Forward, g, args.in[0], args.in[1], args.out[0]);
}

void infer_conv2d_backprop_input(const InferArgs& args) {
  const char* op = "conv2d_backprop_input";
  DType dt = check_dtypes(op, args.in[0], "dy", args.in[1], "weight");
  ConvGeom g = conv_geometry(op, shape_attr(op, args.attrs, "input_shape"), args.in[1].shape, args.attrs);
  check_dy(op, args.in[0].shape, g);
  args.out[0] = TensorSpec{dt, g.x_shape()};
}

void cpu_conv2d_backprop_input(const KernelArgs& args) {
  const char* op = "conv2d_backprop_input";
  ConvGeom g = conv_geometry(op, shape_attr(op, args.attrs, "input_shape"), args.in[1].shape(), args.attrs);
  run_conv(ConvOp::BackpropInput, g, args.in[0], args.in[1], args.out[0]);
}

void infer_conv2d_backprop_filter(const InferArgs& args) {
  const char* op = "conv2d_backprop_filter";
  DType dt = check_dtypes(op, args.in[0], "dy", args.in[1], "input");
  ConvGeom g = conv_geometry(op, args.in[1].shape, shape_attr(op, args.attrs, "filter_shape"), args.attrs);
  check_dy(op, args.in[0].shape, g);
  args.out[0] = TensorSpec{dt, g.w_shape()};
}

void cpu_conv2d_backprop_filter(const KernelArgs& args) {
  const char* op = "conv2d_backprop_filter";
  ConvGeom g = conv_geometry(op, args.in[1].shape(), shape_attr(op, args.attrs, "filter_shape"), args.attrs);
  run_conv(ConvOp::BackpropFilter, g, args.in[0], args.in[1], args.out[0]);
}

}  // namespace msl::kernels
