#include "kernels/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <vector>

namespace msl::kernels {

namespace profile_detail {
std::atomic<bool> enabled{false};
}

namespace {

struct Counter {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> ns{0};
};

std::array<Counter, kNumPrims>& counters() {
  static std::array<Counter, kNumPrims> c;
  return c;
}

}  // namespace

void set_profiling(bool on) { profile_detail::enabled.store(on, std::memory_order_relaxed); }

void profile_record(Prim p, int64_t nanoseconds) {
  Counter& c = counters()[static_cast<size_t>(p)];
  c.calls.fetch_add(1, std::memory_order_relaxed);
  c.ns.fetch_add(nanoseconds, std::memory_order_relaxed);
}

std::string profile_report() {
  struct Row {
    const char* name;
    int64_t calls, ns;
  };
  std::vector<Row> rows;
  int64_t total = 0;
  for (int i = 0; i < kNumPrims; ++i) {
    const Counter& c = counters()[static_cast<size_t>(i)];
    int64_t n = c.calls.load(), ns = c.ns.load();
    if (n == 0) continue;
    rows.push_back({prim_name(static_cast<Prim>(i)), n, ns});
    total += ns;
  }
  if (rows.empty()) return {};
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns > b.ns; });
  std::string out = fmt::format("{:<28}{:>10}{:>12}{:>12}{:>8}\n", "primitive", "calls", "total ms", "mean us", "%");
  for (const Row& r : rows)
    out += fmt::format("{:<28}{:>10}{:>12.3f}{:>12.2f}{:>7.1f}%\n", r.name, r.calls, r.ns / 1e6,
                       r.ns / 1e3 / static_cast<double>(r.calls), 100.0 * static_cast<double>(r.ns) / total);
  out += fmt::format("{:<28}{:>10}{:>12.3f}\n", "all kernels", "", total / 1e6);
  return out;
}

}  // namespace msl::kernels
