// Philox4x32-10, the counter-based generator of Salmon et al. (SC'11), as
// used by cuRAND, PyTorch and MindSpore for reproducible parallel random
// numbers: the output for (key, counter) is a pure function, so any element
// of a random tensor can be computed independently, by any thread or device,
// and a run with the same seed is bit-identical however the work is split.
//
// Random ops take a (seed, offset) pair as attributes: element i of a tensor
// comes from counter (offset + i / 4) lane i % 4 under key = seed. The global
// generator (msl.set_seed) hands out offsets, advancing by the number of
// 4-lane blocks each op consumed.
#pragma once

#include <array>
#include <cstdint>

namespace msl::kernels {

inline std::array<uint32_t, 4> philox4x32(uint64_t counter, uint64_t key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int r = 0; r < 10; ++r) {
    uint64_t p0 = static_cast<uint64_t>(kM0) * c0;
    uint64_t p1 = static_cast<uint64_t>(kM1) * c2;
    uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    c1 = static_cast<uint32_t>(p1);
    c3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c2 = n2;
    k0 += kW0;
    k1 += kW1;
  }
  return {c0, c1, c2, c3};
}

// A uniform float in [0, 1) from 24 random bits.
inline float uint_to_unit_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
// A uniform double in [0, 1) from 53 random bits.
inline double uints_to_unit_double(uint32_t hi, uint32_t lo) {
  return static_cast<double>(((static_cast<uint64_t>(hi) << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);
}

// The process-wide generator behind msl.set_seed and the random creation
// functions. Not thread-safe: the interpreter thread owns it.
class GlobalGenerator {
 public:
  static GlobalGenerator& get();
  void set_seed(uint64_t seed) {
    seed_ = seed;
    offset_ = 0;
  }
  uint64_t seed() const { return seed_; }
  // Reserves `blocks` counters and returns the first.
  uint64_t take(uint64_t blocks) {
    uint64_t o = offset_;
    offset_ += blocks;
    return o;
  }

 private:
  uint64_t seed_ = 0x5eed;
  uint64_t offset_ = 0;
};

}  // namespace msl::kernels
