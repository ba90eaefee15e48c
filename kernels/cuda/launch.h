// What every GPU primitive kernel does around its CUDA C: find the device
// of a tensor, get the kernel compiled from its text (once per process and
// GPU), and launch it over n elements.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "kernels/attrs.h"
#include "kernels/cuda/device_cuda.h"
#include "kernels/primitives.h"
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

// `t` as a contiguous tensor of dtype `dt` on `dev`: `t` itself when it is
// one, else a converted copy (a host scalar included).
Tensor dense_on(const Tensor& t, DType dt, CudaDevice& dev);

// A device int that kernels set to 1 to report a bad input (an index out
// of range), zeroed at construction; raised() reads it back, which waits
// for the kernels queued before.
class ErrorFlag {
 public:
  explicit ErrorFlag(CudaDevice& dev);
  void** arg() { return &ptr_; }  // the kernel's int* parameter, for args[]
  bool raised();

 private:
  CudaDevice& dev_;
  Tensor flag_;
  void* ptr_ = nullptr;
};

// The CPU's error for inputs a kernel flagged: runs `p`'s CPU kernel on
// `host_in` (host copies of what its checks read; stand_in() for the rest),
// which throws what the CPU throws. Returns when the CPU accepts them.
void check_on_host(Prim p, std::span<const Tensor> host_in, const Attrs& attrs);
// A host tensor of `t`'s dtype and shape whose elements are all one
// uninitialized element (strides 0): an input whose values a check ignores.
Tensor stand_in(const Tensor& t);

}  // namespace msl::kernels::cuda
