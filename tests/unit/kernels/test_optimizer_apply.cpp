// apply_momentum against the Momentum update written out in float64 here,
// over several steps (plain and Nesterov, gradient scale, weight decay), on a
// tensor large enough to be split across threads; the parameter is the
// output and both it and the accumulation change in place; bad inputs
// are errors that leave both untouched.
#include <doctest/doctest.h>

#include <cmath>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

struct Ref {
  std::vector<double> var, accum;
};

void ref_step(Ref& r, const std::vector<double>& grad, double lr, double mom, double scale, double decay,
              bool nesterov) {
  for (size_t i = 0; i < r.var.size(); ++i) {
    double g = (grad[i] + decay * r.var[i]) * scale;
    r.accum[i] = mom * r.accum[i] + g;
    r.var[i] -= nesterov ? lr * (g + mom * r.accum[i]) : lr * r.accum[i];
  }
}

void check_momentum(DType dt, int64_t n, bool nesterov, double scale, double decay = 0.0) {
  std::mt19937 rng(7);
  Tensor var = random_tensor(rng, dt, Dims{n}), accum = Tensor::zeros(dt, Dims{n});
  Ref ref{to_vector(var), to_vector(accum)};
  const double lrs[] = {0.1, 0.05, 0.025};
  for (double lr : lrs) {
    Tensor grad = random_tensor(rng, dt, Dims{n});
    Attrs attrs;
    attrs.set("use_nesterov", nesterov);
    attrs.set("gradient_scale", scale);
    attrs.set("weight_decay", decay);
    std::vector<Tensor> in{var, accum, Tensor::scalar(dt, lr), grad, Tensor::scalar(dt, 0.9)};
    Tensor out = execute1(Prim::apply_momentum, in, attrs);
    CHECK(out.shares_storage(var));
    ref_step(ref, to_vector(grad), lr, 0.9, scale, decay, nesterov);
  }
  double tol = dt == DType::Float32 ? 1e-5 : 1e-12;
  std::vector<double> v = to_vector(var), a = to_vector(accum);
  for (size_t i = 0; i < v.size(); ++i) {
    REQUIRE(v[i] == doctest::Approx(ref.var[i]).epsilon(tol));
    REQUIRE(a[i] == doctest::Approx(ref.accum[i]).epsilon(tol));
  }
}

}  // namespace

TEST_CASE("apply_momentum: three steps against float64 Momentum") {
  check_momentum(DType::Float32, 37, false, 1.0);
  check_momentum(DType::Float32, 37, true, 1.0);
  check_momentum(DType::Float64, 37, true, 0.25);
  check_momentum(DType::Float64, 37, false, 0.5, 0.01);  // weight decay, scaled with the gradient
  check_momentum(DType::Float32, 37, true, 1.0, 1e-4);
  // Large enough for parallel_for to split it (the tail of each chunk too).
  check_momentum(DType::Float32, 3 * kParallelGrain + 5, false, 0.5);
  check_momentum(DType::Float32, 3 * kParallelGrain + 5, true, 1.0);
}

TEST_CASE("apply_momentum: bad inputs are errors and change nothing") {
  Tensor var = from_vector(DType::Float32, Dims{1}, {1.0}), accum = Tensor::zeros(DType::Float32, Dims{1});
  Tensor lr = Tensor::scalar(DType::Float32, 0.1), mom = Tensor::scalar(DType::Float32, 0.9);
  auto run = [&](Tensor v, Tensor a, Tensor l, Tensor g, Tensor m) {
    std::vector<Tensor> in{v, a, l, g, m};
    return execute1(Prim::apply_momentum, in);
  };
  CHECK_THROWS_AS(run(var, accum, lr, Tensor::zeros(DType::Float32, Dims{2}), mom), ShapeError);
  CHECK_THROWS_AS(run(var, accum, lr, Tensor::zeros(DType::Float64, Dims{1}), mom), DTypeError);
  CHECK_THROWS_AS(run(var, Tensor::zeros(DType::Float32, Dims{3}), lr, Tensor::zeros(DType::Float32, Dims{1}), mom),
                  ShapeError);
  CHECK_THROWS_AS(run(var, accum, Tensor::zeros(DType::Float32, Dims{2}), Tensor::zeros(DType::Float32, Dims{1}), mom),
                  ShapeError);
  CHECK_THROWS_AS(run(Tensor::zeros(DType::Int32, Dims{1}), Tensor::zeros(DType::Int32, Dims{1}), lr,
                      Tensor::zeros(DType::Int32, Dims{1}), mom),
                  DTypeError);
  CHECK_THROWS_AS(run(var, var, lr, Tensor::zeros(DType::Float32, Dims{1}), mom), ValueError);
  CHECK(var.item() == 1.0);
  CHECK(accum.item() == 0.0);
}

namespace {

// Three Adam steps in float64 against apply_adam (lr as given: the
// optimizer passes it bias-corrected).
void check_adam(DType dt, int64_t n, double scale, double decay, bool decoupled) {
  std::mt19937 rng(9);
  Tensor var = random_tensor(rng, dt, Dims{n}), m = Tensor::zeros(dt, Dims{n}), v = Tensor::zeros(dt, Dims{n});
  std::vector<double> rv = to_vector(var), rm(static_cast<size_t>(n), 0.0), rvv(static_cast<size_t>(n), 0.0);
  const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
  const double lrs[] = {0.01, 0.02, 0.005};
  for (double lr : lrs) {
    Tensor grad = random_tensor(rng, dt, Dims{n});
    Attrs attrs;
    attrs.set("gradient_scale", scale);
    attrs.set("weight_decay", decay);
    attrs.set("decoupled", decoupled);
    std::vector<Tensor> in{var, m, v, Tensor::scalar(dt, lr), Tensor::scalar(dt, b1), Tensor::scalar(dt, b2),
                           Tensor::scalar(dt, eps), grad};
    CHECK(execute1(Prim::apply_adam, in, attrs).shares_storage(var));
    std::vector<double> g = to_vector(grad);
    for (size_t i = 0; i < rv.size(); ++i) {
      double gi = (g[i] + (decoupled ? 0.0 : decay) * rv[i]) * scale;
      rm[i] = b1 * rm[i] + (1 - b1) * gi;
      rvv[i] = b2 * rvv[i] + (1 - b2) * gi * gi;
      rv[i] -= lr * (rm[i] / (std::sqrt(rvv[i]) + eps) + (decoupled ? decay : 0.0) * rv[i]);
    }
  }
  double tol = dt == DType::Float32 ? 2e-5 : 1e-10;
  std::vector<double> gv = to_vector(var), gm = to_vector(m), gvv = to_vector(v);
  for (size_t i = 0; i < rv.size(); ++i) {
    REQUIRE(gv[i] == doctest::Approx(rv[i]).epsilon(tol));
    REQUIRE(gm[i] == doctest::Approx(rm[i]).epsilon(tol));
    REQUIRE(gvv[i] == doctest::Approx(rvv[i]).epsilon(tol));
  }
}

}  // namespace

TEST_CASE("apply_adam: three steps against float64 Adam and AdamWeightDecay") {
  check_adam(DType::Float64, 29, 1.0, 0.0, false);
  check_adam(DType::Float64, 29, 0.25, 0.1, false);  // decay in the gradient, loss scale
  check_adam(DType::Float64, 29, 1.0, 0.1, true);    // decoupled decay
  check_adam(DType::Float32, 2 * kParallelGrain + 3, 1.0, 0.01, true);
}

TEST_CASE("apply_adam: bad inputs are errors") {
  Tensor p = Tensor::zeros(DType::Float32, Dims{3}), s = Tensor::scalar(DType::Float32, 0.5);
  auto run = [&](Tensor m, Tensor g, Tensor lr) {
    std::vector<Tensor> in{p, m, Tensor::zeros(DType::Float32, Dims{3}), lr, s, s, s, g};
    return execute1(Prim::apply_adam, in);
  };
  CHECK_THROWS_AS(run(Tensor::zeros(DType::Float32, Dims{4}), Tensor::zeros(DType::Float32, Dims{3}), s), ShapeError);
  CHECK_THROWS_AS(run(Tensor::zeros(DType::Float32, Dims{3}), Tensor::zeros(DType::Float64, Dims{3}), s), DTypeError);
  CHECK_THROWS_AS(run(Tensor::zeros(DType::Float32, Dims{3}), Tensor::zeros(DType::Float32, Dims{3}),
                      Tensor::zeros(DType::Float32, Dims{2})),
                  ShapeError);
  CHECK_THROWS_AS(run(p, Tensor::zeros(DType::Float32, Dims{3}), s), ValueError);  // m is the parameter
}
