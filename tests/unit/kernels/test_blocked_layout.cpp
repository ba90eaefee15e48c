// The channel-blocked activation layout (kernels/blocked_layout.h):
// to_blocked / from_blocked against offsets computed here from the layout's
// definition, and conv2d, its gradients, batch_norm and batch_norm_grad
// with a `layout` attribute against the same ops on plain NCHW tensors
// (which test_conv.cpp and test_batch_norm.cpp check against float64
// reference loops), for both block sizes, mixed plain/blocked operands,
// float64 and the error cases.
#include <doctest/doctest.h>

#include <string>

#include "kernels/errors.h"
#include "blocked_test_util.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

std::vector<Tensor> run(Prim p, std::vector<Tensor> in, const Attrs& attrs) {
  std::vector<Tensor> out;
  execute(p, in, attrs, out);
  return out;
}

// Flat index of logical (n, c, h, w) in an nChw{b}c tensor of logical
// shape [N, C, H, W]: the layout's definition.
int64_t blocked_index(const Dims& s, int64_t b, int64_t n, int64_t c, int64_t h, int64_t w) {
  return (((n * (s[1] / b) + c / b) * s[2] + h) * s[3] + w) * b + c % b;
}

// Checks that `blocked` holds the values of the plain tensor `plain` at the
// layout's offsets.
void check_placement(const Tensor& plain, const Tensor& blocked, int64_t b) {
  const Dims& s = plain.shape();
  REQUIRE(blocked.shape() == Dims{s[0], s[1] / b, s[2], s[3], b});
  Tensor flat = blocked.contiguous();
  bool ok = true;
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t c = 0; c < s[1]; ++c)
      for (int64_t h = 0; h < s[2]; ++h)
        for (int64_t w = 0; w < s[3]; ++w) {
          int64_t plain_flat = ((n * s[1] + c) * s[2] + h) * s[3] + w;
          if (flat.item_at(blocked_index(s, b, n, c, h, w)) != plain.item_at(plain_flat)) ok = false;
        }
  CHECK(ok);
}

struct ConvCase {
  Dims x, w;
  int64_t stride = 1, pad = 0;
};

Attrs conv_attrs(const ConvCase& k, int64_t b, const char* shape_name = nullptr, const Dims* shape = nullptr) {
  Attrs a{{"stride", std::vector<int64_t>{k.stride, k.stride}},
          {"padding", std::vector<int64_t>{k.pad}},
          {"dilation", std::vector<int64_t>{1, 1}},
          {"groups", int64_t{1}},
          {"pad_mode", std::string("pad")}};
  if (b) a.set("layout", std::string(layout_of_block(b)));
  if (shape_name) a.set(shape_name, std::vector<int64_t>(shape->begin(), shape->end()));
  return a;
}

// The geometries graph mode blocks in a ResNet: 3x3 pad 1, a strided 3x3, a
// 1x1 projection, the stem (3-channel plain image, blocked output), a 3x3
// layer on single pixels (the single-tap matmul path) and a 1x1 on them.
const ConvCase kConvCases[] = {
    {{2, 16, 7, 7}, {16, 16, 3, 3}, 1, 1}, {{2, 32, 9, 9}, {32, 32, 3, 3}, 2, 1}, {{2, 32, 6, 6}, {16, 32, 1, 1}, 1, 0},
    {{2, 3, 12, 12}, {16, 3, 7, 7}, 2, 3}, {{4, 32, 1, 1}, {32, 32, 3, 3}, 1, 1}, {{3, 16, 1, 1}, {32, 16, 1, 1}, 1, 0},
    {{2, 64, 8, 8}, {64, 64, 3, 3}, 1, 1},
    // Few output pixels (the weight gradient as one matrix product over an
    // im2col that reads the blocked operands): 2x2, 2x2 to 1x1, 4x4 to 2x2.
    {{4, 32, 2, 2}, {32, 32, 3, 3}, 1, 1}, {{3, 16, 2, 2}, {32, 16, 3, 3}, 2, 1}, {{2, 16, 4, 4}, {16, 16, 3, 3}, 2, 1},
};

// Tolerance of results from different algorithms (Winograd, direct, GEMM)
// relative to the plain op's: the sums have up to ~600 O(1) terms.
double conv_tol(DType dt) { return dt == DType::Float64 ? 1e-12 : 2e-4; }

void check_conv_case(const ConvCase& k, int64_t b, DType dt, std::mt19937& rng) {
  CAPTURE(k.x.str());
  CAPTURE(k.w.str());
  CAPTURE(b);
  CAPTURE(dtype_name(dt));
  Tensor x = random_tensor(rng, dt, k.x), w = random_tensor(rng, dt, k.w);
  bool x_blockable = k.x[1] % b == 0;
  Tensor xb = x_blockable ? to_blocked(x, b) : x;
  double tol = conv_tol(dt);

  // Forward: the output is always blocked.
  Tensor y = run(Prim::conv2d, {x, w}, conv_attrs(k, 0))[0];
  Tensor yb = run(Prim::conv2d, {xb, w}, conv_attrs(k, b))[0];
  const Dims& ys = y.shape();
  CHECK(yb.shape() == Dims{ys[0], ys[1] / b, ys[2], ys[3], b});
  check_close(to_vector(from_blocked(yb)), to_vector(y), tol, tol);
  // A strided blocked input gives the same result.
  if (x_blockable) {
    Tensor ys_strided = run(Prim::conv2d, {noncontiguous_copy(xb), w}, conv_attrs(k, b))[0];
    check_close(to_vector(from_blocked(ys_strided)), to_vector(y), tol, tol);
  }
  // Inference agrees with the kernel.
  std::vector<TensorSpec> specs;
  std::vector<TensorSpec> in_specs{xb.spec(), w.spec()};
  infer(Prim::conv2d, in_specs, conv_attrs(k, b), specs);
  CHECK(specs[0].shape == yb.shape());

  Tensor dy = random_tensor(rng, dt, ys), dyb = to_blocked(dy, b);
  // Backprop input: blocked dx from a blocked (or plain) dy.
  Attrs bpi_plain = conv_attrs(k, 0, "input_shape", &k.x), bpi_blk = conv_attrs(k, b, "input_shape", &k.x);
  Tensor dx = run(Prim::conv2d_backprop_input, {dy, w}, bpi_plain)[0];
  if (x_blockable) {
    for (const Tensor& d : {dyb, dy}) {
      Tensor dxb = run(Prim::conv2d_backprop_input, {d, w}, bpi_blk)[0];
      check_placement(from_blocked(dxb), dxb, b);
      check_close(to_vector(from_blocked(dxb)), to_vector(dx), tol, tol);
    }
  } else {
    CHECK_THROWS_AS(run(Prim::conv2d_backprop_input, {dyb, w}, bpi_blk), ShapeError);
  }
  // Backprop filter: a plain dw from any mix of blocked and plain operands.
  Attrs bpf_plain = conv_attrs(k, 0, "filter_shape", &k.w), bpf_blk = conv_attrs(k, b, "filter_shape", &k.w);
  Tensor dw = run(Prim::conv2d_backprop_filter, {dy, x}, bpf_plain)[0];
  std::vector<std::pair<Tensor, Tensor>> mixes{{dyb, x}};
  if (x_blockable) mixes.insert(mixes.end(), {{dyb, xb}, {dy, xb}});
  for (auto& [d, xx] : mixes) {
    Tensor dwb = run(Prim::conv2d_backprop_filter, {d, xx}, bpf_blk)[0];
    CHECK(dwb.shape() == k.w);
    // dw sums over N*Ho*Wo terms: scale the absolute tolerance.
    check_close(to_vector(dwb), to_vector(dw), tol, tol * 4);
  }
}

Attrs bn_attrs(bool training, int64_t b) {
  Attrs a{{"training", training}, {"epsilon", 1e-3}};
  if (b) a.set("layout", std::string(layout_of_block(b)));
  return a;
}

Attrs bn_grad_attrs(int64_t b) {
  Attrs a{{"epsilon", 1e-3}};
  if (b) a.set("layout", std::string(layout_of_block(b)));
  return a;
}

}  // namespace

TEST_CASE("blocked layout: to_blocked and from_blocked place elements at nChw16c / nChw8c offsets") {
  std::mt19937 rng(7);
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32})
    for (int64_t b : {8, 16, 4}) {
      CAPTURE(dtype_name(dt));
      CAPTURE(b);
      Dims xs{2, 2 * b, 3, 5};
      Tensor x = random_tensor(rng, dt, xs, -100, 100);
      Tensor y = to_blocked(x, b);
      CHECK(y.dtype() == dt);
      check_placement(x, y, b);
      // One offset by hand: (n, c, h, w) = (1, b + 3, 2, 4) in [2, 2b, 3, 5]
      // is ((((1*2 + 1)*3 + 2)*5 + 4)*b + 3 = 59b + 3.
      CHECK(y.item_at(59 * b + 3) == x.item_at(((1 * 2 * b + b + 3) * 3 + 2) * 5 + 4));
      // Round trip, and a strided blocked input to from_blocked.
      CHECK(to_vector(from_blocked(y)) == to_vector(x));
      CHECK(to_vector(from_blocked(noncontiguous_copy(y))) == to_vector(x));
      // Strided plain inputs: every-other-element and channels-last views.
      check_placement(x, to_blocked(noncontiguous_copy(x), b), b);
      Tensor nhwc(dt, Dims{xs[0], xs[2], xs[3], xs[1]});
      Tensor nchw_view = Tensor::view(nhwc, xs, Dims{xs[1] * xs[2] * xs[3], 1, xs[3] * xs[1], xs[1]}, 0);
      copy_strided(x, nchw_view);
      check_placement(x, to_blocked(nchw_view, b), b);
    }
}

TEST_CASE("blocked layout: to_blocked and from_blocked errors") {
  Tensor x(DType::Float32, Dims{2, 12, 3, 3});
  CHECK_THROWS_WITH_AS(to_blocked(x, 8), "to_blocked: block 8 does not divide the 12 channels of the input (2, 12, 3, 3)",
                       ShapeError);
  CHECK_THROWS_AS(to_blocked(x, 0), ValueError);
  CHECK_THROWS_AS(to_blocked(Tensor(DType::Float32, Dims{2, 16, 3}), 8), ShapeError);
  CHECK_THROWS_AS(from_blocked(x), ShapeError);
  CHECK(to_blocked(Tensor(DType::Float32, Dims{0, 16, 3, 3}), 16).shape() == Dims{0, 1, 3, 3, 16});
}

TEST_CASE("blocked layout: conv2d and its gradients match the plain ops, float32, both block sizes") {
  std::mt19937 rng(11);
  for (const ConvCase& k : kConvCases)
    for (int64_t b : {16, 8}) check_conv_case(k, b, DType::Float32, rng);
}

TEST_CASE("blocked layout: conv2d and its gradients in float64 (the fallback path)") {
  std::mt19937 rng(12);
  for (int i : {0, 1, 3, 4}) check_conv_case(kConvCases[i], 8, DType::Float64, rng);
}

TEST_CASE("blocked layout: batch_norm and batch_norm_grad match the plain ops") {
  std::mt19937 rng(13);
  for (DType dt : {DType::Float32, DType::Float64})
    for (int64_t b : {16, 8})
      for (const Dims& xs : {Dims{4, 32, 5, 5}, Dims{3, 16, 1, 1}}) {
        CAPTURE(dtype_name(dt));
        CAPTURE(b);
        CAPTURE(xs.str());
        Dims cs{xs[1]};
        Tensor x = random_tensor(rng, dt, xs, -3, 3), dy = random_tensor(rng, dt, xs);
        Tensor g = random_tensor(rng, dt, cs, 0.5, 2), beta = random_tensor(rng, dt, cs);
        Tensor m = random_tensor(rng, dt, cs, -1, 1), v = random_tensor(rng, dt, cs, 0.5, 2);
        Tensor xb = to_blocked(x, b), dyb = to_blocked(dy, b);
        double tol = dt == DType::Float64 ? 1e-12 : 2e-5;
        for (bool training : {true, false}) {
          CAPTURE(training);
          auto plain = run(Prim::batch_norm, {x, g, beta, m, v}, bn_attrs(training, 0));
          auto blk = run(Prim::batch_norm, {xb, g, beta, m, v}, bn_attrs(training, b));
          CHECK(blk[0].shape() == xb.shape());
          CHECK(blk[1].shape() == cs);
          check_close(to_vector(from_blocked(blk[0])), to_vector(plain[0]), tol, tol);
          check_close(to_vector(blk[1]), to_vector(plain[1]), tol, tol);
          check_close(to_vector(blk[2]), to_vector(plain[2]), tol, tol);
        }
        auto stats = run(Prim::batch_norm, {x, g, beta, m, v}, bn_attrs(true, 0));
        auto plain = run(Prim::batch_norm_grad, {dy, x, g, stats[1], stats[2]}, bn_grad_attrs(0));
        auto blk = run(Prim::batch_norm_grad, {dyb, xb, g, stats[1], stats[2]}, bn_grad_attrs(b));
        CHECK(blk[0].shape() == xb.shape());
        check_close(to_vector(from_blocked(blk[0])), to_vector(plain[0]), tol, 4 * tol);
        check_close(to_vector(blk[1]), to_vector(plain[1]), tol, 4 * tol * std::sqrt(double(xs.product())));
        check_close(to_vector(blk[2]), to_vector(plain[2]), tol, 4 * tol * std::sqrt(double(xs.product())));
      }
}

TEST_CASE("blocked layout: a blocked conv2d -> batch_norm -> conv2d chain equals the plain one") {
  std::mt19937 rng(14);
  Tensor x = random_tensor(rng, DType::Float32, Dims{2, 3, 16, 16});
  Tensor w1 = random_tensor(rng, DType::Float32, Dims{32, 3, 3, 3}, -0.5, 0.5);
  Tensor w2 = random_tensor(rng, DType::Float32, Dims{16, 32, 3, 3}, -0.2, 0.2);
  Dims cs{32};
  Tensor g = random_tensor(rng, DType::Float32, cs, 0.5, 2), beta = random_tensor(rng, DType::Float32, cs);
  Tensor m = Tensor::zeros(DType::Float32, cs), v = Tensor::zeros(DType::Float32, cs);
  ConvCase k{Dims{}, Dims{}, 1, 1};
  auto chain = [&](int64_t b) {
    Tensor y = run(Prim::conv2d, {x, w1}, conv_attrs(k, b))[0];
    y = run(Prim::batch_norm, {y, g, beta, m, v}, bn_attrs(true, b))[0];
    return run(Prim::conv2d, {y, w2}, conv_attrs(k, b))[0];
  };
  Tensor plain = chain(0);
  for (int64_t b : {16, 8}) check_close(to_vector(from_blocked(chain(b))), to_vector(plain), 1e-4, 1e-4);
}

TEST_CASE("blocked layout: errors name the op") {
  ConvCase k{Dims{2, 16, 5, 5}, Dims{24, 16, 3, 3}, 1, 1};
  Tensor x(DType::Float32, k.x), w(DType::Float32, k.w);
  // 24 output channels are not a multiple of 16 (but are of 8).
  CHECK_THROWS_WITH_AS(run(Prim::conv2d, {to_blocked(x, 16), w}, conv_attrs(k, 16)),
                       "conv2d: layout nChw16c needs the output's channels to be a multiple of 16, got (2, 24, 5, 5)",
                       ShapeError);
  CHECK(run(Prim::conv2d, {to_blocked(x, 8), w}, conv_attrs(k, 8))[0].shape() == Dims{2, 3, 5, 5, 8});
  // A block mismatch between the operand and the attribute.
  CHECK_THROWS_WITH_AS(run(Prim::conv2d, {to_blocked(x, 8), w}, conv_attrs(k, 16)),
                       "conv2d: the input (2, 2, 5, 5, 8) has blocks of 8 channels but layout nChw16c has 16",
                       ShapeError);
  Dims ws16{16, 16, 3, 3};
  Tensor dy(DType::Float32, Dims{2, 16, 5, 5});
  CHECK_THROWS_AS(run(Prim::conv2d_backprop_filter, {to_blocked(dy, 8), to_blocked(x, 16)},
                      conv_attrs(k, 16, "filter_shape", &ws16)),
                  ShapeError);
  // Without a layout a rank-5 input is still refused by conv2d.
  CHECK_THROWS_AS(run(Prim::conv2d, {to_blocked(x, 8), w}, conv_attrs(k, 0)), ShapeError);
  Attrs bad = conv_attrs(k, 0);
  bad.set("layout", std::string("nhwc"));
  CHECK_THROWS_WITH_AS(run(Prim::conv2d, {x, w}, bad),
                       "conv2d: layout must be \"\", \"nChw16c\" or \"nChw8c\", got \"nhwc\"", ValueError);

  Dims cs{16};
  Tensor p = Tensor::zeros(DType::Float32, cs);
  CHECK_THROWS_WITH_AS(run(Prim::batch_norm, {x, p, p, p, p}, bn_attrs(true, 16)),
                       "batch_norm: with layout nChw16c the x must be blocked (N, C/16, H, W, 16), got (2, 16, 5, 5)",
                       ShapeError);
  CHECK_THROWS_AS(run(Prim::batch_norm, {to_blocked(x, 8), p, p, p, p}, bn_attrs(true, 16)), ShapeError);
  CHECK_THROWS_AS(run(Prim::batch_norm_grad, {x, to_blocked(x, 16), p, p, p}, bn_grad_attrs(16)), ShapeError);
  // Without a layout, rank 5 keeps its NCDHW meaning: 2 channels here.
  Tensor x5 = to_blocked(x, 8);
  Tensor p2 = Tensor::zeros(DType::Float32, Dims{2});
  CHECK(run(Prim::batch_norm, {x5, p2, p2, p2, p2}, bn_attrs(true, 0))[0].shape() == x5.shape());
}

TEST_CASE("blocked layout: float16 and bfloat16 keep the layout through their float32 copies") {
  std::mt19937 rng(15);
  ConvCase k{Dims{2, 16, 6, 6}, Dims{16, 16, 3, 3}, 1, 1};
  Dims cs{16};
  for (DType dt : {DType::Float16, DType::BFloat16}) {
    CAPTURE(dtype_name(dt));
    // Results round to the dtype once; differently ordered float32 sums may
    // round to neighbouring values.
    double rtol = dt == DType::Float16 ? 2e-3 : 1.6e-2, atol = dt == DType::Float16 ? 2e-2 : 0.15;
    Tensor x = random_tensor(rng, dt, k.x), w = random_tensor(rng, dt, k.w);
    Tensor y = run(Prim::conv2d, {x, w}, conv_attrs(k, 0))[0];
    Tensor yb = run(Prim::conv2d, {to_blocked(x, 16), w}, conv_attrs(k, 16))[0];
    CHECK(yb.dtype() == dt);
    check_close(to_vector(from_blocked(yb)), to_vector(y), rtol, atol);
    Tensor g = random_tensor(rng, DType::Float32, cs, 0.5, 2), beta = random_tensor(rng, DType::Float32, cs);
    Tensor m = Tensor::zeros(DType::Float32, cs), v = Tensor::zeros(DType::Float32, cs);
    auto plain = run(Prim::batch_norm, {x, g, beta, m, v}, bn_attrs(true, 0));
    auto blk = run(Prim::batch_norm, {to_blocked(x, 16), g, beta, m, v}, bn_attrs(true, 16));
    check_close(to_vector(from_blocked(blk[0])), to_vector(plain[0]), rtol, rtol);
    check_close(to_vector(blk[1]), to_vector(plain[1]), 1e-5, 1e-5);
  }
}
