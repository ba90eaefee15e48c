// parallel_for: every index once, in the documented chunks, whoever runs
// them; a region whose caller waits long for a slow worker marks the cores
// contended (kernels/contention.h), after which loops run on the calling thread with the same
// chunks until a later region is on time. The default thread count: the
// affinity mask capped by a cgroup v2 cpu.max quota.
#include <doctest/doctest.h>
#include <omp.h>
#include <sched.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "kernels/available_cpus.h"
#include "kernels/contention.h"
#include "kernels/dnnl_common.h"
#include "kernels/parallel.h"

using namespace msl::kernels;

namespace {

// The chunks parallel_for called f with, and on which threads.
struct Seen {
  std::mutex m;
  std::set<std::pair<int64_t, int64_t>> chunks;
  std::set<std::thread::id> threads;
  int64_t covered = 0;
};

template <class Extra>
void run(Seen& s, int64_t n, Extra extra) {
  parallel_for(n, 1, [&](int64_t b, int64_t e) {
    extra();
    std::lock_guard<std::mutex> lock(s.m);
    s.chunks.insert({b, e});
    s.threads.insert(std::this_thread::get_id());
    s.covered += e - b;
  });
}

std::set<std::pair<int64_t, int64_t>> expected_chunks(int64_t n, int64_t chunks) {
  std::set<std::pair<int64_t, int64_t>> want;
  for (int64_t c = 0; c < chunks; ++c) want.insert({n * c / chunks, n * (c + 1) / chunks});
  return want;
}

}  // namespace

TEST_CASE("cpu.max quotas") {
  CHECK(cpu_max_cpus("max 100000\n") == 0);
  CHECK(cpu_max_cpus("200000 100000\n") == 2);
  CHECK(cpu_max_cpus("150000 100000") == 2);
  CHECK(cpu_max_cpus("50000 100000") == 1);
  CHECK(cpu_max_cpus("") == 0);
  CHECK(cpu_max_cpus("junk") == 0);
  CHECK(cpu_max_cpus("100000") == 0);
}

TEST_CASE("the default thread count is the CPUs the process may use") {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  CHECK(available_cpus() >= 1);
  CHECK(available_cpus() <= CPU_COUNT(&set));
  set_num_threads(3);
  CHECK(num_threads() == 3);
  set_num_threads(0);
  if (!std::getenv("OMP_NUM_THREADS")) CHECK(num_threads() == available_cpus());
}

TEST_CASE("parallel_for runs each chunk once and the caller waits only for chunks under way") {
  set_num_threads(2);
  detail::forget_contention();
  const int64_t n = 1001;
  Seen s;
  run(s, n, [] {});
  CHECK(s.covered == n);
  CHECK(s.chunks == expected_chunks(n, 2));

  // A worker slower than the caller's own chunk by far more than
  // kLateRegionNs, as when the scheduler runs another process on its core.
  const std::thread::id caller = std::this_thread::get_id();
  auto worker_descheduled = [caller] {
    if (std::this_thread::get_id() != caller) std::this_thread::sleep_for(std::chrono::milliseconds(3));
  };
  for (int i = 0; i < 20 && !cores_contended(); ++i) {
    Seen late;
    run(late, n, worker_descheduled);
    CHECK(late.chunks == expected_chunks(n, 2));
  }
  REQUIRE(cores_contended());

  // Contended: the same chunks, all on the calling thread.
  Seen alone;
  run(alone, n, worker_descheduled);
  CHECK(alone.chunks == expected_chunks(n, 2));
  CHECK(alone.threads == std::set<std::thread::id>{caller});

  // After the first back-off (50 ms) the next region tries the workers again.
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  CHECK(!cores_contended());
  Seen again;
  run(again, n, [] {});
  CHECK(again.chunks == expected_chunks(n, 2));
  detail::forget_contention();
  set_num_threads(0);
}

TEST_CASE("a library call whose caller was off the CPU marks the cores contended") {
  detail::forget_contention();
  // One call in four is timed: four calls spent mostly asleep (as a thread
  // descheduled or waiting at a barrier is) include a timed one.
  for (int i = 0; i < 4; ++i) {
    CallClock clock;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  CHECK(cores_contended());
  detail::forget_contention();
}

TEST_CASE("contention moves oneDNN to one thread, unless results must be deterministic") {
  set_num_threads(2);
  detail::forget_contention();
  detail::note_wait(kLateWaitNs * 10);
  REQUIRE(cores_contended());
  {
    onednn::SerialScope scope(false);
    CHECK(omp_get_max_threads() == 1);
  }
  set_deterministic(true);
  {
    // oneDNN's results depend on its thread count: it keeps it.
    onednn::SerialScope scope(false);
    CHECK(omp_get_max_threads() == 2);
  }
  set_deterministic(false);
  detail::forget_contention();
  set_num_threads(0);
}
