// CPython's random-number core (Modules/_randommodule.c), bit for bit: the
// MT19937 generator, its seeding from an integer key (init_by_array), and
// the derived random()/getrandbits(). `random.seed(42); random.random()`
// gives 0.6394267984578837 here exactly as in CPython, which lets MSL scripts
// reproduce Python runs (data shuffles, initializations) number for number.
//
// Pure and Interp-free so unit tests can check it against CPython's outputs.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace msl {

class MersenneTwister {
 public:
  static constexpr int N = 624;

  MersenneTwister() { seed_u64(5489); }

  // init_by_array(key): what random.seed(n) does with n's 32-bit words,
  // least significant first.
  void seed_by_array(const std::vector<uint32_t>& key);
  // random.seed(n) for an integer n >= 0 (abs() is the caller's).
  void seed_u64(uint64_t n);
  // seed(None): a key from the system's entropy source and the clock, as
  // CPython and NumPy seed when no seed is given.
  void seed_from_entropy();
  // NumPy's legacy RandomState.seed(n) for 0 <= n < 2**32: the generator's
  // own init_genrand(n), not init_by_array.
  void seed_u32(uint32_t n) { init_genrand(n); }
  // random.seed(s) for a str: int.from_bytes(s + sha512(s)) as the key.
  void seed_text(std::string_view utf8);

  uint32_t next_u32();
  // random(): 53 random bits as a double in [0, 1).
  double random();
  // getrandbits(k) for 0 <= k <= 64.
  uint64_t getrandbits(int k);
  // _randbelow(n) for n >= 1: getrandbits(n.bit_length()) until below n.
  uint64_t randbelow(uint64_t n);

  // The raw state, as random.getstate()/setstate() expose it: N words and
  // the position in them (0..N).
  const uint32_t* words() const { return mt_; }
  int position() const { return mti_; }
  void set_state(const uint32_t* words, int position);

 private:
  void init_genrand(uint32_t s);
  uint32_t mt_[N];
  int mti_ = N + 1;
};

// SHA-512 of `data` (needed for str seeds).
void sha512(std::string_view data, uint8_t out[64]);

}  // namespace msl
