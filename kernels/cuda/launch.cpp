// Compiled-kernel lookup and launches (launch.h).
#include "kernels/cuda/launch.h"

#include <fmt/format.h>

#include <mutex>
#include <unordered_map>

namespace msl::kernels::cuda {

CUfunction text_kernel(CudaDevice& dev, const std::string& key, const std::string& kernel, const char* what,
                       const std::function<std::string()>& render) {
  // By device and key, so a repeated eager call costs a hash lookup, not a
  // render and an NVRTC lookup; each GPU loads its own module.
  static std::mutex mu;
  static std::unordered_map<std::string, CUfunction> functions;
  std::string full_key = fmt::format("{}|{}", dev.info().ordinal, key);
  {
    std::lock_guard lock(mu);
    auto it = functions.find(full_key);
    if (it != functions.end()) return it->second;
  }
  CUfunction f = dev.function(render(), kernel.c_str(), what);
  std::lock_guard lock(mu);
  functions.emplace(full_key, f);
  return f;
}

void launch_over(CudaDevice& dev, CUfunction f, int64_t n, void** args, const char* what) {
  if (n == 0) return;
  unsigned blocks, threads;
  dev.grid_for(n, blocks, threads);
  dev.launch(f, blocks, threads, args, what);
}

}  // namespace msl::kernels::cuda
