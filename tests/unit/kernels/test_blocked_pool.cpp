// max_pool2d and max_pool2d_grad with a `layout` attribute (channel-blocked
// operands, kernels/blocked_layout.h): against the same ops on plain NCHW
// tensors (which test_pool.cpp checks against float64 reference loops) and
// against a float64 reference written here on the blocked offsets
// themselves, exactly (max pooling only selects and routes values). Inputs
// hold integer values with many repeats, so windows have tied maxima and
// the first-maximum rule decides where dy goes. Both block sizes, tiled,
// overlapping, padded and odd geometries, strided inputs, empty batches,
// the float64 / bfloat16 fallback through plain copies, and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include "kernels/errors.h"
#include "blocked_test_util.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

Tensor run(Prim p, std::vector<Tensor> in, const Attrs& attrs) { return execute1(p, in, attrs); }

struct PoolCase {
  Dims x;
  int64_t kh, kw, sh, sw;
  std::vector<int64_t> padding;
  std::string mode;
};

// 2x2/2 tiling the plane, a ResNet stem's 3x3/2 'same', 3x3/1 pad 1,
// 3x3/2 pad 1 and a 'same' on odd sizes, an asymmetric 2x3 'valid' window
// with unequal strides, and 2x2/2 with a row and a column left over.
const PoolCase kCases[] = {
    {{2, 32, 8, 8}, 2, 2, 2, 2, {0}, "pad"},  {{2, 32, 16, 16}, 3, 3, 2, 2, {0}, "same"},
    {{2, 16, 7, 7}, 3, 3, 1, 1, {1}, "pad"},  {{3, 16, 9, 7}, 3, 3, 2, 2, {1}, "pad"},
    {{2, 16, 7, 5}, 3, 3, 2, 2, {0}, "same"}, {{1, 32, 5, 11}, 2, 3, 2, 1, {0}, "valid"},
    {{2, 16, 9, 7}, 2, 2, 2, 2, {0}, "pad"},
};

Attrs pool_attrs(const PoolCase& k, int64_t b) {
  Attrs a{{"kernel_size", std::vector<int64_t>{k.kh, k.kw}},
          {"stride", std::vector<int64_t>{k.sh, k.sw}},
          {"padding", k.padding},
          {"pad_mode", k.mode}};
  if (b) a.set("layout", std::string(layout_of_block(b)));
  return a;
}

// Integer values in [lo, hi): with [-3, 3) most windows hold a repeated
// maximum; as dy, [1, 256) keeps the sums of overlapping windows exact in
// every dtype, so that which maximum got dy shows in dx.
Tensor integer_tensor(std::mt19937& rng, DType dt, const Dims& shape, double lo = -3, double hi = 3) {
  std::vector<double> v = to_vector(random_tensor(rng, DType::Float64, shape, lo, hi));
  for (double& e : v) e = std::floor(e);
  return from_vector(dt, shape, v);
}

// The reference max pooling of the blocked tensor xb (contiguous, [N, C/b,
// H, W, b]) read through the layout's offsets: each lane's first maximum in
// row-major window order, given the window's top-left corner (padding
// included) per output pixel. Returns y (blocked) and, for dyb, dx
// (blocked).
struct Ref {
  std::vector<double> y, dx;
};

Ref reference(const Tensor& xb, const Tensor& dyb, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t pt,
              int64_t pl) {
  const Dims& s = xb.shape();
  const Dims& ys = dyb.shape();
  int64_t planes = s[0] * s[1], h = s[2], w = s[3], b = s[4], ho = ys[2], wo = ys[3];
  Ref r{std::vector<double>(static_cast<size_t>(dyb.numel())), std::vector<double>(static_cast<size_t>(xb.numel()))};
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < ho; ++oh)
      for (int64_t ow = 0; ow < wo; ++ow)
        for (int64_t l = 0; l < b; ++l) {
          int64_t best = -1;
          for (int64_t i = oh * sh - pt; i < oh * sh - pt + kh; ++i)
            for (int64_t j = ow * sw - pl; j < ow * sw - pl + kw; ++j) {
              if (i < 0 || i >= h || j < 0 || j >= w) continue;
              int64_t at = ((p * h + i) * w + j) * b + l;
              if (best < 0 || xb.item_at(at) > xb.item_at(best)) best = at;
            }
          int64_t yi = ((p * ho + oh) * wo + ow) * b + l;
          r.y[static_cast<size_t>(yi)] = xb.item_at(best);
          r.dx[static_cast<size_t>(best)] += dyb.item_at(yi);
        }
  return r;
}

// Blocked max_pool2d and max_pool2d_grad equal the plain ops on the same
// values, and inference agrees with the kernels' shapes.
void check_case(const PoolCase& k, int64_t b, DType dt, std::mt19937& rng) {
  CAPTURE(k.x.str());
  CAPTURE(k.kh);
  CAPTURE(k.sh);
  CAPTURE(k.mode);
  CAPTURE(b);
  CAPTURE(dtype_name(dt));
  Tensor x = integer_tensor(rng, dt, k.x);
  Tensor y = run(Prim::max_pool2d, {x}, pool_attrs(k, 0));
  const Dims& ys = y.shape();
  Tensor dy = integer_tensor(rng, dt, ys, 1, 256);
  Tensor dx = run(Prim::max_pool2d_grad, {x, dy}, pool_attrs(k, 0));
  Tensor xb = to_blocked(x, b), dyb = to_blocked(dy, b);
  Attrs ab = pool_attrs(k, b);

  Tensor yb = run(Prim::max_pool2d, {xb}, ab);
  CHECK(yb.dtype() == dt);
  CHECK(yb.shape() == Dims{ys[0], ys[1] / b, ys[2], ys[3], b});
  CHECK(to_vector(from_blocked(yb)) == to_vector(y));
  Tensor dxb = run(Prim::max_pool2d_grad, {xb, dyb}, ab);
  CHECK(dxb.dtype() == dt);
  CHECK(dxb.shape() == xb.shape());
  CHECK(to_vector(from_blocked(dxb)) == to_vector(dx));
  // Strided blocked operands give the same results.
  CHECK(to_vector(run(Prim::max_pool2d, {noncontiguous_copy(xb)}, ab)) == to_vector(yb));
  CHECK(to_vector(run(Prim::max_pool2d_grad, {noncontiguous_copy(xb), noncontiguous_copy(dyb)}, ab)) == to_vector(dxb));

  std::vector<TensorSpec> specs;
  std::vector<TensorSpec> fwd_in{xb.spec()}, bwd_in{xb.spec(), dyb.spec()};
  infer(Prim::max_pool2d, fwd_in, ab, specs);
  CHECK(specs[0].shape == yb.shape());
  infer(Prim::max_pool2d_grad, bwd_in, ab, specs);
  CHECK(specs[0].shape == xb.shape());
}

}  // namespace

TEST_CASE("blocked max pooling: float32 matches the plain ops exactly, both block sizes") {
  std::mt19937 rng(21);
  for (const PoolCase& k : kCases)
    for (int64_t b : {16, 8}) check_case(k, b, DType::Float32, rng);
  // Enough planes to be split across threads.
  check_case(PoolCase{{8, 64, 16, 16}, 3, 3, 2, 2, {0}, "same"}, 16, DType::Float32, rng);
}

TEST_CASE("blocked max pooling: float64 and bfloat16 through plain copies") {
  std::mt19937 rng(22);
  for (DType dt : {DType::Float64, DType::BFloat16})
    for (int i : {1, 2, 5})
      for (int64_t b : {16, 8}) check_case(kCases[i], b, dt, rng);
}

TEST_CASE("blocked max pooling: the first maximum of each lane gets dy (reference on blocked offsets)") {
  std::mt19937 rng(23);
  // The stem's 3x3/2 'same' on [2, 32, 16, 16] pads one row and column at
  // the bottom and right (total padding 1, split 0 before); 3x3/1 pad 1.
  struct Geometry {
    const PoolCase& k;
    int64_t pt, pl;
  };
  for (const Geometry& c : {Geometry{kCases[1], 0, 0}, Geometry{kCases[2], 1, 1}, Geometry{kCases[0], 0, 0}})
    for (int64_t b : {16, 8}) {
      CAPTURE(c.k.x.str());
      CAPTURE(b);
      Tensor xb = to_blocked(integer_tensor(rng, DType::Float32, c.k.x), b);
      Attrs ab = pool_attrs(c.k, b);
      Tensor yb = run(Prim::max_pool2d, {xb}, ab);
      Tensor dyb = integer_tensor(rng, DType::Float32, yb.shape(), 1, 256);
      Ref want = reference(xb, dyb, c.k.kh, c.k.kw, c.k.sh, c.k.sw, c.pt, c.pl);
      CHECK(to_vector(yb) == want.y);
      CHECK(to_vector(run(Prim::max_pool2d_grad, {xb, dyb}, ab)) == want.dx);
    }
}

TEST_CASE("blocked max pooling: ties by hand, all-negative values and NaN") {
  // One 2x2 window (kernel 2, stride 2) over [1, 8, 2, 2] blocked by 8:
  // lane l sees the row-major window values v[l][0..3].
  const double v[8][4] = {{1, 1, 1, 1}, {0, 2, 2, 0}, {-1, -3, -1, -2},  {-5, -4, -4, -6},
                          {3, 1, 2, 3}, {0, 0, 0, 7}, {-0.0, 0.0, 0, 0}, {2, 1, 0, -1}};
  const int winner[8] = {0, 1, 0, 1, 0, 3, 0, 0};
  std::vector<double> xv(32), dyv(8);
  for (int l = 0; l < 8; ++l) {
    for (int e = 0; e < 4; ++e) xv[static_cast<size_t>(e * 8 + l)] = v[l][e];
    dyv[static_cast<size_t>(l)] = 10 + l;
  }
  Tensor xb = from_vector(DType::Float32, Dims{1, 1, 2, 2, 8}, xv);
  Tensor dyb = from_vector(DType::Float32, Dims{1, 1, 1, 1, 8}, dyv);
  Attrs a{{"kernel_size", int64_t{2}}, {"stride", int64_t{2}}, {"layout", std::string("nChw8c")}};
  std::vector<double> y = to_vector(run(Prim::max_pool2d, {xb}, a));
  std::vector<double> dx = to_vector(run(Prim::max_pool2d_grad, {xb, dyb}, a));
  for (int l = 0; l < 8; ++l) {
    CAPTURE(l);
    CHECK(y[static_cast<size_t>(l)] == v[l][winner[l]]);
    for (int e = 0; e < 4; ++e) CHECK(dx[static_cast<size_t>(e * 8 + l)] == (e == winner[l] ? 10 + l : 0));
  }
  // A NaN after the first element never wins (strict >), as in the plain loop.
  xv[8 + 3] = std::numeric_limits<double>::quiet_NaN();
  xb = from_vector(DType::Float32, Dims{1, 1, 2, 2, 8}, xv);
  dx = to_vector(run(Prim::max_pool2d_grad, {xb, dyb}, a));
  CHECK(dx[3] == 0);
  CHECK(dx[16 + 3] == 13);
}

TEST_CASE("blocked max pooling: empty batches and an empty layout") {
  Attrs a{{"kernel_size", int64_t{2}}, {"stride", int64_t{2}}, {"layout", std::string("nChw16c")}};
  Tensor xb(DType::Float32, Dims{0, 2, 4, 4, 16}), dyb(DType::Float32, Dims{0, 2, 2, 2, 16});
  CHECK(run(Prim::max_pool2d, {xb}, a).shape() == Dims{0, 2, 2, 2, 16});
  CHECK(run(Prim::max_pool2d_grad, {xb, dyb}, a).shape() == xb.shape());
  // layout "" is plain NCHW.
  std::mt19937 rng(24);
  Tensor x = random_tensor(rng, DType::Float32, Dims{1, 3, 4, 4});
  Attrs plain{{"kernel_size", int64_t{2}}, {"stride", int64_t{2}}};
  Attrs empty = plain;
  empty.set("layout", std::string(""));
  CHECK(to_vector(run(Prim::max_pool2d, {x}, empty)) == to_vector(run(Prim::max_pool2d, {x}, plain)));
}

TEST_CASE("blocked max pooling: errors name the op") {
  Attrs a16{{"kernel_size", int64_t{2}}, {"stride", int64_t{2}}, {"layout", std::string("nChw16c")}};
  Tensor x(DType::Float32, Dims{2, 16, 4, 4}), dy(DType::Float32, Dims{2, 16, 2, 2});
  Tensor x16 = to_blocked(x, 16), x8 = to_blocked(x, 8), dy16 = to_blocked(dy, 16);
  CHECK_THROWS_WITH_AS(
      run(Prim::max_pool2d, {x}, a16),
      "max_pool2d: with layout nChw16c the input must be blocked (N, C/16, H, W, 16), got (2, 16, 4, 4)", ShapeError);
  CHECK_THROWS_WITH_AS(run(Prim::max_pool2d, {x8}, a16),
                       "max_pool2d: the input (2, 2, 4, 4, 8) has blocks of 8 channels but layout nChw16c has 16",
                       ShapeError);
  CHECK_THROWS_WITH_AS(
      run(Prim::max_pool2d_grad, {x16, dy}, a16),
      "max_pool2d_grad: with layout nChw16c the dy must be blocked (N, C/16, H, W, 16), got (2, 16, 2, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(
      run(Prim::max_pool2d_grad, {x, dy16}, a16),
      "max_pool2d_grad: with layout nChw16c the input must be blocked (N, C/16, H, W, 16), got (2, 16, "
      "4, 4)",
      ShapeError);
  // dy of the wrong spatial size.
  CHECK_THROWS_AS(run(Prim::max_pool2d_grad, {x16, to_blocked(Tensor(DType::Float32, Dims{2, 16, 3, 2}), 16)}, a16),
                  ShapeError);
  Attrs bad = a16;
  bad.set("layout", std::string("nhwc"));
  CHECK_THROWS_WITH_AS(run(Prim::max_pool2d, {x16}, bad),
                       "max_pool2d: layout must be \"\", \"nChw16c\" or \"nChw8c\", got \"nhwc\"", ValueError);
  // Without a layout a rank-5 input is refused.
  Attrs plain{{"kernel_size", int64_t{2}}, {"stride", int64_t{2}}};
  CHECK_THROWS_AS(run(Prim::max_pool2d, {x16}, plain), ShapeError);
  // Inference raises the same errors.
  std::vector<TensorSpec> specs;
  std::vector<TensorSpec> in{x.spec()};
  CHECK_THROWS_AS(infer(Prim::max_pool2d, in, a16, specs), ShapeError);
  std::vector<TensorSpec> grad_in{x16.spec(), dy.spec()};
  CHECK_THROWS_AS(infer(Prim::max_pool2d_grad, grad_in, a16, specs), ShapeError);
}
