// A memory budget: the bytes one embedded interpreter may hold
// (include/msl/msl.h, Config::memory_limit), as Lua's allocator function
// gives a host.
//
// Two kinds of memory are charged to the budget that is current on the
// allocating thread (BudgetScope):
//   * tensor storage (kernels::Storage), exactly: a storage records the
//     budget it was charged to and gives the bytes back when it is freed,
//     on whatever thread;
//   * everything else the interpreter allocates with operator new (objects,
//     strings, lists, dicts, compiled code): the process's operator new and
//     delete are replaced (memory_budget.cpp) to charge the usable size of
//     each block to the current budget and to give back what a block freed
//     under a budget took. A block allocated outside every budget and freed
//     inside one gives nothing back (the count never goes below zero); the
//     embedding API keeps the budget current while an evaluation runs and
//     while it releases the VM's objects.
// A charge that would pass the limit fails with std::bad_alloc before
// anything is allocated; the interpreter turns that into MemoryError.
#pragma once

#include <atomic>
#include <cstddef>

namespace msl::kernels {

class MemoryBudget {
 public:
  explicit MemoryBudget(size_t limit) : limit_(limit) {}
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  size_t limit() const { return limit_; }
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  // Adds `bytes` unless that would pass the limit.
  bool try_charge(size_t bytes);
  void release(size_t bytes);

  // Shared ownership (the interpreter, and every storage charged to it).
  void retain() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void drop();  // deletes the budget with the last reference
  static MemoryBudget* make(size_t limit);  // one reference held by the caller

 private:
  ~MemoryBudget() = default;
  const size_t limit_;
  std::atomic<size_t> used_{0};
  std::atomic<int> refs_{1};
};

// The budget of the calling thread's allocations (null: none).
MemoryBudget* current_budget();

// Makes `b` current on this thread for the scope's life (null: none).
class BudgetScope {
 public:
  explicit BudgetScope(MemoryBudget* b);
  ~BudgetScope();
  BudgetScope(const BudgetScope&) = delete;
  BudgetScope& operator=(const BudgetScope&) = delete;

 private:
  MemoryBudget* saved_;
};

}  // namespace msl::kernels
