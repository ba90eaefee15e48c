// apply_momentum and apply_adam on a GPU against the CPU's kernels, three
// steps each, bit for bit (the kernels fuse where the CPU's FMA loops fuse;
// the CPU of a GPU machine has AVX2 and FMA).
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "kernels/device.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/test_tensors.h"

using namespace msl::kernels;

namespace {

Device* gpu() { return cuda_device(0); }

using msl::test::scalar;
using msl::test::values_of;

void require_same(const Tensor& gpu_result, const Tensor& cpu_result) {
  Tensor a = gpu_result.to_host().contiguous();
  REQUIRE(a.nbytes() == cpu_result.nbytes());
  REQUIRE(std::memcmp(a.raw(), cpu_result.raw(), a.nbytes()) == 0);
}

}  // namespace

TEST_CASE("optimizer updates on the GPU give the CPU's bits") {
  uint32_t seed = 1;
  for (DType t : {DType::Float32, DType::Float64}) {
    CAPTURE(dtype_name(t));
    for (bool nesterov : {false, true}) {
      Attrs a{{"use_nesterov", nesterov}, {"gradient_scale", 0.5}, {"weight_decay", 1e-4}};
      Tensor var = values_of(t, Dims{300, 7}, seed++, -1, 1), accum = values_of(t, Dims{300, 7}, seed++, -0.1, 0.1);
      Tensor gvar = var.to_device(gpu()), gaccum = accum.to_device(gpu());
      for (int step = 0; step < 3; ++step) {
        Tensor grad = values_of(t, Dims{300, 7}, seed++, -2, 2);
        Tensor in[] = {var, accum, scalar(0.01), grad, scalar(0.9)};
        execute1(Prim::apply_momentum, in, a);
        Tensor gin[] = {gvar, gaccum, scalar(0.01).to_device(gpu()), grad.to_device(gpu()), scalar(0.9)};
        execute1(Prim::apply_momentum, gin, a);
        require_same(gvar, var);
        require_same(gaccum, accum);
      }
    }
    for (bool decoupled : {false, true}) {
      Attrs a{{"decoupled", decoupled}, {"gradient_scale", 2.0}, {"weight_decay", 0.01}};
      Tensor var = values_of(t, Dims{2100}, seed++, -1, 1), m = values_of(t, Dims{2100}, seed++, -0.1, 0.1);
      Tensor v = values_of(t, Dims{2100}, seed++, 0, 0.01);
      Tensor gvar = var.to_device(gpu()), gm = m.to_device(gpu()), gv = v.to_device(gpu());
      for (int step = 0; step < 3; ++step) {
        Tensor grad = values_of(t, Dims{2100}, seed++, -2, 2);
        Tensor in[] = {var, m, v, scalar(1e-3), scalar(0.9), scalar(0.999), scalar(1e-8), grad};
        execute1(Prim::apply_adam, in, a);
        Tensor gin[] = {gvar, gm, gv, scalar(1e-3), scalar(0.9), scalar(0.999), scalar(1e-8), grad.to_device(gpu())};
        execute1(Prim::apply_adam, gin, a);
        require_same(gvar, var);
        require_same(gm, m);
        require_same(gv, v);
      }
    }
  }
  // The parameter and its state must not share memory, as on the CPU.
  Tensor w = values_of(DType::Float32, Dims{10}, 1, -1, 1).to_device(gpu());
  Tensor in[] = {w, w, scalar(0.1), w, scalar(0.9)};
  CHECK_THROWS_AS(execute1(Prim::apply_momentum, in, Attrs{}), ValueError);
}
