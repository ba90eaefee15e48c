// Graph units of GPU kernels (cuda_unit.h).
#include "jit/codegen/cuda_unit.h"

#include <fmt/format.h>

#include <atomic>
#include <set>

#include "jit/codegen/object_cache.h"
#include "kernels/cuda/elementwise_cuda.h"
#include "kernels/cuda/nvrtc_compiler.h"

namespace msl::jit::codegen {

namespace {

// Bumped when what a unit's image depends on changes beyond its key's other
// parts (NVRTC's options, nvrtc_compiler.cpp).
constexpr int kUnitFormat = 1;

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

std::shared_ptr<const kernels::cuda::ProgramUnit> compile_cuda_unit(std::string source, const std::string& name) {
  auto unit = std::make_shared<kernels::cuda::ProgramUnit>();
  kernels::cuda::unit_compile_target(unit->arch, unit->ptx);
  std::string key = fmt::format("msl cuda unit {}\narch {}\nimage {}\nnvrtc {}\n", kUnitFormat, unit->arch,
                                unit->ptx ? "ptx" : "cubin", kernels::cuda::nvrtc_version()) +
                    source;
  ObjectCache disk = ObjectCache::from_environment();
  if (std::optional<std::string> image = disk.load(key)) {
    unit->image = std::move(*image);
    ++g_disk_hits;
  } else {
    unit->image = kernels::cuda::nvrtc_compile(source, name, unit->arch, unit->ptx).image;
    disk.store(key, unit->image);  // best-effort, as for the CPU's loops
    ++g_compiled;
  }
  unit->source = std::move(source);
  return unit;
}

CudaUnitStats cuda_unit_stats() { return {g_disk_hits.load(), g_compiled.load()}; }

}  // namespace msl::jit::codegen
