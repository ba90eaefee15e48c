// Forced into the kernels' sources in the libFuzzer build only (see
// tests/fuzz_tests.cmake): clang 14, the Debian 12 clang that build uses,
// rejects the feature name "f16c" in __builtin_cpu_supports (gcc and later
// clangs accept it). This answers it from CPUID and passes the other names
// the kernels ask for to the builtin.
#pragma once

#include <cpuid.h>
#include <cstring>

static inline bool msl_fuzz_cpu_supports(const char* f) {
  if (std::strcmp(f, "f16c") == 0) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }
  if (std::strcmp(f, "avx2") == 0) return __builtin_cpu_supports("avx2");
  if (std::strcmp(f, "fma") == 0) return __builtin_cpu_supports("fma");
  if (std::strcmp(f, "avx512f") == 0) return __builtin_cpu_supports("avx512f");
  if (std::strcmp(f, "avx512dq") == 0) return __builtin_cpu_supports("avx512dq");
  if (std::strcmp(f, "avx512bw") == 0) return __builtin_cpu_supports("avx512bw");
  if (std::strcmp(f, "avx512vl") == 0) return __builtin_cpu_supports("avx512vl");
  return false;
}
#define __builtin_cpu_supports(f) msl_fuzz_cpu_supports(f)
