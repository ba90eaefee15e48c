// The fused inference convolutions (kernels/dnnl_fused.cpp) with a
// `layout` attribute: conv2d_bias, conv2d_bn and conv2d_bn_add taking plain
// or channel-blocked x (and residual) and giving blocked results, against
// the same ops without the attribute (which test_fused_contraction.cpp
// checks against float64 loops). Both block sizes, ReLU on and off, the
// geometries of a ResNet (3x3, stride 2, 1x1, the plain 3-channel stem, a
// single pixel), strided blocked inputs, the few-channel route (no oneDNN)
// and the error cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "blocked_test_util.h"
#include "kernels/errors.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

Tensor run(Prim p, std::vector<Tensor> in, const Attrs& attrs) { return execute1(p, in, attrs); }

struct Geometry {
  const char* name;
  Dims x, w;
  int64_t stride, pad;
};

// A ResNet's convolutions: body 3x3, a downsampling 3x3 and 1x1, a 1x1
// projection, the stem (3 input channels, 7x7 stride 2), a single pixel
// (the last stage at small images) and a few-channel 3x3 (the direct
// kernel, not oneDNN).
const Geometry kGeometries[] = {
    {"3x3 pad 1", {2, 32, 7, 7}, {32, 32, 3, 3}, 1, 1},  {"3x3 stride 2", {2, 16, 9, 9}, {32, 16, 3, 3}, 2, 1},
    {"1x1", {2, 32, 5, 5}, {16, 32, 1, 1}, 1, 0},        {"1x1 stride 2", {1, 16, 6, 6}, {32, 16, 1, 1}, 2, 0},
    {"stem 7x7", {2, 3, 20, 20}, {16, 3, 7, 7}, 2, 3},   {"H=W=1", {3, 32, 1, 1}, {16, 32, 3, 3}, 1, 1},
    {"few channels", {2, 3, 9, 9}, {16, 3, 3, 3}, 1, 1},
};

Attrs conv_attrs(const Geometry& g, const char* act, const char* layout, bool bn) {
  Attrs a{{"stride", std::vector<int64_t>{g.stride, g.stride}},
          {"padding", std::vector<int64_t>{g.pad}},
          {"dilation", std::vector<int64_t>{1, 1}},
          {"groups", int64_t(1)},
          {"pad_mode", std::string("pad")},
          {"activation", std::string(act)}};
  if (bn) a.set("epsilon", 1e-3);
  if (layout) a.set("layout", std::string(layout));
  return a;
}

Dims output_shape(const Geometry& g) {
  int64_t ho = (g.x[2] + 2 * g.pad - g.w[2]) / g.stride + 1, wo = (g.x[3] + 2 * g.pad - g.w[3]) / g.stride + 1;
  return {g.x[0], g.w[0], ho, wo};
}

// Elementwise within float tolerance of `want` (the unblocked op's result);
// both routes sum the same products, possibly in a different order.
void check_same(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  std::vector<double> g = to_vector(got), w = to_vector(want);
  double scale = 1;
  for (double v : w) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < g.size(); ++i)
    if (std::fabs(g[i] - w[i]) > 1e-5 * scale) {
      INFO("element " << i << ": got " << g[i] << ", want " << w[i]);
      CHECK(false);
      return;
    }
}

// Runs `p` on `in` without a layout and with layout of block b, x (and
// the residual, input 6) given blocked where `blocked_x` (`blocked_res`),
// and checks the blocked result against the plain one.
void check_layout(Prim p, const Geometry& g, std::vector<Tensor> in, int64_t b, bool relu, bool blocked_x,
                  bool blocked_res, bool strided_x = false) {
  bool bn = p != Prim::conv2d_bias;
  const char* act = relu ? "relu" : "none";
  Tensor want = run(p, in, conv_attrs(g, act, nullptr, bn));
  if (blocked_x) in[0] = to_blocked(in[0], b);
  if (strided_x) in[0] = noncontiguous_copy(in[0]);
  if (blocked_res) in[6] = to_blocked(in[6], b);
  Tensor got = run(p, in, conv_attrs(g, act, layout_of_block(b), bn));
  Dims y = output_shape(g);
  REQUIRE(got.shape() == Dims{y[0], y[1] / b, y[2], y[3], b});
  check_same(from_blocked(got), want);
  if (relu) {
    std::vector<double> w = to_vector(want);
    CHECK(std::count(w.begin(), w.end(), 0.0) > 0);  // ReLU clipped something
  }
}

// Batch-norm parameters for `o` channels (positive variances).
std::vector<Tensor> bn_params(std::mt19937& rng, int64_t o) {
  return {random_tensor(rng, DType::Float32, Dims{o}), random_tensor(rng, DType::Float32, Dims{o}),
          random_tensor(rng, DType::Float32, Dims{o}), random_tensor(rng, DType::Float32, Dims{o}, 0.1, 3)};
}

}  // namespace

TEST_CASE("conv2d_bias with a layout: blocked results equal the plain op's, every geometry and block") {
  std::mt19937 rng(41);
  for (const Geometry& g : kGeometries)
    for (int64_t b : {16, 8})
      for (bool relu : {false, true}) {
        bool blocked_x = g.x[1] % b == 0;
        INFO(g.name << " b=" << b << " relu=" << relu << " blocked x=" << blocked_x);
        Tensor x = random_tensor(rng, DType::Float32, g.x), w = random_tensor(rng, DType::Float32, g.w);
        Tensor bias = random_tensor(rng, DType::Float32, Dims{g.w[0]});
        check_layout(Prim::conv2d_bias, g, {x, w, bias}, b, relu, blocked_x, false);
        // A plain x under the layout too (the stem's case for every geometry).
        if (blocked_x) check_layout(Prim::conv2d_bias, g, {x, w, bias}, b, relu, false, false);
      }
}

TEST_CASE("conv2d_bn with a layout: blocked results equal the plain op's, every geometry and block") {
  std::mt19937 rng(42);
  for (const Geometry& g : kGeometries)
    for (int64_t b : {16, 8})
      for (bool relu : {false, true}) {
        bool blocked_x = g.x[1] % b == 0;
        INFO(g.name << " b=" << b << " relu=" << relu << " blocked x=" << blocked_x);
        std::vector<Tensor> in{random_tensor(rng, DType::Float32, g.x), random_tensor(rng, DType::Float32, g.w)};
        for (Tensor& t : bn_params(rng, g.w[0])) in.push_back(t);
        check_layout(Prim::conv2d_bn, g, in, b, relu, blocked_x, false);
      }
}

TEST_CASE("conv2d_bn_add with a layout: plain and blocked residuals, every geometry and block") {
  std::mt19937 rng(43);
  for (const Geometry& g : kGeometries)
    for (int64_t b : {16, 8})
      for (bool relu : {false, true})
        for (bool blocked_res : {false, true}) {
          bool blocked_x = g.x[1] % b == 0;
          INFO(g.name << " b=" << b << " relu=" << relu << " blocked x=" << blocked_x
                      << " blocked residual=" << blocked_res);
          std::vector<Tensor> in{random_tensor(rng, DType::Float32, g.x), random_tensor(rng, DType::Float32, g.w)};
          for (Tensor& t : bn_params(rng, g.w[0])) in.push_back(t);
          in.push_back(random_tensor(rng, DType::Float32, output_shape(g)));
          check_layout(Prim::conv2d_bn_add, g, in, b, relu, blocked_x, blocked_res);
        }
}

TEST_CASE("fused convolutions with a layout: strided blocked inputs and a strided plain residual") {
  std::mt19937 rng(44);
  const Geometry& g = kGeometries[0];
  std::vector<Tensor> in{random_tensor(rng, DType::Float32, g.x), random_tensor(rng, DType::Float32, g.w)};
  for (Tensor& t : bn_params(rng, g.w[0])) in.push_back(t);
  in.push_back(random_tensor(rng, DType::Float32, output_shape(g)));
  for (int64_t b : {16, 8}) {
    INFO("b=" << b);
    check_layout(Prim::conv2d_bn_add, g, in, b, true, true, true, true);
    std::vector<Tensor> strided_res = in;
    strided_res[6] = noncontiguous_copy(in[6]);
    check_layout(Prim::conv2d_bn_add, g, strided_res, b, false, true, false);
  }
}

TEST_CASE("fused convolutions with a layout: the result's values sit at the blocked offsets") {
  // A 1x1 convolution with identity weights and a bias of 100*c: output
  // element (n, c, h, w) is x(n, c, h, w) + 100*c, read here straight from
  // the nChw8c memory without from_blocked.
  const int64_t c = 16, h = 2, w = 3, b = 8;
  std::vector<double> xv, wv(c * c, 0.0), bv;
  for (int64_t i = 0; i < c * h * w; ++i) xv.push_back(double(i % 7) - 3);
  for (int64_t i = 0; i < c; ++i) wv[i * c + i] = 1, bv.push_back(100.0 * double(i));
  Tensor x = from_vector(DType::Float32, Dims{1, c, h, w}, xv);
  Tensor out = run(Prim::conv2d_bias,
                   {x, from_vector(DType::Float32, Dims{c, c, 1, 1}, wv), from_vector(DType::Float32, Dims{c}, bv)},
                   conv_attrs(Geometry{"1x1", {1, c, h, w}, {c, c, 1, 1}, 1, 0}, "none", "nChw8c", false));
  REQUIRE(out.shape() == Dims{1, c / b, h, w, b});
  std::vector<double> got = to_vector(out);
  bool ok = true;
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t i = 0; i < h * w; ++i)
      ok = ok && got[((ch / b) * h * w + i) * b + ch % b] == xv[ch * h * w + i] + 100.0 * double(ch);
  CHECK(ok);
}

TEST_CASE("fused convolutions with a layout: an empty reduction gives act(bias), blocked") {
  // No input channels: every output element is the empty sum plus the bias.
  Geometry g{"empty", {2, 0, 3, 3}, {16, 0, 3, 3}, 1, 1};
  std::vector<double> bv;
  for (int64_t c = 0; c < 16; ++c) bv.push_back(double(c) - 7.5);
  Tensor out = run(Prim::conv2d_bias,
                   {Tensor(DType::Float32, Dims{2, 0, 3, 3, 16}), Tensor(DType::Float32, g.w),
                    from_vector(DType::Float32, Dims{16}, bv)},
                   conv_attrs(g, "relu", "nChw16c", false));
  REQUIRE(out.shape() == Dims{2, 1, 3, 3, 16});
  std::vector<double> got = to_vector(out);
  bool ok = true;
  for (size_t i = 0; i < got.size(); ++i) ok = ok && got[i] == std::max(0.0, bv[i % 16]);
  CHECK(ok);
}

TEST_CASE("fused convolutions with a layout: shape inference and errors") {
  const Geometry g{"3x3", {1, 16, 5, 5}, {16, 16, 3, 3}, 1, 1};
  Tensor c16(DType::Float32, Dims{16});
  Tensor x16(DType::Float32, Dims{1, 1, 5, 5, 16}), x8(DType::Float32, Dims{1, 2, 5, 5, 8});
  Tensor w(DType::Float32, Dims{16, 16, 3, 3});
  Attrs bn16 = conv_attrs(g, "relu", "nChw16c", true);
  // Inference gives the blocked spec for blocked and plain inputs.
  TensorSpec in[7] = {TensorSpec{DType::Float32, x16.shape()},      TensorSpec{DType::Float32, w.shape()},
                      TensorSpec{DType::Float32, Dims{16}},         TensorSpec{DType::Float32, Dims{16}},
                      TensorSpec{DType::Float32, Dims{16}},         TensorSpec{DType::Float32, Dims{16}},
                      TensorSpec{DType::Float32, Dims{1, 16, 5, 5}}};
  std::vector<TensorSpec> out;
  infer(Prim::conv2d_bn_add, in, bn16, out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape == Dims{1, 1, 5, 5, 16});
  in[0].shape = Dims{1, 16, 5, 5};
  infer(Prim::conv2d_bn_add, in, conv_attrs(g, "none", "nChw8c", true), out);
  REQUIRE(out.size() == 1);
  CHECK(out[0].shape == Dims{1, 2, 5, 5, 8});

  // O % b: 12 output channels do not fill blocks of 8.
  CHECK_THROWS_WITH_AS(
      run(Prim::conv2d_bias, {x8, Tensor(DType::Float32, Dims{12, 16, 3, 3}), Tensor(DType::Float32, Dims{12})},
          conv_attrs(g, "none", "nChw8c", false)),
      "conv2d_bias: layout nChw8c needs the output's channels to be a multiple of 8, got (1, 12, 5, 5)", ShapeError);
  // An input blocked by 8 under nChw16c.
  CHECK_THROWS_WITH_AS(run(Prim::conv2d_bn, {x8, w, c16, c16, c16, c16}, bn16),
                       "conv2d_bn: the input (1, 2, 5, 5, 8) has blocks of 8 channels but layout nChw16c has 16",
                       ShapeError);
  // Residuals: another block, another logical shape (plain and blocked),
  // a 3-D tensor.
  CHECK_THROWS_WITH_AS(run(Prim::conv2d_bn_add, {x16, w, c16, c16, c16, c16, x8}, bn16),
                       "conv2d_bn_add: the residual (1, 2, 5, 5, 8) has blocks of 8 channels but layout nChw16c has 16",
                       ShapeError);
  CHECK_THROWS_WITH_AS(
      run(Prim::conv2d_bn_add, {x16, w, c16, c16, c16, c16, Tensor(DType::Float32, Dims{1, 16, 5, 4})}, bn16),
      "conv2d_bn_add: the residual must have the result's logical shape (1, 16, 5, 5), got (1, 16, 5, 4)", ShapeError);
  CHECK_THROWS_WITH_AS(
      run(Prim::conv2d_bn_add, {x16, w, c16, c16, c16, c16, Tensor(DType::Float32, Dims{2, 1, 5, 5, 16})}, bn16),
      "conv2d_bn_add: the residual must have the result's logical shape (1, 16, 5, 5), got (2, 1, 5, 5, 16)",
      ShapeError);
  CHECK_THROWS_AS(run(Prim::conv2d_bn_add, {x16, w, c16, c16, c16, c16, Tensor(DType::Float32, Dims{16, 5, 5})}, bn16),
                  ShapeError);
  // A 3-D input, an unknown layout, a float64 blocked input.
  CHECK_THROWS_AS(
      run(Prim::conv2d_bias, {Tensor(DType::Float32, Dims{16, 5, 5}), w, c16}, conv_attrs(g, "none", "nChw16c", false)),
      ShapeError);
  CHECK_THROWS_WITH_AS(run(Prim::conv2d_bias, {x16, w, c16}, conv_attrs(g, "none", "nhwc", false)),
                       "conv2d_bias: layout must be \"\", \"nChw16c\" or \"nChw8c\", got \"nhwc\"", ValueError);
  CHECK_THROWS_AS(run(Prim::conv2d_bias, {Tensor(DType::Float64, Dims{1, 1, 5, 5, 16}), w, c16},
                      conv_attrs(g, "none", "nChw16c", false)),
                  DTypeError);
}
