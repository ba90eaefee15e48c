// The CPU target (target.h): oneDNN contractions with fused epilogues, the
// channel-blocked activation layout, elementwise clusters compiled to LLVM
// loops, and the memory plan the executor's releases follow.
#include <string>

#include "jit/passes/layout_choice.h"
#include "jit/passes/master_weights.h"
#include "jit/target.h"

namespace msl::jit {

namespace {

// After epilogue fusion (its fused contractions take NCHW) and before
// elementwise fusion, which then fuses the blocked elementwise ops.
bool layout_choice(BackendContext& ctx, Specialized& sp, BackendResult&) {
  if (!ctx.fuse) return false;
  LayoutReport layout = run_layout_choice(ctx.module, sp, ctx.layout_block);
  if (layout.blocked > 0 && ctx.debug)
    ctx.debug("@" + sp.graph->name() + ": layout: " + std::to_string(layout.blocked) + " ops on blocked activations, " +
              std::to_string(layout.to_blocked) + " reorders into the blocked layout, " +
              std::to_string(layout.from_blocked) + " back to NCHW");
  return true;
}

// After epilogue fusion (float32 contractions only) and before the layout
// choice, which then sees the convolutions' operands as they will run.
bool master_weights(BackendContext& ctx, Specialized& sp, BackendResult&) {
  if (!ctx.fuse) return false;
  run_master_weights(ctx.module, sp);
  return true;
}

class CpuTarget final : public Target {
 public:
  const char* name() const override { return "CPU"; }
  kernels::DeviceType device() const override { return kernels::DeviceType::CPU; }
  std::span<const Pass> passes() const override { return kPasses; }

 private:
  // clang-format off
  static constexpr Pass kPasses[] = {
      {"expand",           expand_pass},
      {"fuse_epilogue",    fuse_epilogue_pass},
      {"master_weights",   master_weights},
      {"layout_choice",    layout_choice},
      {"fuse_elementwise", fuse_elementwise_pass},
      {"memory_plan",      memory_plan_pass},
  };
  // clang-format on
};

}  // namespace

const Target& cpu_target() {
  static const CpuTarget target;
  return target;
}

}  // namespace msl::jit
