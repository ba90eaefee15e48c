// matmul_bias, conv2d_bias, conv2d_bn and conv2d_bn_add
// (kernels/dnnl_fused.cpp) against float64 loops written here: transpose
// flags, batching, strided operands, bias shapes, groups/stride/padding/
// dilation, Winograd, the few-channel route (the plain conv plus the
// epilogue loop), residuals, ReLU on and off, empty contractions, and the
// errors of bad inputs.
//
// Tolerances use the dot-product error bound: the error of a float32 sum is
// bounded relative to sum |x_i w_i| (plus the bias), not to the result.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "kernels/errors.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

// Each result within 1e-5 of the magnitude its float32 sum was formed from.
void check_bounded(const Tensor& got, const std::vector<double>& want, const std::vector<double>& magnitude) {
  std::vector<double> g = to_vector(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    bool ok = std::fabs(g[i] - want[i]) <= 1e-5 * (magnitude[i] + 1);
    if (!ok) {
      INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
      CHECK(ok);
      return;
    }
  }
}

double relu_if(bool relu, double v) { return relu && v < 0 ? 0.0 : v; }

// act(op(a) @ b + bias) for a [batch, m, k] (batch may be 1), b [k, n] (both
// given as their logical op() values), bias [n].
struct MatmulRef {
  std::vector<double> out, mag;
  MatmulRef(const Tensor& a, const Tensor& b, bool ta, bool tb, const Tensor& bias, bool relu) {
    int ra = a.ndim();
    int64_t batch = ra == 3 ? a.dim(0) : 1;
    int64_t m = ta ? a.dim(ra - 1) : a.dim(ra - 2), k = ta ? a.dim(ra - 2) : a.dim(ra - 1);
    int64_t n = tb ? b.dim(0) : b.dim(1);
    std::vector<double> av = to_vector(a), bv = to_vector(b), cv = to_vector(bias);
    for (int64_t s = 0; s < batch; ++s)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = cv[j], mag = std::fabs(cv[j]);
          for (int64_t p = 0; p < k; ++p) {
            double x = av[s * m * k + (ta ? p * m + i : i * k + p)];
            double y = bv[tb ? j * k + p : p * n + j];
            sum += x * y;
            mag += std::fabs(x * y);
          }
          out.push_back(relu_if(relu, sum));
          this->mag.push_back(mag);
        }
  }
};

Tensor run(Prim p, std::vector<Tensor> in, const Attrs& attrs) { return execute1(p, in, attrs); }

Attrs mm_attrs(bool ta, bool tb, const char* act) {
  return Attrs{{"transpose_a", ta}, {"transpose_b", tb}, {"activation", std::string(act)}};
}

struct Conv {
  int64_t stride = 1, pad = 0, dilation = 1, groups = 1;
  Attrs attrs(const char* act) const {
    return Attrs{{"stride", std::vector<int64_t>{stride, stride}},
                 {"padding", std::vector<int64_t>{pad}},
                 {"dilation", std::vector<int64_t>{dilation, dilation}},
                 {"groups", groups},
                 {"pad_mode", std::string("pad")},
                 {"activation", std::string(act)}};
  }
};

// conv2d(x, w) in float64 ('pad' mode, symmetric padding), per output
// element scaled by scale[o] and shifted by shift[o], plus the residual
// (NCHW values of the result's shape) when given, then the activation.
struct ConvRef {
  std::vector<double> out, mag;
  Dims shape;
  ConvRef(const Tensor& x, const Tensor& w, const Conv& c, const std::vector<double>& scale,
          const std::vector<double>& shift, bool relu, const std::vector<double>* residual = nullptr) {
    int64_t n = x.dim(0), ci = x.dim(1), h = x.dim(2), wd = x.dim(3);
    int64_t o = w.dim(0), cg = w.dim(1), kh = w.dim(2), kw = w.dim(3), og = o / c.groups;
    int64_t ho = (h + 2 * c.pad - c.dilation * (kh - 1) - 1) / c.stride + 1;
    int64_t wo = (wd + 2 * c.pad - c.dilation * (kw - 1) - 1) / c.stride + 1;
    shape = Dims{n, o, ho, wo};
    std::vector<double> xv = to_vector(x), wv = to_vector(w);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t oc = 0; oc < o; ++oc)
        for (int64_t i = 0; i < ho; ++i)
          for (int64_t j = 0; j < wo; ++j) {
            double sum = 0, m = 0;
            int64_t g = oc / og;
            for (int64_t q = 0; q < cg; ++q)
              for (int64_t u = 0; u < kh; ++u)
                for (int64_t v = 0; v < kw; ++v) {
                  int64_t yy = i * c.stride - c.pad + u * c.dilation, xx = j * c.stride - c.pad + v * c.dilation;
                  if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                  double p = xv[((b * ci + g * cg + q) * h + yy) * wd + xx] * wv[((oc * cg + q) * kh + u) * kw + v];
                  sum += p;
                  m += std::fabs(p);
                }
            double res = residual ? (*residual)[out.size()] : 0.0;
            out.push_back(relu_if(relu, sum * scale[oc] + shift[oc] + res));
            mag.push_back(m * std::fabs(scale[oc]) + std::fabs(shift[oc]) + std::fabs(res));
          }
    (void)ci;
  }
};

}  // namespace

TEST_CASE("matmul_bias: every transpose combination, ReLU on and off, against float64") {
  std::mt19937 rng(11);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (bool relu : {false, true}) {
        INFO("ta=" << ta << " tb=" << tb << " relu=" << relu);
        Tensor a = random_tensor(rng, DType::Float32, ta ? Dims{7, 5} : Dims{5, 7});
        Tensor b = random_tensor(rng, DType::Float32, tb ? Dims{3, 7} : Dims{7, 3});
        Tensor bias = random_tensor(rng, DType::Float32, Dims{3});
        Tensor out = run(Prim::matmul_bias, {a, b, bias}, mm_attrs(ta, tb, relu ? "relu" : "none"));
        CHECK(out.shape() == Dims{5, 3});
        MatmulRef ref(a, b, ta, tb, bias, relu);
        check_bounded(out, ref.out, ref.mag);
        if (relu) CHECK(std::count(ref.out.begin(), ref.out.end(), 0.0) > 0);  // ReLU clipped something
      }
}

TEST_CASE("matmul_bias: a batched and a strided operand, a [1, N] bias, an empty contraction") {
  std::mt19937 rng(12);
  // A Dense layer's shape: x [batch, m, k] @ w[n, k]^T + bias, batch broadcast.
  Tensor a = random_tensor(rng, DType::Float32, Dims{2, 4, 6});
  Tensor w = random_tensor(rng, DType::Float32, Dims{5, 6});
  Tensor bias = random_tensor(rng, DType::Float32, Dims{1, 5});
  Tensor out = run(Prim::matmul_bias, {noncontiguous_copy(a), w, bias}, mm_attrs(false, true, "relu"));
  CHECK(out.shape() == Dims{2, 4, 5});
  MatmulRef ref(a, w, false, true, bias, true);
  check_bounded(out, ref.out, ref.mag);
  // k = 0: the product is empty, so the result is act(bias) on every row.
  Tensor e = run(Prim::matmul_bias,
                 {Tensor(DType::Float32, Dims{3, 0}), Tensor(DType::Float32, Dims{0, 2}),
                  from_vector(DType::Float32, Dims{2}, {1.5, -2})},
                 mm_attrs(false, false, "relu"));
  CHECK(to_vector(e) == std::vector<double>{1.5, 0, 1.5, 0, 1.5, 0});
}

TEST_CASE("conv2d_bias: stride, padding, dilation, groups and bias shapes, against float64") {
  std::mt19937 rng(21);
  struct Case {
    Conv conv;
    Dims x, w, bias;
  };
  const Case cases[] = {
      {{1, 1, 1, 1}, {2, 8, 9, 9}, {16, 8, 3, 3}, {16}},
      {{2, 1, 1, 1}, {1, 16, 10, 7}, {8, 16, 3, 3}, {1, 8, 1, 1}},
      {{1, 2, 2, 2}, {2, 8, 9, 9}, {6, 4, 3, 3}, {6, 1, 1}},
      {{1, 0, 1, 8}, {1, 8, 5, 5}, {8, 1, 1, 1}, {8}},  // depthwise 1x1
      {{1, 1, 1, 1}, {2, 3, 8, 8}, {4, 3, 3, 3}, {4}},  // few input channels: plain conv + epilogue loop
  };
  for (const Case& c : cases)
    for (bool relu : {false, true}) {
      INFO("x=" << c.x.str() << " w=" << c.w.str() << " relu=" << relu);
      Tensor x = random_tensor(rng, DType::Float32, c.x), w = random_tensor(rng, DType::Float32, c.w);
      Tensor bias = random_tensor(rng, DType::Float32, c.bias);
      Tensor out = run(Prim::conv2d_bias, {x, w, bias}, c.conv.attrs(relu ? "relu" : "none"));
      ConvRef ref(x, w, c.conv, std::vector<double>(c.w[0], 1.0), to_vector(bias), relu);
      CHECK(out.shape() == ref.shape);
      check_bounded(out, ref.out, ref.mag);
    }
}

TEST_CASE("conv2d_bn and conv2d_bn_add: inference batch norm folded into the convolution, against float64") {
  std::mt19937 rng(31);
  struct Case {
    int64_t groups;
    Dims x, w;
  };
  // oneDNN with the normalization as post-ops; grouped; a ResNet block's
  // 3x3 layer with 64 channels, where oneDNN takes Winograd; 3 input
  // channels, where the few-channel kernel runs on weights the scale is
  // folded into.
  const Case cases[] = {{1, {2, 8, 7, 7}, {12, 8, 3, 3}},
                        {2, {2, 8, 7, 7}, {12, 4, 3, 3}},
                        {1, {16, 64, 16, 16}, {64, 64, 3, 3}},
                        {1, {2, 3, 7, 7}, {12, 3, 3, 3}}};
  for (bool relu : {false, true})
    for (bool add : {false, true})
      for (const Case& c : cases) {
        INFO("relu=" << relu << " residual=" << add << " x=" << c.x.str() << " groups=" << c.groups);
        Conv conv{1, 1, 1, c.groups};
        int64_t o = c.w[0];
        Tensor x = random_tensor(rng, DType::Float32, c.x);
        Tensor w = random_tensor(rng, DType::Float32, c.w);
        Tensor gamma = random_tensor(rng, DType::Float32, Dims{o}), beta = random_tensor(rng, DType::Float32, Dims{o});
        Tensor mean = random_tensor(rng, DType::Float32, Dims{o});
        Tensor var = random_tensor(rng, DType::Float32, Dims{o}, 0.1, 3);
        const double eps = 1e-3;
        Attrs attrs = conv.attrs(relu ? "relu" : "none");
        attrs.set("epsilon", eps);
        std::vector<Tensor> in{x, noncontiguous_copy(w), gamma, beta, mean, var};
        Tensor residual;
        if (add) {
          Dims ys{c.x[0], o, c.x[2], c.x[3]};  // 3x3, padding 1, stride 1
          residual = random_tensor(rng, DType::Float32, ys);
          in.push_back(noncontiguous_copy(residual));
        }
        Tensor out = run(add ? Prim::conv2d_bn_add : Prim::conv2d_bn, in, attrs);
        std::vector<double> scale, shift;
        std::vector<double> g = to_vector(gamma), b = to_vector(beta), m = to_vector(mean), v = to_vector(var);
        for (size_t c = 0; c < g.size(); ++c) {
          scale.push_back(g[c] / std::sqrt(v[c] + eps));
          shift.push_back(b[c] - m[c] * scale.back());
        }
        std::vector<double> res = add ? to_vector(residual) : std::vector<double>{};
        ConvRef ref(x, w, conv, scale, shift, relu, add ? &res : nullptr);
        CHECK(out.shape() == ref.shape);
        check_bounded(out, ref.out, ref.mag);
      }
}

TEST_CASE("fused contractions: bad dtypes, shapes and attributes are clear errors") {
  Tensor a = Tensor(DType::Float32, Dims{4, 3}), b = Tensor(DType::Float32, Dims{3, 5});
  Tensor bias5 = Tensor(DType::Float32, Dims{5});
  CHECK_THROWS_WITH_AS(
      run(Prim::matmul_bias, {a, b, Tensor(DType::Float32, Dims{4})}, mm_attrs(false, false, "none")),
      "matmul_bias: the bias must have shape (5,) (or leading 1s) to add to the result (4, 5), got (4,)", ShapeError);
  CHECK_THROWS_AS(run(Prim::matmul_bias, {a, b, Tensor(DType::Float32, Dims{4, 5})}, mm_attrs(false, false, "none")),
                  ShapeError);
  CHECK_THROWS_AS(run(Prim::matmul_bias, {a, a, bias5}, mm_attrs(false, false, "none")), ShapeError);
  CHECK_THROWS_WITH_AS(
      run(Prim::matmul_bias, {Tensor(DType::Float64, Dims{4, 3}), b, bias5}, mm_attrs(false, false, "none")),
      "matmul_bias: a must be Float32, got Float64", DTypeError);
  CHECK_THROWS_WITH_AS(run(Prim::matmul_bias, {a, b, bias5}, mm_attrs(false, false, "gelu")),
                       "matmul_bias: activation must be 'none' or 'relu', got 'gelu'", ValueError);

  Tensor x = Tensor(DType::Float32, Dims{1, 4, 5, 5}), w = Tensor(DType::Float32, Dims{6, 4, 3, 3});
  Tensor c6 = Tensor(DType::Float32, Dims{6});
  CHECK_THROWS_WITH_AS(run(Prim::conv2d_bias, {x, w, Tensor(DType::Float32, Dims{1, 1, 1, 6})}, Conv{}.attrs("none")),
                       "conv2d_bias: the bias must have shape (6,) or (1, 6, 1, 1) for the result (1, 6, 3, 3), got "
                       "(1, 1, 1, 6)",
                       ShapeError);
  CHECK_THROWS_AS(run(Prim::conv2d_bias, {x, Tensor(DType::Float32, Dims{6, 5, 3, 3}), c6}, Conv{}.attrs("none")),
                  ShapeError);
  CHECK_THROWS_AS(run(Prim::conv2d_bias, {x, w, Tensor(DType::Float16, Dims{6})}, Conv{}.attrs("none")), DTypeError);
  Attrs bn = Conv{}.attrs("relu");
  bn.set("epsilon", 1e-5);
  CHECK_THROWS_WITH_AS(run(Prim::conv2d_bn, {x, w, c6, c6, Tensor(DType::Float32, Dims{4}), c6}, bn),
                       "conv2d_bn: mean must have shape (6,) (the output channels of (1, 6, 3, 3)), got (4,)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(run(Prim::conv2d_bn_add, {x, w, c6, c6, c6, c6, Tensor(DType::Float32, Dims{1, 6, 3, 4})}, bn),
                       "conv2d_bn_add: the residual must have the result's shape (1, 6, 3, 3), got (1, 6, 3, 4)",
                       ShapeError);
  bn.set("epsilon", -1.0);
  CHECK_THROWS_AS(run(Prim::conv2d_bn, {x, w, c6, c6, c6, c6}, bn), ValueError);
}
