// Memory planning: how many bytes a compiled graph's intermediates need at
// once, given that each value is released after its last use and that a
// fused elementwise loop writes its result over an operand that dies there.
//
// The executor does the releasing (jit/exec/executor.cpp drops each
// value at the point lang/ir/liveness.h computes) and the device's caching
// allocator (kernels/caching_allocator.h) hands a buffer released on a stream
// to the next allocation of its size class on that stream, so buffers are
// reused across the step without a static arena. The plan counts bytes
// only: it holds for any device whose allocator is stream-ordered that way
// (the Debug device unmaps instead, and is only slower).
// A FusedElementwise node writes a result over an operand that dies there
// when nothing else holds its buffer (same elements, float32): the
// executor hands such operands over unshared and FusedElementwise::run
// checks the buffer's reference count, which is what this plan predicts.
//
// plan_memory() replays the graph's order over the types of a specialized
// graph: every Compute primitive and fused loop allocates its result;
// views, tuple_getitem, make_tuple and depend keep their operands' buffers
// alive instead; the graph's parameters belong to the caller and are not
// counted. The peak is what `msl --log-level debug` and save_graphs report
// per graph; `total_bytes` (every intermediate kept to the end, what an
// executor without liveness needs) is the comparison.
#pragma once

#include <cstdint>
#include <string>

#include "jit/specialize.h"
#include "lang/ir/func_graph.h"

namespace msl::jit {

struct MemoryPlan {
  int64_t peak_bytes = 0;     // most intermediate bytes live at once
  int64_t total_bytes = 0;    // sum of every intermediate's bytes
  int64_t buffers = 0;        // intermediates that allocate
  int64_t in_place = 0;       // fused results written over a dying operand
  int64_t in_place_bytes = 0;
  bool complete = true;       // false: some sizes were unknown (not counted)

  // "peak 1.5 MiB of intermediates (12 MiB without reuse), 40 buffers, 3 written in place"
  std::string summary() const;
};

MemoryPlan plan_memory(const ir::FuncGraph& g, const Specialized& sp);

// "1.5 MiB", "512 B".
std::string format_bytes(int64_t bytes);

}  // namespace msl::jit
