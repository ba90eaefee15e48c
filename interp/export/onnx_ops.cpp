// Primitives as ONNX operators (opset 13). Most are one operator with the
// same semantics (NumPy broadcasting, NCHW); the rest are short sequences:
// rsqrt is Sqrt then Reciprocal, not_equal is Equal then Not, matmul's
// transposed operands are Transposes, argmax's int64 result is cast to
// MSL's int32. Geometry (padding, strides, pad_mode "same") comes from the
// kernels' own window code, so ONNX gets explicit pads that are exactly
// what the CPU kernel used.
#include <fmt/format.h>

#include "interp/export/onnx_builder.h"
#include "interp/export/onnx_export.h"
#include "kernels/dnnl_window.h"
#include "kernels/primitives.h"

namespace msl::onnx_export {

namespace {

using kernels::DType;
using kernels::Prim;

[[noreturn]] void unsupported(const ir::PrimRef& p, const std::string& why) {
  throw ExportError(fmt::format("{}: {}", kernels::prim_name(p.prim), why));
}

std::vector<std::string> names(const std::vector<OnnxValue>& v) {
  std::vector<std::string> out;
  for (const OnnxValue& x : v) out.push_back(x.name);
  return out;
}

// NCHW only: graph mode's blocked layouts never reach a trace, but say so
// if one does.
void check_layout(const ir::PrimRef& p) {
  std::string layout = p.attrs.get_str("layout", "");
  if (!layout.empty() && layout != "NCHW") unsupported(p, "layout '" + layout + "' has no ONNX form (NCHW only)");
}

// The permutation that swaps the last two axes of a rank-r tensor.
std::vector<int64_t> swap_last_two(int r) {
  std::vector<int64_t> perm;
  for (int i = 0; i < r; ++i) perm.push_back(i);
  std::swap(perm[static_cast<size_t>(r - 2)], perm[static_cast<size_t>(r - 1)]);
  return perm;
}

std::string transposed_last_two(Builder& b, const OnnxValue& x) {
  std::string t = b.fresh(x.name + "_t");
  attr(b.node("Transpose", {x.name}, {t}), "perm", swap_last_two(x.spec.shape.size()));
  return t;
}

std::vector<int64_t> all_axes(int r) {
  std::vector<int64_t> v;
  for (int i = 0; i < r; ++i) v.push_back(i);
  return v;
}

void window_attrs(onnx::NodeProto* n, const kernels::Window2d& w, bool with_dilation) {
  attr(n, "strides", std::vector<int64_t>{w.sh, w.sw});
  attr(n, "pads", std::vector<int64_t>{w.pt, w.pl, w.pb, w.pr});
  if (with_dilation) attr(n, "dilations", std::vector<int64_t>{w.dh, w.dw});
}

const char* unary_op(Prim p) {
  switch (p) {
    case Prim::neg: return "Neg";
    case Prim::abs: return "Abs";
    case Prim::sign: return "Sign";
    case Prim::exp: return "Exp";
    case Prim::log: return "Log";
    case Prim::sqrt: return "Sqrt";
    case Prim::reciprocal: return "Reciprocal";
    case Prim::sin: return "Sin";
    case Prim::cos: return "Cos";
    case Prim::tanh: return "Tanh";
    case Prim::sigmoid: return "Sigmoid";
    case Prim::relu: return "Relu";
    case Prim::erf: return "Erf";
    case Prim::floor: return "Floor";
    case Prim::logical_not: return "Not";
    default: return nullptr;
  }
}

const char* binary_op(Prim p) {
  switch (p) {
    case Prim::add: return "Add";
    case Prim::sub: return "Sub";
    case Prim::mul: return "Mul";
    case Prim::div: return "Div";
    case Prim::pow: return "Pow";
    case Prim::maximum: return "Max";
    case Prim::minimum: return "Min";
    case Prim::equal: return "Equal";
    case Prim::less: return "Less";
    case Prim::less_equal: return "LessOrEqual";
    case Prim::greater: return "Greater";
    case Prim::greater_equal: return "GreaterOrEqual";
    case Prim::logical_and: return "And";
    case Prim::logical_or: return "Or";
    case Prim::select: return "Where";
    default: return nullptr;
  }
}

}  // namespace

void emit_prim(Builder& b, const ir::PrimRef& p, const std::vector<OnnxValue>& in, const std::vector<OnnxValue>& out) {
  const kernels::Attrs& a = p.attrs;
  const std::string& y = out[0].name;
  if (const char* op = unary_op(p.prim)) {
    b.node(op, {in[0].name}, {y});
    return;
  }
  if (const char* op = binary_op(p.prim)) {
    b.node(op, names(in), {y});
    return;
  }
  switch (p.prim) {
    case Prim::rsqrt: {
      std::string s = b.fresh(y + "_sqrt");
      b.node("Sqrt", {in[0].name}, {s});
      b.node("Reciprocal", {s}, {y});
      return;
    }
    case Prim::not_equal: {
      std::string e = b.fresh(y + "_eq");
      b.node("Equal", names(in), {e});
      b.node("Not", {e}, {y});
      return;
    }
    case Prim::relu_grad: unsupported(p, "a gradient has no place in an inference graph");
    case Prim::cast:
      attr(b.node("Cast", {in[0].name}, {y}), "to", static_cast<int64_t>(onnx_dtype(out[0].spec.dtype)));
      return;
    case Prim::reduce_sum:
    case Prim::reduce_max:
    case Prim::reduce_min: {
      std::vector<int64_t> axes = a.get_ints("axes");
      if (axes.empty()) axes = all_axes(in[0].spec.shape.size());
      int64_t keep = a.get_bool("keep_dims") ? 1 : 0;
      if (p.prim == Prim::reduce_sum) {
        attr(b.node("ReduceSum", {in[0].name, b.int64s(axes)}, {y}), "keepdims", keep);
      } else {
        onnx::NodeProto* n = b.node(p.prim == Prim::reduce_max ? "ReduceMax" : "ReduceMin", {in[0].name}, {y});
        attr(n, "axes", axes);
        attr(n, "keepdims", keep);
      }
      return;
    }
    case Prim::argmax:
    case Prim::argmin: {
      std::string i64 = b.fresh(y + "_i64");
      onnx::NodeProto* n = b.node(p.prim == Prim::argmax ? "ArgMax" : "ArgMin", {in[0].name}, {i64});
      attr(n, "axis", a.get_int("axis"));
      attr(n, "keepdims", static_cast<int64_t>(a.get_bool("keep_dims") ? 1 : 0));
      attr(b.node("Cast", {i64}, {y}), "to", static_cast<int64_t>(onnx_dtype(out[0].spec.dtype)));
      return;
    }
    case Prim::reshape: {
      std::vector<int64_t> shape(out[0].spec.shape.begin(), out[0].spec.shape.end());
      b.node("Reshape", {in[0].name, b.int64s(shape)}, {y});
      return;
    }
    case Prim::transpose: attr(b.node("Transpose", {in[0].name}, {y}), "perm", a.get_ints("perm")); return;
    case Prim::broadcast_to: {
      std::vector<int64_t> shape(out[0].spec.shape.begin(), out[0].spec.shape.end());
      b.node("Expand", {in[0].name, b.int64s(shape)}, {y});
      return;
    }
    case Prim::strided_slice: {
      std::vector<int64_t> begin = a.get_ints("begin");
      b.node("Slice", {in[0].name, b.int64s(begin), b.int64s(a.get_ints("end")),
                       b.int64s(all_axes(static_cast<int>(begin.size()))), b.int64s(a.get_ints("strides"))},
             {y});
      return;
    }
    case Prim::concat: attr(b.node("Concat", names(in), {y}), "axis", a.get_int("axis")); return;
    case Prim::pad: {
      std::vector<int64_t> p2 = a.get_ints("paddings");
      size_t r = static_cast<size_t>(in[0].spec.shape.size());
      if (p2.size() != 2 * r) unsupported(p, "paddings must give (before, after) for every axis");
      std::vector<int64_t> pads(2 * r);
      for (size_t d = 0; d < r; ++d) {
        pads[d] = p2[2 * d];
        pads[r + d] = p2[2 * d + 1];
      }
      b.node("Pad", {in[0].name, b.int64s(pads), b.scalar(in[0].spec.dtype, a.get_float("value", 0))}, {y});
      return;
    }
    case Prim::gather: attr(b.node("Gather", names(in), {y}), "axis", a.get_int("axis")); return;
    case Prim::matmul: {
      int ra = in[0].spec.shape.size(), rb = in[1].spec.shape.size();
      std::string x0 = in[0].name, x1 = in[1].name;
      if (a.get_bool("transpose_a") && ra >= 2) x0 = transposed_last_two(b, in[0]);
      if (a.get_bool("transpose_b") && rb >= 2) x1 = transposed_last_two(b, in[1]);
      b.node("MatMul", {x0, x1}, {y});
      return;
    }
    case Prim::conv2d: {
      check_layout(p);
      const kernels::Dims &xs = in[0].spec.shape, &ws = in[1].spec.shape;
      if (xs.size() != 4 || ws.size() != 4) unsupported(p, "expects 4-d NCHW input and OIHW weight");
      kernels::Window2d w = kernels::make_window("conv2d", a, xs[2], xs[3], ws[2], ws[3], true);
      onnx::NodeProto* n = b.node("Conv", {in[0].name, in[1].name}, {y});
      attr(n, "kernel_shape", std::vector<int64_t>{ws[2], ws[3]});
      attr(n, "group", a.get_int("groups", 1));
      window_attrs(n, w, true);
      return;
    }
    case Prim::max_pool2d:
    case Prim::avg_pool2d: {
      check_layout(p);
      bool avg = p.prim == Prim::avg_pool2d;
      const char* op = kernels::prim_name(p.prim);
      const kernels::Dims& xs = in[0].spec.shape;
      if (xs.size() != 4) unsupported(p, "expects a 4-d NCHW input");
      std::array<int64_t, 2> k = kernels::window_pair(op, a, "kernel_size", 1, 1);
      kernels::Window2d w = kernels::make_window(op, a, xs[2], xs[3], k[0], k[1], false);
      onnx::NodeProto* n = b.node(avg ? "AveragePool" : "MaxPool", {in[0].name}, {y});
      attr(n, "kernel_shape", std::vector<int64_t>{k[0], k[1]});
      window_attrs(n, w, false);
      if (avg) attr(n, "count_include_pad", static_cast<int64_t>(a.get_bool("count_include_pad") ? 1 : 0));
      return;
    }
    case Prim::batch_norm: {
      check_layout(p);
      if (a.get_bool("training"))
        unsupported(p, "training mode (batch statistics): call net.set_train(False) before exporting");
      onnx::NodeProto* n = b.node("BatchNormalization", names(in), {y});
      attr(n, "epsilon", static_cast<float>(a.get_float("epsilon", 1e-5)));
      // Inference mode passes the moving statistics through.
      b.node("Identity", {in[3].name}, {out[1].name});
      b.node("Identity", {in[4].name}, {out[2].name});
      return;
    }
    case Prim::softmax:
    case Prim::log_softmax:
      attr(b.node(p.prim == Prim::softmax ? "Softmax" : "LogSoftmax", {in[0].name}, {y}), "axis", a.get_int("axis"));
      return;
    default: break;
  }
  unsupported(p, "has no ONNX form in MSL's exporter (opset 13)");
}

}  // namespace msl::onnx_export
