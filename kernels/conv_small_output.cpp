// Weight gradients of few-pixel convolutions as matrix products (see
// conv_small_output.h).
#include "kernels/conv_small_output.h"

#include <cstdint>
#include <cstring>

#include "kernels/dnnl_matmul.h"
#include "kernels/parallel.h"

namespace msl::kernels {

namespace {

// Where element (n, c, h, w) of a plain or channel-blocked activation lives,
// in elements from its first one.
struct Addressing {
  Dims s;
  int64_t block = 0;
  Addressing(const Tensor& t, int64_t b) : s(t.strides()), block(b) {}
  int64_t at(int64_t n, int64_t c, int64_t h, int64_t w) const {
    if (!block) return n * s[0] + c * s[1] + h * s[2] + w * s[3];
    return n * s[0] + (c / block) * s[1] + h * s[2] + w * s[3] + (c % block) * s[4];
  }
};

// dym[(n, oh, ow), o] = dy[n, o, oh, ow]; cols[(n, oh, ow), (c, kh, kw)] =
// the input tap, 0 in the padding. T is the element's storage (2 or 4
// bytes: the copies move bits).
template <class T>
void gather(const ConvGeom& g, const Tensor& dy, int64_t dy_block, const Tensor& x, int64_t x_block, Tensor& dym,
            Tensor& cols) {
  const Window2d& win = g.win;
  const int64_t pixels = win.ho * win.wo, taps = g.kh * g.kw, width = g.c * taps;
  const T* dyp = static_cast<const T*>(dy.raw());
  const T* xp = static_cast<const T*>(x.raw());
  T* dm = dym.data<T>();
  T* cm = cols.data<T>();
  Addressing da(dy, dy_block), xa(x, x_block);
  parallel_for(g.n * pixels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t n = row / pixels, p = row % pixels, oh = p / win.wo, ow = p % win.wo;
      for (int64_t o = 0; o < g.o; ++o) dm[row * g.o + o] = dyp[da.at(n, o, oh, ow)];
      T* out = cm + row * width;
      for (int64_t c = 0; c < g.c; ++c)
        for (int64_t i = 0; i < g.kh; ++i) {
          int64_t h = oh * win.sh + i * win.dh - win.pt;
          for (int64_t j = 0; j < g.kw; ++j) {
            int64_t w = ow * win.sw + j * win.dw - win.pl;
            bool inside = h >= 0 && h < g.h && w >= 0 && w < g.w;
            out[c * taps + i * g.kw + j] = inside ? xp[xa.at(n, c, h, w)] : T(0);
          }
        }
    }
  });
}

}  // namespace

bool small_output_filter_grad(const ConvGeom& g, const Tensor& dy, int64_t dy_block, const Tensor& x,
                              int64_t x_block, const Tensor& dw) {
  // The activations' dtype; the gradient may be float32 from bfloat16 or
  // float16 ones (the matmul accumulates in float32 either way).
  DType dt = dy.dtype();
  bool floating = dt == DType::Float32 || is_half(dt);
  int64_t pixels = g.win.ho * g.win.wo;
  if (!floating || x.dtype() != dt || (dw.dtype() != dt && dw.dtype() != DType::Float32) || g.groups != 1 ||
      pixels < 1 || pixels > kSmallOutputMaxPixels || !dw.is_contiguous())
    return false;
  int64_t rows = g.n * pixels, width = g.c * g.kh * g.kw;
  Tensor dym(dt, Dims{rows, g.o}), cols(dt, Dims{rows, width});
  // Positive zero is all-zero bits in every float dtype.
  if (dt == DType::Float32)
    gather<uint32_t>(g, dy, dy_block, x, x_block, dym, cols);
  else
    gather<uint16_t>(g, dy, dy_block, x, x_block, dym, cols);
  Tensor out = Tensor::view(dw, Dims{g.o, width}, Dims{width, 1}, dw.offset());
  return dnnl_matmul(dym, cols, true, false, out);
}

}  // namespace msl::kernels
