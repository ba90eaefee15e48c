// batch_norm (training and inference) and batch_norm_grad against
// per-channel float64 formulas written here, for [N, C], [N, C, L] and
// [N, C, H, W] inputs in every float dtype (with float32 parameters beside
// half-precision data), strided inputs, a finite-difference check of
// batch_norm_grad through batch_norm in float64, empty inputs and errors.
#include <doctest/doctest.h>

#include <string>

#include "kernels/errors.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

struct Ch {
  int64_t n, c, s;
};

Ch layout(const Dims& x) {
  int64_t s = 1;
  for (int i = 2; i < x.size(); ++i) s *= x[i];
  return {x[0], x[1], s};
}

size_t at(const Ch& l, int64_t n, int64_t c, int64_t i) { return static_cast<size_t>((n * l.c + c) * l.s + i); }

struct Fwd {
  std::vector<double> y, mean, var;
};

Fwd ref_forward(const Dims& xs, const std::vector<double>& x, const std::vector<double>& gamma,
                const std::vector<double>& beta, std::vector<double> mean, std::vector<double> var, bool training,
                double eps) {
  Ch l = layout(xs);
  Fwd r{std::vector<double>(x.size()), {}, {}};
  double m = double(l.n * l.s);
  for (int64_t c = 0; c < l.c; ++c) {
    size_t ci = static_cast<size_t>(c);
    if (training) {
      double s = 0, q = 0;
      for (int64_t n = 0; n < l.n; ++n)
        for (int64_t i = 0; i < l.s; ++i) s += x[at(l, n, c, i)];
      mean[ci] = s / m;
      for (int64_t n = 0; n < l.n; ++n)
        for (int64_t i = 0; i < l.s; ++i) q += (x[at(l, n, c, i)] - mean[ci]) * (x[at(l, n, c, i)] - mean[ci]);
      var[ci] = q / m;
    }
    for (int64_t n = 0; n < l.n; ++n)
      for (int64_t i = 0; i < l.s; ++i)
        r.y[at(l, n, c, i)] = gamma[ci] * (x[at(l, n, c, i)] - mean[ci]) / std::sqrt(var[ci] + eps) + beta[ci];
  }
  r.mean = mean;
  r.var = var;
  return r;
}

// The textbook gradient of training-mode batch norm.
Fwd ref_backward(const Dims& xs, const std::vector<double>& dy, const std::vector<double>& x,
                 const std::vector<double>& gamma, const std::vector<double>& mean, const std::vector<double>& var,
                 double eps) {
  Ch l = layout(xs);
  Fwd r{std::vector<double>(x.size()), std::vector<double>(static_cast<size_t>(l.c)),
        std::vector<double>(static_cast<size_t>(l.c))};  // dx, dgamma, dbeta
  double m = double(l.n * l.s);
  for (int64_t c = 0; c < l.c; ++c) {
    size_t ci = static_cast<size_t>(c);
    double sd = std::sqrt(var[ci] + eps), sum_dy = 0, sum_dy_xhat = 0;
    for (int64_t n = 0; n < l.n; ++n)
      for (int64_t i = 0; i < l.s; ++i) {
        double xhat = (x[at(l, n, c, i)] - mean[ci]) / sd;
        sum_dy += dy[at(l, n, c, i)];
        sum_dy_xhat += dy[at(l, n, c, i)] * xhat;
      }
    r.mean[ci] = sum_dy_xhat;
    r.var[ci] = sum_dy;
    for (int64_t n = 0; n < l.n; ++n)
      for (int64_t i = 0; i < l.s; ++i) {
        double xhat = (x[at(l, n, c, i)] - mean[ci]) / sd;
        r.y[at(l, n, c, i)] = gamma[ci] / sd * (dy[at(l, n, c, i)] - sum_dy / m - xhat * sum_dy_xhat / m);
      }
  }
  return r;
}

std::vector<Tensor> bn(const Tensor& x, const Tensor& g, const Tensor& b, const Tensor& m, const Tensor& v,
                       bool training, double eps = 1e-5) {
  std::vector<Tensor> in{x, g, b, m, v}, out;
  execute(Prim::batch_norm, in, Attrs{{"training", training}, {"epsilon", eps}}, out);
  return out;
}

std::vector<Tensor> bn_grad(const Tensor& dy, const Tensor& x, const Tensor& g, const Tensor& m, const Tensor& v,
                            double eps = 1e-5) {
  std::vector<Tensor> in{dy, x, g, m, v}, out;
  execute(Prim::batch_norm_grad, in, Attrs{{"epsilon", eps}}, out);
  return out;
}

double tol_of(DType dt) {
  switch (dt) {
    case DType::Float64: return 1e-12;
    case DType::Float32: return 2e-5;
    case DType::Float16: return 2e-3;
    default: return 1.6e-2;
  }
}

}  // namespace

TEST_CASE("batch_norm forward in both modes, and batch_norm_grad, for every float dtype and rank") {
  std::mt19937 rng(41);
  const Dims shapes[] = {{4, 3}, {1, 5}, {3, 2, 7}, {2, 3, 5, 4}, {5, 16, 3, 3}, {2, 2, 3, 2, 2}};
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16})
    for (const Dims& xs : shapes)
      for (bool strided : {false, true}) {
        CAPTURE(dtype_name(dt));
        CAPTURE(xs.str());
        CAPTURE(strided);
        Dims cs{xs[1]};
        // Half-precision data keeps float32 parameters (mixed precision).
        DType pt = dt == DType::Float16 || dt == DType::BFloat16 ? DType::Float32 : dt;
        Tensor x = random_tensor(rng, dt, xs, -3, 3), dy = random_tensor(rng, dt, xs);
        Tensor g = random_tensor(rng, pt, cs, 0.5, 2), b = random_tensor(rng, pt, cs);
        Tensor m = random_tensor(rng, pt, cs, -1, 1), v = random_tensor(rng, pt, cs, 0.5, 2);
        std::vector<double> xv = to_vector(x), dyv = to_vector(dy), gv = to_vector(g), bv = to_vector(b);
        std::vector<double> mv = to_vector(m), vv = to_vector(v);
        if (strided) x = noncontiguous_copy(x), dy = noncontiguous_copy(dy);
        double tol = tol_of(dt), ptol = tol_of(pt);
        for (bool training : {true, false}) {
          CAPTURE(training);
          std::vector<Tensor> out = bn(x, g, b, m, v, training, 1e-3);
          Fwd want = ref_forward(xs, xv, gv, bv, mv, vv, training, 1e-3);
          REQUIRE(out.size() == 3);
          CHECK(out[0].shape() == xs);
          CHECK(out[0].dtype() == dt);
          CHECK(out[1].dtype() == pt);
          check_close(to_vector(out[0]), want.y, tol, tol);
          check_close(to_vector(out[1]), want.mean, ptol, ptol);
          check_close(to_vector(out[2]), want.var, ptol, ptol);
        }
        // The gradient at the batch statistics of x (how training uses it).
        Fwd st = ref_forward(xs, xv, gv, bv, mv, vv, true, 1e-3);
        Tensor sm = from_vector(pt, cs, st.mean), sv = from_vector(pt, cs, st.var);
        std::vector<Tensor> gr = bn_grad(dy, x, g, sm, sv, 1e-3);
        Fwd want = ref_backward(xs, dyv, xv, gv, to_vector(sm), to_vector(sv), 1e-3);
        CHECK(gr[0].shape() == xs);
        CHECK(gr[1].dtype() == pt);
        CHECK(gr[2].dtype() == pt);
        // dx is a difference of O(1) terms: compare with an absolute scale.
        check_close(to_vector(gr[0]), want.y, tol, 4 * tol);
        check_close(to_vector(gr[1]), want.mean, tol, 4 * tol * std::sqrt(double(xs.product())));
        check_close(to_vector(gr[2]), want.var, tol, 4 * tol * std::sqrt(double(xs.product())));
      }
}

TEST_CASE("batch_norm with float32 parameters for float64 data and larger tensors") {
  std::mt19937 rng(42);
  Dims xs{8, 32, 14, 14}, cs{32};
  Tensor x = random_tensor(rng, DType::Float64, xs, -2, 5);
  Tensor g = random_tensor(rng, DType::Float32, cs, 0.5, 2), b = random_tensor(rng, DType::Float32, cs);
  Tensor m = random_tensor(rng, DType::Float32, cs), v = random_tensor(rng, DType::Float32, cs, 0.5, 2);
  std::vector<Tensor> out = bn(x, g, b, m, v, true);
  Fwd want = ref_forward(xs, to_vector(x), to_vector(g), to_vector(b), to_vector(m), to_vector(v), true, 1e-5);
  check_close(to_vector(out[0]), want.y, 1e-12, 1e-12);
  check_close(to_vector(out[1]), want.mean, 1e-6, 1e-6);  // rounded to float32
  CHECK(out[1].dtype() == DType::Float32);
  Tensor x32 = random_tensor(rng, DType::Float32, xs, -2, 5);
  out = bn(x32, g, b, m, v, true);
  want = ref_forward(xs, to_vector(x32), to_vector(g), to_vector(b), to_vector(m), to_vector(v), true, 1e-5);
  check_close(to_vector(out[0]), want.y, 2e-5, 2e-5);
  check_close(to_vector(out[2]), want.var, 2e-5, 2e-5);
}

TEST_CASE("batch_norm_grad matches finite differences of training-mode batch_norm in float64") {
  std::mt19937 rng(43);
  Dims xs{3, 2, 2, 3}, cs{2};
  Tensor x = random_tensor(rng, DType::Float64, xs), g = random_tensor(rng, DType::Float64, cs, 0.5, 2);
  Tensor b = random_tensor(rng, DType::Float64, cs), m = Tensor::zeros(DType::Float64, cs);
  Tensor v = Tensor::zeros(DType::Float64, cs), w = random_tensor(rng, DType::Float64, xs);
  std::vector<double> wv = to_vector(w);
  // L = sum(w * y(x, gamma, beta)) with y from the batch statistics.
  auto loss = [&](const Tensor& xx, const Tensor& gg, const Tensor& bb) {
    std::vector<double> y = to_vector(bn(xx, gg, bb, m, v, true, 1e-3)[0]);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += y[i] * wv[i];
    return s;
  };
  std::vector<Tensor> f = bn(x, g, b, m, v, true, 1e-3);
  std::vector<Tensor> gr = bn_grad(w, x, g, f[1], f[2], 1e-3);
  const double h = 1e-5;
  auto fd = [&](Tensor t, int64_t i, int which) {
    std::vector<double> vals = to_vector(t);
    vals[static_cast<size_t>(i)] += h;
    Tensor up = from_vector(DType::Float64, t.shape(), vals);
    vals[static_cast<size_t>(i)] -= 2 * h;
    Tensor down = from_vector(DType::Float64, t.shape(), vals);
    if (which == 0) return (loss(up, g, b) - loss(down, g, b)) / (2 * h);
    if (which == 1) return (loss(x, up, b) - loss(x, down, b)) / (2 * h);
    return (loss(x, g, up) - loss(x, g, down)) / (2 * h);
  };
  std::vector<double> dx = to_vector(gr[0]), dg = to_vector(gr[1]), db = to_vector(gr[2]);
  for (int64_t i = 0; i < x.numel(); ++i)
    CHECK(fd(x, i, 0) == doctest::Approx(dx[static_cast<size_t>(i)]).epsilon(1e-6).scale(1));
  for (int64_t i = 0; i < 2; ++i) {
    CHECK(fd(g, i, 1) == doctest::Approx(dg[static_cast<size_t>(i)]).epsilon(1e-6).scale(1));
    CHECK(fd(b, i, 2) == doctest::Approx(db[static_cast<size_t>(i)]).epsilon(1e-6).scale(1));
  }
}

TEST_CASE("batch_norm with empty inputs") {
  std::mt19937 rng(44);
  Dims cs{3};
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16}) {
    Tensor g = random_tensor(rng, dt, cs), m = random_tensor(rng, dt, cs), v = random_tensor(rng, dt, cs, 1, 2);
    Tensor e = random_tensor(rng, dt, {0, 3, 2, 2});
    // Inference on an empty batch: an empty y and the given statistics.
    std::vector<Tensor> out = bn(e, g, g, m, v, false);
    CHECK(out[0].shape() == Dims{0, 3, 2, 2});
    CHECK(to_vector(out[1]) == to_vector(m));
    CHECK(to_vector(out[2]) == to_vector(v));
    CHECK_THROWS_WITH_AS(bn(e, g, g, m, v, true),
                         "batch_norm: training needs at least one value per channel, got an input (0, 3, 2, 2)",
                         ValueError);
    std::vector<Tensor> gr = bn_grad(e, e, g, m, v);
    CHECK(to_vector(gr[1]) == std::vector<double>(3, 0.0));
    CHECK(to_vector(gr[2]) == std::vector<double>(3, 0.0));
    // No channels at all.
    Tensor z = random_tensor(rng, dt, {2, 0}), zc = random_tensor(rng, dt, {0});
    CHECK(bn(z, zc, zc, zc, zc, true)[0].shape() == Dims{2, 0});
  }
}

TEST_CASE("batch_norm errors") {
  std::mt19937 rng(45);
  Tensor x = random_tensor(rng, DType::Float32, {2, 3, 4}), p = random_tensor(rng, DType::Float32, {3});
  Tensor p4 = random_tensor(rng, DType::Float32, {4});
  CHECK_THROWS_WITH_AS(bn(x, p, p, p4, p, true),
                       "batch_norm: mean must have shape (3,) (the channels of x (2, 3, 4)), got (4,)", ShapeError);
  CHECK_THROWS_WITH_AS(bn(random_tensor(rng, DType::Float32, {3}), p, p, p, p, true),
                       "batch_norm: x must have rank 2 to 5 (N, C, ...), got (3,)", ShapeError);
  Tensor xi = random_tensor(rng, DType::Int32, {2, 3});
  CHECK_THROWS_WITH_AS(bn(xi, p, p, p, p, true), "batch_norm: unsupported dtype Int32", DTypeError);
  CHECK_THROWS_WITH_AS(bn(x, p, random_tensor(rng, DType::Int64, {3}), p, p, true),
                       "batch_norm: beta has unsupported dtype Int64", DTypeError);
  CHECK_THROWS_WITH_AS(bn(x, p, p, p, p, true, -1.0), "batch_norm: epsilon must be finite and >= 0, got -1",
                       ValueError);
  CHECK_THROWS_WITH_AS(bn_grad(random_tensor(rng, DType::Float64, {2, 3, 4}), x, p, p, p),
                       "batch_norm_grad: dy and x dtypes differ: Float64 and Float32", DTypeError);
  CHECK_THROWS_WITH_AS(bn_grad(random_tensor(rng, DType::Float32, {2, 3, 5}), x, p, p, p),
                       "batch_norm_grad: dy has shape (2, 3, 5) but x has shape (2, 3, 4)", ShapeError);
  CHECK_THROWS_WITH_AS(bn_grad(x, x, p, p, p4),
                       "batch_norm_grad: saved_var must have shape (3,) (the channels of x (2, 3, 4)), got (4,)",
                       ShapeError);
}
