// max_pool2d, avg_pool2d and their gradients against direct float64 loops
// written here, over kernels, strides, paddings (symmetric, asymmetric,
// 'valid', 'same'), count_include_pad and batch sizes, in every float
// dtype; ties (the first maximum of a window takes the gradient), all-
// negative inputs (padding never wins a max), strided inputs, empty batches
// and the error messages.
#include <doctest/doctest.h>

#include <string>

#include "kernels/errors.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

struct Conf {
  int64_t kh = 2, kw = 2, sh = 1, sw = 1;
  std::vector<int64_t> padding{0};
  std::string mode = "pad";
  bool include_pad = false;
};

Attrs attrs_of(const Conf& c, bool avg) {
  Attrs a{{"kernel_size", std::vector<int64_t>{c.kh, c.kw}},
          {"stride", std::vector<int64_t>{c.sh, c.sw}},
          {"padding", c.padding},
          {"pad_mode", c.mode}};
  if (avg) a.set("count_include_pad", c.include_pad);
  return a;
}

// Output size and leading padding along one axis (MindSpore's rules).
void axis(const std::string& mode, int64_t in, int64_t k, int64_t s, int64_t plo, int64_t phi, int64_t& out,
          int64_t& lo) {
  if (mode == "same") {
    out = (in + s - 1) / s;
    lo = std::max<int64_t>(0, (out - 1) * s + k - in) / 2;
  } else if (mode == "valid") {
    out = (in - k) / s + 1;
    lo = 0;
  } else {
    out = (in + plo + phi - k) / s + 1;
    lo = plo;
  }
}

struct Geo {
  int64_t n, c, h, w, ho, wo, pt, pl;
};

Geo geo_of(const Conf& cf, const Dims& xs) {
  Geo g{xs[0], xs[1], xs[2], xs[3], 0, 0, 0, 0};
  const std::vector<int64_t>& p = cf.padding;
  int64_t t = p[0], b = p.size() == 4 ? p[1] : p[0];
  int64_t l = p.size() == 4 ? p[2] : p.size() == 2 ? p[1] : p[0], r = p.size() == 4 ? p[3] : l;
  axis(cf.mode, g.h, cf.kh, cf.sh, t, b, g.ho, g.pt);
  axis(cf.mode, g.w, cf.kw, cf.sw, l, r, g.wo, g.pl);
  return g;
}

struct Want {
  std::vector<double> value, abs_sum;
};

enum class Op { Max, Avg, MaxGrad, AvgGrad };

// The reference of `op` on x (and dy for the gradients).
Want reference(Op op, const Conf& cf, const Dims& xs, const std::vector<double>& x, const std::vector<double>& dy) {
  Geo g = geo_of(cf, xs);
  bool grad = op == Op::MaxGrad || op == Op::AvgGrad;
  size_t size = static_cast<size_t>(grad ? xs.product() : g.n * g.c * g.ho * g.wo);
  Want r{std::vector<double>(size, 0.0), std::vector<double>(size, 0.0)};
  for (int64_t p = 0; p < g.n * g.c; ++p)
    for (int64_t oh = 0; oh < g.ho; ++oh)
      for (int64_t ow = 0; ow < g.wo; ++ow) {
        size_t yi = static_cast<size_t>((p * g.ho + oh) * g.wo + ow);
        int64_t best = -1, count = 0;
        double sum = 0, abs_sum = 0;
        for (int64_t i = 0; i < cf.kh; ++i)
          for (int64_t j = 0; j < cf.kw; ++j) {
            int64_t ih = oh * cf.sh - g.pt + i, iw = ow * cf.sw - g.pl + j;
            if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
            int64_t xi = (p * g.h + ih) * g.w + iw;
            ++count;
            sum += x[static_cast<size_t>(xi)];
            abs_sum += std::fabs(x[static_cast<size_t>(xi)]);
            if (best < 0 || x[static_cast<size_t>(xi)] > x[static_cast<size_t>(best)]) best = xi;
          }
        double div = cf.include_pad ? double(cf.kh * cf.kw) : double(count);
        switch (op) {
          case Op::Max: r.value[yi] = x[static_cast<size_t>(best)]; break;
          case Op::Avg: r.value[yi] = sum / div, r.abs_sum[yi] = abs_sum / div; break;
          case Op::MaxGrad:
            r.value[static_cast<size_t>(best)] += dy[yi];
            r.abs_sum[static_cast<size_t>(best)] += std::fabs(dy[yi]);
            break;
          case Op::AvgGrad:
            for (int64_t i = 0; i < cf.kh; ++i)
              for (int64_t j = 0; j < cf.kw; ++j) {
                int64_t ih = oh * cf.sh - g.pt + i, iw = ow * cf.sw - g.pl + j;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                size_t xi = static_cast<size_t>((p * g.h + ih) * g.w + iw);
                r.value[xi] += dy[yi] / div;
                r.abs_sum[xi] += std::fabs(dy[yi]) / div;
              }
            break;
        }
      }
  return r;
}

Tensor run(Prim p, std::initializer_list<Tensor> ins, const Attrs& a) {
  std::vector<Tensor> in(ins);
  return execute1(p, in, a);
}

void compare(const Tensor& got, const Dims& shape, const Want& want, DType dt) {
  REQUIRE(got.shape() == shape);
  CHECK(got.dtype() == dt);
  std::vector<double> g = to_vector(got);
  double out_rtol = dt == DType::Float16 ? 1.0 / 2048 : dt == DType::BFloat16 ? 1.0 / 256 : 0;
  double sum_rtol = dt == DType::Float64 ? 1e-14 : 1e-6;
  for (size_t i = 0; i < g.size(); ++i) {
    double tol = out_rtol * std::fabs(want.value[i]) + sum_rtol * want.abs_sum[i];
    if (!(std::fabs(g[i] - want.value[i]) <= tol)) {
      INFO("element " << i << " of " << shape.str() << ": got " << g[i] << ", want " << want.value[i]);
      CHECK(false);
      return;
    }
  }
}

// All four ops for x of shape xs with values in [lo, hi) (integers when
// `ties`, so that windows hold equal maxima).
void check_all(std::mt19937& rng, DType dt, const Conf& cf, const Dims& xs, double lo = -2, double hi = 2,
               bool ties = false, bool strided = false) {
  Tensor x = random_tensor(rng, dt, xs, lo, hi);
  if (ties) {
    std::vector<double> v = to_vector(x);
    for (double& e : v) e = std::floor(e);
    x = from_vector(dt, xs, v);
  }
  Geo g = geo_of(cf, xs);
  Dims ys{g.n, g.c, g.ho, g.wo};
  Tensor dy = random_tensor(rng, dt, ys);
  std::vector<double> xv = to_vector(x), dyv = to_vector(dy);
  if (strided) x = noncontiguous_copy(x), dy = noncontiguous_copy(dy);
  Attrs am = attrs_of(cf, false), aa = attrs_of(cf, true);
  compare(run(Prim::max_pool2d, {x}, am), ys, reference(Op::Max, cf, xs, xv, dyv), dt);
  compare(run(Prim::avg_pool2d, {x}, aa), ys, reference(Op::Avg, cf, xs, xv, dyv), dt);
  compare(run(Prim::max_pool2d_grad, {x, dy}, am), xs, reference(Op::MaxGrad, cf, xs, xv, dyv), dt);
  aa.set("input_shape", xs.vec());
  compare(run(Prim::avg_pool2d_grad, {dy}, aa), xs, reference(Op::AvgGrad, cf, xs, xv, dyv), dt);
}

std::vector<Conf> grid() {
  std::vector<Conf> out;
  const int64_t kernels[][2] = {{2, 2}, {3, 3}, {3, 2}};
  const int64_t strides[][2] = {{1, 1}, {2, 2}, {2, 1}};
  const std::vector<std::vector<int64_t>> pads{{0}, {1}, {0, 1, 1, 0}};
  for (auto& k : kernels)
    for (auto& s : strides)
      for (int mode = 0; mode < 5; ++mode)
        for (bool inc : {false, true}) {
          Conf c;
          c.kh = k[0], c.kw = k[1], c.sh = s[0], c.sw = s[1];
          if (mode < 3) c.padding = pads[static_cast<size_t>(mode)];
          c.mode = mode == 3 ? "valid" : mode == 4 ? "same" : "pad";
          c.include_pad = inc;
          out.push_back(c);
        }
  return out;
}

}  // namespace

TEST_CASE("pooling over the window grid in every float dtype") {
  std::mt19937 rng(31);
  int k = 0;
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16})
    for (const Conf& cf : grid()) {
      Dims xs = (k++ % 2) ? Dims{2, 3, 7, 9} : Dims{1, 2, 6, 5};
      CAPTURE(dtype_name(dt));
      CAPTURE(attrs_of(cf, true).str());
      CAPTURE(xs.str());
      check_all(rng, dt, cf, xs);
    }
}

TEST_CASE("pooling ties: the first maximum of a window gets the gradient") {
  std::mt19937 rng(32);
  Conf cf;
  cf.kh = cf.kw = 3;
  cf.padding = {1};
  Conf s2 = cf;
  s2.sh = s2.sw = 2;
  for (DType dt : {DType::Float32, DType::Float64, DType::BFloat16, DType::Float16}) {
    CAPTURE(dtype_name(dt));
    check_all(rng, dt, cf, {2, 3, 8, 7}, 0, 2, true);
    check_all(rng, dt, s2, {2, 3, 8, 7}, 0, 2, true);
    // All-equal windows: the top-left element of each window wins.
    Tensor x = from_vector(dt, {1, 1, 2, 2}, {1, 1, 1, 1});
    Tensor dy = from_vector(dt, {1, 1, 1, 1}, {5});
    Attrs a{{"kernel_size", int64_t{2}}};
    CHECK(to_vector(run(Prim::max_pool2d_grad, {x, dy}, a)) == std::vector<double>{5, 0, 0, 0});
  }
}

TEST_CASE("2x2/2 max pooling on planes the windows tile (the row-pair loops)") {
  std::mt19937 rng(36);
  Conf cf;
  cf.sh = cf.sw = 2;
  // LeNet's planes (rows shorter than a vector), a single window, more row
  // pairs than one buffer group, and rows longer than a group.
  const Dims shapes[] = {{3, 6, 28, 28}, {2, 16, 10, 10}, {1, 1, 2, 2}, {2, 3, 80, 30}, {1, 2, 4, 2050}};
  for (const Dims& xs : shapes) {
    CAPTURE(xs.str());
    check_all(rng, DType::Float32, cf, xs);
    check_all(rng, DType::Float32, cf, xs, 0, 3, true);         // ties: the first maximum wins
    check_all(rng, DType::Float32, cf, xs, -2, 2, false, true);  // strided
  }
  // Each of the four places of a window, and ties between every pair.
  for (int place = 0; place < 4; ++place) {
    std::vector<double> v{0, 0, 0, 0};
    v[static_cast<size_t>(place)] = 1;
    Tensor x = from_vector(DType::Float32, {1, 1, 2, 2}, v);
    Tensor dy = from_vector(DType::Float32, {1, 1, 1, 1}, {7});
    Attrs a{{"kernel_size", int64_t{2}}, {"stride", int64_t{2}}};
    std::vector<double> want{0, 0, 0, 0};
    want[static_cast<size_t>(place)] = 7;
    CHECK(to_vector(run(Prim::max_pool2d_grad, {x, dy}, a)) == want);
    CHECK(to_vector(run(Prim::max_pool2d, {x}, a)) == std::vector<double>{1});
  }
}

TEST_CASE("max pooling never picks padding, and large windows") {
  std::mt19937 rng(33);
  Conf cf;
  cf.kh = cf.kw = 3;
  cf.padding = {2, 1};
  Conf big;
  big.kh = 17, big.kw = 19;  // more than 256 window positions (wider workspace indices)
  big.sh = 3, big.sw = 2;
  for (DType dt : {DType::Float32, DType::Float64}) {
    check_all(rng, dt, cf, {2, 3, 5, 6}, -3, -1);
    check_all(rng, dt, big, {1, 2, 20, 23});
  }
  // Larger planes and channel counts, where oneDNN vectorizes across channels.
  Conf c2;
  c2.kh = c2.kw = 3, c2.sh = c2.sw = 2, c2.padding = {1};
  check_all(rng, DType::Float32, c2, {4, 35, 17, 19});
}

TEST_CASE("pooling on strided inputs and empty batches") {
  std::mt19937 rng(34);
  Conf cf;
  cf.kh = 3, cf.kw = 2, cf.sh = 2, cf.sw = 1, cf.padding = {1, 1, 1, 0};
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
    check_all(rng, dt, cf, {2, 3, 7, 6}, -2, 2, false, true);
    Tensor e = random_tensor(rng, dt, {0, 3, 7, 6});
    CHECK(run(Prim::max_pool2d, {e}, attrs_of(cf, false)).shape() == Dims{0, 3, 4, 6});
    CHECK(run(Prim::avg_pool2d, {e}, attrs_of(cf, true)).shape() == Dims{0, 3, 4, 6});
  }
}

TEST_CASE("pooling defaults: stride 1, no padding, count_include_pad false") {
  Tensor x = from_vector(DType::Float64, {1, 1, 2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(to_vector(run(Prim::max_pool2d, {x}, {{"kernel_size", int64_t{2}}})) == std::vector<double>{5, 6});
  Attrs same{{"kernel_size", int64_t{2}}, {"pad_mode", std::string("same")}};
  // 'same' pads the bottom/right; averages exclude the padding.
  CHECK(to_vector(run(Prim::avg_pool2d, {x}, same)) == std::vector<double>{3, 4, 4.5, 4.5, 5.5, 6});
  same.set("count_include_pad", true);
  CHECK(to_vector(run(Prim::avg_pool2d, {x}, same)) == std::vector<double>{3, 4, 2.25, 2.25, 2.75, 1.5});
}

TEST_CASE("pooling errors") {
  std::mt19937 rng(35);
  Tensor x = random_tensor(rng, DType::Float32, {1, 2, 5, 5});
  Attrs k2{{"kernel_size", int64_t{2}}};
  CHECK_THROWS_WITH_AS(run(Prim::max_pool2d, {x}, {}), "max_pool2d: kernel_size is required", ValueError);
  CHECK_THROWS_WITH_AS(run(Prim::max_pool2d, {x}, {{"kernel_size", int64_t{2}}, {"padding", int64_t{2}}}),
                       "max_pool2d: padding (2, 2, 2, 2) must be smaller than the kernel (2, 2)", ValueError);
  CHECK_THROWS_WITH_AS(run(Prim::avg_pool2d, {x}, {{"kernel_size", int64_t{6}}}),
                       "avg_pool2d: the window (6, 6) does not fit the padded input (5, 5)", ShapeError);
  CHECK_THROWS_WITH_AS(run(Prim::avg_pool2d, {x}, {{"kernel_size", int64_t{0}}}),
                       "avg_pool2d: kernel_size entries must be in [1, 2^31), got (0,)", ValueError);
  CHECK_THROWS_WITH_AS(run(Prim::max_pool2d, {random_tensor(rng, DType::Float32, {2, 5, 5})}, k2),
                       "max_pool2d: the input must be 4-D (N, C, H, W), got (2, 5, 5)", ShapeError);
  CHECK_THROWS_WITH_AS(run(Prim::max_pool2d, {random_tensor(rng, DType::Int32, {1, 1, 4, 4})}, k2),
                       "max_pool2d: unsupported dtype Int32", DTypeError);
  CHECK_THROWS_WITH_AS(run(Prim::max_pool2d, {random_tensor(rng, DType::Float32, {1, 1, 0, 4})}, k2),
                       "max_pool2d: the input (1, 1, 0, 4) has an empty spatial dimension", ShapeError);
  Tensor dy = random_tensor(rng, DType::Float32, {1, 2, 3, 3});
  CHECK_THROWS_WITH_AS(run(Prim::max_pool2d_grad, {x, dy}, k2),
                       "max_pool2d_grad: dy has shape (1, 2, 3, 3) but pooling the input (1, 2, 5, 5) gives "
                       "(1, 2, 4, 4)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(run(Prim::max_pool2d_grad, {x, random_tensor(rng, DType::Float64, {1, 2, 4, 4})}, k2),
                       "max_pool2d_grad: x and dy dtypes differ: Float32 and Float64", DTypeError);
  CHECK_THROWS_WITH_AS(run(Prim::avg_pool2d_grad, {dy}, k2), "avg_pool2d_grad: input_shape must have 4 entries, got ()",
                       ValueError);
  CHECK_THROWS_WITH_AS(run(Prim::avg_pool2d, {x},
                           {{"kernel_size", int64_t{2}}, {"pad_mode", std::string("valid")}, {"padding", int64_t{1}}}),
                       "avg_pool2d: padding must be 0 when pad_mode is 'valid', got (1,)", ValueError);
}
