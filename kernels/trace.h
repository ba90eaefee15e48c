// The profiler's timeline (`msl --profile=trace DIR`, msl.Profiler): every
// kernel, fused loop, compiled-graph run, compile phase, data-pipeline
// batch and training step as a Chrome-trace "complete" event (name,
// category, start, duration, thread, and arguments: the primitive's input
// shapes and source line), written as Chrome's Trace Event JSON, which
// chrome://tracing and ui.perfetto.dev open.
//
// Recording costs two clock reads and a locked append of raw fields per
// event (names, shapes and lines are formatted when the timeline stops), so
// it is off unless asked for; the check when off is one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>

#include "kernels/primitives.h"

namespace msl::kernels {

namespace trace_detail {
extern std::atomic<bool> enabled;
}

inline bool tracing() { return trace_detail::enabled.load(std::memory_order_relaxed); }
// Starts a new timeline (earlier events are dropped).
void start_trace();
// Stops recording and returns the timeline as Chrome Trace Event JSON;
// `table` (when given) gets the kernels' table from the same events: each
// kernel or fused loop by name, with calls, total and mean time and share,
// slowest first; `cells` the Cells' table: kernel time by Cell scope
// ("Default/network-WithLossCell/conv1-Conv2d"), with and without the
// Cell's sub-Cells, as MindInsight shows it.
std::string stop_trace(std::string* table = nullptr, std::string* cells = nullptr);
// A monotonic clock in nanoseconds (the events' time base).
int64_t trace_clock_ns();
// Records a complete event; `args_json` is a JSON object's members
// (`"shapes": "(2, 3)", "site": "a.msl:4"`) or empty.
void trace_event(std::string name, const char* category, int64_t start_ns, int64_t end_ns, std::string args_json = {});

// Records primitive `p`'s kernel on inputs `in` (their shapes and the
// current source line are its arguments).
void trace_kernel(Prim p, std::span<const Tensor> in, int64_t start_ns, int64_t end_ns);

// A span recorded when it ends (if tracing was on when it began), with the
// source line current then (kernels/op_site.h).
class TraceSpan {
 public:
  TraceSpan(std::string name, const char* category);
  ~TraceSpan();
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;

 private:
  std::string name_;
  const char* category_;
  int64_t start_ = -1;
};

}  // namespace msl::kernels
