// What every GPU primitive kernel does around its CUDA C: find the device
// of a tensor, get the kernel compiled from its text (once per process and
// GPU), and launch it over n elements.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <string>

#include "kernels/cuda/device_cuda.h"
#include "kernels/tensor.h"

namespace msl::kernels::cuda {

inline CudaDevice& device_of(const Tensor& t) { return static_cast<CudaDevice&>(*t.device()); }
// A 0-d CPU tensor: a Python number or host scalar, passed to a kernel by value.
inline bool host_scalar(const Tensor& t) { return t.ndim() == 0 && t.device()->type() == DeviceType::CPU; }

// The kernel `kernel` of the text `render()` returns, compiled on `dev` the
// first time `key` is asked for (key: whatever determines the text, e.g.
// the kernel's name when the name encodes it); later calls are a lookup.
// `what` names the primitive in errors.
CUfunction text_kernel(CudaDevice& dev, const std::string& key, const std::string& kernel, const char* what,
                       const std::function<std::string()>& render);

// Launches `f` as a grid-stride loop over n elements (nothing when n == 0).
void launch_over(CudaDevice& dev, CUfunction f, int64_t n, void** args, const char* what);

}  // namespace msl::kernels::cuda
