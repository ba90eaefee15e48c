// The strided pointwise kernels' texts (kernels/cuda/pointwise_cuda.h)
// under host emulation, against the CPU's kernels (execute1 on CPU tensors,
// an independent implementation: vector loops, the run_loop driver's
// broadcasting and conversions) on the same inputs and geometry: every
// operation in every dtype the CPU accepts, mixed dtypes, transposed,
// sliced, broadcast and empty inputs, host scalars by value, special
// values. Exact operations and the float32 functions ported from the CPU's
// vector loops (exp, log, tanh, sigmoid, erf) must give the CPU's bits; sin,
// cos, pow and the float64 functions at most 2 ulps (measured and printed). Values worked out here by hand
// check the semantics both implementations could share a bug in, and
// every text compiles with NVRTC.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "kernels/cuda/pointwise_cuda.h"
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
using cuda::PointwiseKernel;

namespace {


const Prim kPrims[] = {
#define MSL_X(name, arity) Prim::name,
    MSL_PW_OPS(MSL_X)
#undef MSL_X
};

bool transcendental(Prim p) {
  return p == Prim::exp || p == Prim::log || p == Prim::sin || p == Prim::cos || p == Prim::tanh ||
         p == Prim::sigmoid || p == Prim::erf || p == Prim::pow;
}
// exp, log, tanh, sigmoid and erf in float32 are the CPU's vector loops
// (AVX2 with FMA, or AVX-512), which the kernels follow bit for bit.
bool vector_function(Prim p) {
  return p == Prim::exp || p == Prim::log || p == Prim::tanh || p == Prim::sigmoid || p == Prim::erf;
}
bool cpu_has_vector_loops() {
#if defined(__x86_64__)
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}
bool integer_divisor(Prim p) { return p == Prim::floordiv || p == Prim::mod || p == Prim::pow; }

// A CPU tensor of `t` with special values first, then random ones; for an
// integer divisor or exponent (`positive`): small nonzero (nonnegative) values.
Tensor values_of(DType t, const Dims& shape, uint32_t seed, bool positive = false) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-100.0, 100.0), small(-4.0, 4.0);
  const double inf = std::numeric_limits<double>::infinity();
  const double fs[] = {0.0, -0.0, std::nan(""), inf, -inf, 1e-40, -2.5, 2.5, 7.0, -7.0, 0.5, 3.0, 700.0};
  const double is[] = {0, -1, 1, -128, 127, 2147483647.0, -2147483648.0, 9.2e18, -9.2e18, -7, 7, 3};
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) {
    double v = i % 3 ? small(rng) : u(rng);
    if (!is_floating(t)) v = std::round(v);
    size_t k = static_cast<size_t>(i);
    if (is_floating(t) && k < std::size(fs) && seed % 2) v = fs[k];
    if (!is_floating(t) && k < std::size(is) && seed % 2) v = is[k];
    if (positive) v = std::fabs(std::fmod(std::round(v), 5.0)) + 1 + i % 2;
    d.data<double>()[i] = v;
  }
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

struct Call {
  Prim prim;
  std::vector<Tensor> in;  // CPU tensors; a 0-d one is a host scalar
  Tensor want;             // the CPU kernel's output
  PointwiseKernel kernel;
};

// The geometries every operation runs over (a function of the call index
// `shape_case`): full contiguous, transposed, sliced and broadcast, empty,
// and a host scalar second operand.
std::vector<Tensor> inputs_for(Prim p, const std::vector<DType>& dt, int shape_case, uint32_t seed) {
  const int arity = static_cast<int>(dt.size());
  auto make = [&](int k, const Dims& shape) {
    bool pos = k == 1 && integer_divisor(p) && !is_floating(dt[1]);
    return values_of(dt[static_cast<size_t>(k)], shape, seed + static_cast<uint32_t>(k), pos);
  };
  std::vector<Tensor> in;
  switch (shape_case) {
    case 0:  // contiguous [37, 5]
      for (int k = 0; k < arity; ++k) in.push_back(make(k, Dims{37, 5}));
      break;
    case 1:  // a transposed [5, 37]; the rest a broadcast row [37] (relu_grad: same shape)
      for (int k = 0; k < arity; ++k) {
        Tensor b = make(k, Dims{37, 5});
        if (k == 0 || p == Prim::relu_grad)
          in.push_back(Tensor::view(b, Dims{5, 37}, Dims{1, 5}, 0));
        else
          in.push_back(Tensor::view(make(k, Dims{37}), Dims{37}, Dims{1}, 0));
      }
      break;
    case 2:  // every other element of [2, 3, 12] as [2, 3, 6], against [3, 1] broadcast
      for (int k = 0; k < arity; ++k) {
        Tensor b = make(k, Dims{2, 3, 12});
        if (k == 0 || p == Prim::relu_grad)
          in.push_back(Tensor::view(b, Dims{2, 3, 6}, Dims{36, 12, 2}, 1));
        else
          in.push_back(make(k, Dims{3, 1}));
      }
      break;
    case 3:  // empty
      for (int k = 0; k < arity; ++k) in.push_back(make(k, Dims{0, 4}));
      break;
    default:  // a host scalar last (by value)
      for (int k = 0; k < arity; ++k) in.push_back(make(k, k == arity - 1 && arity > 1 ? Dims{} : Dims{9, 7}));
      if (p == Prim::relu_grad) in.back() = make(arity - 1, Dims{9, 7});
      break;
  }
  return in;
}

std::vector<std::vector<DType>> dtype_sets(Prim p) {
  std::vector<std::vector<DType>> out;
  int arity = prim_def(p).inputs;
  for (DType t : msl::test::kAllDTypes) {
    if (arity == 1) out.push_back({t});
    if (arity == 2) out.push_back({t, t});
    if (arity == 3) out.push_back({DType::Bool, t, t});
  }
  if (arity == 2) {
    const DType mixed[][2] = {{DType::Float32, DType::Int32}, {DType::Int8, DType::UInt8},
                              {DType::Float16, DType::BFloat16}, {DType::Int64, DType::Float16},
                              {DType::Bool, DType::Float64}, {DType::Int32, DType::Int64}};
    for (auto& m : mixed) out.push_back({m[0], m[1]});
  }
  if (arity == 3) {
    out.push_back({DType::Float32, DType::Int32, DType::Float16});
    out.push_back({DType::Float16, DType::BFloat16, DType::Int64});
  }
  return out;
}

// Every call the CPU accepts, with its output.
std::vector<Call> all_calls() {
  std::vector<Call> calls;
  uint32_t seed = 1;
  for (Prim p : kPrims)
    for (const auto& dt : dtype_sets(p))
      for (int shape_case = 0; shape_case < 5; ++shape_case) {
        Call c{p, inputs_for(p, dt, shape_case, seed += 2), {}, {}};
        try {
          c.want = execute1(p, c.in);
        } catch (const KernelError&) {
          break;  // a dtype the CPU rejects: so must the GPU (checked below)
        }
        std::vector<DType> dts;
        uint32_t by_value = 0;
        for (size_t k = 0; k < c.in.size(); ++k) {
          dts.push_back(c.in[k].dtype());
          if (c.in[k].ndim() == 0) by_value |= 1u << k;
        }
        c.kernel = cuda::pointwise_kernel(p, dts, c.want.dtype(), by_value);
        calls.push_back(std::move(c));
      }
  return calls;
}

// The order of a float's bits as integers, for ulp distances.
int64_t ordered(const Tensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.raw()) + i * static_cast<int64_t>(t.itemsize());
  int64_t v;
  if (t.itemsize() == 8) {
    std::memcpy(&v, p, 8);
  } else if (t.itemsize() == 4) {
    int32_t b;
    std::memcpy(&b, p, 4);
    v = b;
  } else {
    int16_t b;
    std::memcpy(&b, p, 2);
    v = b;
  }
  return v < 0 ? std::numeric_limits<int64_t>::min() - v : v;
}

bool same_bits(const Tensor& a, const Tensor& b, int64_t i) {
  return std::memcmp(static_cast<const char*>(a.raw()) + i * static_cast<int64_t>(a.itemsize()),
                     static_cast<const char*>(b.raw()) + i * static_cast<int64_t>(b.itemsize()), a.itemsize()) == 0;
}

// Runs the call's kernel under emulation into a new contiguous tensor.
Tensor emulate(const msl::test::HostModule& m, const Call& c, int32_t* err_flag) {
  Tensor got(c.want.dtype(), c.want.shape());
  std::memset(got.raw(), 0xab, got.nbytes());
  std::vector<Dims> strides;
  long long n = got.numel();
  void* out = got.raw();
  const void* ptrs[3] = {};
  std::vector<void*> args{&n, &out};
  for (size_t k = 0; k < c.in.size(); ++k) {
    const Tensor& x = c.in[k];
    if (x.ndim() == 0) {
      args.push_back(x.raw());  // by value: the argument is the element itself
      strides.push_back(Dims{});
      strides.back().resize(got.ndim(), 0);
    } else {
      ptrs[k] = x.raw();
      args.push_back(&ptrs[k]);
      strides.push_back(broadcast_strides(x.shape(), x.strides(), got.shape()));
    }
  }
  cuda::PointwiseGeometry g = cuda::pointwise_geometry(got.shape(), strides);
  args.push_back(&g);
  args.push_back(&err_flag);
  m.symbol<msl::test::EmulatedLaunch>("run_" + cuda::pointwise_kernel_name(c.kernel))(3, 32, args.data());
  return got;
}

std::string module_source(const std::vector<Call>& calls) {
  std::string s = cuda::pointwise_prelude();
  std::map<std::string, bool> seen;
  for (const Call& c : calls) {
    std::string name = cuda::pointwise_kernel_name(c.kernel);
    if (seen[name]) continue;
    seen[name] = true;
    s += cuda::pointwise_kernel_text(c.kernel) +
         msl::test::emulated_launcher(name, cuda::pointwise_param_types(c.kernel));
  }
  return s;
}

}  // namespace

TEST_CASE("pointwise kernels compute the CPU kernels' results under host emulation") {
  std::vector<Call> calls = all_calls();
  REQUIRE(calls.size() > 400);
  msl::test::HostModule module(module_source(calls));
  // The largest ulp distance from the CPU per (operation, output dtype).
  std::map<std::string, int64_t> worst;
  for (const Call& c : calls) {
    CAPTURE(cuda::pointwise_kernel_name(c.kernel));
    CAPTURE(c.in[0].shape().str());
    int32_t err = 0;
    Tensor got = emulate(module, c, &err);
    CHECK(err == 0);
    const bool inexact = transcendental(c.prim) && is_floating(got.dtype()) &&
                         !(vector_function(c.prim) && c.kernel.compute == DType::Float32 && cpu_has_vector_loops());
    for (int64_t i = 0; i < got.numel(); ++i) {
      double a = got.item_at(i), b = c.want.item_at(i);
      INFO("element " << i << ": GPU text " << a << ", CPU " << b);
      if (std::isnan(a) || std::isnan(b)) {
        REQUIRE((std::isnan(a) && std::isnan(b)));
        continue;
      }
      if (!inexact) {
        REQUIRE(same_bits(got, c.want, i));
        continue;
      }
      int64_t d = std::llabs(ordered(got, i) - ordered(c.want, i));
      int64_t& w = worst[std::string(prim_name(c.prim)) + " " + dtype_name(got.dtype())];
      w = std::max(w, d);
      REQUIRE(d <= 2);
    }
  }
  for (const auto& [what, ulps] : worst) MESSAGE(what << ": at most " << ulps << " ulp from the CPU");
}

TEST_CASE("float32 exp, log, tanh, sigmoid and erf are the CPU's bits over a sweep of float32 bit patterns") {
  if (!cpu_has_vector_loops()) {
    MESSAGE("the CPU runs its plain loops (libm in double): within 2 ulps, checked above");
    return;
  }
  // Every 1021st bit pattern: zeros, subnormals, normals, infinities, NaNs of both signs.
  const int64_t n = (int64_t{1} << 32) / 1021 + 1;
  Tensor x(DType::Float32, Dims{n});
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits = static_cast<uint32_t>(i * 1021);
    std::memcpy(x.data<float>() + i, &bits, 4);
  }
  std::vector<Call> calls;
  for (Prim p : {Prim::exp, Prim::log, Prim::tanh, Prim::sigmoid, Prim::erf}) {
    Call c{p, {x}, execute1(p, std::vector<Tensor>{x}), {}};
    const DType f[] = {DType::Float32};
    c.kernel = cuda::pointwise_kernel(p, f, DType::Float32);
    calls.push_back(std::move(c));
  }
  msl::test::HostModule module(module_source(calls));
  for (const Call& c : calls) {
    CAPTURE(std::string(prim_name(c.prim)));
    int32_t err = 0;
    Tensor got = emulate(module, c, &err);
    int64_t differ = 0;
    for (int64_t i = 0; i < n; ++i) {
      float a = got.data<float>()[i], b = c.want.data<float>()[i];
      if (std::isnan(a) && std::isnan(b)) continue;
      if (!same_bits(got, c.want, i)) ++differ;
    }
    CHECK(differ == 0);
  }
}

TEST_CASE("pointwise kernels: dtypes the CPU rejects are rejected; names and geometry") {
  const DType b2[] = {DType::Bool, DType::Bool};
  CHECK_THROWS_AS(cuda::pointwise_kernel(Prim::sub, b2, DType::Bool), DTypeError);
  const DType i2[] = {DType::Int32, DType::Int32};
  CHECK_THROWS_AS(cuda::pointwise_kernel(Prim::relu_grad, i2, DType::Int32), DTypeError);
  CHECK_THROWS_AS(cuda::pointwise_kernel(Prim::neg, i2, DType::Int32), std::invalid_argument);  // arity
  const DType fi[] = {DType::Float32, DType::Int32};
  PointwiseKernel k = cuda::pointwise_kernel(Prim::add, fi, DType::Float32, 2);
  CHECK(cuda::pointwise_kernel_name(k) == "msl_pw_add_float32_int32_to_float32_v2");
  const DType ii[] = {DType::Int32, DType::Int32};
  CHECK(cuda::pointwise_kernel(Prim::div, ii, DType::Float32).compute == DType::Float32);
  CHECK(cuda::pointwise_may_fail(cuda::pointwise_kernel(Prim::mod, ii, DType::Int32)));
  CHECK(!cuda::pointwise_may_fail(cuda::pointwise_kernel(Prim::mod, fi, DType::Float32)));
  // Contiguous operands merge into one dimension; a broadcast one keeps two.
  Dims shape{2, 3, 4};
  Dims c = contiguous_strides(shape);
  std::vector<Dims> both{c, c};
  cuda::PointwiseGeometry g = cuda::pointwise_geometry(shape, both);
  CHECK(g.ndim == 1);
  CHECK(g.shape[0] == 24);
  std::vector<Dims> row{c, broadcast_strides(Dims{4}, Dims{1}, shape)};
  g = cuda::pointwise_geometry(shape, row);
  CHECK(g.ndim == 2);
  CHECK(g.shape[0] == 6);
  CHECK(g.in[1][0] == 0);
  CHECK(g.in[1][1] == 1);
}

namespace {

// One element of `p` on scalars of dtype t under emulation.
double emulate_one(const msl::test::HostModule& m, Prim p, DType t, std::vector<double> v, int32_t* err) {
  Call c{p, {}, {}, {}};
  std::vector<DType> dts;
  for (double x : v) {
    Tensor s(t, Dims{1});
    Tensor d(DType::Float64, Dims{1});
    *d.data<double>() = x;
    copy_tensor(d, s);
    c.in.push_back(s);
    dts.push_back(t);
  }
  c.want = Tensor(t, Dims{1});  // floordiv, mod, pow, sign, abs keep the dtype
  c.kernel = cuda::pointwise_kernel(p, dts, t);
  return emulate(m, c, err).item_at(0);
}

}  // namespace

TEST_CASE("pointwise kernels: Python's floordiv, mod and pow, worked out by hand; integer errors set the flag") {
  std::vector<Call> calls;
  for (Prim p : {Prim::floordiv, Prim::mod, Prim::pow, Prim::sign, Prim::abs})
    for (DType t : {DType::Int8, DType::Int32, DType::Int64, DType::UInt8, DType::Float32, DType::Float64}) {
      Call c{p, {}, {}, {}};
      std::vector<DType> dts(static_cast<size_t>(prim_def(p).inputs), t);
      c.kernel = cuda::pointwise_kernel(p, dts, t);
      calls.push_back(c);
    }
  msl::test::HostModule m(module_source(calls));
  int32_t err = 0;
  auto one = [&](Prim p, DType t, std::vector<double> v) { return emulate_one(m, p, t, std::move(v), &err); };
  CHECK(one(Prim::floordiv, DType::Int32, {-7, 2}) == -4);
  CHECK(one(Prim::mod, DType::Int32, {-7, 2}) == 1);
  CHECK(one(Prim::mod, DType::Int32, {7, -2}) == -1);
  CHECK(one(Prim::floordiv, DType::Int8, {-128, -1}) == -128);  // wraps
  CHECK(one(Prim::mod, DType::Int64, {-128, -1}) == 0);
  CHECK(one(Prim::floordiv, DType::UInt8, {250, 7}) == 35);
  CHECK(one(Prim::pow, DType::Int32, {3, 4}) == 81);
  CHECK(one(Prim::pow, DType::Int8, {2, 7}) == -128);  // wraps
  CHECK(one(Prim::pow, DType::Int64, {-3, 3}) == -27);
  CHECK(one(Prim::floordiv, DType::Float64, {-7.5, 2}) == -4.0);
  CHECK(one(Prim::mod, DType::Float64, {-7.5, 2}) == 0.5);
  CHECK(one(Prim::mod, DType::Float32, {7.5, -2}) == -0.5);
  CHECK(std::signbit(one(Prim::mod, DType::Float64, {6, -3})));   // -0.0: the divisor's sign
  CHECK(!std::signbit(one(Prim::mod, DType::Float64, {-6, 3})));  // +0.0
  CHECK(std::signbit(one(Prim::floordiv, DType::Float64, {-1, 3})));  // -1 // 3 == -1
  CHECK(one(Prim::floordiv, DType::Float64, {-1, 3}) == -1.0);
  CHECK(one(Prim::floordiv, DType::Float64, {1, -3e300}) == -1.0);
  CHECK(std::signbit(one(Prim::floordiv, DType::Float64, {0, -3})));  // -0.0
  CHECK(std::isinf(one(Prim::floordiv, DType::Float32, {1, 0})));
  CHECK(std::isnan(one(Prim::mod, DType::Float32, {1, 0})));
  CHECK(std::signbit(one(Prim::sign, DType::Float64, {-0.0})));
  CHECK(one(Prim::sign, DType::Int8, {-100}) == -1);
  CHECK(one(Prim::abs, DType::Int8, {-128}) == -128);  // wraps
  CHECK(one(Prim::pow, DType::Float64, {2, 0.5}) == std::sqrt(2.0));
  CHECK(err == 0);
  // Integer division by zero and negative exponents set the flag (and give 0).
  CHECK(one(Prim::floordiv, DType::Int32, {5, 0}) == 0);
  CHECK(err == 1);
  err = 0;
  CHECK(one(Prim::mod, DType::UInt8, {5, 0}) == 0);
  CHECK(err == 1);
  err = 0;
  CHECK(one(Prim::pow, DType::Int64, {2, -1}) == 0);
  CHECK(err == 1);
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("every pointwise kernel text compiles with NVRTC for sm_80 and sm_90") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  std::string all = cuda::pointwise_prelude();
  std::map<std::string, bool> seen;
  for (const Call& c : all_calls()) {
    // A by-value input changes only the parameter's declaration and read:
    // those of the cheap operations stand for all (the double-precision
    // functions inlined into each kernel are most of NVRTC's time).
    if (c.kernel.by_value && !(c.prim == Prim::add || c.prim == Prim::select || c.prim == Prim::floordiv)) continue;
    std::string name = cuda::pointwise_kernel_name(c.kernel);
    if (!seen[name]) all += cuda::pointwise_kernel_text(c.kernel);
    seen[name] = true;
  }
  // Every text through NVRTC's front end (PTX: the machine-code back end
  // adds minutes for ~300 kernels and checks nothing of the source)...
  cuda::NvrtcOutput ptx_all = cuda::nvrtc_compile(all, "pointwise_kernels", 90, /*ptx=*/true);
  size_t entries = 0;
  for (size_t at = 0; (at = ptx_all.image.find(".entry ", at)) != std::string::npos; ++at) ++entries;
  CHECK(entries == seen.size());
  // ...and one kernel of every operation to cubins for both GPUs.
  std::string some = cuda::pointwise_prelude();
  const DType ff[] = {DType::Float64, DType::Float64, DType::Float64};
  const DType ii[] = {DType::Bool, DType::Int8, DType::Int8};
  for (Prim p : kPrims) {
    size_t n = static_cast<size_t>(prim_def(p).inputs);
    bool logical = p == Prim::logical_and || p == Prim::logical_or || p == Prim::logical_not;
    bool compare = p >= Prim::equal && p <= Prim::greater_equal;
    DType out = logical || compare ? DType::Bool : DType::Float64;
    some += cuda::pointwise_kernel_text(cuda::pointwise_kernel(p, std::span<const DType>(ff, n), out));
    if (p != Prim::relu_grad && !transcendental(p) && p != Prim::sqrt && p != Prim::rsqrt && p != Prim::reciprocal &&
        p != Prim::div && p != Prim::select) {
      DType iout = logical || compare ? DType::Bool : DType::Int8;
      some += cuda::pointwise_kernel_text(cuda::pointwise_kernel(p, std::span<const DType>(ii + 1, n), iout));
    }
  }
  for (int arch : {80, 90}) {
    cuda::NvrtcOutput out = cuda::nvrtc_compile(some, "pointwise_kernels", arch);
    CHECK(out.image.compare(0, 4, "\x7f" "ELF") == 0);
  }
  // One kernel alone (the unit a launch compiles) with its prelude.
  const DType hh[] = {DType::Float16, DType::Float16};
  PointwiseKernel k = cuda::pointwise_kernel(Prim::pow, hh, DType::Float16, 2);
  cuda::NvrtcOutput ptx = cuda::nvrtc_compile(cuda::pointwise_source(k), "pow", 90, /*ptx=*/true);
  CHECK(ptx.image.find(".entry " + cuda::pointwise_kernel_name(k)) != std::string::npos);
}
#endif
