#include "kernels/parallel.h"

#include "kernels/philox.h"

namespace msl::kernels {

namespace {
int g_threads = 0;  // 0: every core OpenMP sees
}

int num_threads() {
  if (g_threads <= 0) g_threads = omp_get_max_threads();
  return g_threads;
}

void set_num_threads(int n) {
  g_threads = n > 0 ? n : 0;
  omp_set_num_threads(n > 0 ? n : omp_get_num_procs());
}

GlobalGenerator& GlobalGenerator::get() {
  static GlobalGenerator g;
  return g;
}

}  // namespace msl::kernels
