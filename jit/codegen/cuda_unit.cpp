// Graph units of GPU kernels (cuda_unit.h).
#include "jit/codegen/cuda_unit.h"


#include <atomic>
#include <mutex>
#include <set>

#include "jit/codegen/object_cache.h"
#include "kernels/cuda/elementwise_cuda.h"
#include "kernels/cuda/image_cache.h"

namespace msl::jit::codegen {

namespace {

std::atomic<int64_t> g_compiled{0}, g_disk_hits{0};

}  // namespace

std::string render_cuda_unit(std::span<const kernels::EwProgram* const> programs) {
  std::string unit = kernels::cuda::cuda_elementwise_helpers();
  std::set<std::string> rendered;
  for (const kernels::EwProgram* p : programs) {
    std::string name = kernels::cuda::cuda_kernel_name(*p);
    if (rendered.insert(name).second) unit += "\n" + kernels::cuda::render_cuda_kernel(*p, name);
  }
  return unit;
}

void install_gpu_image_store() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The directory is read from the environment at each use, as for the
    // CPU's loops (ObjectCache::from_environment).
    kernels::cuda::set_image_store({
        [](const std::string& key) { return ObjectCache::from_environment().load(key); },
        [](const std::string& key, const std::string& image) { ObjectCache::from_environment().store(key, image); },
    });
  });
}

std::shared_ptr<const kernels::cuda::ProgramUnit> compile_cuda_unit(std::string source, const std::string& name) {
  install_gpu_image_store();
  auto unit = std::make_shared<kernels::cuda::ProgramUnit>();
  kernels::cuda::unit_compile_target(unit->arch, unit->ptx);
  kernels::cuda::CachedImage image = kernels::cuda::compile_cached(source, name, unit->arch, unit->ptx);
  ++(image.from_store ? g_disk_hits : g_compiled);
  unit->image = std::move(image.image);
  unit->source = std::move(source);
  return unit;
}

CudaUnitStats cuda_unit_stats() { return {g_disk_hits.load(), g_compiled.load()}; }

}  // namespace msl::jit::codegen
