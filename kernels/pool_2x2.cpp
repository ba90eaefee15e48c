// Max pooling 2x2/2 on tiling NCHW planes (pool_2x2.h).
//
// oneDNN's NCHW pooling reads its windows element by element (80-100 us
// for LeNet's [64, 6, 28, 28] on 2 threads), and the general gradient
// loop of dnnl_pool.cpp finds each argmax with scalar branches. When the
// windows tile the planes, every plane's rows together are just row pairs
// of 2 * Wo, so both directions are one loop over windows that GCC
// vectorizes with even/odd shuffles, with no per-plane bookkeeping.
// Both keep the first maximum in row-major window order (a strict >), as
// oneDNN and the general loops do, so the forward and the gradient agree
// on ties.
#include "kernels/pool_2x2.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/simd_clones.h"

namespace msl::kernels {

namespace {

// The running maximum over a window in row-major order, as the loops below
// compute it: a later element wins only when strictly greater.
inline float pick(float m, float v) { return v > m ? v : m; }

// Window k of n windows whose top rows are t0 and bottom rows t1, each
// 2 * n floats: y[k].
MSL_SIMD_CLONES void forward_flat(const float* __restrict t0, const float* __restrict t1, float* __restrict y,
                                  int64_t n) {
  for (int64_t k = 0; k < n; ++k) y[k] = pick(pick(pick(t0[2 * k], t0[2 * k + 1]), t1[2 * k]), t1[2 * k + 1]);
}

// Each window's dy goes to one of its four places in o0 / o1; the others
// get 0. The choice is made with bit masks rather than ?: on floats, so
// that no scalar remainder has a branch that random data mispredicts.
inline uint32_t bits(float v) { return std::bit_cast<uint32_t>(v); }
inline uint32_t all_if(bool c) { return 0u - static_cast<uint32_t>(c); }

MSL_SIMD_CLONES void backward_flat(const float* __restrict t0, const float* __restrict t1, const float* __restrict dy,
                                   float* __restrict o0, float* __restrict o1, int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    float a = t0[2 * k], b = t0[2 * k + 1], c = t1[2 * k], d = t1[2 * k + 1];
    // The running maximum moves on when a later element is greater; the
    // masks say where it ends.
    uint32_t to_b = all_if(b > a);
    float m = std::bit_cast<float>((bits(b) & to_b) | (bits(a) & ~to_b));
    uint32_t to_c = all_if(c > m);
    m = std::bit_cast<float>((bits(c) & to_c) | (bits(m) & ~to_c));
    uint32_t at_d = all_if(d > m), at_c = to_c & ~at_d, at_b = to_b & ~to_c & ~at_d;
    uint32_t at_a = ~(to_b | to_c | at_d), g = bits(dy[k]);
    o0[2 * k] = std::bit_cast<float>(g & at_a);
    o0[2 * k + 1] = std::bit_cast<float>(g & at_b);
    o1[2 * k] = std::bit_cast<float>(g & at_c);
    o1[2 * k + 1] = std::bit_cast<float>(g & at_d);
  }
}

// A row shorter than a vector (LeNet's 14 and 5 windows) would leave the
// vector loop unused and run its scalar remainder, so the row pairs [b, e)
// go through buffers in groups: their top rows copied back to back, their
// bottom rows likewise, so that a group is one long loop. The buffers hold
// kGroup floats each (four of them fit in L1), or one row when it is longer.
constexpr int64_t kGroup = 1024;

struct PairBuffers {
  std::vector<float> top, bottom;
  int64_t rows;  // row pairs per group
  explicit PairBuffers(int64_t w) : rows(std::max<int64_t>(1, kGroup / w)) {
    top.resize(static_cast<size_t>(rows * w));
    bottom.resize(static_cast<size_t>(rows * w));
  }
  // Copies row pairs [r, r + n) of x (rows of w) in.
  void load(const float* x, int64_t r, int64_t n, int64_t w) {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(top.data() + i * w, x + (2 * (r + i)) * w, static_cast<size_t>(w) * sizeof(float));
      std::memcpy(bottom.data() + i * w, x + (2 * (r + i) + 1) * w, static_cast<size_t>(w) * sizeof(float));
    }
  }
};

void forward_pairs(const float* x, float* y, int64_t b, int64_t e, int64_t wo) {
  int64_t w = 2 * wo;
  PairBuffers in(w);
  for (int64_t r = b; r < e; r += in.rows) {
    int64_t n = std::min(in.rows, e - r);
    in.load(x, r, n, w);
    forward_flat(in.top.data(), in.bottom.data(), y + r * wo, n * wo);
  }
}

void backward_pairs(const float* x, const float* dy, float* dx, int64_t b, int64_t e, int64_t wo) {
  int64_t w = 2 * wo;
  PairBuffers in(w), out(w);
  for (int64_t r = b; r < e; r += in.rows) {
    int64_t n = std::min(in.rows, e - r);
    in.load(x, r, n, w);
    backward_flat(in.top.data(), in.bottom.data(), dy + r * wo, out.top.data(), out.bottom.data(), n * wo);
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(dx + (2 * (r + i)) * w, out.top.data() + i * w, static_cast<size_t>(w) * sizeof(float));
      std::memcpy(dx + (2 * (r + i) + 1) * w, out.bottom.data() + i * w, static_cast<size_t>(w) * sizeof(float));
    }
  }
}

// Row pairs per thread chunk: about 4K windows, so a small pooling stays on
// one thread.
int64_t grain(int64_t wo) { return std::max<int64_t>(1, 4096 / std::max<int64_t>(1, wo)); }

}  // namespace

bool max_pool_2x2_applies(int64_t h, int64_t w, const Window2d& v) {
  return v.kh == 2 && v.kw == 2 && v.sh == 2 && v.sw == 2 && v.pt + v.pb + v.pl + v.pr == 0 && v.dh == 1 &&
         v.dw == 1 && h == 2 * v.ho && w == 2 * v.wo && v.wo > 0;
}

void max_pool_2x2_forward(const float* x, float* y, int64_t pairs, int64_t wo) {
  parallel_for(pairs, grain(wo), [=](int64_t b, int64_t e) { forward_pairs(x, y, b, e, wo); });
}

void max_pool_2x2_backward(const float* x, const float* dy, float* dx, int64_t pairs, int64_t wo) {
  parallel_for(pairs, grain(wo), [=](int64_t b, int64_t e) { backward_pairs(x, dy, dx, b, e, wo); });
}

}  // namespace msl::kernels
