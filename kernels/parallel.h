// Splitting loops across the CPU's cores.
//
// Kernels use OpenMP, the threading runtime Debian's oneDNN is built with, so
// our loops and oneDNN's share one thread pool instead of oversubscribing the
// cores. Small loops run inline: starting a parallel region costs a few
// microseconds, more than a tiny tensor's whole op.
//
// On shared cores the loops run on the calling thread alone for a while
// (kernels/contention.h).
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "kernels/contention.h"

namespace msl::kernels {

// Elementwise loops below this many elements stay on one thread.
constexpr int64_t kParallelGrain = 1 << 15;

// The kernels' thread count: `msl --threads N`, else OMP_NUM_THREADS when
// set, else available_cpus() (affinity mask and cgroup CPU quota).
int num_threads();
void set_num_threads(int n);  // n <= 0 restores the default

// How many chunks parallel_for splits [0, n) into: one per thread when n is
// at least `grain` (fewer for fewer grains), else 1.
inline int64_t parallel_chunks(int64_t n, int64_t grain) {
  int nt = num_threads();
  if (n < grain || nt <= 1 || omp_in_parallel()) return 1;
  return std::min<int64_t>(nt, (n + grain - 1) / grain);
}

// Calls f(begin, end) over [0, n) split into parallel_chunks(n, grain)
// contiguous chunks, chunk c being [n * c / chunks, n * (c + 1) / chunks);
// a single chunk runs inline. Threads take chunks in order from a shared
// counter, so the calling thread does the chunks of a worker that has not
// started yet.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  const int64_t chunks = parallel_chunks(n, grain);
  auto chunk = [&](int64_t c) {
    int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
    if (b < e) f(b, e);
  };
  if (chunks == 1) {
    f(int64_t{0}, n);
    return;
  }
  if (cores_contended()) {
    for (int64_t c = 0; c < chunks; ++c) chunk(c);
    return;
  }
  std::atomic<int64_t> next{0};
  RegionClock clock;
#pragma omp parallel num_threads(static_cast<int>(chunks))
  {
    for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < chunks;) chunk(c);
    if (omp_get_thread_num() == 0) clock.caller_done();
  }
}

}  // namespace msl::kernels
