// The target-independent part of graph mode's back end (target.h).
#include "jit/target.h"

#include <algorithm>
#include <stdexcept>

#include "jit/passes/pipeline.h"

namespace msl::jit {

BackendResult Target::compile(BackendContext& ctx, Specialized& sp) const {
  BackendResult result;
  result.primitives = true;
  for (const Pass& p : passes()) {
    if (!p.run(ctx, sp, result)) continue;
    if (!result.primitives) break;
    if (ctx.after_pass) ctx.after_pass(p.name, sp);
  }
  return result;
}

bool run_expand(BackendContext& ctx, Specialized& sp, BackendResult& result) {
  if (!ctx.expand) return true;
  result.why = ctx.expand(sp);
  result.primitives = result.why.empty();
  return true;
}

const Target& target_for(kernels::DeviceType device) {
  if (device == cpu_target().device()) return cpu_target();
  throw std::invalid_argument("graph mode has no back end for this device");
}

std::vector<std::string> all_pass_names() {
  std::vector<std::string> out = pass_names();
  for (const Target* t : {&cpu_target()})
    for (const Target::Pass& p : t->passes())
      if (std::find(out.begin(), out.end(), p.name) == out.end()) out.push_back(p.name);
  return out;
}

}  // namespace msl::jit
