// GPU code that outlives the process: NVRTC's images (cubins, or PTX for a
// GPU newer than NVRTC) kept in a persistent store, so that a second run of
// a script compiles no kernel. Every GPU kernel goes through here: eager
// kernels as the device first launches each (CudaDevice::function), graph
// mode's units as the CUDA target compiles them (jit/codegen/cuda_unit.h).
//
// The store is the on-disk compile cache (jit/codegen/object_cache.h),
// which the kernels cannot name (it is above them), so whoever links both
// installs it: jit::codegen::install_gpu_image_store, called by the
// interpreter's start-up and by graph units' compiles. Without a store
// every process compiles its kernels again.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace msl::kernels::cuda {

struct ImageStore {
  // The image stored under `key`, or nothing; never throws.
  std::function<std::optional<std::string>(const std::string& key)> load;
  // Best-effort: a store that cannot write costs the next run a compile.
  std::function<void(const std::string& key, const std::string& image)> store;
};
void set_image_store(ImageStore store);

struct CachedImage {
  std::string image;
  bool from_store = false;  // read from the store, NVRTC not run
};

// `source` compiled by NVRTC for `arch` (PTX when `ptx`), as nvrtc_compile
// does, or the image the store holds for it under a key naming the source,
// the architecture, cubin or PTX, the NVRTC version and the compile
// options' version. `name` names the program in NVRTC's errors.
CachedImage compile_cached(const std::string& source, const std::string& name, int arch, bool ptx);

}  // namespace msl::kernels::cuda
