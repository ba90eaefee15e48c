// CPython's set table (Objects/setobject.c, 3.11), simulated only as far as
// needed to learn where each element lands: linear probing of up to 9 slots,
// then perturbed open addressing; the table grows when 3/5 full.
#include "interp/core/set_order.h"

namespace msl {
namespace {

constexpr size_t kLinearProbes = 9;
constexpr int kPerturbShift = 5;
constexpr size_t kMinSize = 8;

// CPython's hash of a (64-bit) int: the value modulo 2**61 - 1, with -1 → -2.
uint64_t cpython_int_hash(int64_t v) {
  constexpr int64_t kModulus = (int64_t{1} << 61) - 1;
  int64_t h = v % kModulus;
  if (h == -1) h = -2;
  return static_cast<uint64_t>(h);
}

void insert_clean(std::vector<int64_t>& table, uint64_t hash, int64_t entry) {
  size_t mask = table.size() - 1;
  size_t i = hash & mask;
  uint64_t perturb = hash;
  while (true) {
    if (table[i] < 0) {
      table[i] = entry;
      return;
    }
    if (i + kLinearProbes <= mask) {
      for (size_t j = 1; j <= kLinearProbes; ++j) {
        if (table[i + j] < 0) {
          table[i + j] = entry;
          return;
        }
      }
    }
    perturb >>= kPerturbShift;
    i = (i * 5 + 1 + perturb) & mask;
  }
}

}  // namespace

std::vector<size_t> set_iteration_order(const ValueMap& map) {
  const auto& entries = map.entries();
  std::vector<size_t> live;
  live.reserve(map.size());
  bool all_ints = true;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].value.is_undef()) continue;
    live.push_back(i);
    const Value& k = entries[i].key;
    if (!k.is_int() && !k.is_bool()) all_ints = false;
  }
  if (!all_ints || live.size() < 2) return live;

  auto hash_of = [&](size_t e) {
    const Value& k = entries[e].key;
    return cpython_int_hash(k.is_int() ? k.as_int() : (k.as_bool() ? 1 : 0));
  };
  std::vector<int64_t> table(kMinSize, -1);
  size_t used = 0;
  for (size_t e : live) {
    insert_clean(table, hash_of(e), static_cast<int64_t>(e));
    ++used;
    size_t mask = table.size() - 1;
    if (used * 5 >= mask * 3) {
      size_t minused = used > 50000 ? used * 2 : used * 4;
      size_t newsize = kMinSize;
      while (newsize <= minused) newsize <<= 1;
      std::vector<int64_t> bigger(newsize, -1);
      for (int64_t old : table)
        if (old >= 0) insert_clean(bigger, hash_of(static_cast<size_t>(old)), old);
      table = std::move(bigger);
    }
  }
  std::vector<size_t> order;
  order.reserve(live.size());
  for (int64_t e : table)
    if (e >= 0) order.push_back(static_cast<size_t>(e));
  return order;
}

}  // namespace msl
