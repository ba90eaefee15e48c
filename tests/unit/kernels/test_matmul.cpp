// matmul against a float64 triple loop written here: every dtype, all four
// transpose combinations, NumPy batch broadcasting, strided and transposed
// views, size-0 and size-1 dimensions, integer wraparound and the errors.
//
// Floating-point results are compared with the error bound of a dot
// product: |got - want| <= rtol_out * |want| + rtol_sum * sum_k |a_ik b_kj|,
// where rtol_out is the output dtype's rounding and rtol_sum the
// accumulation precision. A plain relative test would fail spuriously where
// cancellation makes the result small.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

struct Ref {
  Dims shape;
  std::vector<double> value, abs_sum;
};

// Row-major index of `idx` (length r) into `shape` right-aligned to rank r,
// with size-1 dims broadcast.
int64_t bcast_index(const Dims& shape, const int64_t* idx, int r) {
  int64_t off = 0;
  int n = shape.size();
  for (int i = 0; i < n; ++i) {
    int64_t d = shape[i];
    off = off * d + (d == 1 ? 0 : idx[r - n + i]);
  }
  return off;
}

Ref reference(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  std::vector<double> av = to_vector(a), bv = to_vector(b);
  int ra = a.ndim(), rb = b.ndim();
  int64_t m = ta ? a.dim(ra - 1) : a.dim(ra - 2), k = ta ? a.dim(ra - 2) : a.dim(ra - 1);
  int64_t n = tb ? b.dim(rb - 2) : b.dim(rb - 1);
  int r = std::max(ra, rb);
  Ref out;
  Dims abatch, bbatch;
  for (int i = 0; i < ra - 2; ++i) abatch.push_back(a.dim(i));
  for (int i = 0; i < rb - 2; ++i) bbatch.push_back(b.dim(i));
  for (int i = 0; i < r - 2; ++i) {
    int ia = i - (r - ra), ib = i - (r - rb);
    int64_t da = ia >= 0 ? a.dim(ia) : 1, db = ib >= 0 ? b.dim(ib) : 1;
    out.shape.push_back(da == 1 ? db : da);
  }
  int64_t batches = out.shape.product();
  out.shape.push_back(m);
  out.shape.push_back(n);
  out.value.assign(static_cast<size_t>(out.shape.product()), 0.0);
  out.abs_sum = out.value;
  int64_t idx[8] = {};
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rem = bi;
    for (int i = r - 3; i >= 0; --i) {
      idx[i] = rem % out.shape[i];
      rem /= out.shape[i];
    }
    int64_t oa = bcast_index(abatch, idx, r - 2) * m * k, ob = bcast_index(bbatch, idx, r - 2) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0, as = 0;
        for (int64_t p = 0; p < k; ++p) {
          double x = av[static_cast<size_t>(oa + (ta ? p * m + i : i * k + p))];
          double y = bv[static_cast<size_t>(ob + (tb ? j * k + p : p * n + j))];
          s += x * y;
          as += std::fabs(x * y);
        }
        size_t o = static_cast<size_t>((bi * m + i) * n + j);
        out.value[o] = s;
        out.abs_sum[o] = as;
      }
  }
  return out;
}

Tensor run(const Tensor& a, const Tensor& b, bool ta = false, bool tb = false) {
  Tensor in[2] = {a, b};
  return execute1(Prim::matmul, in, Attrs{{"transpose_a", ta}, {"transpose_b", tb}});
}

// Output rounding and accumulation precision per dtype.
void precision(DType dt, double& out_rtol, double& sum_rtol) {
  switch (dt) {
    case DType::Float64: out_rtol = 0, sum_rtol = 1e-13; break;
    case DType::Float32: out_rtol = 0, sum_rtol = 2e-6; break;
    case DType::Float16: out_rtol = 1.0 / 2048, sum_rtol = 2e-6; break;
    case DType::BFloat16: out_rtol = 1.0 / 256, sum_rtol = 2e-6; break;
    default: out_rtol = 0, sum_rtol = 0; break;
  }
}

void check(const Tensor& a, const Tensor& b, bool ta, bool tb) {
  Tensor got = run(a, b, ta, tb);
  Ref want = reference(a, b, ta, tb);
  REQUIRE(got.shape() == want.shape);
  CHECK(got.dtype() == a.dtype());
  std::vector<double> g = to_vector(got);
  double out_rtol, sum_rtol;
  precision(a.dtype(), out_rtol, sum_rtol);
  for (size_t i = 0; i < g.size(); ++i) {
    double tol = out_rtol * std::fabs(want.value[i]) + sum_rtol * want.abs_sum[i];
    if (!(std::fabs(g[i] - want.value[i]) <= tol)) {
      INFO("element " << i << " of " << got.shape().str() << ": got " << g[i] << ", want " << want.value[i]);
      CHECK(false);
      return;
    }
  }
}

// Stored shape of an operand whose op() has shape [..., r, c].
Dims stored(Dims batch, int64_t r, int64_t c, bool t) {
  batch.push_back(t ? c : r);
  batch.push_back(t ? r : c);
  return batch;
}

const DType kAllTypes[] = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int32, DType::Int64};

}  // namespace

TEST_CASE("matmul 2-D: every dtype, transpose flags and sizes") {
  std::mt19937 rng(7);
  const int64_t sizes[][3] = {{1, 1, 1}, {3, 5, 7}, {17, 33, 9}, {64, 128, 48}, {1, 40, 1}, {40, 1, 30}};
  for (DType dt : kAllTypes)
    for (auto& s : sizes)
      for (int t = 0; t < 4; ++t) {
        bool ta = t & 1, tb = t & 2;
        CAPTURE(dtype_name(dt));
        CAPTURE(s[0]);
        CAPTURE(s[1]);
        CAPTURE(s[2]);
        CAPTURE(t);
        Tensor a = random_tensor(rng, dt, stored({}, s[0], s[1], ta));
        Tensor b = random_tensor(rng, dt, stored({}, s[1], s[2], tb));
        check(a, b, ta, tb);
      }
}

TEST_CASE("matmul blocks: sizes that cross the packing and tile boundaries") {
  std::mt19937 rng(8);
  for (DType dt : {DType::Float64, DType::Float32, DType::Int64}) {
    CAPTURE(dtype_name(dt));
    check(random_tensor(rng, dt, {101, 200}), random_tensor(rng, dt, {200, 530}), false, false);
    check(random_tensor(rng, dt, {200, 101}), random_tensor(rng, dt, {530, 200}), true, true);
  }
}

TEST_CASE("matmul batch broadcasting") {
  std::mt19937 rng(9);
  struct Case {
    Dims ab, bb;
  };
  const Case cases[] = {{{2, 1}, {5}}, {{}, {3}}, {{4}, {}}, {{2, 3}, {2, 3}}, {{1, 3}, {2, 1}}, {{2, 1, 2}, {3, 1}}};
  for (DType dt : kAllTypes)
    for (auto& c : cases)
      for (int t = 0; t < 4; ++t) {
        bool ta = t & 1, tb = t & 2;
        CAPTURE(dtype_name(dt));
        CAPTURE(c.ab.str());
        CAPTURE(c.bb.str());
        CAPTURE(t);
        Tensor a = random_tensor(rng, dt, stored(c.ab, 3, 4, ta));
        Tensor b = random_tensor(rng, dt, stored(c.bb, 4, 6, tb));
        check(a, b, ta, tb);
      }
}

TEST_CASE("matmul on strided, transposed and sliced views") {
  std::mt19937 rng(10);
  for (DType dt : kAllTypes) {
    CAPTURE(dtype_name(dt));
    // Every other element of a bigger buffer (no unit stride at all).
    Tensor a = noncontiguous_copy(random_tensor(rng, dt, {2, 9, 13}));
    Tensor b = noncontiguous_copy(random_tensor(rng, dt, {13, 7}));
    check(a, b, false, false);
    check(b, a, true, true);
    // A transposed view (column-major) without the transpose flag.
    Tensor base = random_tensor(rng, dt, {13, 9});
    Tensor at = Tensor::view(base, {9, 13}, {1, 9}, 0);
    check(at, b, false, false);
    // Column slices: rows with a leading dimension larger than the width.
    Tensor wide = random_tensor(rng, dt, {9, 20});
    Tensor sl = Tensor::view(wide, {9, 13}, {20, 1}, 3);
    check(sl, b, false, false);
    check(b, sl, true, true);
    // Batch dims with a gap between batches, and a batch-inner layout.
    Tensor big = random_tensor(rng, dt, {3, 9, 20});
    Tensor gapped = Tensor::view(big, {3, 9, 13}, {180, 20, 1}, 2);
    check(gapped, random_tensor(rng, dt, {3, 13, 5}), false, false);
    Tensor inner = random_tensor(rng, dt, {9, 3, 13});
    Tensor perm = Tensor::view(inner, {3, 9, 13}, {13, 39, 1}, 0);
    check(perm, random_tensor(rng, dt, {1, 13, 5}), false, false);
    // Broadcast views with zero strides, as broadcast_to makes them.
    Tensor one = random_tensor(rng, dt, {1, 9, 13});
    check(Tensor::view(one, {3, 9, 13}, {0, 13, 1}, 0), b, false, false);
    Tensor col = random_tensor(rng, dt, {9, 1});
    check(Tensor::view(col, {9, 13}, {1, 0}, 0), b, false, false);
  }
}

TEST_CASE("matmul size-0 dimensions: empty results, and zeros when K is 0") {
  std::mt19937 rng(11);
  for (DType dt : kAllTypes) {
    CAPTURE(dtype_name(dt));
    Tensor r = run(random_tensor(rng, dt, {0, 4}), random_tensor(rng, dt, {4, 3}));
    CHECK(r.shape() == Dims{0, 3});
    r = run(random_tensor(rng, dt, {2, 4}), random_tensor(rng, dt, {4, 0}));
    CHECK(r.shape() == Dims{2, 0});
    r = run(random_tensor(rng, dt, {0, 2, 4}), random_tensor(rng, dt, {4, 3}));
    CHECK(r.shape() == Dims{0, 2, 3});
    r = run(random_tensor(rng, dt, {2, 3, 0}), random_tensor(rng, dt, {0, 5}));
    CHECK(r.shape() == Dims{2, 3, 5});
    CHECK(to_vector(r) == std::vector<double>(30, 0.0));
    r = run(random_tensor(rng, dt, {0, 3}), random_tensor(rng, dt, {0, 5}), true, false);
    CHECK(r.shape() == Dims{3, 5});
    CHECK(to_vector(r) == std::vector<double>(15, 0.0));
  }
}

TEST_CASE("matmul integer arithmetic wraps around") {
  Tensor a = from_vector(DType::Int32, {1, 2}, {65536, 3});
  Tensor b = from_vector(DType::Int32, {2, 1}, {65536, -5});
  // 2^32 - 15 wraps to -15 in int32.
  CHECK(to_vector(run(a, b)) == std::vector<double>{-15});
  Tensor c = from_vector(DType::Int64, {1, 1}, {4294967296.0});
  CHECK(to_vector(run(c, c)) == std::vector<double>{0});  // 2^64 wraps to 0
}

TEST_CASE("matmul float16 keeps extreme and subnormal values exact through its float32 copies") {
  // a @ I == a: every product is exact, so the float16 bits must survive.
  std::vector<double> vals{65504, -65504, std::ldexp(1.0, -24), -std::ldexp(3.0, -24), 6.103515625e-05, 0.333251953125,
                           -2.5, 1000.5, 3, -7.5, 1, 0};
  Tensor a = from_vector(DType::Float16, {3, 4}, vals);
  std::vector<double> eye(16, 0.0);
  for (int i = 0; i < 4; ++i) eye[static_cast<size_t>(i * 5)] = 1;
  Tensor got = run(a, from_vector(DType::Float16, {4, 4}, eye));
  CHECK(to_vector(got) == vals);
  // Results beyond the float16 range round to infinity.
  Tensor big = from_vector(DType::Float16, {1, 2}, {60000, 60000});
  Tensor ones = from_vector(DType::Float16, {2, 1}, {1, 1});
  CHECK(std::isinf(to_vector(run(big, ones))[0]));
}

TEST_CASE("matmul gives the same results when the thread count changes") {
  std::mt19937 rng(12);
  Tensor a = random_tensor(rng, DType::Float32, {70, 90}), b = random_tensor(rng, DType::Float32, {90, 50});
  std::vector<double> full = to_vector(run(a, b));
  set_num_threads(1);
  std::vector<double> one = to_vector(run(a, b));
  set_num_threads(0);
  check_close(one, full, 1e-5, 1e-5);
  check(a, b, false, false);
}

TEST_CASE("matmul errors") {
  std::mt19937 rng(13);
  Tensor a = random_tensor(rng, DType::Float32, {2, 3}), b = random_tensor(rng, DType::Float32, {4, 5});
  CHECK_THROWS_WITH_AS(run(a, b), "matmul: contracting dimensions differ: (2, 3) @ (4, 5)", ShapeError);
  CHECK_THROWS_WITH_AS(run(a, a, false, false), "matmul: contracting dimensions differ: (2, 3) @ (2, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(run(a, b, true, false),
                       "matmul: contracting dimensions differ: (2, 3) @ (4, 5) (transpose_a=True, transpose_b=False)",
                       ShapeError);
  Tensor v = random_tensor(rng, DType::Float32, {3});
  CHECK_THROWS_WITH_AS(run(v, a), "matmul: operands must have rank >= 2, got (3,) @ (2, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(run(a, Tensor::scalar(DType::Float32, 2)),
                       "matmul: operands must have rank >= 2, got (2, 3) @ ()", ShapeError);
  Tensor d = random_tensor(rng, DType::Float64, {3, 4});
  CHECK_THROWS_WITH_AS(run(a, d), "matmul: operands must have the same dtype, got Float32 and Float64", DTypeError);
  Tensor bo = random_tensor(rng, DType::Bool, {2, 2});
  CHECK_THROWS_WITH_AS(run(bo, bo), "matmul: unsupported dtype Bool", DTypeError);
  Tensor i8 = random_tensor(rng, DType::Int8, {2, 2});
  CHECK_THROWS_WITH_AS(run(i8, i8), "matmul: unsupported dtype Int8", DTypeError);
  Tensor x = random_tensor(rng, DType::Float32, {2, 2, 3}), y = random_tensor(rng, DType::Float32, {3, 3, 4});
  CHECK_THROWS_WITH_AS(run(x, y), "matmul: batch dimensions of (2, 2, 3) and (3, 3, 4) do not broadcast", ShapeError);
}
