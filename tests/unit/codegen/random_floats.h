// Test inputs of the code generation tests: uniform floats in [-3, 3),
// which reach both sides of relu and the curved parts of exp/tanh/sigmoid;
// and the check of a loop run on a sub-range of its elements.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace msl::jit::codegen::test {

inline std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-3, 3);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// got[i] is want[i] (within `rel`) for i in [begin, end) and -7 (the
// value the output arrays are filled with: untouched) elsewhere.
inline void check_range(const std::vector<float>& got, const std::vector<double>& want, int64_t begin, int64_t end,
                        double rel = 1e-6) {
  for (int64_t i = 0; i < static_cast<int64_t>(got.size()); ++i) {
    double w = i >= begin && i < end ? want[static_cast<size_t>(i)] : -7.0;
    INFO("element " << i << ": got " << got[static_cast<size_t>(i)] << ", want " << w);
    REQUIRE(std::fabs(got[static_cast<size_t>(i)] - w) <= rel * std::fabs(w) + 1e-6);
  }
}

}  // namespace msl::jit::codegen::test
