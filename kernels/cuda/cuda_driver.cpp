// Loading the driver API (cuda_driver.h).
#include "kernels/cuda/cuda_driver.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <mutex>

#include "kernels/errors.h"

namespace msl::kernels::cuda {

namespace {

// Expands a cuda.h macro before stringizing: "cuMemAlloc_v2".
#define MSL_SYMBOL_NAME(fn) MSL_SYMBOL_NAME2(fn)
#define MSL_SYMBOL_NAME2(fn) #fn

struct Loaded {
  Driver driver;
  std::string error;  // empty: loaded and initialized
};

Loaded load() {
  Loaded l;
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace; the
  // handle is never closed (the driver lives as long as the process).
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    l.error = fmt::format("no NVIDIA driver: {}", e ? e : "libcuda.so.1 not found");
    return l;
  }
#define MSL_X(fn)                                                                                    \
  l.driver.fn = reinterpret_cast<decltype(&::fn)>(dlsym(h, MSL_SYMBOL_NAME(fn)));                     \
  if (!l.driver.fn) {                                                                                \
    l.error = fmt::format("the NVIDIA driver is too old: libcuda.so.1 has no {}", MSL_SYMBOL_NAME(fn)); \
    return l;                                                                                        \
  }
  MSL_CUDA_DRIVER_FUNCTIONS(MSL_X)
#undef MSL_X
  CUresult r = l.driver.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    const char* text = nullptr;
    l.driver.cuGetErrorName(r, &name);
    l.driver.cuGetErrorString(r, &text);
    l.error = r == CUDA_ERROR_NO_DEVICE ? std::string("no CUDA device: the NVIDIA driver found no GPU")
                                        : fmt::format("cuInit failed: {}: {}", name ? name : "?", text ? text : "?");
    return l;
  }
  int version = 0;
  l.driver.cuDriverGetVersion(&version);
  if (version < CUDA_VERSION)
    l.error = fmt::format("the NVIDIA driver supports CUDA {}.{}; MSL was built for CUDA {}.{} (update the driver)",
                          version / 1000, version % 1000 / 10, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const Driver& driver() {
  const Loaded& l = loaded();
  if (!l.error.empty()) throw DeviceError(l.error);
  return l.driver;
}

std::string driver_unavailable_reason() { return loaded().error; }

void check(CUresult r, const char* call, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  const Driver& d = loaded().driver;
  if (d.cuGetErrorName) d.cuGetErrorName(r, &name);
  if (d.cuGetErrorString) d.cuGetErrorString(r, &text);
  std::string where = *what ? fmt::format("{} ({})", call, what) : std::string(call);
  std::string code = name ? std::string(name) : fmt::format("CUresult {}", static_cast<int>(r));
  throw DeviceError(fmt::format("{}: {}: {}", where, code, text ? text : "unknown error"));
}

}  // namespace msl::kernels::cuda
