// The CUDA target (target.h): graph mode on an NVIDIA GPU. The same front
// half, epilogue fusion and elementwise fusion as the CPU's; each fused
// cluster's program is rendered to CUDA C by the GPU's renderer, and all
// the kernels of a graph are compiled by NVRTC as one program
// (codegen/cuda_unit.h). The fused contractions run on cuBLASLt (matmul
// with its bias epilogue) and cuDNN (convolutions, their epilogue a
// pointwise kernel; kernels/cuda/). Activations stay NCHW: the CPU's
// channel-blocked layout is oneDNN's.
//
// Nothing in these passes reads a tensor, so the target also compiles
// graphs whose arguments are on the CPU (msl --graph-target cuda, --emit=cuda):
// the fused nodes then run as the CPU's loops and the unit is compiled for
// sm_90 when there is no GPU, which is how CI checks every kernel the test
// suite's graphs generate without a GPU.
#include <string>

#include "jit/codegen/cuda_unit.h"
#include "jit/fused_elementwise.h"
#include "jit/target.h"

namespace msl::jit {

namespace {

bool compile_cuda(BackendContext& ctx, Specialized& sp, BackendResult&) {
  if (!ctx.fuse) return false;
  size_t kernels = attach_cuda_unit(*sp.graph);
  if (kernels > 0 && ctx.debug)
    ctx.debug("@" + sp.graph->name() + ": " + std::to_string(kernels) + " fused kernels compiled as one CUDA program");
  return true;
}

class CudaTarget final : public Target {
 public:
  const char* name() const override { return "CUDA"; }
  kernels::DeviceType device() const override { return kernels::DeviceType::CUDA; }
  std::span<const Pass> passes() const override { return kPasses; }
  void prepare_loaded(ir::FuncGraph& g) const override { attach_cuda_unit(g); }

 private:
  // clang-format off
  static constexpr Pass kPasses[] = {
      {"expand",           expand_pass},
      {"fuse_epilogue",    fuse_epilogue_pass},
      {"fuse_elementwise", fuse_elementwise_pass},
      {"compile_cuda",     compile_cuda},
      {"memory_plan",      memory_plan_pass},
  };
  // clang-format on
};

}  // namespace

size_t attach_cuda_unit(const ir::FuncGraph& g) {
  std::vector<const FusedElementwise*> nodes = fused_nodes(g);
  if (nodes.empty()) return 0;
  std::vector<const kernels::EwProgram*> programs;
  for (const FusedElementwise* f : nodes) programs.push_back(&f->program());
  auto unit = codegen::compile_cuda_unit(codegen::render_cuda_unit(programs), "@" + g.name());
  for (const FusedElementwise* f : nodes) f->use_unit(unit);
  return nodes.size();
}

const Target& cuda_target() {
  static const CudaTarget target;
  return target;
}

}  // namespace msl::jit
