// Graph mode's GPU kernels as one NVRTC program per graph: the fused
// elementwise programs of a graph rendered to CUDA C by the GPU's renderer
// (kernels/cuda/elementwise_cuda.h, the second renderer of the programs
// elementwise_jit.h renders to LLVM IR), put in one translation unit and
// compiled once (NVRTC's start-up is ~100 ms: one compile per kernel would
// cost seconds per graph).
//
// Compiled units are kept in the on-disk compile cache (object_cache.h), as
// every GPU image is (kernels/cuda/image_cache.h): a second run of a script
// starts no NVRTC.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "kernels/cuda/program_unit.h"
#include "kernels/elementwise_program.h"

namespace msl::jit::codegen {

// How compile_cuda_unit calls were answered, over the whole process.
struct CudaUnitStats {
  int64_t disk_hits = 0;  // the image came from the on-disk cache
  int64_t compiled = 0;   // compiled by NVRTC
};

// The translation unit of `programs`: the helpers once, then one kernel per
// distinct program, named as kernels::cuda::cuda_kernel_name names it (the
// name its node launches).
std::string render_cuda_unit(std::span<const kernels::EwProgram* const> programs);

// `source` compiled for the architecture graph units are compiled for
// (kernels::cuda::unit_compile_target): from the disk cache when it holds
// the image, else by NVRTC and stored. `name` names the graph in NVRTC's
// errors. Throws DeviceError when NVRTC is missing or rejects the source.
std::shared_ptr<const kernels::cuda::ProgramUnit> compile_cuda_unit(std::string source, const std::string& name);

CudaUnitStats cuda_unit_stats();

// Makes the on-disk compile cache the store of every GPU image, the eager
// kernels' included (kernels/cuda/image_cache.h); idempotent. The
// interpreter calls it at start-up, compile_cuda_unit before compiling.
void install_gpu_image_store();

}  // namespace msl::jit::codegen
