// Tests of interp/builtins/mersenne_twister.h against CPython 3.11: every expected
// number below was printed by `python3 -c 'import random; random.seed(S); ...'`
// (and hashlib.sha512 for the digests).
#include "interp/builtins/mersenne_twister.h"

#include <doctest/doctest.h>

#include <cstdio>
#include <string>

using namespace msl;

namespace {

std::string hex_digest(std::string_view data) {
  uint8_t d[64];
  sha512(data, d);
  std::string out;
  char buf[3];
  for (uint8_t b : d) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

struct Case {
  uint64_t seed;
  double r0, r1, r2;
  uint64_t bits32, bits64;
};

}  // namespace

TEST_CASE("integer seeds reproduce CPython's random() and getrandbits()") {
  const Case cases[] = {
      {42, 0.6394267984578837, 0.025010755222666936, 0.27502931836911926, 958682846u, 13585496030504862185ull},
      {0, 0.8444218515250481, 0.7579544029403025, 0.420571580830845, 1112038970u, 9431353882395063546ull},
      {1ull << 40, 0.1036394562812375, 0.6705558677439764, 0.4266543913526999, 1665290981u, 11556631241372354004ull},
      {9223372036854775807ull, 0.3166448820870279, 0.631259308253863, 0.8035542479972343, 1947612296u,
       8795274642428743868ull},
      {123456789, 0.6414006161858726, 0.5421892680969495, 0.9931750662832721, 3621740338u, 14973847983258453545ull},
  };
  for (const Case& c : cases) {
    CAPTURE(c.seed);
    MersenneTwister mt;
    mt.seed_u64(c.seed);
    CHECK(mt.random() == c.r0);
    CHECK(mt.random() == c.r1);
    CHECK(mt.random() == c.r2);
    CHECK(mt.getrandbits(32) == c.bits32);
    CHECK(mt.getrandbits(64) == c.bits64);
  }
}

TEST_CASE("randbelow draws as CPython's _randbelow_with_getrandbits") {
  MersenneTwister mt;
  mt.seed_u64(42);
  // [random.randrange(1000) for _ in range(5)], then getrandbits(1), getrandbits(33)
  const uint64_t expect[] = {654, 114, 25, 759, 281};
  for (uint64_t e : expect) CHECK(mt.randbelow(1000) == e);
  CHECK(mt.getrandbits(1) == 0);
  CHECK(mt.getrandbits(33) == 958682846u);
}

TEST_CASE("str seeds use the SHA-512 extended key") {
  MersenneTwister mt;
  mt.seed_text("hello");
  CHECK(mt.random() == 0.3537754404730722);
  mt.seed_text("日本");
  CHECK(mt.random() == 0.7269956030927222);
  mt.seed_text("");
  CHECK(mt.random() == 0.9602256525641875);
}

TEST_CASE("sha512 digests") {
  CHECK(hex_digest("abc") ==
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643c"
        "e80e2a9ac94fa54ca49f");
  CHECK(hex_digest("") ==
        "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd4741"
        "7a81a538327af927da3e");
  CHECK(hex_digest(std::string(200, 'a')) ==
        "4b11459c33f52a22ee8236782714c150a3b2c60994e9acee17fe68947a3e6789f31e7668394592da7bef827cddca88c4e6f86e4df7ed"
        "1ae6cba71f3e98faee9f");
}

TEST_CASE("getstate/setstate round trip") {
  MersenneTwister a, b;
  a.seed_u64(7);
  a.random();
  b.set_state(a.words(), a.position());
  for (int i = 0; i < 1000; ++i) CHECK(a.next_u32() == b.next_u32());
}
