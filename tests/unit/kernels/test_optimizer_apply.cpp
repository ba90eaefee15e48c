// apply_momentum against the Momentum update written out in float64 here,
// over several steps (plain and Nesterov, gradient scale, weight decay), on a
// tensor large enough to be split across threads; the parameter is the
// output and both it and the accumulation change in place; bad inputs
// are errors that leave both untouched.
#include <doctest/doctest.h>

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
