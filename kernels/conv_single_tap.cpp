// Single-pixel convolutions as matrix products (see conv_single_tap.h).
#include "kernels/conv_single_tap.h"

#include <cstring>

#include "kernels/dnnl_matmul.h"
#include "kernels/primitives.h"

namespace msl::kernels {

namespace {

// The kernel index whose input position is pixel 0 for output pixel 0, or
// -1 when none (every tap then reads padding).
int64_t live_tap(int64_t k, int64_t dilation, int64_t pad_before) {
  if (pad_before % dilation) return -1;
  int64_t t = pad_before / dilation;
  return t < k ? t : -1;
}

// The [rows, cols] matrix of a [rows, cols, 1, 1] tensor (or, for the
// weight, of its tap (ti, tj)).
Tensor matrix(const Tensor& t, int64_t ti = 0, int64_t tj = 0) {
  const Dims& s = t.strides();
  return Tensor::view(t, Dims{t.dim(0), t.dim(1)}, Dims{s[0], s[1]}, t.offset() + ti * s[2] + tj * s[3]);
}

}  // namespace

bool single_tap_conv(ConvOp op, const ConvGeom& g, const Tensor& in0, const Tensor& in1, const Tensor& out) {
  // The activations' dtype; a float32 weight (forward, backward data) or
  // weight gradient (backward filter) may come with bfloat16 ones.
  DType dt = in0.dtype();
  bool floating = dt == DType::Float32 || is_half(dt);
  DType wdt = conv_weight_dtype(op, in1, out);
  DType act = op == ConvOp::BackpropFilter ? in1.dtype() : out.dtype();
  if (!floating || act != dt || (wdt != dt && wdt != DType::Float32) || g.groups != 1 || g.h != 1 || g.w != 1 ||
      g.win.ho != 1 || g.win.wo != 1)
    return false;
  if (!out.is_contiguous()) return false;
  int64_t ti = live_tap(g.kh, g.win.dh, g.win.pt), tj = live_tap(g.kw, g.win.dw, g.win.pl);
  // No live tap: the output is all padding's, i.e. zeros; oneDNN handles
  // that rare case.
  if (ti < 0 || tj < 0) return false;
  // A float32 weight's live tap, converted (an [O, C] slice: small).
  auto weight_tap = [&]() -> Tensor {
    Tensor tap = matrix(in1, ti, tj);
    if (wdt == dt) return tap;
    return execute1(Prim::cast, std::span<const Tensor>(&tap, 1), Attrs{{"dtype", dt}});
  };
  switch (op) {
    case ConvOp::Forward:  // y[n, o] = x[n, :] . w[o, :, ti, tj]
      return dnnl_matmul(matrix(in0), weight_tap(), false, true, matrix(out));
    case ConvOp::BackpropInput:  // dx[n, c] = dy[n, :] . w[:, c, ti, tj]
      return dnnl_matmul(matrix(in0), weight_tap(), false, false, matrix(out));
    case ConvOp::BackpropFilter: {  // dw[:, :, ti, tj] = dy^T x; the other taps read only padding
      if (g.kh * g.kw == 1) return dnnl_matmul(matrix(in0), matrix(in1), true, false, matrix(out));
      Tensor tap(wdt, Dims{g.o, g.c});
      if (!dnnl_matmul(matrix(in0), matrix(in1), true, false, tap)) return false;
      std::memset(out.raw(), 0, out.nbytes());
      copy_strided(tap, matrix(out, ti, tj));
      return true;
    }
  }
  return false;
}

}  // namespace msl::kernels
