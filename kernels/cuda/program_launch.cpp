// Running graph units' kernels on a GPU (program_unit.h).
#include <fmt/format.h>

#include <vector>

#include "kernels/cuda/cuda_driver.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/nvrtc_compiler.h"
#include "kernels/cuda/program_unit.h"
#include "kernels/errors.h"

namespace msl::kernels::cuda {

void unit_compile_target(int& arch, bool& ptx) {
  if (cuda_unavailable_reason(0).empty()) {
    nvrtc_target_for(gpu(0).info().arch, arch, ptx);
    return;
  }
  if (std::string why = nvrtc_unavailable_reason(); !why.empty()) throw DeviceError(why);
  // No GPU: the H100's sm_90 when this NVRTC knows it, else its newest.
  nvrtc_target_for(90, arch, ptx);
  ptx = false;
}

namespace {

CUfunction unit_function(const ProgramUnit& unit, CudaDevice& dev, const std::string& kernel, const char* what) {
  auto key = std::make_pair(dev.info().ordinal, kernel);
  {
    std::lock_guard lock(unit.loaded_mu);
    auto it = unit.loaded.find(key);
    if (it != unit.loaded.end()) return static_cast<CUfunction>(it->second);
  }
  // The module is kept by the device under the image's own bytes' identity:
  // its source and target (two graphs with equal units share it).
  std::string module_key = fmt::format("unit|{}|{}|", unit.arch, unit.ptx ? "ptx" : "cubin") + unit.source;
  CUfunction f = dev.function_in_image(module_key, unit.image, kernel.c_str(), what);
  std::lock_guard lock(unit.loaded_mu);
  unit.loaded.emplace(key, f);
  return f;
}

}  // namespace

void launch_unit_kernel(const ProgramUnit& unit, const std::string& kernel, int64_t n, std::span<const Tensor> inputs,
                        std::span<const Tensor> results, size_t num_sums, const char* what) {
  if (results.empty() || num_sums > results.size())
    throw ValueError(fmt::format("{}: {} results for {} sums", what, results.size(), num_sums));
  CudaDevice& dev = device_of(results[0]);
  for (const Tensor& t : inputs)
    if (t.device() != &dev) throw DeviceError(fmt::format("{}: an input is on {}, not {}", what, t.device()->name(), dev.name()));
  CUfunction f = unit_function(unit, dev, kernel, what);
  // The kernel adds its sums' values into them.
  for (size_t k = results.size() - num_sums; k < results.size(); ++k)
    check(driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(results[k].raw()), 0, results[k].nbytes(), dev.stream()),
          "cuMemsetD8Async", what);
  if (n == 0) return;
  std::vector<void*> pointers;
  for (const Tensor& t : inputs) pointers.push_back(t.raw());
  for (const Tensor& t : results) pointers.push_back(t.raw());
  std::vector<void*> args{&n};
  for (void*& p : pointers) args.push_back(&p);
  launch_over(dev, f, n, args.data(), what);
}

}  // namespace msl::kernels::cuda
