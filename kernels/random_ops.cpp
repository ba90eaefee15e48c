// Random primitives on the Philox4x32-10 counter generator (philox.h):
// dropout, random_uniform and random_normal.
//
// Every element is a pure function of (seed, offset, element index), so the
// work splits over counter blocks in any way, results are bit-identical for
// any thread count, and a run with the same seeds reproduces exactly. The
// mapping from counters to elements (key = seed, element index i in
// row-major order):
//
//   dropout, random_uniform and random_normal in float32/float16/bfloat16:
//     element i uses counter offset + i / 4, lane i % 4.
//     uniform: u = uint_to_unit_float(lane), 24 bits, in [0, 1). float16 and
//       bfloat16 round u to nearest; a u that rounds up to 1.0 becomes the
//       largest value below 1, so the range stays [0, 1).
//     dropout: element kept iff u < keep_prob (compared exactly, as the
//       integer lane >> 8 against ceil(keep_prob * 2^24)); y = x * scale
//       where kept, x * 0 otherwise (so NaN/Inf inputs stay NaN), with
//       scale = 1 / keep_prob rounded once to the compute type.
//     normal: the four lanes of a counter make two Box-Muller pairs,
//       (lane 0, lane 1) -> elements 4c, 4c+1 and (lane 2, lane 3) ->
//       elements 4c+2, 4c+3: with u1 = 1 - uint_to_unit_float(first lane)
//       in (0, 1] (never log(0)) and u2 = uint_to_unit_float(second lane),
//       z = sqrt(-2 ln u1) * (cos, sin)(2 pi u2), computed in float with
//       branch-free polynomial log and sin/cos (within a few float ulps of
//       libm) so that whole batches of counters vectorize.
//   random_uniform and random_normal in float64:
//     element i uses counter offset + i / 2; even i takes lanes (0, 1), odd
//     i lanes (2, 3), each pair read as uints_to_unit_double(hi, lo): 53
//     bits in [0, 1).
//     normal: one counter gives one Box-Muller pair (elements 2c, 2c+1),
//       u1 = 1 - uniform(lanes 0, 1) in (0, 1], u2 = uniform(lanes 2, 3),
//       computed in double.
//
// random_blocks_used (random_ops.h) reports these counts so the global
// generator can advance past them.
#include "kernels/random_ops.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "kernels/errors.h"
#include "kernels/philox.h"
#include "kernels/shape_util.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace {

using namespace strided_iter;

uint64_t blocks_of(int64_t n, int per_block) {
  return n <= 0 ? 0 : static_cast<uint64_t>((n + per_block - 1) / per_block);
}

// Counters generated together: Philox is evaluated for kBatch consecutive
// counters at once in 64-bit vector lanes (one counter per lane), which the
// compiler vectorizes; bit-identical to philox4x32 one counter at a time.
constexpr int kBatch = 16;
constexpr int kBatchLanes = 4 * kBatch;

// out[4 * j + l] = lane l of counter base + j, j < kBatch: consecutive
// 32-bit lanes in element order.
MSL_SIMD_CLONES void philox_batch(uint64_t base, uint64_t key, uint32_t* __restrict out) {
  uint64_t c0[kBatch], c1[kBatch], c2[kBatch], c3[kBatch];
  for (int j = 0; j < kBatch; ++j) {
    uint64_t c = base + static_cast<uint64_t>(j);
    c0[j] = c & 0xffffffffu;
    c1[j] = c >> 32;
    c2[j] = c3[j] = 0;
  }
  uint64_t k0 = key & 0xffffffffu, k1 = key >> 32;
  for (int r = 0; r < 10; ++r) {
#pragma omp simd
    for (int j = 0; j < kBatch; ++j) {
      uint64_t p0 = 0xD2511F53u * c0[j], p1 = 0xCD9E8D57u * c2[j];
      uint64_t n0 = (p1 >> 32) ^ c1[j] ^ k0, n2 = (p0 >> 32) ^ c3[j] ^ k1;
      c1[j] = p1 & 0xffffffffu;
      c3[j] = p0 & 0xffffffffu;
      c0[j] = n0;
      c2[j] = n2;
    }
    k0 = (k0 + 0x9E3779B9u) & 0xffffffffu;
    k1 = (k1 + 0xBB67AE85u) & 0xffffffffu;
  }
  for (int j = 0; j < kBatch; ++j) {
    out[4 * j] = static_cast<uint32_t>(c0[j]);
    out[4 * j + 1] = static_cast<uint32_t>(c1[j]);
    out[4 * j + 2] = static_cast<uint32_t>(c2[j]);
    out[4 * j + 3] = static_cast<uint32_t>(c3[j]);
  }
}

// Calls f(lanes, first, count) for each batch of kBatch counters, where
// lanes holds their kBatchLanes outputs and elements [first, first + count)
// take values from them (`per_counter` elements per counter). Parallel over
// batches; a batch's values depend only on its counters.
template <class F>
void for_batches(int64_t n, int per_counter, uint64_t seed, uint64_t offset, F&& f) {
  int64_t per_batch = int64_t{kBatch} * per_counter;
  int64_t nb = (n + per_batch - 1) / per_batch;
  parallel_for(nb, std::max<int64_t>(1, kParallelGrain / 4 / per_batch), [&](int64_t b0, int64_t b1) {
    alignas(64) uint32_t lanes[kBatchLanes];
    for (int64_t b = b0; b < b1; ++b) {
      philox_batch(offset + static_cast<uint64_t>(b * kBatch), seed, lanes);
      int64_t first = b * per_batch;
      f(static_cast<const uint32_t*>(lanes), first, std::min(per_batch, n - first));
    }
  });
}

// ln(x) for normal x > 0 (Cephes logf: x = m 2^e with m in [sqrt(1/2),
// sqrt(2)), a degree-9 polynomial in m - 1), branch-free to vectorize.
__attribute__((always_inline)) inline float log_f32(float x) {
  int32_t ix;
  std::memcpy(&ix, &x, 4);
  int32_t mi = (ix & 0x007fffff) | 0x3f800000;  // m in [1, 2)
  int32_t big = mi > 0x3fb504f3;                // m > sqrt(2): halve it (integer selects: no FP branch)
  mi -= big << 23;
  float m;
  std::memcpy(&m, &mi, 4);
  float fe = static_cast<float>(((ix >> 23) & 0xff) - 127 + big);
  float f = m - 1.0f, z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y += -2.12194440e-4f * fe;
  y += -0.5f * z;
  return f + y + 0.693359375f * fe;
}

// sin and cos of 2 pi t for t in [0, 1): quarter-turn reduction (exact in
// float), then the Cephes sinf/cosf polynomials on [-pi/4, pi/4].
__attribute__((always_inline)) inline void sincos_turns(float t, float& s, float& c) {
  int32_t q = static_cast<int32_t>(4.0f * t + 0.5f);
  float x = (t - static_cast<float>(q) * 0.25f) * 6.28318530717958647f;
  float z = x * x;
  float sn = ((-1.9515295891e-4f * z + 8.3321608736e-3f) * z - 1.6666654611e-1f) * z * x + x;
  float cs =
      ((2.443315711809948e-5f * z - 1.388731625493765e-3f) * z + 4.166664568298827e-2f) * z * z - 0.5f * z + 1.0f;
  // Rotate by q quarter turns with bit operations (selects on floats would
  // be branches under the default -ftrapping-math).
  uint32_t k = static_cast<uint32_t>(q) & 3, sb, cb;
  std::memcpy(&sb, &sn, 4);
  std::memcpy(&cb, &cs, 4);
  uint32_t swap = 0u - (k & 1);
  uint32_t s1 = ((sb & ~swap) | (cb & swap)) ^ ((k & 2) << 30);
  uint32_t c1 = ((cb & ~swap) | (sb & swap)) ^ (((k + 1) & 2) << 30);
  std::memcpy(&s, &s1, 4);
  std::memcpy(&c, &c1, 4);
}

// sqrt(x) for x >= 0 as x / sqrt(x) from the classic reciprocal-square-root
// estimate and three Newton steps (float precision): std::sqrt keeps an
// errno branch that stops the loop from vectorizing.
__attribute__((always_inline)) inline float sqrt_f32(float x) {
  int32_t i;
  std::memcpy(&i, &x, 4);
  i = 0x5f3759df - (i >> 1);
  float y;
  std::memcpy(&y, &i, 4);
  for (int k = 0; k < 3; ++k) y = y * (1.5f - 0.5f * x * y * y);
  return x * y;
}

// z[2p], z[2p + 1] from the lane pair (l[2p], l[2p + 1]), p < npairs.
MSL_SIMD_CLONES void box_muller_f32(const uint32_t* __restrict l, float* __restrict z, int npairs) {
  for (int p = 0; p < npairs; ++p) {
    float u1 = 1.0f - uint_to_unit_float(l[2 * p]), u2 = uint_to_unit_float(l[2 * p + 1]);
    float r = sqrt_f32(-2.0f * log_f32(u1));
    float s, c;
    sincos_turns(u2, s, c);
    z[2 * p] = r * c;
    z[2 * p + 1] = r * s;
  }
}

MSL_SIMD_CLONES void unit_floats(const uint32_t* __restrict l, float* __restrict u, int n) {
  for (int i = 0; i < n; ++i) u[i] = uint_to_unit_float(l[i]);
}

// Dropout of float32: kept iff (lane >> 8) < threshold, the exact integer
// form of uint_to_unit_float(lane) < keep_prob.
MSL_SIMD_CLONES void dropout_f32(const float* __restrict x, const uint32_t* __restrict l, float* __restrict y,
                                 float* __restrict m, int n, uint32_t threshold, float scale) {
  for (int i = 0; i < n; ++i) {
    bool kept = (l[i] >> 8) < threshold;
    m[i] = kept ? 1.0f : 0.0f;
    y[i] = x[i] * (kept ? scale : 0.0f);
  }
}

template <class T>
T unit_from_float(float u) {
  if constexpr (kIsHalfLike<T>) {
    T v = from_compute<T>(u);
    if (to_compute(v) >= 1.0f) v.bits = static_cast<uint16_t>(from_compute<T>(1.0f).bits - 1);  // largest below 1
    return v;
  } else {
    return static_cast<T>(u);
  }
}

void check_random_dtype(const char* op, DType dt) {
  if (!is_floating(dt)) throw DTypeError(fmt::format("{}: unsupported dtype {}", op, dtype_display_name(dt)));
}

Dims random_shape(const char* op, const Attrs& attrs) {
  std::vector<int64_t> s = attrs.get_ints("shape");
  if (s.size() > static_cast<size_t>(kMaxDims))
    throw ShapeError(fmt::format("{}: tensors have at most {} dimensions, got {}", op, kMaxDims, s.size()));
  Dims shape(s);
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) throw ValueError(fmt::format("{}: negative dimension {} in shape {}", op, d, shape.str()));
    if (__builtin_mul_overflow(n, d, &n) || n > (int64_t{1} << 40))
      throw ShapeError(fmt::format("{}: shape {} is too large", op, shape.str()));
  }
  return shape;
}

double keep_probability(const Attrs& attrs) {
  double p = attrs.get_float("keep_prob", 0.5);
  if (!(p > 0 && p <= 1)) throw ValueError(fmt::format("dropout: keep_prob must be in (0, 1], got {}", p));
  return p;
}

uint64_t seed_of(const Attrs& a) { return static_cast<uint64_t>(a.get_int("seed")); }
uint64_t offset_of(const Attrs& a) { return static_cast<uint64_t>(a.get_int("offset")); }

}  // namespace

uint64_t random_blocks_used(Prim p, int64_t numel, DType dt) {
  switch (p) {
    case Prim::dropout: return blocks_of(numel, 4);
    case Prim::random_uniform:
    case Prim::random_normal: return blocks_of(numel, dt == DType::Float64 ? 2 : 4);
    default: return 0;
  }
}

// ----------------------------------------------------------------- dropout

void infer_dropout(const InferArgs& a) {
  check_random_dtype("dropout", a.in[0].dtype);
  keep_probability(a.attrs);
  a.out[0] = a.in[0];
  a.out[1] = a.in[0];
}

void cpu_dropout(const KernelArgs& a) {
  const Tensor &y = a.out[0], &mask = a.out[1];
  int64_t n = y.numel();
  if (n == 0) return;
  double keep = keep_probability(a.attrs);
  // u < keep with u = k / 2^24  <=>  k < ceil(keep * 2^24).
  uint32_t threshold = static_cast<uint32_t>(std::ceil(keep * 16777216.0));
  Tensor x = contiguous_fast(a.in[0]);
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      const float* xp = x.data<float>();
      float *yp = y.data<float>(), *mp = mask.data<float>();
      float scale = static_cast<float>(1.0 / keep);
      for_batches(n, 4, seed_of(a.attrs), offset_of(a.attrs), [&](const uint32_t* l, int64_t first, int64_t count) {
        dropout_f32(xp + first, l, yp + first, mp + first, static_cast<int>(count), threshold, scale);
      });
    } else if constexpr (std::is_same_v<T, double> || kIsHalfLike<T>) {
      using C = Compute<T>;
      const C scale = static_cast<C>(1.0 / keep);
      const T* xp = x.data<T>();
      T *yp = y.data<T>(), *mp = mask.data<T>();
      const T one = from_compute<T>(1), zero = from_compute<T>(0);
      for_batches(n, 4, seed_of(a.attrs), offset_of(a.attrs), [&](const uint32_t* l, int64_t first, int64_t count) {
        for (int64_t j = 0; j < count; ++j) {
          bool kept = (l[j] >> 8) < threshold;
          mp[first + j] = kept ? one : zero;
          yp[first + j] = from_compute<T>(to_compute(xp[first + j]) * (kept ? scale : C(0)));
        }
      });
    }
  });
}

// ---------------------------------------------------------- random_uniform

// random_uniform and random_normal: a float tensor of the `shape` attribute.
static void infer_random_tensor(const InferArgs& a) {
  const char* op = prim_name(a.prim);
  DType dt = a.attrs.get_dtype("dtype", DType::Float32);
  check_random_dtype(op, dt);
  a.out[0] = {dt, random_shape(op, a.attrs)};
}

void infer_random_uniform(const InferArgs& a) { infer_random_tensor(a); }

void cpu_random_uniform(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  int64_t n = out.numel();
  uint64_t seed = seed_of(a.attrs), offset = offset_of(a.attrs);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    if constexpr (std::is_same_v<T, double>) {
      // Element i of a batch reads lanes 2i, 2i + 1: counter i / 2, lanes (0, 1) or (2, 3).
      for_batches(n, 2, seed, offset, [&](const uint32_t* l, int64_t first, int64_t count) {
        for (int64_t i = 0; i < count; ++i) o[first + i] = uints_to_unit_double(l[2 * i], l[2 * i + 1]);
      });
    } else if constexpr (std::is_same_v<T, float>) {
      for_batches(n, 4, seed, offset, [&](const uint32_t* l, int64_t first, int64_t count) {
        unit_floats(l, o + first, static_cast<int>(count));
      });
    } else if constexpr (kIsHalfLike<T>) {
      for_batches(n, 4, seed, offset, [&](const uint32_t* l, int64_t first, int64_t count) {
        for (int64_t i = 0; i < count; ++i) o[first + i] = unit_from_float<T>(uint_to_unit_float(l[i]));
      });
    }
  });
}

// ----------------------------------------------------------- random_normal

void infer_random_normal(const InferArgs& a) { infer_random_tensor(a); }

void cpu_random_normal(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  int64_t n = out.numel();
  uint64_t seed = seed_of(a.attrs), offset = offset_of(a.attrs);
  visit_dtype(out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* o = out.data<T>();
    if constexpr (std::is_same_v<T, double>) {
      for_batches(n, 2, seed, offset, [&](const uint32_t* l, int64_t first, int64_t count) {
        for (int64_t i = 0; i < count; i += 2) {
          const uint32_t* c = l + 2 * i;  // the counter of elements i, i + 1
          double u1 = 1.0 - uints_to_unit_double(c[0], c[1]), u2 = uints_to_unit_double(c[2], c[3]);
          double r = std::sqrt(-2.0 * std::log(u1)), t = 2.0 * std::numbers::pi * u2;
          o[first + i] = r * std::cos(t);
          if (i + 1 < count) o[first + i + 1] = r * std::sin(t);
        }
      });
    } else if constexpr (std::is_same_v<T, float> || kIsHalfLike<T>) {
      for_batches(n, 4, seed, offset, [&](const uint32_t* l, int64_t first, int64_t count) {
        alignas(64) float z[kBatchLanes];
        box_muller_f32(l, z, kBatchLanes / 2);
        for (int64_t i = 0; i < count; ++i) o[first + i] = from_compute<T>(z[i]);
      });
    }
  });
}

void draw_random_attrs(Prim p, std::span<const TensorSpec> in, Attrs& attrs) {
  GlobalGenerator& gen = GlobalGenerator::get();
  bool has_seed = attrs.has("seed"), has_offset = attrs.has("offset");
  if (!has_seed) attrs.set("seed", static_cast<int64_t>(gen.seed()));
  if (has_offset) return;
  if (has_seed) {
    attrs.set("offset", int64_t{0});
    return;
  }
  std::vector<TensorSpec> outs;
  infer(p, in, attrs, outs);
  // Output 0 has the element count and dtype that set the counter use (for dropout, the input's).
  uint64_t blocks = random_blocks_used(p, outs[0].shape.product(), outs[0].dtype);
  attrs.set("offset", static_cast<int64_t>(gen.take(blocks)));
}

}  // namespace msl::kernels
