// relu_grad(dy, y) against dy * (y > 0) written here: float32 over a tensor
// large enough to split across threads, float64, float16 (through float32),
// strided inputs, NaN in y, and the dtype and shape errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

void check_relu_grad(DType dt, const Dims& shape) {
  std::mt19937 rng(11);
  Tensor dy = random_tensor(rng, dt, shape), y = random_tensor(rng, dt, shape);
  std::vector<Tensor> in{dy, y};
  Tensor out = execute1(Prim::relu_grad, in);
  REQUIRE(out.shape() == shape);
  CHECK(out.dtype() == dt);
  std::vector<double> d = to_vector(dy), v = to_vector(y), o = to_vector(out);
  for (size_t i = 0; i < o.size(); ++i) REQUIRE(o[i] == (v[i] > 0 ? d[i] : 0.0));
}

}  // namespace

TEST_CASE("relu_grad: dy where y > 0, zero elsewhere") {
  check_relu_grad(DType::Float32, Dims{3, kParallelGrain + 7});
  check_relu_grad(DType::Float64, Dims{5, 7});
  check_relu_grad(DType::Float16, Dims{4, 9});
  // Strided (transposed) inputs.
  std::mt19937 rng(12);
  Tensor dy = random_tensor(rng, DType::Float32, Dims{6, 4}), y = random_tensor(rng, DType::Float32, Dims{6, 4});
  std::vector<Tensor> tin{execute1(Prim::transpose, std::vector<Tensor>{dy}, Attrs{{"perm", std::vector<int64_t>{1, 0}}}),
                          execute1(Prim::transpose, std::vector<Tensor>{y}, Attrs{{"perm", std::vector<int64_t>{1, 0}}})};
  Tensor out = execute1(Prim::relu_grad, tin);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 6; ++j) {
      double yv = y.item_at(j * 4 + i), dv = dy.item_at(j * 4 + i);
      REQUIRE(out.item_at(i * 6 + j) == (yv > 0 ? dv : 0.0));
    }
  // NaN in y selects nothing (relu(NaN) is NaN; the comparison is false).
  Tensor ny = from_vector(DType::Float32, Dims{2}, {std::numeric_limits<double>::quiet_NaN(), 1.0});
  Tensor nd = from_vector(DType::Float32, Dims{2}, {5.0, 6.0});
  std::vector<Tensor> nin{nd, ny};
  CHECK(to_vector(execute1(Prim::relu_grad, nin)) == std::vector<double>{0.0, 6.0});
}

TEST_CASE("relu_grad: errors") {
  Tensor f = Tensor::zeros(DType::Float32, Dims{2, 3});
  std::vector<Tensor> shapes{f, Tensor::zeros(DType::Float32, Dims{3, 2})};
  CHECK_THROWS_AS(execute1(Prim::relu_grad, shapes), ShapeError);
  std::vector<Tensor> dtypes{f, Tensor::zeros(DType::Float64, Dims{2, 3})};
  CHECK_THROWS_AS(execute1(Prim::relu_grad, dtypes), DTypeError);
  std::vector<Tensor> ints{Tensor::zeros(DType::Int32, Dims{2}), Tensor::zeros(DType::Int32, Dims{2})};
  CHECK_THROWS_AS(execute1(Prim::relu_grad, ints), DTypeError);
}
