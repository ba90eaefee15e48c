// Seeded random tensors on a GPU against the CPU's: the same Philox stream,
// so random_uniform, float32/16-bit random_normal and dropout are bit for
// bit the CPU's; float64 normals use CUDA's double log/sqrt/sin/cos, within
// a few ulps of the CPU's libm.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/device.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"

using namespace msl::kernels;

namespace {

Device* gpu() { return cuda_device(0); }

// Runs a primitive without tensor inputs on the GPU by making it the default device.
Tensor on_gpu(Prim p, const Attrs& a) {
  Device* before = default_device();
  set_default_device(gpu());
  Tensor t;
  try {
    t = execute1(p, {}, a);
  } catch (...) {
    set_default_device(before);
    throw;
  }
  set_default_device(before);
  return t;
}

}  // namespace

TEST_CASE("seeded random tensors and dropout on the GPU are the CPU's") {
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (Prim p : {Prim::random_uniform, Prim::random_normal})
      for (int64_t n : {1, 7, 100003}) {
        CAPTURE(dtype_name(t));
        CAPTURE(prim_name(p));
        CAPTURE(n);
        Attrs a{{"shape", std::vector<int64_t>{n}}, {"dtype", t}, {"seed", int64_t{1234}}, {"offset", int64_t{77}}};
        Tensor want = execute1(p, {}, a);
        Tensor got_dev = on_gpu(p, a);
        REQUIRE(got_dev.device()->type() == DeviceType::CUDA);
        Tensor got = got_dev.to_host();
        if (p == Prim::random_normal && t == DType::Float64) {
          for (int64_t i = 0; i < n; ++i)
            REQUIRE(std::fabs(got.item_at(i) - want.item_at(i)) <= 1e-14 * (std::fabs(want.item_at(i)) + 1));
        } else {
          REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
        }
      }
  for (DType t : {DType::Float16, DType::Float32, DType::Float64}) {
    Tensor x(DType::Float64, Dims{5001});
    for (int64_t i = 0; i < 5001; ++i) x.data<double>()[i] = std::sin(static_cast<double>(i));
    Tensor xt(t, Dims{5001});
    copy_tensor(x, xt);
    Attrs a{{"keep_prob", 0.7}, {"seed", int64_t{5}}, {"offset", int64_t{3}}};
    Tensor cin[] = {xt};
    Tensor gin[] = {xt.to_device(gpu())};
    std::vector<Tensor> want, got;
    execute(Prim::dropout, cin, a, want);
    execute(Prim::dropout, gin, a, got);
    for (size_t k = 0; k < 2; ++k) {
      Tensor g = got[k].to_host();
      REQUIRE(std::memcmp(g.raw(), want[k].raw(), want[k].nbytes()) == 0);
    }
  }
}
