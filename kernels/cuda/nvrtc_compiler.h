// CUDA C to GPU code with NVRTC, the CUDA toolkit's run-time compiler.
//
// MSL's GPU kernels are CUDA C text (rendered programs, elementwise_cuda.h,
// and the hand-written kernels), compiled when first used for the GPU at
// hand. NVRTC needs no GPU, so the same compiler checks every kernel source
// in CI on a machine without one.
//
// libnvrtc is loaded with dlopen when first needed (as the driver is,
// cuda_driver.h; where it is looked for: toolkit_library.h).
#pragma once

#include <string>
#include <vector>

namespace msl::kernels::cuda {

struct NvrtcOutput {
  std::string image;  // a cubin for sm_<arch>, or PTX when `ptx` was asked for
  std::string log;    // the compiler's warnings (empty when none)
};

// Compiles `source` (one translation unit; its kernels extern "C") for
// compute capability `arch` (90: sm_90), as a cubin, or as PTX for
// compute_<arch> when `ptx` (the driver then compiles it for a newer GPU).
// `name` names the program in messages. Throws DeviceError with NVRTC's log
// when the source does not compile, or naming what is missing when NVRTC
// cannot be loaded.
NvrtcOutput nvrtc_compile(const std::string& source, const std::string& name, int arch, bool ptx = false);

// The architectures this NVRTC compiles for (75, 80, 86, 89, 90, ...).
std::vector<int> nvrtc_supported_archs();
// "12.9"-style version of the loaded NVRTC.
std::string nvrtc_version();
// "" when NVRTC can be loaded, else why not; never throws.
std::string nvrtc_unavailable_reason();

}  // namespace msl::kernels::cuda
