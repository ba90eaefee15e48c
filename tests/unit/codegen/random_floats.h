// Test inputs of the code generation tests: uniform floats in [-3, 3),
// which reach both sides of relu and the curved parts of exp/tanh/sigmoid.
#pragma once

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

}  // namespace msl::jit::codegen::test
