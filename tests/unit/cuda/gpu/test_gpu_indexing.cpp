// The primitives that got their GPU kernels last, on a GPU against the
// CPU's kernels: scatter_add and tensor_scatter_add (integers bit for bit;
// floats within rounding, since atomicAdd adds a repeated row's updates in
// any order), gather_nd and tensor_scatter_update (the last repeated row
// wins) with negative indices, nonzero over many chunks, masked_fill with
// a broadcast mask and a host-scalar value, strided_slice_update with a
// negative stride, to_blocked/from_blocked, the fused convolutions (within
// float32 rounding of cuDNN against oneDNN), and the CPU's errors for
// indices out of range.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/gpu/gpu_compare.h"
#include "tests/unit/cuda/test_tensors.h"

using namespace msl::kernels;

namespace {

using msl::test::both;
using msl::test::int_tensor;
using msl::test::on_gpu;
using msl::test::values_of;

constexpr DType kAddable[] = {DType::Int8,    DType::UInt8,    DType::Int32,   DType::Int64,
                              DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

// The tolerance of a scatter-add's float sums in another order (0: exact).
double add_rtol(DType t) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16: return 1e-2;
    case DType::Float32: return 1e-3;  // ulps of the terms (up to 400), on a sum near 0
    case DType::Float64: return 1e-12;
    default: return 0;
  }
}

// The GPU raises the CPU's exception, with the CPU's message.
template <class E>
void same_error(Prim p, const std::vector<Tensor>& in, const Attrs& attrs) {
  std::string cpu, gpu;
  try {
    execute1(p, in, attrs);
  } catch (const E& e) {
    cpu = e.what();
  }
  try {
    execute1(p, on_gpu(in), attrs);
  } catch (const E& e) {
    gpu = e.what();
  }
  REQUIRE(!cpu.empty());
  CHECK(gpu == cpu);
}

}  // namespace

TEST_CASE("scatter_add and the N-d index primitives on the GPU") {
  uint32_t seed = 1;
  for (DType t : kAddable)
    for (DType it : {DType::Int32, DType::Int64})
      for (int64_t axis : {0, 1, -1}) {
        CAPTURE(dtype_name(t));
        CAPTURE(dtype_name(it));
        CAPTURE(axis);
        Tensor x = values_of(t, Dims{6, 7, 5}, seed++);
        Dims ushape = x.shape();
        ushape[axis < 0 ? 2 : static_cast<int>(axis)] = 8;
        Tensor indices = int_tensor(it, Dims{8}, {4, 0, 4, 1, 4, 3, 0, 2});  // repeated rows
        both(Prim::scatter_add, {x, indices, values_of(t, ushape, seed++)}, Attrs{{"axis", axis}}, add_rtol(t));
      }
  for (DType t : {DType::Bool, DType::Int8, DType::Int32, DType::Float16, DType::Float32, DType::Float64})
    for (DType it : {DType::Int32, DType::Int64})
      for (int K : {1, 2, 3}) {
        CAPTURE(dtype_name(t));
        CAPTURE(dtype_name(it));
        CAPTURE(K);
        Tensor x = values_of(t, Dims{6, 7, 5}, seed++);
        Tensor indices = int_tensor(it, Dims{3, 4, K}, {2, -1, 0, 4, 3, -5, 2, -1, 0, 4, 1, 1});
        both(Prim::gather_nd, {x, indices}, Attrs{});
        Dims ushape{3, 4};
        for (int j = K; j < 3; ++j) ushape.push_back(x.dim(j));
        Tensor updates = values_of(t, ushape, seed++);
        both(Prim::tensor_scatter_update, {x, indices, updates}, Attrs{});
        if (t != DType::Bool) both(Prim::tensor_scatter_add, {x, indices, updates}, Attrs{}, add_rtol(t));
      }
  // Indices out of range: the CPU's errors, word for word.
  Tensor x = values_of(DType::Float32, Dims{6, 7}, seed++);
  same_error<IndexError>(Prim::scatter_add,
                         {x, int_tensor(DType::Int32, Dims{3}, {1, 7, 2}), values_of(DType::Float32, Dims{6, 3}, 2)},
                         Attrs{{"axis", int64_t{1}}});
  Tensor bad_rows = int_tensor(DType::Int64, Dims{3, 2}, {1, 2, 5, -8, 6, 0});
  same_error<IndexOutOfRange>(Prim::gather_nd, {x, bad_rows}, Attrs{});
  same_error<IndexOutOfRange>(Prim::tensor_scatter_update, {x, bad_rows, values_of(DType::Float32, Dims{3}, 3)},
                              Attrs{});
  same_error<IndexOutOfRange>(Prim::tensor_scatter_add, {x, bad_rows, values_of(DType::Float32, Dims{3}, 4)}, Attrs{});
}

TEST_CASE("nonzero, masked_fill and strided_slice_update on the GPU") {
  for (DType t : {DType::Bool, DType::Int8, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16, DType::Float32,
                  DType::Float64})
    for (const Dims& shape : {Dims{9}, Dims{3, 700, 70}, Dims{4, 0}}) {
      CAPTURE(dtype_name(t));
      CAPTURE(shape.str());
      // Every third element zero (Bool: every other one false).
      Tensor d = values_of(DType::Float64, shape, 5);
      for (int64_t i = 0; i < d.numel(); i += 3) d.data<double>()[i] = 0;
      both(Prim::nonzero, {msl::test::converted(d, t)}, Attrs{});
    }
  both(Prim::nonzero, {Tensor::zeros(DType::Float32, Dims{5, 6})}, Attrs{});
  Tensor x = values_of(DType::Float32, Dims{4, 5, 6}, 6);
  Tensor mask = int_tensor(DType::Bool, Dims{5, 1}, {1, 0, 0, 1, 1});
  both(Prim::masked_fill, {x, mask, Tensor::scalar(DType::Float32, -7.25)}, Attrs{});  // a host scalar value
  both(Prim::masked_fill, {x, int_tensor(DType::Bool, Dims{4, 5, 6}, {0, 1, 1}), values_of(DType::Float32, Dims{6}, 7)},
       Attrs{});
  for (DType t : {DType::Float32, DType::Int64, DType::Float16}) {
    Attrs a{{"begin", std::vector<int64_t>{1, 6}},
            {"end", std::vector<int64_t>{5, 0}},
            {"strides", std::vector<int64_t>{2, -2}}};
    both(Prim::strided_slice_update, {values_of(t, Dims{6, 7}, 8), values_of(t, Dims{2, 3}, 9)}, a);
  }
}

TEST_CASE("to_blocked, from_blocked and the fused convolutions on the GPU") {
  for (DType t : {DType::Float32, DType::Float16, DType::Int32})
    for (int64_t block : {8, 16}) {
      CAPTURE(dtype_name(t));
      CAPTURE(block);
      Tensor x = values_of(t, Dims{2, 32, 5, 6}, 10);
      both(Prim::to_blocked, {x}, Attrs{{"block", block}});
      // A permuted (non-contiguous) input.
      both(Prim::to_blocked,
           {Tensor::view(values_of(t, Dims{2, 5, 6, 32}, 11), Dims{2, 32, 5, 6}, Dims{960, 1, 192, 32}, 0)},
           Attrs{{"block", block}});
      Tensor in[] = {x};
      both(Prim::from_blocked, {execute1(Prim::to_blocked, in, Attrs{{"block", block}})}, Attrs{});
    }
  // Values in [-1, 1): the convolutions' sums of 72 products stay far
  // inside the tolerance whatever their cancellation.
  Tensor hundredth = Tensor::scalar(DType::Float32, 0.01);
  Tensor x = execute1(Prim::mul, std::vector<Tensor>{values_of(DType::Float32, Dims{2, 8, 9, 9}, 12), hundredth});
  Tensor w = execute1(Prim::mul, std::vector<Tensor>{values_of(DType::Float32, Dims{16, 8, 3, 3}, 13), hundredth});
  Tensor mean = values_of(DType::Float32, Dims{16}, 14);
  Tensor var = execute1(Prim::abs, std::vector<Tensor>{values_of(DType::Float32, Dims{16}, 15)});
  for (const char* act : {"none", "relu"})
    for (const char* pad : {"same", "valid"}) {
      CAPTURE(act);
      CAPTURE(pad);
      Attrs a{{"pad_mode", std::string(pad)}, {"activation", std::string(act)}};
      both(Prim::conv2d_bias, {x, w, values_of(DType::Float32, Dims{16}, 16)}, a, 1e-4);
      Attrs bn = a;
      bn.set("epsilon", 1e-3);
      std::vector<Tensor> in{x,    w,  values_of(DType::Float32, Dims{16}, 17), values_of(DType::Float32, Dims{16}, 18),
                             mean, var};
      both(Prim::conv2d_bn, in, bn, 1e-4);
      Tensor y = execute1(Prim::conv2d_bn, in, bn);
      in.push_back(values_of(DType::Float32, y.shape(), 19));
      both(Prim::conv2d_bn_add, in, bn, 1e-4);
    }
}
