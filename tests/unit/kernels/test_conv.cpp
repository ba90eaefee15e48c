// conv2d, conv2d_backprop_input and conv2d_backprop_filter against direct
// float64 loops written here, over a grid of strides, paddings (symmetric,
// asymmetric, 'valid', 'same'), dilations, groups (1, 2, depthwise), odd
// sizes and batch sizes; plus strided inputs, every float dtype, empty
// dimensions, a finite-difference check of both gradients through conv2d
// in float64, and the error messages.
//
// Tolerances use the dot-product error bound: the error of an f32 sum is
// bounded relative to sum |x_i w_i|, not to the (possibly cancelling) sum.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

struct Conf {
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, groups = 1;
  std::vector<int64_t> padding{0};
  std::string mode = "pad";
};

Attrs attrs_of(const Conf& c) {
  return Attrs{{"stride", std::vector<int64_t>{c.sh, c.sw}},
               {"dilation", std::vector<int64_t>{c.dh, c.dw}},
               {"padding", c.padding},
               {"groups", c.groups},
               {"pad_mode", c.mode}};
}

// Output size and leading padding along one axis, computed independently of
// the kernel library (MindSpore's rules).
void axis(const Conf& c, int64_t in, int64_t k, int64_t s, int64_t d, int64_t plo, int64_t phi, int64_t& out,
          int64_t& lo) {
  int64_t eff = d * (k - 1) + 1;
  if (c.mode == "same") {
    out = (in + s - 1) / s;
    int64_t need = std::max<int64_t>(0, (out - 1) * s + eff - in);
    lo = need / 2;
  } else if (c.mode == "valid") {
    out = (in - eff) / s + 1;
    lo = 0;
  } else {
    out = (in + plo + phi - eff) / s + 1;
    lo = plo;
  }
}

struct Geo {
  int64_t n, c, h, w, o, cg, og, kh, kw, ho, wo, pt, pl;
};

Geo geo_of(const Conf& cf, const Dims& xs, const Dims& ws) {
  Geo g{xs[0], xs[1], xs[2], xs[3], ws[0], ws[1], ws[0] / cf.groups, ws[2], ws[3], 0, 0, 0, 0};
  std::vector<int64_t> p = cf.padding;
  int64_t t = p[0], b = p.size() == 4 ? p[1] : p[0];
  int64_t l = p.size() == 4 ? p[2] : p.size() == 2 ? p[1] : p[0], r = p.size() == 4 ? p[3] : l;
  axis(cf, g.h, g.kh, cf.sh, cf.dh, t, b, g.ho, g.pt);
  axis(cf, g.w, g.kw, cf.sw, cf.dw, l, r, g.wo, g.pl);
  return g;
}

// Calls f(n, o, oh, ow, c, i, j, ih, iw) for every in-bounds product term of
// the convolution, with c the input channel (absolute) and ci its index
// within the group (the weight's second dim).
template <class F>
void each_term(const Conf& cf, const Geo& g, F&& f) {
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o) {
      int64_t grp = o / g.og;
      for (int64_t oh = 0; oh < g.ho; ++oh)
        for (int64_t ow = 0; ow < g.wo; ++ow)
          for (int64_t ci = 0; ci < g.cg; ++ci)
            for (int64_t i = 0; i < g.kh; ++i)
              for (int64_t j = 0; j < g.kw; ++j) {
                int64_t ih = oh * cf.sh - g.pt + i * cf.dh, iw = ow * cf.sw - g.pl + j * cf.dw;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                f(n, o, oh, ow, grp * g.cg + ci, ci, i, j, ih, iw);
              }
    }
}

struct Want {
  std::vector<double> value, abs_sum;
};

enum class Op { Fwd, BwdInput, BwdFilter };

// The reference result of `op` for conv(x, w) = y, given x, w and dy.
Want reference(Op op, const Conf& cf, const Dims& xs, const Dims& ws, const std::vector<double>& x,
               const std::vector<double>& w, const std::vector<double>& dy) {
  Geo g = geo_of(cf, xs, ws);
  size_t size = static_cast<size_t>(op == Op::Fwd        ? g.n * g.o * g.ho * g.wo
                                    : op == Op::BwdInput ? xs.product()
                                                         : ws.product());
  Want r{std::vector<double>(size, 0.0), std::vector<double>(size, 0.0)};
  each_term(cf, g,
            [&](int64_t n, int64_t o, int64_t oh, int64_t ow, int64_t c, int64_t ci, int64_t i, int64_t j, int64_t ih,
                int64_t iw) {
              size_t xi = static_cast<size_t>(((n * g.c + c) * g.h + ih) * g.w + iw);
              size_t wi = static_cast<size_t>(((o * g.cg + ci) * g.kh + i) * g.kw + j);
              size_t yi = static_cast<size_t>(((n * g.o + o) * g.ho + oh) * g.wo + ow);
              double t;
              size_t at;
              switch (op) {
                case Op::Fwd: t = x[xi] * w[wi], at = yi; break;
                case Op::BwdInput: t = dy[yi] * w[wi], at = xi; break;
                default: t = dy[yi] * x[xi], at = wi; break;
              }
              r.value[at] += t;
              r.abs_sum[at] += std::fabs(t);
            });
  return r;
}

Tensor conv(const Tensor& x, const Tensor& w, const Attrs& a) {
  Tensor in[2] = {x, w};
  return execute1(Prim::conv2d, in, a);
}

Tensor bwd_input(const Tensor& dy, const Tensor& w, const Dims& xs, Attrs a) {
  a.set("input_shape", xs.vec());
  Tensor in[2] = {dy, w};
  return execute1(Prim::conv2d_backprop_input, in, a);
}

Tensor bwd_filter(const Tensor& dy, const Tensor& x, const Dims& ws, Attrs a) {
  a.set("filter_shape", ws.vec());
  Tensor in[2] = {dy, x};
  return execute1(Prim::conv2d_backprop_filter, in, a);
}

void precision(DType dt, double& out_rtol, double& sum_rtol) {
  switch (dt) {
    case DType::Float64: out_rtol = 0, sum_rtol = 1e-13; break;
    case DType::Float32: out_rtol = 0, sum_rtol = 1e-5; break;
    case DType::Float16: out_rtol = 1.0 / 2048, sum_rtol = 1e-5; break;
    default: out_rtol = 1.0 / 256, sum_rtol = 1e-5; break;
  }
}

void compare(const Tensor& got, const Dims& shape, const Want& want, DType dt) {
  REQUIRE(got.shape() == shape);
  CHECK(got.dtype() == dt);
  std::vector<double> g = to_vector(got);
  double out_rtol, sum_rtol;
  precision(dt, out_rtol, sum_rtol);
  for (size_t i = 0; i < g.size(); ++i) {
    double tol = out_rtol * std::fabs(want.value[i]) + sum_rtol * want.abs_sum[i];
    if (!(std::fabs(g[i] - want.value[i]) <= tol)) {
      INFO("element " << i << " of " << shape.str() << ": got " << g[i] << ", want " << want.value[i]);
      CHECK(false);
      return;
    }
  }
}

// All three ops of one configuration against the reference.
void check_all(std::mt19937& rng, DType dt, const Conf& cf, const Dims& xs, const Dims& ws, bool strided = false) {
  Tensor x = random_tensor(rng, dt, xs), w = random_tensor(rng, dt, ws);
  Geo g = geo_of(cf, xs, ws);
  Dims ys{g.n, g.o, g.ho, g.wo};
  Tensor dy = random_tensor(rng, dt, ys);
  std::vector<double> xv = to_vector(x), wv = to_vector(w), dyv = to_vector(dy);
  if (strided) x = noncontiguous_copy(x), w = noncontiguous_copy(w), dy = noncontiguous_copy(dy);
  Attrs a = attrs_of(cf);
  compare(conv(x, w, a), ys, reference(Op::Fwd, cf, xs, ws, xv, wv, dyv), dt);
  compare(bwd_input(dy, w, xs, a), xs, reference(Op::BwdInput, cf, xs, ws, xv, wv, dyv), dt);
  compare(bwd_filter(dy, x, ws, a), ws, reference(Op::BwdFilter, cf, xs, ws, xv, wv, dyv), dt);
}

// The window configurations of the grid.
std::vector<Conf> grid() {
  std::vector<Conf> out;
  const std::vector<std::vector<int64_t>> pads{{0}, {1}, {0, 1, 2, 1}};
  for (int64_t s : {1, 2})
    for (int64_t d : {1, 2})
      for (int mode = 0; mode < 5; ++mode) {
        Conf c;
        c.sh = s, c.sw = s == 2 && d == 2 ? 1 : s;  // also a non-square stride
        c.dh = d, c.dw = d;
        if (mode < 3) c.padding = pads[static_cast<size_t>(mode)];
        c.mode = mode == 3 ? "valid" : mode == 4 ? "same" : "pad";
        out.push_back(c);
      }
  return out;
}

}  // namespace

TEST_CASE("conv2d and its gradients over the window grid, float32 and float64") {
  std::mt19937 rng(21);
  int k = 0;
  for (DType dt : {DType::Float32, DType::Float64})
    for (const Conf& base : grid())
      for (int64_t groups : {1, 2, 4}) {
        Conf cf = base;
        cf.groups = groups;
        int64_t n = (k++ % 2) ? 2 : 1;
        // 4 input channels; groups 4 is depthwise with multiplier 2.
        Dims xs{n, 4, 7, 9}, ws{groups == 4 ? 8 : 6, 4 / groups, 3, 2};
        CAPTURE(dtype_name(dt));
        CAPTURE(attrs_of(cf).str());
        CAPTURE(xs.str());
        CAPTURE(ws.str());
        check_all(rng, dt, cf, xs, ws);
      }
}

TEST_CASE("conv2d at sizes where oneDNN uses its blocked and Winograd kernels") {
  std::mt19937 rng(22);
  Conf same;
  same.padding = {1};
  // 3x3 stride 1 with 64 channels: the layer shape of ResNet blocks, at a
  // batch where oneDNN takes Winograd for the forward and backprop_input.
  check_all(rng, DType::Float32, same, {2, 64, 10, 12}, {64, 64, 3, 3});
  check_all(rng, DType::Float32, same, {16, 64, 16, 16}, {64, 64, 3, 3});
  Conf s2;
  s2.sh = s2.sw = 2;
  s2.mode = "same";
  check_all(rng, DType::Float32, s2, {3, 32, 15, 13}, {48, 32, 3, 3});
  // A first layer (1 or 3 input channels, the direct kernel): LeNet's, and
  // one with padding, rows wider than a vector block and output channels
  // not a multiple of 8.
  Conf valid;
  valid.mode = "valid";
  check_all(rng, DType::Float32, valid, {3, 1, 32, 32}, {6, 1, 5, 5});
  Conf pad2;
  pad2.padding = {2};
  check_all(rng, DType::Float32, pad2, {2, 3, 20, 37}, {10, 3, 5, 5});
  check_all(rng, DType::Float32, pad2, {2, 3, 20, 37}, {10, 3, 5, 5}, true);
  Conf one;  // 1x1 projections
  check_all(rng, DType::Float32, one, {2, 48, 7, 7}, {80, 48, 1, 1});
  check_all(rng, DType::Float64, same, {2, 16, 10, 12}, {24, 16, 3, 3});
}

TEST_CASE("conv2d of single pixels: one live tap, run as matrix products") {
  std::mt19937 rng(23);
  Conf same;  // the centre tap
  same.padding = {1};
  check_all(rng, DType::Float32, same, {32, 40, 1, 1}, {24, 40, 3, 3});
  check_all(rng, DType::Float32, same, {3, 40, 1, 1}, {24, 40, 3, 3}, true);
  Conf one;  // a 1x1 kernel: the weight gradient is the product itself
  check_all(rng, DType::Float32, one, {5, 33, 1, 1}, {17, 33, 1, 1});
  Conf dilated;  // tap (1, 1) of a dilated kernel
  dilated.dh = dilated.dw = 2;
  dilated.padding = {2};
  check_all(rng, DType::Float32, dilated, {4, 16, 1, 1}, {8, 16, 3, 3});
  Conf corner;  // top 2, bottom 0, left 0, right 2: tap (2, 0)
  corner.padding = {2, 0, 0, 2};
  corner.sh = corner.sw = 2;
  check_all(rng, DType::Float32, corner, {2, 16, 1, 1}, {20, 16, 3, 3});
  Conf grouped;  // groups stay with oneDNN
  grouped.padding = {1};
  grouped.groups = 2;
  check_all(rng, DType::Float32, grouped, {2, 16, 1, 1}, {8, 8, 3, 3});
  // Mixed precision's bfloat16 (a ResNet-18 last stage at batch 32) and
  // float16 (where oneDNN's matmul takes it; otherwise its convolution).
  check_all(rng, DType::BFloat16, same, {32, 64, 1, 1}, {48, 64, 3, 3});
  check_all(rng, DType::BFloat16, one, {5, 33, 1, 1}, {17, 33, 1, 1});
  check_all(rng, DType::Float16, same, {4, 32, 1, 1}, {16, 32, 3, 3});
}

TEST_CASE("conv2d weight gradients of few output pixels: one matrix product over an im2col") {
  std::mt19937 rng(31);
  Conf same;  // 2x2 maps, 3x3 kernel: every tap partly in the padding
  same.padding = {1};
  Conf s2;  // 2x2 to 1x1, stride 2 (ResNet's strided entry, MindSpore's "same")
  s2.sh = s2.sw = 2;
  s2.mode = "same";
  Conf wide;  // a 3x5 map strided to 2x2 (4 pixels), asymmetric padding
  wide.sh = wide.sw = 2;
  wide.padding = {1, 0, 2, 1};
  for (DType dt : {DType::Float32, DType::BFloat16}) {
    CAPTURE(dtype_name(dt));
    check_all(rng, dt, same, {8, 24, 2, 2}, {20, 24, 3, 3});
    check_all(rng, dt, s2, {6, 16, 2, 2}, {32, 16, 3, 3});
    check_all(rng, dt, wide, {3, 8, 3, 5}, {5, 8, 3, 3}, true);
  }
}

TEST_CASE("conv2d reuses its cached plans with new data, strides and thread counts") {
  std::mt19937 rng(29);
  Conf c;
  c.padding = {1};
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    if (round == 2) set_num_threads(1);
    check_all(rng, DType::Float32, c, {2, 16, 9, 9}, {16, 16, 3, 3}, round == 1);
    check_all(rng, DType::BFloat16, c, {2, 16, 9, 9}, {16, 16, 3, 3}, round == 1);
  }
  set_num_threads(0);
}

TEST_CASE("conv2d on strided and channels-last views") {
  std::mt19937 rng(23);
  Conf c;
  c.padding = {1, 0};
  c.groups = 2;
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16}) {
    CAPTURE(dtype_name(dt));
    check_all(rng, dt, c, {2, 4, 6, 5}, {6, 2, 3, 3}, true);
    // x stored NHWC and viewed as NCHW.
    Tensor nhwc = random_tensor(rng, dt, {2, 6, 5, 4});
    Tensor x = Tensor::view(nhwc, {2, 4, 6, 5}, {120, 1, 20, 4}, 0);
    Tensor w = random_tensor(rng, dt, {6, 2, 3, 3});
    Want want = reference(Op::Fwd, c, x.shape(), w.shape(), to_vector(x), to_vector(w), {});
    compare(conv(x, w, attrs_of(c)), {2, 6, 6, 3}, want, dt);
    // One image broadcast over the batch (a zero stride).
    Tensor img = random_tensor(rng, dt, {1, 4, 6, 5});
    Tensor bx = Tensor::view(img, {3, 4, 6, 5}, {0, 30, 5, 1}, 0);
    want = reference(Op::Fwd, c, bx.shape(), w.shape(), to_vector(bx), to_vector(w), {});
    compare(conv(bx, w, attrs_of(c)), {3, 6, 6, 3}, want, dt);
  }
}

TEST_CASE("conv2d in float16 and bfloat16") {
  std::mt19937 rng(24);
  for (DType dt : {DType::Float16, DType::BFloat16})
    for (const Conf& base : grid()) {
      Conf cf = base;
      cf.groups = 2;
      CAPTURE(dtype_name(dt));
      CAPTURE(attrs_of(cf).str());
      check_all(rng, dt, cf, {2, 4, 7, 6}, {4, 2, 3, 3});
    }
  Conf same;
  same.padding = {1};
  check_all(rng, DType::BFloat16, same, {2, 32, 9, 9}, {32, 32, 3, 3});
}

TEST_CASE("conv2d gradients match finite differences of conv2d in float64") {
  std::mt19937 rng(25);
  Conf cf;
  cf.sh = 2, cf.sw = 1, cf.dh = 1, cf.dw = 2, cf.groups = 2;
  cf.padding = {1, 0, 2, 1};
  Dims xs{2, 4, 6, 7}, ws{4, 2, 3, 2};
  Tensor x = random_tensor(rng, DType::Float64, xs), w = random_tensor(rng, DType::Float64, ws);
  Attrs a = attrs_of(cf);
  Tensor y = conv(x, w, a);
  Tensor dy = random_tensor(rng, DType::Float64, y.shape());
  std::vector<double> dyv = to_vector(dy);
  // L(x, w) = sum(dy * conv(x, w)); dL/dx and dL/dw are the two gradients.
  auto loss = [&](const Tensor& xx, const Tensor& ww) {
    std::vector<double> yv = to_vector(conv(xx, ww, a));
    double s = 0;
    for (size_t i = 0; i < yv.size(); ++i) s += yv[i] * dyv[i];
    return s;
  };
  std::vector<double> gx = to_vector(bwd_input(dy, w, xs, a)), gw = to_vector(bwd_filter(dy, x, ws, a));
  const double h = 1e-3;
  for (int64_t i = 0; i < x.numel(); i += 7) {
    std::vector<double> v = to_vector(x);
    v[static_cast<size_t>(i)] += h;
    double up = loss(from_vector(DType::Float64, xs, v), w);
    v[static_cast<size_t>(i)] -= 2 * h;
    double down = loss(from_vector(DType::Float64, xs, v), w);
    CHECK((up - down) / (2 * h) == doctest::Approx(gx[static_cast<size_t>(i)]).epsilon(1e-8).scale(1));
  }
  for (int64_t i = 0; i < w.numel(); ++i) {
    std::vector<double> v = to_vector(w);
    v[static_cast<size_t>(i)] += h;
    double up = loss(x, from_vector(DType::Float64, ws, v));
    v[static_cast<size_t>(i)] -= 2 * h;
    double down = loss(x, from_vector(DType::Float64, ws, v));
    CHECK((up - down) / (2 * h) == doctest::Approx(gw[static_cast<size_t>(i)]).epsilon(1e-8).scale(1));
  }
}

TEST_CASE("conv2d with empty dimensions") {
  std::mt19937 rng(26);
  Conf c;
  c.padding = {1};
  Attrs a = attrs_of(c);
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
    Tensor y = conv(random_tensor(rng, dt, {0, 3, 5, 5}), random_tensor(rng, dt, {4, 3, 3, 3}), a);
    CHECK(y.shape() == Dims{0, 4, 5, 5});
    // No input channels: every output is an empty sum.
    y = conv(random_tensor(rng, dt, {2, 0, 5, 5}), random_tensor(rng, dt, {4, 0, 3, 3}), a);
    CHECK(y.shape() == Dims{2, 4, 5, 5});
    CHECK(to_vector(y) == std::vector<double>(200, 0.0));
    // No output channels.
    y = conv(random_tensor(rng, dt, {2, 3, 5, 5}), random_tensor(rng, dt, {0, 3, 3, 3}), a);
    CHECK(y.shape() == Dims{2, 0, 5, 5});
    // A zero-height input that padding makes one row tall.
    Conf p;
    p.padding = {1};
    y = conv(random_tensor(rng, dt, {1, 2, 0, 4}), random_tensor(rng, dt, {3, 2, 1, 1}), attrs_of(p));
    CHECK(y.shape() == Dims{1, 3, 2, 6});
    CHECK(to_vector(y) == std::vector<double>(36, 0.0));
    // Gradients with an empty batch are zero filters.
    Tensor gw = bwd_filter(random_tensor(rng, dt, {0, 4, 5, 5}), random_tensor(rng, dt, {0, 3, 5, 5}), {4, 3, 3, 3}, a);
    CHECK(to_vector(gw) == std::vector<double>(108, 0.0));
    Tensor gx = bwd_input(random_tensor(rng, dt, {2, 0, 5, 5}), random_tensor(rng, dt, {0, 3, 3, 3}), {2, 3, 5, 5}, a);
    CHECK(to_vector(gx) == std::vector<double>(150, 0.0));
  }
}

TEST_CASE("conv2d attribute forms: single entries, [h, w], MindSpore's 4-tuples and upper-case modes") {
  std::mt19937 rng(27);
  Tensor x = random_tensor(rng, DType::Float64, {1, 2, 8, 9}), w = random_tensor(rng, DType::Float64, {3, 2, 3, 3});
  Attrs two{{"stride", std::vector<int64_t>{2, 2}},
            {"padding", std::vector<int64_t>{1, 1, 1, 1}},
            {"dilation", std::vector<int64_t>{1, 1}}};
  Attrs one{{"stride", std::vector<int64_t>{2}}, {"padding", std::vector<int64_t>{1}}, {"dilation", int64_t{1}}};
  Attrs four{{"stride", std::vector<int64_t>{1, 1, 2, 2}},
             {"padding", std::vector<int64_t>{1, 1}},
             {"dilation", std::vector<int64_t>{1, 1, 1, 1}},
             {"pad_mode", std::string("PAD")}};
  std::vector<double> ref = to_vector(conv(x, w, two));
  CHECK(to_vector(conv(x, w, one)) == ref);
  CHECK(to_vector(conv(x, w, four)) == ref);
  // Defaults: stride 1, no padding, no dilation, one group.
  CHECK(conv(x, w, Attrs{}).shape() == Dims{1, 3, 6, 7});
  CHECK(conv(x, w, Attrs{{"pad_mode", std::string("same")}, {"stride", int64_t{3}}}).shape() == Dims{1, 3, 3, 3});
}

TEST_CASE("conv2d errors") {
  std::mt19937 rng(28);
  auto t = [&](Dims s, DType dt = DType::Float32) { return random_tensor(rng, dt, s); };
  CHECK_THROWS_WITH_AS(conv(t({1, 3, 5, 5}), t({4, 4, 3, 3}), {}),
                       "conv2d: input has 3 channels but the weight expects 4 (groups=1)", ShapeError);
  CHECK_THROWS_WITH_AS(conv(t({1, 4, 5, 5}), t({4, 1, 3, 3}), {{"groups", int64_t{2}}}),
                       "conv2d: input has 4 channels but the weight expects 2 (groups=2)", ShapeError);
  CHECK_THROWS_WITH_AS(conv(t({1, 4, 5, 5}), t({6, 2, 3, 3}), {{"groups", int64_t{3}}}),
                       "conv2d: groups=3 does not divide the 4 input channels", ValueError);
  CHECK_THROWS_WITH_AS(conv(t({1, 6, 5, 5}), t({4, 2, 3, 3}), {{"groups", int64_t{3}}}),
                       "conv2d: groups=3 does not divide the 4 output channels", ValueError);
  CHECK_THROWS_WITH_AS(conv(t({1, 4, 5, 5}), t({4, 4, 3, 3}), {{"groups", int64_t{0}}}),
                       "conv2d: groups must be >= 1, got 0", ValueError);
  CHECK_THROWS_WITH_AS(conv(t({1, 1, 2, 2}), t({1, 1, 3, 3}), {}),
                       "conv2d: the window (3, 3) with dilation (1, 1) does not fit the padded input (2, 2)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(conv(t({1, 1, 5, 5}), t({1, 1, 3, 3}), {{"dilation", std::vector<int64_t>{3, 1}}}),
                       "conv2d: the window (3, 3) with dilation (3, 1) does not fit the padded input (5, 5)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(conv(t({3, 5, 5}), t({1, 3, 3, 3}), {}),
                       "conv2d: the input must be 4-D (N, C, H, W), got (3, 5, 5)", ShapeError);
  CHECK_THROWS_WITH_AS(conv(t({1, 3, 5, 5}), t({3, 3, 3}), {}),
                       "conv2d: the weight must be 4-D (O, C/groups, kh, kw), got (3, 3, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(conv(t({1, 3, 5, 5}), t({1, 3, 3, 3}, DType::Float64), {}),
                       "conv2d: input and weight dtypes differ: Float32 and Float64", DTypeError);
  CHECK_THROWS_WITH_AS(conv(t({1, 3, 5, 5}, DType::Int32), t({1, 3, 3, 3}, DType::Int32), {}),
                       "conv2d: unsupported dtype Int32", DTypeError);
  CHECK_THROWS_WITH_AS(conv(t({1, 3, 5, 5}), t({1, 3, 3, 3}), {{"stride", std::vector<int64_t>{0, 1}}}),
                       "conv2d: stride entries must be in [1, 2^31), got (0, 1)", ValueError);
  CHECK_THROWS_WITH_AS(conv(t({1, 3, 5, 5}), t({1, 3, 3, 3}), {{"stride", std::vector<int64_t>{1, 1, 1}}}),
                       "conv2d: stride must have 1, 2 or 4 entries, got (1, 1, 1)", ValueError);
  CHECK_THROWS_WITH_AS(conv(t({1, 3, 5, 5}), t({1, 3, 3, 3}), {{"padding", std::vector<int64_t>{-1}}}),
                       "conv2d: padding entries must be in [0, 2^31), got (-1,)", ValueError);
  CHECK_THROWS_WITH_AS(conv(t({1, 3, 5, 5}), t({1, 3, 3, 3}), {{"pad_mode", std::string("full")}}),
                       "conv2d: pad_mode must be 'pad', 'valid' or 'same', got 'full'", ValueError);
  CHECK_THROWS_WITH_AS(
      conv(t({1, 3, 5, 5}), t({1, 3, 3, 3}), {{"pad_mode", std::string("same")}, {"padding", int64_t{1}}}),
      "conv2d: padding must be 0 when pad_mode is 'same', got (1,)", ValueError);
  CHECK_THROWS_WITH_AS(conv(t({1, 3, 5, 5}), t({1, 3, 0, 3}), {}),
                       "conv2d: the kernel must not be empty, got weight (1, 3, 0, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(bwd_input(t({1, 2, 3, 3}), t({2, 3, 3, 3}), {1, 3, 6, 5}, {}),
                       "conv2d_backprop_input: dy has shape (1, 2, 3, 3) but the convolution of an input "
                       "(1, 3, 6, 5) with a weight (2, 3, 3, 3) gives (1, 2, 4, 3)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(bwd_filter(t({1, 2, 3, 3}), t({1, 3, 5, 5}), {2, 3, 3}, {}),
                       "conv2d_backprop_filter: filter_shape must have 4 entries, got (2, 3, 3)", ValueError);
  CHECK_THROWS_WITH_AS(bwd_filter(t({1, 2, 3, 3}), t({1, 3, 5, 5}, DType::Float64), {2, 3, 3, 3}, {}),
                       "conv2d_backprop_filter: dy and input dtypes differ: Float32 and Float64", DTypeError);
  Tensor in[2] = {t({1, 2, 3, 3}), t({2, 3, 3, 3})};
  CHECK_THROWS_WITH_AS(execute1(Prim::conv2d_backprop_input, in, {}),
                       "conv2d_backprop_input: input_shape must have 4 entries, got ()", ValueError);
}

TEST_CASE("conv2d with a float32 master weight under bfloat16 activations, and a float32 weight gradient") {
  // The weight is rounded to bfloat16 once (as a cast would) and the
  // products run in bfloat16 with float32 sums: the results are those of
  // the bfloat16 convolution of the rounded weight. The float32 weight
  // gradient skips the final rounding to bfloat16: it meets the float32
  // tolerance (1e-5 of the sum of |terms|) against the float64 reference of
  // the same bfloat16 operands. Shapes: a general one, a single pixel (a
  // matrix product with the live tap) and 2x2 outputs (im2col and matmul).
  std::mt19937 rng(37);
  Conf same;
  same.padding = {1};
  for (const auto& [xs, ws] : std::vector<std::pair<Dims, Dims>>{
           {{2, 16, 6, 5}, {24, 16, 3, 3}}, {{8, 32, 1, 1}, {16, 32, 3, 3}}, {{4, 16, 2, 2}, {8, 16, 3, 3}}}) {
    CAPTURE(xs.str());
    Tensor x = random_tensor(rng, DType::BFloat16, xs), w32 = random_tensor(rng, DType::Float32, ws);
    Tensor in[1] = {w32};
    Tensor w16 = execute1(Prim::cast, in, Attrs{{"dtype", DType::BFloat16}});
    Geo g = geo_of(same, xs, ws);
    Dims ys{g.n, g.o, g.ho, g.wo};
    Tensor dy = random_tensor(rng, DType::BFloat16, ys);
    std::vector<double> xv = to_vector(x), wv = to_vector(w16), dyv = to_vector(dy);
    Attrs a = attrs_of(same);
    compare(conv(x, w32, a), ys, reference(Op::Fwd, same, xs, ws, xv, wv, dyv), DType::BFloat16);
    compare(bwd_input(dy, w32, xs, a), xs, reference(Op::BwdInput, same, xs, ws, xv, wv, dyv), DType::BFloat16);
    Attrs f32_grad = a;
    f32_grad.set("dtype", DType::Float32);
    compare(bwd_filter(dy, x, ws, f32_grad), ws, reference(Op::BwdFilter, same, xs, ws, xv, wv, dyv), DType::Float32);
  }
  // A float64 weight, or a bfloat16 gradient asked of float32 inputs, is an error.
  Tensor x = random_tensor(rng, DType::BFloat16, {1, 4, 3, 3}), w64 = random_tensor(rng, DType::Float64, {4, 4, 3, 3});
  CHECK_THROWS_AS(conv(x, w64, attrs_of(same)), DTypeError);
  Tensor x32 = random_tensor(rng, DType::Float32, {1, 4, 3, 3}), dy32 = random_tensor(rng, DType::Float32, {1, 4, 3, 3});
  Attrs bad = attrs_of(same);
  bad.set("dtype", DType::BFloat16);
  CHECK_THROWS_AS(bwd_filter(dy32, x32, {4, 4, 3, 3}, bad), DTypeError);
}
