// Unary elementwise primitives and cast against float64 reference loops:
// every op on every dtype (result dtypes included), strided and 0-d inputs,
// size-0 tensors, the threaded path at every vector level, and every cast
// pair on special values.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "test_elementwise_util.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

struct UnOp {
  Prim prim;
  const char* name;
  double lo, hi;  // input range for random tests
};

const UnOp kUnOps[] = {
    {Prim::neg, "neg", -4, 4},        {Prim::abs, "abs", -4, 4},
    {Prim::sign, "sign", -4, 4},      {Prim::exp, "exp", -10, 10},
    {Prim::log, "log", 0.001, 50},    {Prim::sqrt, "sqrt", 0, 50},
    {Prim::rsqrt, "rsqrt", 0.01, 50}, {Prim::reciprocal, "reciprocal", -4, 4},
    {Prim::sin, "sin", -20, 20},      {Prim::cos, "cos", -20, 20},
    {Prim::tanh, "tanh", -6, 6},      {Prim::sigmoid, "sigmoid", -20, 20},
    {Prim::relu, "relu", -4, 4},      {Prim::erf, "erf", -4, 4},
    {Prim::floor, "floor", -4, 4},    {Prim::logical_not, "logical_not", -2, 2},
};

bool is_float_fn(Prim p) {
  return p == Prim::exp || p == Prim::log || p == Prim::sqrt || p == Prim::rsqrt || p == Prim::reciprocal ||
         p == Prim::sin || p == Prim::cos || p == Prim::tanh || p == Prim::sigmoid || p == Prim::erf;
}

bool rejects(Prim p, DType dt) { return dt == DType::Bool && (p == Prim::neg || p == Prim::relu); }

DType expected_dtype(Prim p, DType dt) {
  if (p == Prim::logical_not) return DType::Bool;
  if (is_float_fn(p) && !is_floating(dt)) return DType::Float32;
  return dt;
}

double ref_unary(Prim p, DType in, double x) {
  switch (p) {
    case Prim::neg: return -x;
    case Prim::abs: return std::fabs(x);
    case Prim::sign: return std::isnan(x) ? x : x > 0 ? 1 : x < 0 ? -1 : 0;
    case Prim::exp: return std::exp(x);
    case Prim::log: return std::log(x);
    case Prim::sqrt: return std::sqrt(x);
    case Prim::rsqrt: return 1 / std::sqrt(x);
    case Prim::reciprocal: return 1 / x;
    case Prim::sin: return std::sin(x);
    case Prim::cos: return std::cos(x);
    case Prim::tanh: return std::tanh(x);
    case Prim::sigmoid: return 1 / (1 + std::exp(-x));
    case Prim::relu: return std::isnan(x) ? x : x > 0 ? x : 0;
    case Prim::erf: return std::erf(x);
    case Prim::floor: return is_floating(in) ? std::floor(x) : x;
    case Prim::logical_not: return x == 0;
    default: FAIL("not a unary op"); return 0;
  }
}

void check_unary(Prim p, const Tensor& x) {
  Tensor got = run(p, {x});
  DType out = expected_dtype(p, x.dtype());
  REQUIRE(got.dtype() == out);
  REQUIRE(got.shape() == x.shape());
  std::vector<double> want = ref_map({&x}, x.shape(), [&](const std::vector<double>& v) {
    double r = ref_unary(p, x.dtype(), v[0]);
    return is_integral(out) ? wrap_to(out, r) : r;
  });
  // Results in float32 for half inputs are rounded twice (float32, then
  // the half format): allow a little more than the half tolerance. Denormal
  // results have few significant bits: allow two of the smallest steps.
  double atol = out == DType::Float32    ? 2 * std::numeric_limits<float>::denorm_min()
                : out == DType::Float16  ? 2 * std::ldexp(1.0, -24)
                : out == DType::BFloat16 ? 2 * std::ldexp(1.0, -133)
                                         : 0;
  expect_matches(got, want, 1.5, atol);
}

}  // namespace

TEST_CASE("elementwise unary: every op on every dtype") {
  std::mt19937 rng(21);
  for (const UnOp& op : kUnOps) {
    for (DType dt : all_dtypes()) {
      CAPTURE(std::string(op.name));
      CAPTURE(dt_name(dt));
      Tensor x = rand_for(rng, dt, Dims{3, 5}, op.lo, op.hi);
      if (rejects(op.prim, dt)) {
        CHECK_THROWS_WITH_AS(run(op.prim, {x}), (std::string(op.name) + ": unsupported dtype Bool").c_str(),
                             DTypeError);
        continue;
      }
      check_unary(op.prim, x);
      check_unary(op.prim, noncontiguous_copy(x));
      check_unary(op.prim, transposed_copy(x));
      check_unary(op.prim, rand_for(rng, dt, Dims{}, op.lo, op.hi));      // 0-d
      check_unary(op.prim, rand_for(rng, dt, Dims{1, 1}, op.lo, op.hi));  // size-1 dims
      check_unary(op.prim, Tensor(dt, Dims{0, 3}));                       // size 0
      check_unary(op.prim, Tensor(dt, Dims{4, 0}));
      // A stride-0 view: one value repeated.
      Tensor one = rand_for(rng, dt, Dims{1}, op.lo, op.hi);
      check_unary(op.prim, Tensor::view(one, Dims{3, 4}, Dims{0, 0}, 0));
    }
  }
}

TEST_CASE("elementwise unary: integers and special values") {
  Tensor i8 = from_vector(DType::Int8, Dims{4}, {-128, -1, 0, 127});
  CHECK(to_vector(run(Prim::neg, {i8})) == std::vector<double>{-128, 1, 0, -127});
  CHECK(to_vector(run(Prim::abs, {i8})) == std::vector<double>{-128, 1, 0, 127});
  CHECK(to_vector(run(Prim::sign, {i8})) == std::vector<double>{-1, -1, 0, 1});
  CHECK(to_vector(run(Prim::relu, {i8})) == std::vector<double>{0, 0, 0, 127});
  Tensor u8 = from_vector(DType::UInt8, Dims{3}, {0, 1, 255});
  CHECK(to_vector(run(Prim::neg, {u8})) == std::vector<double>{0, 255, 1});
  Tensor i64 = from_vector(DType::Int64, Dims{2}, {-9007199254740993.0, 5});
  CHECK(run(Prim::floor, {i64}).dtype() == DType::Int64);
  CHECK(to_vector(run(Prim::floor, {i64})) == to_vector(i64));
  Tensor e = run(Prim::exp, {from_vector(DType::Int32, Dims{2}, {0, 1})});
  CHECK(e.dtype() == DType::Float32);
  CHECK(to_vector(e)[0] == 1);
  const double nan = std::nan(""), inf = INFINITY;
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    CAPTURE(std::string(level_name(level)));
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
      CAPTURE(dt_name(dt));
      std::vector<double> xs = {nan, inf,  -inf, 0.0, -0.0, 1e-40, -1e-40, 1e30, -1e30, 100,  -100,  0.5, -0.5,
                                3.0, -3.0, 88.8, -88, -104, 1e-3,  20,     -20,  1e5,   -1e7, 6.5e4, 1e38};
      Tensor x = from_vector(dt, Dims{static_cast<int64_t>(xs.size())}, xs);
      for (const UnOp& op : kUnOps) {
        CAPTURE(std::string(op.name));
        check_unary(op.prim, x);
      }
    }
  }
}

TEST_CASE("elementwise unary: large tensors and every tail length, at every vector level") {
  std::mt19937 rng(22);
  const int64_t n = kParallelGrain + 5;
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    CAPTURE(std::string(level_name(level)));
    for (const UnOp& op : kUnOps) {
      CAPTURE(std::string(op.name));
      // float32 and the half formats (converted in float32 blocks) have
      // per-level loops; the other dtypes share theirs.
      for (DType dt : {DType::Float32, DType::Float16}) {
        CAPTURE(dt_name(dt));
        check_unary(op.prim, rand_for(rng, dt, Dims{n}, op.lo, op.hi));
      }
      if (level == ew::max_simd_level()) {
        check_unary(op.prim, rand_for(rng, DType::Float64, Dims{n}, op.lo, op.hi));
        check_unary(op.prim, rand_for(rng, DType::Int32, Dims{n}, op.lo, op.hi));
        check_unary(op.prim, transposed_copy(rand_for(rng, DType::Float32, Dims{257, 131}, op.lo, op.hi)));
      }
      for (int64_t m = 1; m <= 40; ++m) check_unary(op.prim, rand_for(rng, DType::Float32, Dims{m}, op.lo, op.hi));
    }
  }
}

// ----------------------------------------------------------------- cast

TEST_CASE("cast: every dtype pair, with store_from_double's conversion rules") {
  const double nan = std::nan(""), inf = INFINITY;
  std::vector<double> xs = {0,          1,
                            -1,         2.7,
                            -2.7,       127.5,
                            -128.9,     255.5,
                            300,        -300,
                            65504,      70000,
                            1e10,       -1e10,
                            3e9,        -3e9,
                            1e19,       -1e19,
                            1e-3,       0.5,
                            nan,        inf,
                            -inf,       -0.0,
                            16777217,   9007199254740993.0,
                            2147483647, -2147483648.0};
  for (DType from : all_dtypes()) {
    // Values the source dtype can hold (the source tensor itself is built by store_from_double).
    Tensor src = from_vector(from, Dims{static_cast<int64_t>(xs.size())}, xs);
    for (DType to : all_dtypes()) {
      CAPTURE(dt_name(from));
      CAPTURE(dt_name(to));
      Tensor got = run(Prim::cast, {src}, Attrs{{"dtype", to}});
      REQUIRE(got.dtype() == to);
      std::vector<double> want(xs.size());
      for (size_t i = 0; i < xs.size(); ++i) want[i] = round_to(to, src.item_at(static_cast<int64_t>(i)));
      std::vector<double> g = to_vector(got);
      for (size_t i = 0; i < xs.size(); ++i) {
        CAPTURE(i);
        CHECK(((std::isnan(g[i]) && std::isnan(want[i])) || g[i] == want[i]));
      }
      // Strided and size-0 sources.
      Tensor nc = noncontiguous_copy(src);
      CHECK(to_vector(run(Prim::cast, {nc}, Attrs{{"dtype", to}})).size() == xs.size());
      CHECK(run(Prim::cast, {Tensor(from, Dims{0, 2})}, Attrs{{"dtype", to}}).shape() == Dims{0, 2});
    }
  }
  std::mt19937 rng(23);
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    // Threaded at the widest level; every level runs its vector loops and tails.
    const int64_t n = level == ew::max_simd_level() ? kParallelGrain + 77 : 1000 + 77;
    for (DType from : all_dtypes()) {
      for (DType to : all_dtypes()) {
        Tensor big = rand_for(rng, from, Dims{n}, -300, 300);
        Tensor got = run(Prim::cast, {noncontiguous_copy(big)}, Attrs{{"dtype", to}});
        std::vector<double> v = to_vector(big), g = to_vector(got);
        bool ok = true;
        for (size_t i = 0; i < v.size() && ok; ++i) ok = g[i] == round_to(to, v[i]);
        CHECK(ok);
      }
    }
  }
  CHECK_THROWS_AS(run(Prim::cast, {Tensor::scalar(DType::Float32, 1)}), ValueError);
}
