// The GPU tests' comparison of a primitive on the GPU with the CPU's
// kernel: the same inputs (0-d ones stay on the host, as Python numbers
// do), and the GPU's result either the CPU's bits or within a tolerance.
#pragma once

#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kernels/device.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/emulated_launch.h"

namespace msl::test {

inline kernels::Device* gpu() { return kernels::cuda_device(0); }

// `in` on the GPU, 0-d tensors left on the host.
inline std::vector<kernels::Tensor> on_gpu(const std::vector<kernels::Tensor>& in) {
  std::vector<kernels::Tensor> out;
  for (const kernels::Tensor& t : in) out.push_back(t.ndim() == 0 ? t : t.to_device(gpu()));
  return out;
}

// The GPU's result against the CPU's: the same bits when rtol is 0, else
// elementwise within require_matches's tolerance (emulated_launch.h).
inline void require_same(const kernels::Tensor& gpu_result, const kernels::Tensor& cpu_result, double rtol = 0) {
  REQUIRE(gpu_result.device()->type() == kernels::DeviceType::CUDA);
  kernels::Tensor a = gpu_result.to_host().contiguous(), b = cpu_result.contiguous();
  REQUIRE(a.shape() == b.shape());
  REQUIRE(a.dtype() == b.dtype());
  if (rtol == 0)
    REQUIRE(std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
  else
    require_matches(a, b, rtol);
}

// Runs p on the CPU and on the GPU and compares (require_same).
inline void both(kernels::Prim p, const std::vector<kernels::Tensor>& in, const kernels::Attrs& attrs,
                 double rtol = 0) {
  require_same(kernels::execute1(p, on_gpu(in), attrs), kernels::execute1(p, in, attrs), rtol);
}

}  // namespace msl::test
