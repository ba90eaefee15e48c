#include "kernels/contention.h"

#include <time.h>

#include <algorithm>
#include <atomic>

namespace msl::kernels {

namespace {

// Until when the cores count as contended (0: not), and how long the next
// contended stretch lasts. A late wait doubles the stretch; an on-time one
// ends the stretch and halves it, so that a lucky call on a machine that
// stays busy does not bring back a late call every kFirstBackoffNs. A busy
// machine costs about one late call per kMaxBackoffNs, and one that becomes
// idle gets its threads back within that time.
constexpr int64_t kFirstBackoffNs = 50'000'000;
constexpr int64_t kMaxBackoffNs = 1'600'000'000;
std::atomic<int64_t> g_contended_until{0};
std::atomic<int64_t> g_backoff_ns{kFirstBackoffNs};

int64_t clock_ns(clockid_t id) {
  timespec t;
  clock_gettime(id, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

bool cores_contended() {
  int64_t until = g_contended_until.load(std::memory_order_relaxed);
  return until != 0 && detail::now_ns() < until;
}

namespace detail {

int64_t now_ns() { return clock_ns(CLOCK_MONOTONIC); }

bool recently_contended() { return g_backoff_ns.load(std::memory_order_relaxed) != kFirstBackoffNs; }

void note_wait(int64_t wait_ns) {
  if (wait_ns > kLateWaitNs) {
    int64_t backoff = g_backoff_ns.load(std::memory_order_relaxed);
    g_contended_until.store(now_ns() + backoff, std::memory_order_relaxed);
    g_backoff_ns.store(std::min(2 * backoff, kMaxBackoffNs), std::memory_order_relaxed);
  } else if (recently_contended()) {
    g_contended_until.store(0, std::memory_order_relaxed);
    g_backoff_ns.store(std::max(g_backoff_ns.load(std::memory_order_relaxed) / 2, kFirstBackoffNs),
                       std::memory_order_relaxed);
  }
}

void forget_contention() {
  g_contended_until.store(0, std::memory_order_relaxed);
  g_backoff_ns.store(kFirstBackoffNs, std::memory_order_relaxed);
}

}  // namespace detail

RegionClock::~RegionClock() {
  if (caller_done_ == 0) return;
  int64_t wait = detail::now_ns() - caller_done_;
  detail::note_wait(wait > (caller_done_ - start_) / 2 ? wait : 0);
}

CallClock::CallClock() {
  thread_local unsigned calls = 0;
  if ((++calls & 3) != 0 && !detail::recently_contended()) return;
  wall_ = detail::now_ns();
  cpu_ = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

CallClock::~CallClock() {
  if (wall_ == 0) return;
  int64_t wall = detail::now_ns() - wall_;
  int64_t off_cpu = wall - (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_);
  detail::note_wait(off_cpu > wall / 4 ? off_cpu : 0);
}

namespace {
std::atomic<bool> g_deterministic{false};
}  // namespace

void set_deterministic(bool on) { g_deterministic.store(on, std::memory_order_relaxed); }
bool deterministic() { return g_deterministic.load(std::memory_order_relaxed); }

}  // namespace msl::kernels
