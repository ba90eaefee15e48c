// The per-primitive profile behind `msl --profile`: how many times each
// kernel ran and the wall time it took, summed over the run, whichever
// path called it (PyNative dispatch, the graph executor, the data
// pipeline's batching).
//
// Timing costs two clock reads per kernel, so it is off unless asked for;
// the check when off is one relaxed atomic load.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "kernels/primitives.h"

namespace msl::kernels {

namespace profile_detail {
extern std::atomic<bool> enabled;
}

inline bool profiling() { return profile_detail::enabled.load(std::memory_order_relaxed); }
void set_profiling(bool on);
void profile_record(Prim p, int64_t nanoseconds);
// A table of every primitive that ran: calls, total ms, mean us, share of
// the kernels' total; slowest first. Empty when nothing ran.
std::string profile_report();

}  // namespace msl::kernels
