// Whether another process holds the cores, found from how long our
// threads wait for each other.
//
// libgomp's threads spin before they sleep (300,000 pause instructions:
// ~10 ms on the development machine), at the start of a parallel region and
// at its closing barrier, and the spin count is fixed when the library
// loads. When another process keeps every core busy, a region waits for a
// thread the scheduler has not run, while the waiting thread spins away its
// own time slice: LeNet calls ~200x slower. So the kernels time their
// parallel work: a parallel_for region whose caller, out of chunks, waits
// long at the closing barrier, or a multi-threaded oneDNN call during which
// the calling thread was off the CPU for much of the time, marks the cores
// contended. For a while (doubling while it lasts) parallel_for then runs
// its chunks on the calling thread and oneDNN runs on one thread
// (onednn::SerialScope), so nothing waits for a descheduled thread; after
// that, the next parallel call tries the threads again.
#pragma once

#include <cstdint>

namespace msl::kernels {

// Longer than an idle machine's waits: an idle core's worker finishes its
// chunk within microseconds of the caller, one woken from its futex within
// ~0.1 ms; a descheduled one comes back after a time slice (ms).
constexpr int64_t kLateWaitNs = 500'000;

// True while the cores are contended: run on the calling thread alone.
bool cores_contended();

// Deterministic results (msl.set_context(deterministic="ON"), MindSpore's
// option): contention still moves parallel_for's chunks to the calling
// thread, whose results are the same, but never changes oneDNN's thread
// count, whose results can differ in the last bits with it. Off by
// default: a training run on shared cores is then as fast as one thread
// allows, and may round differently from a run on idle cores.
void set_deterministic(bool on);
bool deterministic();

namespace detail {

int64_t now_ns();
bool recently_contended();        // no on-time wait since the cores were contended
void note_wait(int64_t wait_ns);  // > kLateWaitNs: contended; else not
void forget_contention();         // for tests: back to the start state

}  // namespace detail

// Times a parallel_for region from the calling thread: its start, when
// the caller ran out of chunks, and (on destruction) its end. Late: the
// caller waited at the closing barrier for a worker the scheduler had not
// run (to start, or to finish its chunk), for longer than half its own
// work too, so that a long loop's uneven chunks do not count.
class RegionClock {
 public:
  RegionClock() : start_(detail::now_ns()) {}
  ~RegionClock();
  void caller_done() { caller_done_ = detail::now_ns(); }
  RegionClock(const RegionClock&) = delete;
  RegionClock& operator=(const RegionClock&) = delete;

 private:
  int64_t start_;
  int64_t caller_done_ = 0;
};

// Times a call that runs on several threads inside a library (oneDNN):
// wall-clock time against the calling thread's CPU time. Late: the caller
// was off the CPU (descheduled, or asleep at a barrier) for more than a
// quarter of the call. Spinning counts as CPU time, so this sees only part
// of the waste; a quarter is still far above an idle machine's. Reading a
// thread's CPU time is a system call (~0.5 us here), so one call in four is
// timed, and every one after the cores were contended until one is on time.
class CallClock {
 public:
  CallClock();
  ~CallClock();
  CallClock(const CallClock&) = delete;
  CallClock& operator=(const CallClock&) = delete;

 private:
  int64_t wall_ = 0, cpu_ = 0;
};

}  // namespace msl::kernels
