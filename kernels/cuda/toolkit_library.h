// Loading a CUDA toolkit library (NVRTC, cuBLASLt, cuDNN) with dlopen: by
// its soname from the library path, else from the toolkit MSL was built
// against, else from $CUDA_HOME/lib64 and $CUDA_HOME/lib.
#pragma once

#include <string>

namespace msl::kernels::cuda {

// The library's handle (never closed), or nullptr when none of the places
// has it.
void* open_toolkit_library(const std::string& soname);

}  // namespace msl::kernels::cuda
