// The CUDA driver API, loaded when first asked for.
//
// MSL built with CUDA must start and run on the CPU on a machine without an
// NVIDIA driver, so nothing links libcuda: the functions below are looked up
// in libcuda.so.1 with dlopen/dlsym the first time cuda_driver() is called.
// Only the driver API is used (no libcudart): it is what NVRTC's cubins
// launch with, and the driver is the one library every GPU machine has.
#pragma once

#include <cuda.h>

#include <string>

namespace msl::kernels::cuda {

// The one list of the driver functions MSL calls. The names are cuda.h's
// macros (cuMemAlloc is cuMemAlloc_v2), so the symbol looked up is the
// versioned one the header declares.
#define MSL_CUDA_DRIVER_FUNCTIONS(X)                                                                   \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)            \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                        \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize)      \
  X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemcpyHtoDAsync)   \
  X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuStreamCreate) X(cuStreamDestroy)   \
  X(cuStreamSynchronize) X(cuStreamWaitEvent) X(cuEventCreate) X(cuEventRecord) X(cuEventQuery)        \
  X(cuEventSynchronize) X(cuEventDestroy) X(cuModuleLoadData) X(cuModuleUnload) X(cuModuleGetFunction) \
  X(cuLaunchKernel)

struct Driver {
#define MSL_X(fn) decltype(&::fn) fn = nullptr;
  MSL_CUDA_DRIVER_FUNCTIONS(MSL_X)
#undef MSL_X
};

// The loaded and initialized (cuInit) driver. Throws DeviceError naming
// what is missing: "no NVIDIA driver: libcuda.so.1: cannot open shared
// object file", a symbol the installed driver lacks, or cuInit's error
// (CUDA_ERROR_NO_DEVICE on a machine with a driver and no GPU). The answer
// is remembered: a later call throws the same error without retrying.
const Driver& driver();
// "" when driver() succeeds, else its message; never throws.
std::string driver_unavailable_reason();

// Throws DeviceError "<call> (<what>): CUDA_ERROR_...: <description>"
// unless r is CUDA_SUCCESS. `what` names the primitive or operation the
// call served ("" leaves the parenthesis out).
void check(CUresult r, const char* call, const char* what = "");

}  // namespace msl::kernels::cuda
