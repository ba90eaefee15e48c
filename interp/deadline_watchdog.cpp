// The deadline watchdog (deadline_watchdog.h).
#include "interp/deadline_watchdog.h"

namespace msl {

DeadlineWatchdog::DeadlineWatchdog(std::function<void(uint64_t)> on_expiry) : on_expiry_(std::move(on_expiry)) {}

DeadlineWatchdog::~DeadlineWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t DeadlineWatchdog::arm(Clock::time_point deadline) {
  uint64_t g;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    deadline_ = deadline;
    armed_ = true;
    g = ++generation_;
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }
  changed_.notify_all();
  return g;
}

void DeadlineWatchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
}

void DeadlineWatchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      changed_.wait(lock);
      continue;
    }
    uint64_t g = generation_;
    if (changed_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && g == generation_ && !stop_) {
      armed_ = false;
      // Called without the lock: the function may take the host's locks,
      // which arm() and disarm() callers hold.
      lock.unlock();
      on_expiry_(g);
      lock.lock();
    }
  }
}

}  // namespace msl
