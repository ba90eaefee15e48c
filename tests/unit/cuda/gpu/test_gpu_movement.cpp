// gather, one_hot, concat and pad on a GPU against the CPU's kernels, bit
// for bit: several dtypes and axes, a transposed input, a host scalar index,
// mixed-dtype concat, pad of every side with a converted fill value, and
// gather's IndexError.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kernels/device.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/gpu/gpu_compare.h"
#include "tests/unit/cuda/test_tensors.h"

using namespace msl::kernels;

namespace {

using msl::test::both;
using msl::test::gpu;
using msl::test::int_tensor;
using msl::test::values_of;

}  // namespace

TEST_CASE("gather and one_hot on the GPU") {
  for (DType t : {DType::Bool, DType::Float16, DType::Float32, DType::Int64, DType::Float64})
    for (DType it : {DType::Int32, DType::Int64})
      for (int64_t axis : {0, 1, -1}) {
        CAPTURE(dtype_name(t));
        CAPTURE(dtype_name(it));
        CAPTURE(axis);
        Tensor params = values_of(t, Dims{6, 7, 5}, 1);
        Attrs a{{"axis", axis}};
        both(Prim::gather, {params, int_tensor(it, Dims{2, 3}, {4, 0, 2, 1, 4, 3})}, a);
        both(Prim::gather, {params, int_tensor(it, Dims{}, {2})}, a);  // a host scalar index
        both(Prim::gather, {Tensor::view(values_of(t, Dims{5, 7, 6}, 2), Dims{6, 7, 5}, Dims{1, 6, 42}, 0),
                            int_tensor(it, Dims{4}, {1, 1, 0, 4})},
             a);
      }
  Tensor params = values_of(DType::Float32, Dims{6, 7}, 3);
  Tensor bad[] = {params.to_device(gpu()), int_tensor(DType::Int32, Dims{3}, {1, 7, 2}).to_device(gpu())};
  try {
    execute1(Prim::gather, bad, Attrs{{"axis", int64_t{1}}});
    FAIL("an index out of range was accepted");
  } catch (const IndexError& e) {
    CHECK(std::string(e.what()).find("index 7 is out of range for axis 1 with size 7") != std::string::npos);
  }
  for (DType ot : {DType::Bool, DType::Int8, DType::Int32, DType::Float16, DType::BFloat16, DType::Float64})
    for (DType it : {DType::UInt8, DType::Int32, DType::Int64})
      for (int64_t axis : {-1, 0}) {
        Attrs a{{"depth", int64_t{6}}, {"on_value", 3.5}, {"off_value", -0.25}, {"axis", axis}, {"dtype", ot}};
        both(Prim::one_hot, {int_tensor(it, Dims{4, 9}, {0, 5, 3, 7, 1, 2, 6, 4})}, a);
      }
}

TEST_CASE("concat and pad on the GPU") {
  for (int64_t axis : {0, 1, -1}) {
    CAPTURE(axis);
    Tensor a = values_of(DType::Float32, Dims{4, 3, 5}, 1);
    Tensor b = values_of(DType::Float32, Dims{4, 3, 5}, 2);
    Tensor c = Tensor::view(values_of(DType::Float32, Dims{5, 3, 4}, 3), Dims{4, 3, 5}, Dims{1, 4, 12}, 0);
    Tensor h = values_of(DType::Float16, Dims{4, 3, 5}, 4);
    Tensor i = values_of(DType::Int32, Dims{4, 3, 5}, 5);
    both(Prim::concat, {a, b, c}, Attrs{{"axis", axis}});
    both(Prim::concat, {h, a, i}, Attrs{{"axis", axis}});  // promoted to float32
    both(Prim::concat, {i, values_of(DType::Int64, Dims{4, 3, 5}, 6)}, Attrs{{"axis", axis}});
  }
  for (DType t : {DType::Float32, DType::Float16, DType::Int32, DType::UInt8, DType::Bool, DType::Float64}) {
    CAPTURE(dtype_name(t));
    Tensor x = values_of(t, Dims{3, 4, 5}, 7);
    both(Prim::pad, {x}, Attrs{{"paddings", std::vector<int64_t>{1, 0, 2, 3, 0, 4}}, {"value", -2.75}});
    both(Prim::pad, {Tensor::view(values_of(t, Dims{5, 4}, 8), Dims{4, 5}, Dims{1, 4}, 0)},
         Attrs{{"paddings", std::vector<int64_t>{0, 2, 1, 1}}, {"value", 300.5}});
    both(Prim::pad, {values_of(t, Dims{0, 3}, 9)}, Attrs{{"paddings", std::vector<int64_t>{1, 1, 0, 0}}, {"value", 1.0}});
  }
}
