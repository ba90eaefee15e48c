// Direct float32 forward convolution for inputs with very few channels
// (an image network's first layer: LeNet's 1 channel).
//
// oneDNN pads a handful of input channels up to its 16-channel blocks, so
// on such layers its forward kernel does several times the useful
// arithmetic (LeNet's first layer: 460 us, against 210 us here). Here each
// image is copied once into zero-padded rows, and a 16-wide block of an
// output row is computed for 8 output channels at a time: 8 vector
// registers summed over every kernel tap, each input vector loaded once
// per tap for all 8. Padding and the vector tail read zeros, so the inner
// loop has no bounds checks. (The filter gradient, written the same way,
// only matched oneDNN's, so oneDNN keeps it.)
#include "kernels/conv_few_channels.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/parallel.h"

namespace msl::kernels {

namespace {

constexpr int64_t kMaxChannels = 4;   // input channels (per group; groups must be 1)
constexpr int64_t kMaxOutputs = 64;   // output channels
constexpr int64_t kMaxWidth = 512;    // output row width
constexpr int64_t kMaxTaps = 7 * 7;  // kh * kw

// The geometry and data of one call, for the row kernels below.
struct Rows {
  const float* x;
  const float* w;
  int64_t c, h, wd, o, kh, kw, ho, wo;
  Window2d v;
  int64_t wp() const { return (wo + 15) / 16 * 16 + kw + 16; }  // padded row width in `buf`
  int64_t hp() const { return ho + kh - 1; }                      // padded rows per channel
};

typedef float V16 __attribute__((vector_size(64)));

#define MSL_FEW_CHANNEL_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default"), optimize("O3")))

// Image img's channels as rows of buf, zero-padded: buf row (ci, rr) of
// width wp holds buf[k] = x[img, ci, rr - pt, k - pl] inside the image and
// 0 outside (padding and the vector tail), rr in [0, ho + kh - 1), so the
// kernels below read whole vectors without bounds checks.
void gather_image(const Rows& d, int64_t img, float* buf) {
  int64_t wp = d.wp(), hp = d.hp();
  std::fill(buf, buf + d.c * hp * wp, 0.0f);
  int64_t k0 = std::max<int64_t>(0, d.v.pl), k1 = std::min<int64_t>(wp, d.wd + d.v.pl);
  if (k1 <= k0) return;
  for (int64_t ci = 0; ci < d.c; ++ci)
    for (int64_t rr = 0; rr < hp; ++rr) {
      int64_t ih = rr - d.v.pt;
      if (ih < 0 || ih >= d.h) continue;
      std::memcpy(buf + (ci * hp + rr) * wp + k0, d.x + ((img * d.c + ci) * d.h + ih) * d.wd + (k0 - d.v.pl),
                  static_cast<size_t>(k1 - k0) * sizeof(float));
    }
}

// Output rows [b, e) (row r = image r / ho, output row r % ho) into y. A
// 16-wide column block of 8 output channels is 8 registers summed over
// every tap, so each input vector loaded serves 8 multiply-adds; `w8` holds
// the weights tap-major, 8 channels per tap, zero-padded to a multiple of 8.
MSL_FEW_CHANNEL_CLONES void forward_rows(const Rows& d, const float* w8, int64_t b, int64_t e, float* buf, float* y) {
  int64_t wp = d.wp(), hp = d.hp(), taps = d.c * d.kh * d.kw;
  for (int64_t r = b; r < e; ++r) {
    int64_t img = r / d.ho, oh = r % d.ho;
    if (r == b || oh == 0) gather_image(d, img, buf);
    for (int64_t oc0 = 0; oc0 < d.o; oc0 += 8) {
      const float* wg = w8 + oc0 * taps;
      for (int64_t q = 0; q < d.wo; q += 16) {
        V16 acc[8] = {};
        int64_t t = 0;
        for (int64_t ci = 0; ci < d.c; ++ci)
          for (int64_t i = 0; i < d.kh; ++i) {
            const float* row = buf + (ci * hp + oh + i) * wp + q;
            for (int64_t j = 0; j < d.kw; ++j, ++t) {
              V16 xv;
              std::memcpy(&xv, row + j, sizeof xv);
              const float* wt = wg + t * 8;
              for (int k = 0; k < 8; ++k) acc[k] += wt[k] * xv;
            }
          }
        size_t cols = static_cast<size_t>(std::min<int64_t>(16, d.wo - q));
        for (int64_t k = 0; k < 8 && oc0 + k < d.o; ++k)
          std::memcpy(y + ((img * d.o + oc0 + k) * d.ho + oh) * d.wo + q, &acc[k], cols * sizeof(float));
      }
    }
  }
}

}  // namespace

bool few_channel_conv_applies(const Dims& x, const Dims& wt, const Window2d& v, int64_t groups) {
  return groups == 1 && x[1] <= kMaxChannels && wt[0] <= kMaxOutputs && v.wo <= kMaxWidth &&
         wt[2] * wt[3] <= kMaxTaps && v.sh == 1 && v.sw == 1 && v.dh == 1 && v.dw == 1;
}

void few_channel_conv2d(const Tensor& x_in, const Tensor& w_in, const Window2d& v, const Tensor& y) {
  Tensor xt = x_in.contiguous(), wt = w_in.contiguous();
  Rows d{xt.data<float>(), wt.data<float>(), xt.dim(1), xt.dim(2), xt.dim(3), wt.dim(0), wt.dim(2), wt.dim(3), v.ho, v.wo, v};
  float* out = y.data<float>();
  // Weights regrouped for forward_rows: [o / 8][tap][8].
  int64_t taps = d.c * d.kh * d.kw, groups8 = (d.o + 7) / 8;
  std::vector<float> w8(static_cast<size_t>(groups8 * taps * 8), 0.0f);
  for (int64_t oc = 0; oc < d.o; ++oc)
    for (int64_t t = 0; t < taps; ++t) w8[static_cast<size_t>(((oc / 8) * taps + t) * 8 + oc % 8)] = d.w[oc * taps + t];
  // A row costs o * wo * c * kh * kw multiply-adds.
  int64_t row_cost = std::max<int64_t>(1, d.o * d.wo * taps);
  parallel_for(xt.dim(0) * d.ho, std::max<int64_t>(1, (int64_t{1} << 16) / row_cost), [&](int64_t b, int64_t e) {
    std::vector<float> buf(static_cast<size_t>(d.c * d.hp() * d.wp()));
    forward_rows(d, w8.data(), b, e, buf.data(), out);
  });
}

}  // namespace msl::kernels
