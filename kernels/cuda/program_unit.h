// A compiled unit of graph mode's GPU kernels: the fused elementwise
// kernels of one graph (elementwise_cuda.h's programs) as one CUDA C
// translation unit, compiled by NVRTC once for the graph (NVRTC's start-up
// costs ~100 ms, so one compile per kernel would cost seconds per graph).
//
// jit/ makes units (jit/codegen/cuda_unit.h: rendering, NVRTC, the on-disk
// cache) and runs their kernels through launch_unit_kernel. Nothing here
// needs cuda.h, so jit/ uses it on every build; without the CUDA back end
// the launch throws DeviceError (device_cuda_absent.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>

#include "kernels/tensor.h"

namespace msl::kernels::cuda {

struct ProgramUnit {
  std::string source;  // the CUDA C
  std::string image;   // NVRTC's cubin for sm_<arch>, or PTX for compute_<arch> when `ptx`
  int arch = 0;
  bool ptx = false;

  // The unit's kernels once loaded on a GPU, by (GPU ordinal, kernel name):
  // a replayed step looks its functions up here, not in the driver.
  mutable std::mutex loaded_mu;
  mutable std::map<std::pair<int, std::string>, void*> loaded;
};

// The architecture graph units are compiled for: the first GPU's (PTX for
// the newest architecture NVRTC knows when the GPU is newer than NVRTC, the
// driver finishing the compile), or, on a machine without a GPU, sm_90 (the
// H100 the project's GPU tests run on), so a check compiles for a real
// target. Throws DeviceError when NVRTC cannot be loaded.
void unit_compile_target(int& arch, bool& ptx);

// Runs kernel `kernel` of `unit`, an elementwise program's kernel
// (elementwise_cuda.h's signature), over n elements on the GPU the tensors
// live on: `inputs` dense float32 tensors, `results` the program's outputs
// then its `num_sums` sums, which are zeroed first (the kernel adds into
// them). `what` names the fused node in errors.
void launch_unit_kernel(const ProgramUnit& unit, const std::string& kernel, int64_t n, std::span<const Tensor> inputs,
                        std::span<const Tensor> results, size_t num_sums, const char* what);

}  // namespace msl::kernels::cuda
