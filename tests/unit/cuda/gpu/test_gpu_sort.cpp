// sort on a GPU against the CPU's: the values' bits and the positions of a
// stable sort, ascending and descending, floats with NaN and ties, integers,
// a transposed (strided) input, many short rows and one long row.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/gpu/gpu_compare.h"

using namespace msl::kernels;

namespace {

Tensor small_values(DType t, const Dims& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(-20, 20);
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) {
    double v = u(rng) == 20 ? std::nan("") : u(rng) * 0.5;
    if (!is_floating(t)) v = std::fabs(std::round(std::isnan(v) ? 3.0 : v));
    d.data<double>()[i] = v;
  }
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

void compare(const Tensor& x, bool descending) {
  Attrs attrs;
  attrs.set("descending", descending);
  std::vector<Tensor> cpu, dev;
  Tensor host_in[] = {x};
  execute(Prim::sort, host_in, attrs, cpu);
  Tensor dev_in[] = {x.to_device(msl::test::gpu())};
  execute(Prim::sort, dev_in, attrs, dev);
  msl::test::require_same(dev[0], cpu[0]);
  msl::test::require_same(dev[1], cpu[1]);
}

}  // namespace

TEST_CASE("sort on the GPU gives the CPU's values and positions") {
  uint32_t seed = 3;
  for (DType t : {DType::Float32, DType::Float16, DType::Float64, DType::Int32, DType::Int64, DType::UInt8})
    for (bool desc : {false, true}) {
      CAPTURE(dtype_name(t));
      compare(small_values(t, Dims{300, 17}, seed++), desc);
      compare(small_values(t, Dims{5000}, seed++), desc);
    }
  Tensor x = small_values(DType::Float32, Dims{9, 12}, 99);
  Tensor xt = Tensor::view(x, Dims{12, 9}, Dims{1, 12}, 0);  // transposed
  compare(xt, false);
}
