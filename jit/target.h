// A Target is graph mode's back end for one kind of device: the passes that
// turn a specialized graph (the front half's result: lowered, differentiated,
// cleaned up and specialized at the argument types) into the graph the
// executor runs there, in order, written once per target.
//
// The first pass of every target is "expand": library calls (an nn.Dense
// called from a construct, a gradient rule written in MSL) are expanded into
// primitives at the types found. Expansion needs the live interpreter
// objects, so the front provides it (BackendContext::expand, interp's
// graph_expand.cpp); the passes after it see primitives only and are the
// target's own. What the front wants to see of the compilation (msl
// --print-after, save_graphs, debug-level reports, --emit=llvm) reaches it
// through BackendContext's callbacks: nothing in jit/ knows the interpreter.
//
// The CPU target (target_cpu.cpp): expand, fuse_epilogue (oneDNN
// contractions with their bias/activation/batch norm/residual), layout_choice
// (channel-blocked activations), fuse_elementwise (LLVM loops), memory_plan.
// The CUDA target (target_cuda.cpp): expand, fuse_epilogue (cuBLASLt and
// cuDNN calls with their epilogues), fuse_elementwise (the same
// clusters), compile_cuda (every fused kernel of the graph in one NVRTC
// program), memory_plan. A target is chosen by the arguments' device.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "jit/passes/memory_plan.h"
#include "jit/specialize.h"
#include "kernels/device.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

struct BackendContext {
  explicit BackendContext(ir::IrModule& m) : module(m) {}
  ir::IrModule& module;
  // GRAPH_MODE fuses; PYNATIVE_MODE's compiled calls (and msl --dump, which
  // writes every op's output) run one kernel per primitive.
  bool fuse = true;
  // The channel block activations are kept in (0: NCHW).
  int layout_block = 0;
  // The front's expansion of `sp` into primitives. Returns "" when `sp` is
  // now a graph of primitives, else why it is not (library calls remain);
  // throws SpecializeError when expansion fails. Null: `sp` is taken as it
  // is.
  std::function<std::string(Specialized& sp)> expand;
  // After each pass that ran, with its result (--print-after, --emit=llvm).
  std::function<void(const std::string& pass, const Specialized& sp)> after_pass;
  // A debug-level report (msl --log-level debug).
  std::function<void(const std::string& message)> debug;
};

// What compiling for a target gave.
struct BackendResult {
  // False when the graph is not (only) primitives after expansion: it then
  // runs as specialized, with library calls made at run time. `why` says so.
  bool primitives = false;
  std::string why;
  MemoryPlan plan;  // of the compiled graph, when `primitives`
};

class Target {
 public:
  // One pass after specialization: `run` returns false when it did not run
  // (fusion outside GRAPH_MODE), and then after_pass is not called.
  struct Pass {
    const char* name;
    bool (*run)(BackendContext& ctx, Specialized& sp, BackendResult& result);
  };

  virtual ~Target() = default;
  virtual const char* name() const = 0;
  virtual kernels::DeviceType device() const = 0;
  // The passes in order, "expand" first.
  virtual std::span<const Pass> passes() const = 0;

  // Runs the passes on `sp` in order; stops after expansion when the graph
  // is not primitives.
  BackendResult compile(BackendContext& ctx, Specialized& sp) const;

  // A compiled graph loaded from the disk cache (the passes' result, not
  // rerun): attaches what the passes made beside the graph (the CUDA
  // target's compiled unit). Nothing for the CPU, whose loops are compiled
  // on first use.
  virtual void prepare_loaded(ir::FuncGraph&) const {}
};

const Target& cpu_target();
const Target& cuda_target();
// The target of a device: CPU (and the debug device, which runs the CPU's
// kernels) or CUDA.
const Target& target_for(kernels::DeviceType device);
// The device a graph specialized at `sig` runs on: its first tensor
// argument's (inside tuples too), else the default device.
kernels::DeviceType device_of(const std::vector<AbsValue>& sig);

// What --print-after accepts besides "all": the clean-up passes
// (pipeline.h) and every target's passes, each name once.
std::vector<std::string> all_pass_names();

// The passes more than one target runs (target.cpp), in the form of
// Target::Pass::run: the front's expansion (every target's first); the
// fusions, which run in GRAPH_MODE only (ctx.fuse); the memory plan.
bool expand_pass(BackendContext& ctx, Specialized& sp, BackendResult& result);
bool fuse_epilogue_pass(BackendContext& ctx, Specialized& sp, BackendResult& result);
bool fuse_elementwise_pass(BackendContext& ctx, Specialized& sp, BackendResult& result);
bool memory_plan_pass(BackendContext& ctx, Specialized& sp, BackendResult& result);

// The CUDA target's compile_cuda pass on `g`: its fused nodes' programs
// compiled as one unit (codegen/cuda_unit.h), which each node then runs on
// a GPU. Returns the number of fused nodes (0: nothing compiled). Throws
// DeviceError when NVRTC is missing or rejects the unit.
size_t attach_cuda_unit(const ir::FuncGraph& g);

}  // namespace msl::jit
