// Compiled-kernel lookup and launches (launch.h).
#include "kernels/cuda/launch.h"

#include <fmt/format.h>

#include <mutex>
#include <unordered_map>
#include <vector>

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

Tensor dense_on(const Tensor& t, DType dt, CudaDevice& dev) {
  if (t.device() == &dev && t.dtype() == dt && t.is_contiguous()) return t;
  Tensor out(dt, t.shape(), &dev);
  copy_tensor(t, out);
  return out;
}

ErrorFlag::ErrorFlag(CudaDevice& dev) : dev_(dev), flag_(DType::Int32, Dims{1}, &dev) {
  int32_t zero = 0;
  dev.copy_from_host(flag_.raw(), &zero, sizeof zero);
  ptr_ = flag_.raw();
}

bool ErrorFlag::raised() {
  int32_t v = 0;
  dev_.copy_to_host(&v, flag_.raw(), sizeof v);
  return v != 0;
}

void check_on_host(Prim p, std::span<const Tensor> host_in, const Attrs& attrs) {
  std::vector<Tensor> out;
  execute(p, host_in, attrs, out);
}

Tensor stand_in(const Tensor& t) {
  Dims zeros;
  zeros.resize(t.ndim(), 0);
  return Tensor::view(Tensor(t.dtype(), Dims{1}), t.shape(), zeros, 0);
}

}  // namespace msl::kernels::cuda
