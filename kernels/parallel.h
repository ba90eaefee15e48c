// Splitting loops across the CPU's cores.
//
// Kernels use OpenMP, the threading runtime Debian's oneDNN is built with, so
// our loops and oneDNN's share one thread pool instead of oversubscribing the
// cores. Small loops run inline: starting a parallel region costs a few
// microseconds, more than a tiny tensor's whole op.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>

namespace msl::kernels {

// Elementwise loops below this many elements stay on one thread.
constexpr int64_t kParallelGrain = 1 << 15;

int num_threads();
void set_num_threads(int n);  // `msl --threads N`; n <= 0 restores the default (all cores)

// How many chunks parallel_for splits [0, n) into: one per thread when n is
// at least `grain` (fewer for fewer grains), else 1.
inline int64_t parallel_chunks(int64_t n, int64_t grain) {
  int nt = num_threads();
  if (n < grain || nt <= 1 || omp_in_parallel()) return 1;
  return std::min<int64_t>(nt, (n + grain - 1) / grain);
}

// Calls f(begin, end) over [0, n) split into parallel_chunks(n, grain)
// contiguous chunks, chunk c being [n * c / chunks, n * (c + 1) / chunks),
// one per thread; a single chunk runs inline.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  if (n <= 0) return;
  int64_t chunks = parallel_chunks(n, grain);
  if (chunks == 1) {
    f(int64_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
    if (b < e) f(b, e);
  }
}

}  // namespace msl::kernels
