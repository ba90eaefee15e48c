// The target-independent part of graph mode's back end (target.h).
#include "jit/target.h"

#include <algorithm>
#include <string>

#include "jit/passes/fuse_elementwise.h"
#include "jit/passes/fuse_epilogue.h"
#include "jit/passes/memory_plan.h"
#include "jit/passes/pipeline.h"
#include "kernels/trace.h"

namespace msl::jit {

BackendResult Target::compile(BackendContext& ctx, Specialized& sp) const {
  BackendResult result;
  result.primitives = true;
  for (const Pass& p : passes()) {
    kernels::TraceSpan span(p.name, "compile");  // the profiler's timeline: one compile phase
    if (!p.run(ctx, sp, result)) continue;
    if (!result.primitives) break;
    if (ctx.after_pass) ctx.after_pass(p.name, sp);
  }
  return result;
}

bool expand_pass(BackendContext& ctx, Specialized& sp, BackendResult& result) {
  if (!ctx.expand) return true;
  result.why = ctx.expand(sp);
  result.primitives = result.why.empty();
  return true;
}

// Before elementwise fusion, which would otherwise take a bias add and ReLU
// into a loop of its own.
bool fuse_epilogue_pass(BackendContext& ctx, Specialized& sp, BackendResult&) {
  if (!ctx.fuse) return false;
  run_fuse_epilogue(ctx.module, sp);
  return true;
}

bool fuse_elementwise_pass(BackendContext& ctx, Specialized& sp, BackendResult&) {
  if (!ctx.fuse) return false;
  run_fuse_elementwise(ctx.module, sp);
  return true;
}

bool memory_plan_pass(BackendContext& ctx, Specialized& sp, BackendResult& result) {
  result.plan = plan_memory(*sp.graph, sp);
  if (ctx.debug) ctx.debug("@" + sp.graph->name() + ": memory plan: " + result.plan.summary());
  return true;
}

const Target& target_for(kernels::DeviceType device) {
  // The Debug device runs the CPU's kernels (behind its guard).
  if (device == kernels::DeviceType::CUDA) return cuda_target();
  return cpu_target();
}

namespace {
bool first_tensor_device(const std::vector<AbsValue>& items, kernels::DeviceType& out) {
  for (const AbsValue& a : items) {
    if (auto t = a.get_if<AbsTensor>()) {
      out = t->device;
      return true;
    }
    if (auto tuple = a.get_if<AbsTuple>(); tuple && first_tensor_device(tuple->items, out)) return true;
  }
  return false;
}
}  // namespace

kernels::DeviceType device_of(const std::vector<AbsValue>& sig) {
  kernels::DeviceType d;
  return first_tensor_device(sig, d) ? d : kernels::default_device()->type();
}

std::vector<std::string> all_pass_names() {
  std::vector<std::string> out = pass_names();
  for (const Target* t : {&cpu_target(), &cuda_target()})
    for (const Target::Pass& p : t->passes())
      if (std::find(out.begin(), out.end(), p.name) == out.end()) out.push_back(p.name);
  return out;
}

}  // namespace msl::jit
