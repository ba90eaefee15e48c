// Finding the toolkit's libraries (toolkit_library.h).
#include "kernels/cuda/toolkit_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace msl::kernels::cuda {

void* open_toolkit_library(const std::string& soname) {
  auto open = [](const std::string& path) { return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); };
  if (void* h = open(soname)) return h;
#ifdef MSL_CUDA_TOOLKIT_LIBDIR
  if (void* h = open(std::string(MSL_CUDA_TOOLKIT_LIBDIR) + "/" + soname)) return h;
  // cuDNN installs beside the toolkit's lib64 in some layouts.
  if (void* h = open(std::string(MSL_CUDA_TOOLKIT_LIBDIR) + "/../lib/" + soname)) return h;
#endif
  if (const char* home = std::getenv("CUDA_HOME"); home && *home) {
    if (void* h = open(std::string(home) + "/lib64/" + soname)) return h;
    if (void* h = open(std::string(home) + "/lib/" + soname)) return h;
  }
  return nullptr;
}

}  // namespace msl::kernels::cuda
