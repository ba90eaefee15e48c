// Run-time choice of the elementwise inner loops.
//
// The tables are filled once, on first use, from the builds the CPU can run
// (generic, then AVX2+FMA+F16C, then AVX-512 F/BW/DQ/VL, each overriding the
// entries it speeds up). The table in use sits behind one atomic pointer so
// that per-op dispatch costs a load; tests and benchmarks may cap the level to
// exercise the narrower builds on a wide machine.
#include <atomic>

#include "kernels/elementwise.h"

namespace msl::kernels::ew {

namespace {

struct Tables {
  LoopTable level[3];
  SimdLevel max = SimdLevel::Generic;
};

const Tables& tables() {
  static const Tables* t = [] {
    auto* r = new Tables();  // never freed: kernels may run during static destruction
    fill_loops_generic(r->level[0]);
    r->level[1] = r->level[0];
    r->level[2] = r->level[0];
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c")) {
      r->max = SimdLevel::AVX2;
      fill_loops_avx2(r->level[1]);
      r->level[2] = r->level[1];
      if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")) {
        r->max = SimdLevel::AVX512;
        fill_loops_avx512(r->level[2]);
      }
    }
#endif
    return r;
  }();
  return *t;
}

int g_cap = -1;  // -1: not capped
std::atomic<const LoopTable*> g_current{nullptr};

int level_index() {
  int m = static_cast<int>(tables().max);
  return g_cap >= 0 && g_cap < m ? g_cap : m;
}

}  // namespace

SimdLevel max_simd_level() { return tables().max; }

SimdLevel simd_level() { return static_cast<SimdLevel>(level_index()); }

void set_simd_level(SimdLevel level) {
  g_cap = static_cast<int>(level);
  g_current.store(&tables().level[level_index()], std::memory_order_release);
}

const LoopTable& loops() {
  const LoopTable* t = g_current.load(std::memory_order_acquire);
  if (!t) [[unlikely]] {
    t = &tables().level[level_index()];
    g_current.store(t, std::memory_order_release);
  }
  return *t;
}

}  // namespace msl::kernels::ew
