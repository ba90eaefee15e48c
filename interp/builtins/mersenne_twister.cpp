// MT19937 as CPython implements it, and SHA-512 for string seeds. See
// mersenne_twister.h.
#include "interp/builtins/mersenne_twister.h"

#include <chrono>
#include <cstring>
#include <random>

namespace msl {

void MersenneTwister::init_genrand(uint32_t s) {
  mt_[0] = s;
  for (int i = 1; i < N; ++i) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  mti_ = N;
}

void MersenneTwister::seed_by_array(const std::vector<uint32_t>& key) {
  init_genrand(19650218u);
  size_t key_length = key.empty() ? 1 : key.size();
  int i = 1;
  size_t j = 0;
  for (size_t k = N > key_length ? N : key_length; k; --k) {
    uint32_t kj = key.empty() ? 0 : key[j];
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + kj + static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= N) {
      mt_[0] = mt_[N - 1];
      i = 1;
    }
    if (j >= key_length) j = 0;
  }
  for (int k = N - 1; k; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= N) {
      mt_[0] = mt_[N - 1];
      i = 1;
    }
  }
  mt_[0] = 0x80000000u;
  mti_ = N;
}

void MersenneTwister::seed_from_entropy() {
  std::random_device rd;
  std::vector<uint32_t> key;
  for (int i = 0; i < 8; ++i) key.push_back(rd());
  key.push_back(static_cast<uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  seed_by_array(key);
}

void MersenneTwister::seed_u64(uint64_t n) {
  std::vector<uint32_t> key;
  key.push_back(static_cast<uint32_t>(n));
  if (n >> 32) key.push_back(static_cast<uint32_t>(n >> 32));
  seed_by_array(key);
}

void MersenneTwister::seed_text(std::string_view utf8) {
  // The key is the big-endian integer of the bytes s + sha512(s), split into
  // 32-bit words from the least significant end; leading zero bytes do not
  // count towards its length.
  std::vector<uint8_t> bytes(utf8.begin(), utf8.end());
  uint8_t digest[64];
  sha512(utf8, digest);
  bytes.insert(bytes.end(), digest, digest + 64);
  size_t first = 0;
  while (first < bytes.size() && bytes[first] == 0) ++first;
  std::vector<uint32_t> key;
  for (size_t end = bytes.size(); end > first;) {
    size_t start = end >= first + 4 ? end - 4 : first;
    uint32_t w = 0;
    for (size_t b = start; b < end; ++b) w = (w << 8) | bytes[b];
    key.push_back(w);
    end = start;
  }
  seed_by_array(key);
}

uint32_t MersenneTwister::next_u32() {
  static const uint32_t mag01[2] = {0x0u, 0x9908b0dfu};
  constexpr uint32_t kUpper = 0x80000000u, kLower = 0x7fffffffu;
  constexpr int M = 397;
  uint32_t y;
  if (mti_ >= N) {
    int kk;
    for (kk = 0; kk < N - M; kk++) {
      y = (mt_[kk] & kUpper) | (mt_[kk + 1] & kLower);
      mt_[kk] = mt_[kk + M] ^ (y >> 1) ^ mag01[y & 0x1u];
    }
    for (; kk < N - 1; kk++) {
      y = (mt_[kk] & kUpper) | (mt_[kk + 1] & kLower);
      mt_[kk] = mt_[kk + (M - N)] ^ (y >> 1) ^ mag01[y & 0x1u];
    }
    y = (mt_[N - 1] & kUpper) | (mt_[0] & kLower);
    mt_[N - 1] = mt_[M - 1] ^ (y >> 1) ^ mag01[y & 0x1u];
    mti_ = 0;
  }
  y = mt_[mti_++];
  y ^= (y >> 11);
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= (y >> 18);
  return y;
}

double MersenneTwister::random() {
  uint32_t a = next_u32() >> 5, b = next_u32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

uint64_t MersenneTwister::getrandbits(int k) {
  if (k <= 0) return 0;
  if (k <= 32) return next_u32() >> (32 - k);
  uint64_t lo = next_u32();
  uint64_t hi = next_u32() >> (64 - k);
  return (hi << 32) | lo;
}

uint64_t MersenneTwister::randbelow(uint64_t n) {
  int k = 64 - __builtin_clzll(n);
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

void MersenneTwister::set_state(const uint32_t* words, int position) {
  std::memcpy(mt_, words, sizeof mt_);
  mti_ = position;
}

// ------------------------------------------------------------------ SHA-512

namespace {

constexpr uint64_t kK[80] = {
    0x428a2f98d728ae22ull, 0x7137449123ef65cdull, 0xb5c0fbcfec4d3b2full, 0xe9b5dba58189dbbcull, 0x3956c25bf348b538ull,
    0x59f111f1b605d019ull, 0x923f82a4af194f9bull, 0xab1c5ed5da6d8118ull, 0xd807aa98a3030242ull, 0x12835b0145706fbeull,
    0x243185be4ee4b28cull, 0x550c7dc3d5ffb4e2ull, 0x72be5d74f27b896full, 0x80deb1fe3b1696b1ull, 0x9bdc06a725c71235ull,
    0xc19bf174cf692694ull, 0xe49b69c19ef14ad2ull, 0xefbe4786384f25e3ull, 0x0fc19dc68b8cd5b5ull, 0x240ca1cc77ac9c65ull,
    0x2de92c6f592b0275ull, 0x4a7484aa6ea6e483ull, 0x5cb0a9dcbd41fbd4ull, 0x76f988da831153b5ull, 0x983e5152ee66dfabull,
    0xa831c66d2db43210ull, 0xb00327c898fb213full, 0xbf597fc7beef0ee4ull, 0xc6e00bf33da88fc2ull, 0xd5a79147930aa725ull,
    0x06ca6351e003826full, 0x142929670a0e6e70ull, 0x27b70a8546d22ffcull, 0x2e1b21385c26c926ull, 0x4d2c6dfc5ac42aedull,
    0x53380d139d95b3dfull, 0x650a73548baf63deull, 0x766a0abb3c77b2a8ull, 0x81c2c92e47edaee6ull, 0x92722c851482353bull,
    0xa2bfe8a14cf10364ull, 0xa81a664bbc423001ull, 0xc24b8b70d0f89791ull, 0xc76c51a30654be30ull, 0xd192e819d6ef5218ull,
    0xd69906245565a910ull, 0xf40e35855771202aull, 0x106aa07032bbd1b8ull, 0x19a4c116b8d2d0c8ull, 0x1e376c085141ab53ull,
    0x2748774cdf8eeb99ull, 0x34b0bcb5e19b48a8ull, 0x391c0cb3c5c95a63ull, 0x4ed8aa4ae3418acbull, 0x5b9cca4f7763e373ull,
    0x682e6ff3d6b2b8a3ull, 0x748f82ee5defb2fcull, 0x78a5636f43172f60ull, 0x84c87814a1f0ab72ull, 0x8cc702081a6439ecull,
    0x90befffa23631e28ull, 0xa4506cebde82bde9ull, 0xbef9a3f7b2c67915ull, 0xc67178f2e372532bull, 0xca273eceea26619cull,
    0xd186b8c721c0c207ull, 0xeada7dd6cde0eb1eull, 0xf57d4f7fee6ed178ull, 0x06f067aa72176fbaull, 0x0a637dc5a2c898a6ull,
    0x113f9804bef90daeull, 0x1b710b35131c471bull, 0x28db77f523047d84ull, 0x32caab7b40c72493ull, 0x3c9ebe0a15c9bebcull,
    0x431d67c49c100d4cull, 0x4cc5d4becb3e42b6ull, 0x597f299cfc657e2aull, 0x5fcb6fab3ad6faecull, 0x6c44198c4a475817ull,
};

inline uint64_t rotr(uint64_t x, int n) { return (x >> n) | (x << (64 - n)); }

void sha512_block(uint64_t h[8], const uint8_t* p) {
  uint64_t w[80];
  for (int i = 0; i < 16; ++i) {
    w[i] = 0;
    for (int b = 0; b < 8; ++b) w[i] = (w[i] << 8) | p[i * 8 + b];
  }
  for (int i = 16; i < 80; ++i) {
    uint64_t s0 = rotr(w[i - 15], 1) ^ rotr(w[i - 15], 8) ^ (w[i - 15] >> 7);
    uint64_t s1 = rotr(w[i - 2], 19) ^ rotr(w[i - 2], 61) ^ (w[i - 2] >> 6);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint64_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 80; ++i) {
    uint64_t S1 = rotr(e, 14) ^ rotr(e, 18) ^ rotr(e, 41);
    uint64_t ch = (e & f) ^ (~e & g);
    uint64_t t1 = hh + S1 + ch + kK[i] + w[i];
    uint64_t S0 = rotr(a, 28) ^ rotr(a, 34) ^ rotr(a, 39);
    uint64_t maj = (a & b) ^ (a & c) ^ (b & c);
    uint64_t t2 = S0 + maj;
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

}  // namespace

void sha512(std::string_view data, uint8_t out[64]) {
  uint64_t h[8] = {0x6a09e667f3bcc908ull, 0xbb67ae8584caa73bull, 0x3c6ef372fe94f82bull, 0xa54ff53a5f1d36f1ull,
                   0x510e527fade682d1ull, 0x9b05688c2b3e6c1full, 0x1f83d9abfb41bd6bull, 0x5be0cd19137e2179ull};
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t n = data.size();
  size_t full = n / 128;
  for (size_t i = 0; i < full; ++i) sha512_block(h, p + i * 128);
  uint8_t tail[256] = {0};
  size_t rem = n - full * 128;
  std::memcpy(tail, p + full * 128, rem);
  tail[rem] = 0x80;
  size_t tail_len = rem + 1 + 16 <= 128 ? 128 : 256;
  uint64_t bits = static_cast<uint64_t>(n) * 8;  // the high 64 bits of the 128-bit length stay zero
  for (int b = 0; b < 8; ++b) tail[tail_len - 1 - b] = static_cast<uint8_t>(bits >> (8 * b));
  for (size_t off = 0; off < tail_len; off += 128) sha512_block(h, tail + off);
  for (int i = 0; i < 8; ++i)
    for (int b = 0; b < 8; ++b) out[i * 8 + b] = static_cast<uint8_t>(h[i] >> (56 - 8 * b));
}

}  // namespace msl
