// Binary elementwise primitives and select against float64 reference loops:
// every op on every dtype pair, NumPy broadcasting, strided and aliasing
// inputs, the threaded and streaming paths at every vector level, Python
// floor/mod semantics, NaN propagation and the error cases.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "test_elementwise_util.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

struct BinOp {
  Prim prim;
  const char* name;
};

const BinOp kBinOps[] = {
    {Prim::add, "add"},
    {Prim::sub, "sub"},
    {Prim::mul, "mul"},
    {Prim::div, "div"},
    {Prim::floordiv, "floordiv"},
    {Prim::mod, "mod"},
    {Prim::pow, "pow"},
    {Prim::maximum, "maximum"},
    {Prim::minimum, "minimum"},
    {Prim::equal, "equal"},
    {Prim::not_equal, "not_equal"},
    {Prim::less, "less"},
    {Prim::less_equal, "less_equal"},
    {Prim::greater, "greater"},
    {Prim::greater_equal, "greater_equal"},
    {Prim::logical_and, "logical_and"},
    {Prim::logical_or, "logical_or"},
};

bool is_cmp(Prim p) {
  return p == Prim::equal || p == Prim::not_equal || p == Prim::less || p == Prim::less_equal || p == Prim::greater ||
         p == Prim::greater_equal || p == Prim::logical_and || p == Prim::logical_or;
}

// The result dtype, by the rules of the primitive list (written out here).
DType expected_dtype(Prim p, DType a, DType b) {
  if (is_cmp(p)) return DType::Bool;
  DType t = promote_types(a, b);
  if (p == Prim::div && !is_floating(t)) return DType::Float32;
  return t;
}

bool rejects(Prim p, DType a, DType b) {
  return promote_types(a, b) == DType::Bool &&
         (p == Prim::sub || p == Prim::floordiv || p == Prim::mod || p == Prim::pow);
}

double py_floordiv_int(double a, double b) {
  int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  int64_t q = x / y;
  if (x % y != 0 && ((x < 0) != (y < 0))) --q;
  return static_cast<double>(q);
}

double py_mod_int(double a, double b) {
  int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return static_cast<double>(r);
}

double int_pow(double a, double b) {
  int64_t r = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(b); ++i) r *= static_cast<int64_t>(a);
  return static_cast<double>(r);
}

// Exact (or double-precision) value of op(a, b) for a result of dtype `out`;
// integer results are wrapped to the width of `out` by the caller.
double ref_binary(Prim p, DType out, double a, double b) {
  bool ints = is_integral(out);
  switch (p) {
    case Prim::add: return out == DType::Bool ? (a != 0 || b != 0) : a + b;
    case Prim::sub: return a - b;
    case Prim::mul: return out == DType::Bool ? (a != 0 && b != 0) : a * b;
    case Prim::div: return a / b;
    case Prim::floordiv:  // Python's float //: nan for an infinite dividend, IEEE division by zero
      if (ints) return py_floordiv_int(a, b);
      if (std::isnan(a) || std::isnan(b) || std::isinf(a)) return std::nan("");
      if (b == 0) return a / b;
      if (std::isinf(b)) return a != 0 && ((a < 0) != (b < 0)) ? -1 : 0;
      return static_cast<double>(std::floor(static_cast<long double>(a) / static_cast<long double>(b)));
    case Prim::mod:  // Python's float %: the sign of the divisor
      if (ints) return py_mod_int(a, b);
      if (std::isnan(a) || std::isnan(b) || std::isinf(a) || b == 0) return std::nan("");
      if (std::isinf(b)) return a != 0 && ((a < 0) != (b < 0)) ? b : a;
      {
        long double q = std::floor(static_cast<long double>(a) / static_cast<long double>(b));
        return static_cast<double>(static_cast<long double>(a) - q * static_cast<long double>(b));
      }
    case Prim::pow: return ints ? int_pow(a, b) : std::pow(a, b);
    case Prim::maximum:
      if (out == DType::Bool) return a != 0 || b != 0;
      return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
    case Prim::minimum:
      if (out == DType::Bool) return a != 0 && b != 0;
      return std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b);
    case Prim::equal: return a == b;
    case Prim::not_equal: return a != b;
    case Prim::less: return a < b;
    case Prim::less_equal: return a <= b;
    case Prim::greater: return a > b;
    case Prim::greater_equal: return a >= b;
    case Prim::logical_and: return (a != 0) && (b != 0);
    case Prim::logical_or: return (a != 0) || (b != 0);
    default: FAIL("not a binary op"); return 0;
  }
}

// Makes a second operand valid for integer floordiv/mod (no zeros) and
// integer pow (small non-negative exponents).
Tensor fix_rhs(std::mt19937& rng, Prim p, DType out, const Tensor& b) {
  if (!is_integral(out)) return b;
  Tensor r = b.clone();
  std::uniform_int_distribution<int> e(0, 5);
  for (int64_t i = 0; i < r.numel(); ++i) {
    double v = r.item_at(i);
    if ((p == Prim::floordiv || p == Prim::mod) && v == 0) v = 3;
    if (p == Prim::pow) v = b.dtype() == DType::Bool ? v : e(rng);
    store_from_double(r.raw(), r.dtype(), i, v);
  }
  return r;
}

// Runs op(a, b) and compares with the reference, including the dtype and shape.
void check_binary(Prim p, const Tensor& a, const Tensor& b, double rtol_scale = 1) {
  Tensor got = run(p, {a, b});
  DType out = expected_dtype(p, a.dtype(), b.dtype());
  REQUIRE(got.dtype() == out);
  Dims shape = ref_broadcast(a.shape(), b.shape());
  REQUIRE(got.shape() == shape);
  std::vector<double> want = ref_map({&a, &b}, shape, [&](const std::vector<double>& v) {
    double r = ref_binary(p, out, v[0], v[1]);
    return is_integral(out) ? wrap_to(out, r) : r;
  });
  // mod's result is a difference of two values of the inputs' magnitude.
  double atol = p == Prim::mod && is_floating(out) ? tolerance(out) * 8 : 0;
  expect_matches(got, want, rtol_scale, atol);
}

}  // namespace

TEST_CASE("elementwise binary: every op on every dtype pair, same shape and broadcast") {
  std::mt19937 rng(11);
  for (const BinOp& op : kBinOps) {
    for (DType da : all_dtypes()) {
      for (DType db : all_dtypes()) {
        CAPTURE(std::string(op.name));
        CAPTURE(dt_name(da));
        CAPTURE(dt_name(db));
        Tensor a = rand_for(rng, da, Dims{2, 3});
        Tensor b = rand_for(rng, db, Dims{2, 3});
        if (rejects(op.prim, da, db)) {
          CHECK_THROWS_AS(run(op.prim, {a, b}), DTypeError);
          continue;
        }
        DType out = expected_dtype(op.prim, da, db);
        check_binary(op.prim, a, fix_rhs(rng, op.prim, out, b));
        Tensor c = rand_for(rng, da, Dims{3, 1});
        Tensor d = fix_rhs(rng, op.prim, out, rand_for(rng, db, Dims{4}));
        check_binary(op.prim, c, d);
      }
    }
  }
}

TEST_CASE("elementwise binary: broadcasting shapes, 0-d and size-0 tensors") {
  std::mt19937 rng(12);
  const std::pair<Dims, Dims> pairs[] = {
      {Dims{3, 1}, Dims{4}},
      {Dims{}, Dims{2, 3}},
      {Dims{0, 3}, Dims{1, 3}},
      {Dims{1}, Dims{5}},
      {Dims{2, 1, 4}, Dims{3, 1}},
      {Dims{4, 1}, Dims{1, 5}},
      {Dims{6, 4}, Dims{4}},
      {Dims{}, Dims{}},
      {Dims{0}, Dims{0}},
      {Dims{2, 0}, Dims{2, 1}},
      {Dims{1, 1}, Dims{1}},
      {Dims{5}, Dims{}},
      {Dims{2, 3, 1, 5}, Dims{3, 4, 1}},
      {Dims{1, 7}, Dims{3, 1}},
      {Dims{37}, Dims{37}},
      {Dims{3, 1, 1}, Dims{1, 1, 2}},
  };
  const Prim prims[] = {Prim::add,     Prim::sub,  Prim::mul,        Prim::div,
                        Prim::maximum, Prim::less, Prim::logical_or, Prim::floordiv};
  const DType dts[] = {DType::Float32, DType::Int32, DType::Float16, DType::Float64, DType::Int64, DType::UInt8};
  for (auto& [sa, sb] : pairs) {
    for (int swap = 0; swap < 2; ++swap) {
      const Dims& x = swap ? sb : sa;
      const Dims& y = swap ? sa : sb;
      for (Prim p : prims) {
        for (DType dt : dts) {
          CAPTURE(x.str());
          CAPTURE(y.str());
          CAPTURE(std::string(prim_name(p)));
          CAPTURE(dt_name(dt));
          Tensor a = rand_for(rng, dt, x);
          Tensor b = fix_rhs(rng, p, expected_dtype(p, dt, dt), rand_for(rng, dt, y));
          check_binary(p, a, b);
        }
      }
    }
  }
}

TEST_CASE("elementwise binary: strided, transposed, expanded and reversed views") {
  std::mt19937 rng(13);
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    CAPTURE(std::string(level_name(level)));
    for (DType da : {DType::Float32, DType::Int32, DType::Float16, DType::Float64}) {
      for (DType db : {DType::Float32, DType::Int64, DType::BFloat16}) {
        CAPTURE(dt_name(da));
        CAPTURE(dt_name(db));
        Tensor a = rand_for(rng, da, Dims{5, 7});
        Tensor b = rand_for(rng, db, Dims{5, 7});
        for (Prim p : {Prim::add, Prim::mul, Prim::maximum, Prim::greater, Prim::div}) {
          check_binary(p, noncontiguous_copy(a), b);
          check_binary(p, a, noncontiguous_copy(b));
          check_binary(p, transposed_copy(a), transposed_copy(b));
          check_binary(p, transposed_copy(a), noncontiguous_copy(b));
        }
        // A [5, 7] view of 7 values with stride 0 along rows, against a transposed [5, 7].
        Tensor row = rand_for(rng, da, Dims{7});
        Tensor expanded = Tensor::view(row, Dims{5, 7}, Dims{0, 1}, 0);
        check_binary(Prim::sub, expanded, transposed_copy(b));
        check_binary(Prim::sub, transposed_copy(b), expanded);
        // Both inputs expanded along the same dimension.
        Tensor col = rand_for(rng, db, Dims{7});
        check_binary(Prim::add, expanded, Tensor::view(col, Dims{5, 7}, Dims{0, 1}, 0));
        // A reversed view (negative stride).
        Tensor rev = Tensor::view(row, Dims{7}, Dims{-1}, 6);
        check_binary(Prim::mul, rev, rand_for(rng, db, Dims{3, 7}));
        // A sliced view with a step: every other column.
        Tensor wide = rand_for(rng, da, Dims{5, 14});
        Tensor sliced = Tensor::view(wide, Dims{5, 7}, Dims{14, 2}, 1);
        check_binary(Prim::minimum, sliced, b);
      }
    }
  }
}

TEST_CASE("elementwise binary: batched transposes walk in tiles") {
  std::mt19937 rng(18);
  // [4, 130, 140] views of [4, 140, 130] buffers (last two dimensions swapped).
  auto batch_transposed = [&](DType dt) {
    Tensor base = rand_for(rng, dt, Dims{4, 140, 130});
    return Tensor::view(base, Dims{4, 130, 140}, Dims{140 * 130, 1, 130}, 0);
  };
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    CAPTURE(std::string(level_name(level)));
    check_binary(Prim::add, batch_transposed(DType::Float32), rand_for(rng, DType::Float32, Dims{4, 130, 140}));
    check_binary(Prim::mul, rand_for(rng, DType::Float64, Dims{130, 140}), batch_transposed(DType::Float64));
    check_binary(Prim::greater, batch_transposed(DType::Int8), batch_transposed(DType::Float16));
    check_binary(Prim::sub, batch_transposed(DType::Int32), rand_for(rng, DType::Float32, Dims{140}));
  }
}

TEST_CASE("elementwise binary: inputs that alias each other") {
  std::mt19937 rng(14);
  for (DType dt : {DType::Float32, DType::Int32, DType::Float16, DType::Bool, DType::Int8}) {
    CAPTURE(dt_name(dt));
    Tensor x = rand_for(rng, dt, Dims{4, 6});
    for (Prim p : {Prim::add, Prim::mul, Prim::maximum, Prim::equal, Prim::logical_and}) check_binary(p, x, x);
    if (dt != DType::Bool) check_binary(Prim::sub, x, x);
    // The same storage seen as itself and as its transpose.
    Tensor sq = rand_for(rng, dt, Dims{5, 5});
    Tensor tr = Tensor::view(sq, Dims{5, 5}, Dims{1, 5}, 0);
    check_binary(Prim::add, sq, tr);
    check_binary(Prim::greater, tr, sq);
  }
}

TEST_CASE("elementwise binary: large tensors take the threaded and streaming paths") {
  std::mt19937 rng(15);
  const int64_t n = kParallelGrain + 7;  // threaded, and not a multiple of any vector width
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    CAPTURE(std::string(level_name(level)));
    for (DType dt : {DType::Float32, DType::Int32, DType::Float16, DType::Float64}) {
      CAPTURE(dt_name(dt));
      Tensor a = rand_for(rng, dt, Dims{n});
      Tensor b = rand_for(rng, dt, Dims{n});
      for (Prim p : {Prim::add, Prim::sub, Prim::mul, Prim::maximum, Prim::minimum, Prim::less_equal})
        check_binary(p, a, b);
      check_binary(Prim::div, a, Tensor::scalar(dt, 3));
      check_binary(Prim::mul, Tensor::scalar(dt, -2), a);
    }
    // [rows, 67] + [67]: blocks of whole rows, split across threads mid-row.
    Tensor m = rand_for(rng, DType::Float32, Dims{kParallelGrain / 32 + 3, 67});
    Tensor v = rand_for(rng, DType::Float32, Dims{67});
    check_binary(Prim::add, m, v);
    check_binary(Prim::sub, v, m);
    check_binary(Prim::mul, transposed_copy(rand_for(rng, DType::Int64, Dims{131, 513})),
                 rand_for(rng, DType::Float32, Dims{131, 1}));
  }
  // Outputs past the streaming threshold (8 MiB): the contiguous fast path,
  // tensor with scalar, rows of a broadcast, a transposed walk in tiles, and
  // a half-precision result converted from float32 blocks.
  const int64_t big = (int64_t(8) << 20) / 4 + 13;
  Tensor fa = rand_for(rng, DType::Float32, Dims{big});
  Tensor fb = rand_for(rng, DType::Float32, Dims{big});
  check_binary(Prim::add, fa, fb);
  check_binary(Prim::maximum, fa, Tensor::scalar(DType::Float32, 0.25));
  check_binary(Prim::less, Tensor::scalar(DType::Float64, 0.5),
               transposed_copy(rand_for(rng, DType::Float64, Dims{1031, 1029})));
  check_binary(Prim::add, rand_for(rng, DType::Float32, Dims{16257, 129}), rand_for(rng, DType::Float32, Dims{129}));
  check_binary(Prim::mul, transposed_copy(rand_for(rng, DType::Float32, Dims{1100, 1910})),
               rand_for(rng, DType::Float32, Dims{1910}));
  check_binary(Prim::sub, rand_for(rng, DType::Float16, Dims{big * 2}), Tensor::scalar(DType::Float16, 0.5));
}

TEST_CASE("elementwise binary: float32 tensor with scalar at every length (vector tails)") {
  std::mt19937 rng(16);
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    CAPTURE(std::string(level_name(level)));
    for (int64_t n = 1; n <= 70; ++n) {
      CAPTURE(n);
      Tensor a = rand_for(rng, DType::Float32, Dims{n});
      Tensor b = rand_for(rng, DType::Float32, Dims{n});
      Tensor s = rand_for(rng, DType::Float32, Dims{});
      Tensor one = rand_for(rng, DType::Float32, Dims{1});
      for (Prim p : {Prim::add, Prim::sub, Prim::mul, Prim::div, Prim::maximum, Prim::minimum, Prim::less}) {
        check_binary(p, a, b);
        check_binary(p, a, s);
        check_binary(p, s, a);
        check_binary(p, one, b);
      }
      // An unaligned start: a view beginning one element into its buffer.
      Tensor off = Tensor::view(b, Dims{n - 1}, Dims{1}, 1);
      check_binary(Prim::add, Tensor::view(a, Dims{n - 1}, Dims{1}, 0), off);
    }
  }
}

TEST_CASE("elementwise binary: NaN propagation and IEEE cases of float ops") {
  const double nan = std::nan(""), inf = INFINITY;
  std::vector<double> xs = {nan, 1.0, nan, -inf, 0.0, -0.0, inf, 2.5, nan, -3.0, 7.0, 1e30, -1e-40, 5.0, 4.0, 3.0, 2.0};
  std::vector<double> ys = {1.0, nan, nan, inf, -0.0, 0.0, 1.0, nan, -2.0, nan, 0.0, -1e30, 1e-40, 5.0, 4.0, 3.0, 2.0};
  Dims shape{static_cast<int64_t>(xs.size())};
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    CAPTURE(std::string(level_name(level)));
    for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
      CAPTURE(dt_name(dt));
      Tensor a = from_vector(dt, shape, xs), b = from_vector(dt, shape, ys);
      for (const BinOp& op : kBinOps) {
        CAPTURE(std::string(op.name));
        check_binary(op.prim, a, b);
        check_binary(op.prim, b, a);
      }
    }
  }
}

TEST_CASE("elementwise binary: Python floor division and modulo, integer wrap-around") {
  auto i32 = [](std::vector<double> v) { return from_vector(DType::Int32, Dims{static_cast<int64_t>(v.size())}, v); };
  Tensor a = i32({7, -7, 7, -7, 0, 6, -6, -2147483648.0, -2147483648.0, 2147483647});
  Tensor b = i32({2, 2, -2, -2, 5, -3, 3, -1, 1, -1});
  CHECK(to_vector(run(Prim::floordiv, {a, b})) ==
        std::vector<double>{3, -4, -4, 3, 0, -2, -2, -2147483648.0, -2147483648.0, -2147483647});
  CHECK(to_vector(run(Prim::mod, {a, b})) == std::vector<double>{1, 1, -1, -1, 0, 0, 0, 0, 0, 0});
  Tensor fa = from_vector(DType::Float64, Dims{6}, {7.5, -7.5, 7.5, 1.0, -1.0, 5.0});
  Tensor fb = from_vector(DType::Float64, Dims{6}, {-2, 2, 0, 0.1, INFINITY, 0});
  std::vector<double> q = to_vector(run(Prim::floordiv, {fa, fb}));
  CHECK(q[0] == -4);
  CHECK(q[1] == -4);
  CHECK(q[2] == INFINITY);
  CHECK(q[3] == 9);  // 1.0 // 0.1 is 9 in Python: 0.1 is slightly more than a tenth
  CHECK(q[4] == -1);
  CHECK(q[5] == INFINITY);
  std::vector<double> m = to_vector(run(Prim::mod, {fa, fb}));
  CHECK(m[0] == -0.5);
  CHECK(m[1] == 0.5);
  CHECK(std::isnan(m[2]));
  CHECK(m[4] == INFINITY);
  // Wrap-around of integer arithmetic (NumPy): no UB, no saturation.
  Tensor big = i32({2147483647, -2147483648.0});
  CHECK(to_vector(run(Prim::add, {big, i32({1, -1})})) == std::vector<double>{-2147483648.0, 2147483647});
  CHECK(to_vector(run(Prim::mul, {big, i32({2, 2})})) == std::vector<double>{-2, 0});
  Tensor u = from_vector(DType::UInt8, Dims{2}, {3, 250});
  CHECK(to_vector(run(Prim::sub, {u, from_vector(DType::UInt8, Dims{2}, {5, 250})})) == std::vector<double>{254, 0});
  CHECK(to_vector(run(Prim::pow,
                      {from_vector(DType::Int8, Dims{3}, {2, -3, 3}), from_vector(DType::Int8, Dims{3}, {7, 3, 5})})) ==
        std::vector<double>{-128, -27, -13});
  // Bool arithmetic is logic (NumPy); true division of integers is float32.
  Tensor t = from_vector(DType::Bool, Dims{4}, {0, 0, 1, 1}), f = from_vector(DType::Bool, Dims{4}, {0, 1, 0, 1});
  CHECK(run(Prim::add, {t, f}).dtype() == DType::Bool);
  CHECK(to_vector(run(Prim::add, {t, f})) == std::vector<double>{0, 1, 1, 1});
  CHECK(to_vector(run(Prim::mul, {t, f})) == std::vector<double>{0, 0, 0, 1});
  Tensor d = run(Prim::div, {i32({7, -7, 1}), i32({2, 2, 0})});
  CHECK(d.dtype() == DType::Float32);
  CHECK(to_vector(d) == std::vector<double>{3.5, -3.5, INFINITY});
}

TEST_CASE("elementwise binary: errors are raised before anything is computed") {
  Tensor a(DType::Float32, Dims{3, 4}), b(DType::Float32, Dims{2, 4});
  std::memset(a.raw(), 0, a.nbytes());
  std::memset(b.raw(), 0, b.nbytes());
  size_t in_use = cpu_allocator_stats().bytes_in_use;
  CHECK_THROWS_WITH_AS(run(Prim::add, {a, b}), "add: cannot broadcast (3, 4) with (2, 4)", ShapeError);
  CHECK_THROWS_WITH_AS(run(Prim::less, {b, a}), "less: cannot broadcast (2, 4) with (3, 4)", ShapeError);
  CHECK(cpu_allocator_stats().bytes_in_use == in_use);
  Tensor t = from_vector(DType::Bool, Dims{2}, {1, 0});
  CHECK_THROWS_WITH_AS(run(Prim::sub, {t, t}), "sub: unsupported dtype Bool", DTypeError);
  CHECK_THROWS_AS(run(Prim::floordiv, {t, t}), DTypeError);
  CHECK_THROWS_AS(run(Prim::pow, {t, t}), DTypeError);
  CHECK_THROWS_AS(run(Prim::neg, {t}), DTypeError);
  // Integer division by zero, wherever the zero hides.
  Tensor x = from_vector(DType::Int32, Dims{2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor z = from_vector(DType::Int32, Dims{2, 3}, {1, 2, 3, 4, 0, 6});
  Tensor e64 = from_vector(DType::Int64, Dims{3}, {1, -1, 2});
  in_use = cpu_allocator_stats().bytes_in_use;
  CHECK_THROWS_WITH_AS(run(Prim::floordiv, {x, z}), "floordiv: integer division by zero", ZeroDivisionError);
  CHECK_THROWS_WITH_AS(run(Prim::mod, {x, z}), "mod: integer modulo by zero", ZeroDivisionError);
  CHECK(cpu_allocator_stats().bytes_in_use == in_use);
  CHECK_THROWS_AS(run(Prim::floordiv, {x, transposed_copy(z)}), ZeroDivisionError);
  CHECK_THROWS_AS(run(Prim::floordiv, {x, noncontiguous_copy(z)}), ZeroDivisionError);
  CHECK_THROWS_AS(run(Prim::floordiv, {x, Tensor::scalar(DType::Int64, 0)}), ZeroDivisionError);
  CHECK_THROWS_AS(run(Prim::mod, {x, from_vector(DType::Bool, Dims{3}, {1, 0, 1})}), ZeroDivisionError);
  CHECK_THROWS_AS(
      run(Prim::floordiv, {from_vector(DType::UInt8, Dims{1}, {4}), from_vector(DType::UInt8, Dims{1}, {0})}),
      ZeroDivisionError);
  CHECK_THROWS_WITH_AS(run(Prim::pow, {x, e64}), "pow: integers to negative integer powers are not allowed",
                       ValueError);
  CHECK(cpu_allocator_stats().bytes_in_use == in_use);
  // An empty result computes nothing, so nothing divides by zero.
  Tensor zrow = from_vector(DType::Int32, Dims{3}, {0, 1, 0});
  CHECK(run(Prim::floordiv, {Tensor(DType::Int32, Dims{0, 3}), zrow}).shape() == Dims{0, 3});
  // Float division by zero is IEEE.
  CHECK(to_vector(run(Prim::floordiv, {Tensor::scalar(DType::Float32, 1), Tensor::scalar(DType::Int32, 0)})) ==
        std::vector<double>{INFINITY});
}

// --------------------------------------------------------------- select

namespace {

void check_select(const Tensor& c, const Tensor& x, const Tensor& y) {
  Tensor got = run(Prim::select, {c, x, y});
  DType out = promote_types(x.dtype(), y.dtype());
  REQUIRE(got.dtype() == out);
  Dims shape = ref_broadcast(c.shape(), ref_broadcast(x.shape(), y.shape()));
  REQUIRE(got.shape() == shape);
  std::vector<double> want =
      ref_map({&c, &x, &y}, shape, [](const std::vector<double>& v) { return v[0] != 0 ? v[1] : v[2]; });
  expect_matches(got, want);
}

}  // namespace

TEST_CASE("select: every dtype, truthiness of any condition dtype, broadcasting of all three") {
  std::mt19937 rng(17);
  for (DType dx : all_dtypes()) {
    for (DType dy : all_dtypes()) {
      CAPTURE(dt_name(dx));
      CAPTURE(dt_name(dy));
      Tensor c = rand_for(rng, DType::Bool, Dims{3, 4});
      check_select(c, rand_for(rng, dx, Dims{3, 4}), rand_for(rng, dy, Dims{3, 4}));
      check_select(rand_for(rng, DType::Bool, Dims{3, 1}), rand_for(rng, dx, Dims{4}), rand_for(rng, dy, Dims{}));
    }
  }
  const double nan = std::nan("");
  for (DType dc : all_dtypes()) {
    CAPTURE(dt_name(dc));
    Tensor c = from_vector(dc, Dims{5}, {0, 1, 0, is_floating(dc) ? nan : 3, is_floating(dc) ? -0.5 : 0});
    check_select(c, rand_for(rng, DType::Float32, Dims{5}), rand_for(rng, DType::Float32, Dims{5}));
  }
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    const int64_t n = 2 * kParallelGrain + 3;
    check_select(rand_for(rng, DType::Bool, Dims{n}), rand_for(rng, DType::Float32, Dims{n}),
                 rand_for(rng, DType::Float64, Dims{}));
    check_select(transposed_copy(rand_for(rng, DType::Float32, Dims{5, 7})),
                 noncontiguous_copy(rand_for(rng, DType::Int64, Dims{5, 7})), rand_for(rng, DType::Int8, Dims{5, 1}));
    check_select(rand_for(rng, DType::Bool, Dims{0, 3}), rand_for(rng, DType::Float16, Dims{1, 3}),
                 rand_for(rng, DType::Float16, Dims{3}));
  }
  Tensor a(DType::Float32, Dims{2}), b(DType::Float32, Dims{3});
  CHECK_THROWS_WITH_AS(run(Prim::select, {Tensor::scalar(DType::Bool, 1), a, b}),
                       "select: cannot broadcast (2,) with (3,)", ShapeError);
}
