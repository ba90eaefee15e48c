// Loading NVRTC and compiling with it (nvrtc_compiler.h).
#include "kernels/cuda/nvrtc_compiler.h"

#include <cuda.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <nvrtc.h>

#include "kernels/cuda/toolkit_library.h"
#include "kernels/errors.h"

namespace msl::kernels::cuda {

namespace {

#define MSL_NVRTC_FUNCTIONS(X)                                                                        \
  X(nvrtcGetErrorString) X(nvrtcVersion) X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)        \
  X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) X(nvrtcGetPTXSize) X(nvrtcGetPTX) \
  X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN) X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog)

struct Nvrtc {
#define MSL_X(fn) decltype(&::fn) fn = nullptr;
  MSL_NVRTC_FUNCTIONS(MSL_X)
#undef MSL_X
  std::string error;
};

// The soname of the NVRTC of the toolkit MSL was built with (NVRTC's ABI
// is stable within a major version).
std::string soname() { return fmt::format("libnvrtc.so.{}", CUDA_VERSION / 1000); }

Nvrtc load() {
  Nvrtc n;
  void* h = open_toolkit_library(soname());
  if (!h) {
    n.error = fmt::format("NVRTC not found: {} is not on the library path (install the CUDA toolkit's NVRTC or set "
                          "CUDA_HOME)",
                          soname());
    return n;
  }
#define MSL_X(fn)                                                                \
  n.fn = reinterpret_cast<decltype(&::fn)>(dlsym(h, #fn));                       \
  if (!n.fn) {                                                                   \
    n.error = fmt::format("NVRTC is too old: {} has no {}", soname(), #fn);      \
    return n;                                                                    \
  }
  MSL_NVRTC_FUNCTIONS(MSL_X)
#undef MSL_X
  return n;
}

const Nvrtc& loaded() {
  static const Nvrtc n = load();
  return n;
}

const Nvrtc& nvrtc() {
  const Nvrtc& n = loaded();
  if (!n.error.empty()) throw DeviceError(n.error);
  return n;
}

void check(const Nvrtc& n, nvrtcResult r, const char* call, const std::string& name) {
  if (r != NVRTC_SUCCESS) throw DeviceError(fmt::format("{} ({}): {}", call, name, n.nvrtcGetErrorString(r)));
}

// Destroys the program however the compile ends.
struct Program {
  const Nvrtc& n;
  nvrtcProgram p = nullptr;
  ~Program() {
    if (p) n.nvrtcDestroyProgram(&p);
  }
};

}  // namespace

NvrtcOutput nvrtc_compile(const std::string& source, const std::string& name, int arch, bool ptx) {
  const Nvrtc& n = nvrtc();
  Program prog{n};
  std::string file = name + ".cu";
  check(n, n.nvrtcCreateProgram(&prog.p, source.c_str(), file.c_str(), 0, nullptr, nullptr), "nvrtcCreateProgram",
        name);
  // The same choices as the CPU's generated loops: no contraction into FMA
  // (LLVM's default there), IEEE division and square root, no flush of
  // denormals; exp and the functions built on it are the programs' own. So
  // an elementwise kernel's outputs are the CPU loop's bits
  // (elementwise_cuda.h).
  std::string gpu = fmt::format("--gpu-architecture={}_{}", ptx ? "compute" : "sm", arch);
  const char* options[] = {gpu.c_str(), "--std=c++17", "--fmad=false", "--ftz=false", "--prec-div=true",
                           "--prec-sqrt=true", "-default-device"};
  nvrtcResult r = n.nvrtcCompileProgram(prog.p, static_cast<int>(std::size(options)), options);
  NvrtcOutput out;
  size_t log_size = 0;
  n.nvrtcGetProgramLogSize(prog.p, &log_size);
  if (log_size > 1) {
    out.log.resize(log_size);
    n.nvrtcGetProgramLog(prog.p, out.log.data());
    out.log.resize(log_size - 1);  // the terminating NUL
  }
  if (r != NVRTC_SUCCESS)
    throw DeviceError(fmt::format("NVRTC could not compile {} for sm_{}: {}\n{}", name, arch,
                                  n.nvrtcGetErrorString(r), out.log));
  size_t size = 0;
  if (ptx) {
    check(n, n.nvrtcGetPTXSize(prog.p, &size), "nvrtcGetPTXSize", name);
    out.image.resize(size);
    check(n, n.nvrtcGetPTX(prog.p, out.image.data()), "nvrtcGetPTX", name);
  } else {
    check(n, n.nvrtcGetCUBINSize(prog.p, &size), "nvrtcGetCUBINSize", name);
    out.image.resize(size);
    check(n, n.nvrtcGetCUBIN(prog.p, out.image.data()), "nvrtcGetCUBIN", name);
  }
  return out;
}

std::vector<int> nvrtc_supported_archs() {
  const Nvrtc& n = nvrtc();
  int count = 0;
  n.nvrtcGetNumSupportedArchs(&count);
  std::vector<int> archs(static_cast<size_t>(count > 0 ? count : 0));
  if (count > 0) n.nvrtcGetSupportedArchs(archs.data());
  return archs;
}

std::string nvrtc_version() {
  const Nvrtc& n = nvrtc();
  int major = 0, minor = 0;
  n.nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

std::string nvrtc_unavailable_reason() { return loaded().error; }

}  // namespace msl::kernels::cuda
