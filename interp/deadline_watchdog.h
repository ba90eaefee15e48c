// A thread that calls a function when a deadline passes (the embedding
// API's wall-clock limit: it asks the interpreter to abort, which the
// interpreter does at its next safe point). Arming again moves the deadline;
// each arming has a generation number, handed to the function, so a late
// expiry of an earlier arming can be told from the current one. The thread
// starts on the first arm() and ends with the watchdog.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

namespace msl {

class DeadlineWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  explicit DeadlineWatchdog(std::function<void(uint64_t generation)> on_expiry);
  ~DeadlineWatchdog();
  DeadlineWatchdog(const DeadlineWatchdog&) = delete;
  DeadlineWatchdog& operator=(const DeadlineWatchdog&) = delete;

  // Returns the arming's generation.
  uint64_t arm(Clock::time_point deadline);
  void disarm();

 private:
  void loop();
  std::function<void(uint64_t)> on_expiry_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread thread_;
  Clock::time_point deadline_;
  uint64_t generation_ = 0;
  bool armed_ = false;
  bool stop_ = false;
};

}  // namespace msl
