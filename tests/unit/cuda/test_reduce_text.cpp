// The reduction kernels' texts (kernels/cuda/reduce_cuda.h) under host
// emulation against the CPU's kernels (reduce.cpp) and, for float sums,
// against float64 sums worked out here: every dtype, axes sets with and
// without keep_dims, transposed and sliced inputs, size-1 and empty axes, a
// 0-d input, NaN and infinities. Integer sums, max/min values and the
// indices of argmax/argmin must be the CPU's exactly; a float sum must be
// the float64 sum rounded once (within 1 ulp of the output dtype), which
// the CPU's blocked float32 sum is only to about 1e-6 of the magnitudes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/reduce_cuda.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/emulated_launch.h"
#include "tests/unit/cuda/host_emulation.h"
#include "tests/unit/cuda/test_tensors.h"
#ifdef MSL_HAVE_CUDA
#include "kernels/cuda/nvrtc_compiler.h"
#endif

using namespace msl::kernels;

namespace {

constexpr Prim kPrims[] = {Prim::reduce_sum, Prim::reduce_max, Prim::reduce_min, Prim::argmax, Prim::argmin};

Tensor values_of(DType t, const Dims& shape, uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-100.0, 100.0);
  const double inf = std::numeric_limits<double>::infinity();
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) {
    double v = u(rng);
    if (!is_floating(t)) v = std::round(v);
    if (i % 5 == 2) v = std::round(v / 20);  // ties for argmax/argmin
    d.data<double>()[i] = v;
  }
  if (specials && is_floating(t) && d.numel() > 40) {
    d.data<double>()[7] = std::nan("");
    d.data<double>()[31] = inf;
    d.data<double>()[33] = -inf;
  }
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

struct Case {
  Tensor x;
  Attrs attrs;
};

std::vector<Case> cases_for(Prim p, DType t, uint32_t seed) {
  std::vector<Case> out;
  Tensor base = values_of(t, Dims{4, 5, 6}, seed, false);
  Tensor special = values_of(t, Dims{4, 5, 6}, seed + 1, true);
  Tensor transposed = Tensor::view(values_of(t, Dims{4, 5, 6}, seed + 2, false), Dims{6, 5, 4}, Dims{1, 6, 30}, 0);
  Tensor sliced = Tensor::view(values_of(t, Dims{3, 16}, seed + 3, false), Dims{3, 1, 7}, Dims{16, 0, 2}, 1);
  Tensor scalar = values_of(t, Dims{}, seed + 4, false);
  if (p == Prim::argmax || p == Prim::argmin) {
    for (int64_t axis : {0, 1, 2, -1})
      for (bool keep : {false, true}) {
        out.push_back({base, Attrs{{"axis", axis}, {"keep_dims", keep}}});
        out.push_back({transposed, Attrs{{"axis", axis}, {"keep_dims", keep}}});
      }
    out.push_back({special, Attrs{{"axis", int64_t{2}}, {"keep_dims", false}}});
    out.push_back({special, Attrs{{"axis", int64_t{0}}, {"keep_dims", false}}});
    out.push_back({sliced, Attrs{{"axis", int64_t{1}}, {"keep_dims", false}}});
    out.push_back({scalar, Attrs{{"axis", int64_t{0}}, {"keep_dims", false}}});
    out.push_back({values_of(t, Dims{0, 5}, seed, false), Attrs{{"axis", int64_t{1}}, {"keep_dims", false}}});
    return out;
  }
  using Axes = std::vector<int64_t>;
  for (const Axes& axes : {Axes{}, Axes{1}, Axes{0, 2}, Axes{-1}, Axes{0, 1}})
    for (bool keep : {false, true}) {
      out.push_back({base, Attrs{{"axes", axes}, {"keep_dims", keep}}});
      out.push_back({transposed, Attrs{{"axes", axes}, {"keep_dims", keep}}});
      out.push_back({special, Attrs{{"axes", axes}, {"keep_dims", keep}}});
    }
  out.push_back({sliced, Attrs{{"axes", Axes{1}}, {"keep_dims", true}}});  // only a size-1 axis
  out.push_back({sliced, Attrs{{"axes", Axes{0, 2}}, {"keep_dims", false}}});
  out.push_back({scalar, Attrs{{"axes", Axes{}}, {"keep_dims", false}}});
  if (p == Prim::reduce_sum) out.push_back({values_of(t, Dims{0, 5}, seed, false), Attrs{{"axes", Axes{0}}}});
  return out;
}

uint32_t mask_of(Prim p, const Case& c) {
  int nd = c.x.ndim();
  if (nd == 0) return 0;
  if (p == Prim::argmax || p == Prim::argmin) return 1u << normalize_axis("t", c.attrs.get_int("axis"), nd);
  std::vector<int64_t> axes = c.attrs.get_ints("axes");
  if (axes.empty()) return (1u << nd) - 1;
  uint32_t m = 0;
  for (int64_t a : axes) m |= 1u << normalize_axis("t", a, nd);
  return m;
}

// The float64 sums of x over `mask`, worked out element by element.
std::vector<double> float64_sums(const Tensor& x, uint32_t mask, int64_t outputs, std::vector<double>& magnitude) {
  std::vector<double> s(static_cast<size_t>(outputs), 0.0);
  magnitude.assign(s.size(), 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rest = i, at = 0, scale = 1;
    for (int d = x.ndim() - 1; d >= 0; --d) {
      int64_t q = rest % x.dim(d);
      rest /= x.dim(d);
      if (!(mask >> d & 1)) {
        at += q * scale;
        scale *= x.dim(d);
      }
    }
    double v = x.item_at(i);
    s[static_cast<size_t>(at)] += v;
    magnitude[static_cast<size_t>(at)] += std::fabs(v);
  }
  return s;
}

// The distance from `ref` to the next representable value of `t` (1 ulp).
double ulp(DType t, double ref) {
  int bits = t == DType::Float16 ? 11 : t == DType::BFloat16 ? 8 : t == DType::Float32 ? 24 : 53;
  int e;
  std::frexp(ref == 0 ? 1e-30 : ref, &e);
  return std::ldexp(1.0, e - bits);
}

Tensor emulate(const msl::test::HostModule& m, Prim p, const Case& c, const Tensor& want) {
  cuda::ReduceKernel k{p, c.x.dtype(), want.dtype()};
  Tensor got(want.dtype(), want.shape());
  std::memset(got.raw(), 0xcd, got.nbytes());
  long long count = 0;
  int64_t cnt = 0;
  cuda::ReduceGeometry g = cuda::reduce_geometry(c.x.shape(), c.x.strides(), mask_of(p, c), cnt);
  count = cnt;
  long long n = got.numel();
  void* out = got.raw();
  void* x = c.x.raw();
  void* args[] = {&n, &out, &x, &g, &count};
  m.symbol<msl::test::EmulatedLaunch>("run_" + cuda::reduce_kernel_name(k))(2, 16, args);
  return got;
}

std::vector<cuda::ReduceKernel> all_kernels() {
  std::vector<cuda::ReduceKernel> ks;
  for (Prim p : kPrims)
    for (DType t : msl::test::kAllDTypes) {
      DType out = p == Prim::argmax || p == Prim::argmin ? DType::Int32
                  : p == Prim::reduce_sum && t == DType::Bool ? DType::Int64
                                                              : t;
      ks.push_back({p, t, out});
    }
  return ks;
}

}  // namespace

TEST_CASE("reduction kernels compute the CPU's reductions under host emulation") {
  std::string source = cuda::reduce_prelude();
  for (const auto& k : all_kernels())
    source += cuda::reduce_kernel_text(k) + msl::test::emulated_launcher(cuda::reduce_kernel_name(k), cuda::reduce_param_types(k));
  msl::test::HostModule module(source);
  uint32_t seed = 3;
  int checked = 0;
  for (Prim p : kPrims)
    for (DType t : msl::test::kAllDTypes)
      for (const Case& c : cases_for(p, t, seed += 7)) {
        CAPTURE(prim_name(p));
        CAPTURE(dtype_name(t));
        CAPTURE(c.x.shape().str());
        CAPTURE(c.attrs.str());
        Tensor in[] = {c.x};
        Tensor want = execute1(p, in, c.attrs);
        Tensor got = emulate(module, p, c, want);
        REQUIRE(got.shape() == want.shape());
        const bool float_sum = p == Prim::reduce_sum && is_floating(t);
        std::vector<double> ref, mag;
        if (float_sum) ref = float64_sums(c.x, mask_of(p, c), got.numel(), mag);
        for (int64_t i = 0; i < got.numel(); ++i, ++checked) {
          double a = got.item_at(i), b = want.item_at(i);
          INFO("output " << i << ": GPU text " << a << ", CPU " << b);
          if (float_sum) {
            double r = ref[static_cast<size_t>(i)];
            INFO("float64 sum " << r);
            if (std::isnan(r)) {
              REQUIRE(std::isnan(a));
              REQUIRE(std::isnan(b));
              continue;
            }
            if (std::isinf(r)) {
              REQUIRE(a == r);
              continue;
            }
            REQUIRE(std::fabs(a - r) <= ulp(t, r));
            REQUIRE(std::fabs(b - r) <= ulp(t, r) + 1e-6 * mag[static_cast<size_t>(i)]);
            continue;
          }
          if (std::isnan(a) || std::isnan(b)) {
            REQUIRE((std::isnan(a) && std::isnan(b)));
            continue;
          }
          REQUIRE(a == b);
        }
      }
  CHECK(checked > 5000);
}

TEST_CASE("reduction geometry drops size-1 dimensions and counts the reduced elements") {
  int64_t count = 0;
  cuda::ReduceGeometry g = cuda::reduce_geometry(Dims{3, 1, 7}, Dims{16, 0, 2}, 0b101, count);
  CHECK(count == 21);
  CHECK(g.nkept == 0);
  CHECK(g.nred == 2);
  CHECK(g.red_stride[1] == 2);
  g = cuda::reduce_geometry(Dims{0, 5}, Dims{5, 1}, 0b01, count);
  CHECK(count == 0);
  CHECK(g.nkept == 1);
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("every reduction kernel text compiles with NVRTC for sm_80 and sm_90") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  std::string all = cuda::reduce_prelude();
  for (const auto& k : all_kernels()) all += cuda::reduce_kernel_text(k);
  for (int arch : {80, 90}) {
    cuda::NvrtcOutput out = cuda::nvrtc_compile(all, "reduce_kernels", arch);
    CHECK(out.image.compare(0, 4, "\x7f" "ELF") == 0);
  }
  cuda::ReduceKernel k{Prim::argmin, DType::BFloat16, DType::Int32};
  cuda::NvrtcOutput ptx = cuda::nvrtc_compile(cuda::reduce_source(k), "argmin", 90, /*ptx=*/true);
  CHECK(ptx.image.find(".entry " + cuda::reduce_kernel_name(k)) != std::string::npos);
}
#endif
