#include "kernels/parallel.h"

#include <cstdlib>

#include "kernels/available_cpus.h"
#include "kernels/philox.h"

namespace msl::kernels {

namespace {

std::atomic<int> g_threads{0};  // 0: the default, not yet computed

int default_threads() {
  // OMP_NUM_THREADS is OpenMP's own setting; libgomp has read it already.
  return std::getenv("OMP_NUM_THREADS") ? omp_get_max_threads() : available_cpus();
}

}  // namespace

int num_threads() {
  int n = g_threads.load(std::memory_order_relaxed);
  if (n <= 0) {
    n = default_threads();
    g_threads.store(n, std::memory_order_relaxed);
  }
  return n;
}

void set_num_threads(int n) {
  g_threads.store(n > 0 ? n : 0, std::memory_order_relaxed);
  omp_set_num_threads(num_threads());
}

GlobalGenerator& GlobalGenerator::get() {
  static GlobalGenerator g;
  return g;
}

}  // namespace msl::kernels
