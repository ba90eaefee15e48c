// Memory budgets (memory_budget.h) and the replaced operator new/delete that
// charge them.
//
// The replacement allocates with malloc exactly as libstdc++'s does and adds
// one thread-local load per call when no budget is current; under a budget
// it charges malloc_usable_size of the block (the same number at free, so a
// block gives back exactly what it took). It lives in this file, beside
// current_budget(), so that every program linking the kernels links it: a
// static library's object file is only pulled in for a symbol the program
// needs, and operator new alone would be found in libstdc++ first.
#include "kernels/memory_budget.h"

#include <malloc.h>

#include <cstdlib>
#include <new>

namespace msl::kernels {

namespace {
// initial-exec: one load from the thread pointer, also inside libmsl.so
// (which is linked, not dlopen'ed, so its TLS is in the static block).
thread_local MemoryBudget* tl_budget __attribute__((tls_model("initial-exec"))) = nullptr;
}  // namespace

bool MemoryBudget::try_charge(size_t bytes) {
  size_t now = used_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ || now > limit_ - bytes) return false;
  } while (!used_.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
  return true;
}

void MemoryBudget::release(size_t bytes) {
  size_t now = used_.load(std::memory_order_relaxed);
  while (!used_.compare_exchange_weak(now, now > bytes ? now - bytes : 0, std::memory_order_relaxed)) {
  }
}

void MemoryBudget::drop() {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

MemoryBudget* MemoryBudget::make(size_t limit) { return new MemoryBudget(limit); }

MemoryBudget* current_budget() { return tl_budget; }

BudgetScope::BudgetScope(MemoryBudget* b) : saved_(tl_budget) { tl_budget = b; }
BudgetScope::~BudgetScope() { tl_budget = saved_; }

}  // namespace msl::kernels

// ------------------------------------------------- replaced operator new/delete

namespace {

using msl::kernels::MemoryBudget;
using msl::kernels::tl_budget;

void* allocate(size_t n, size_t align, bool nothrow) {
  if (n == 0) n = 1;
  for (;;) {
    void* p = align <= __STDCPP_DEFAULT_NEW_ALIGNMENT__ ? std::malloc(n)
                                                        : std::aligned_alloc(align, (n + align - 1) / align * align);
    if (p) {
      MemoryBudget* b = tl_budget;
      if (!b || b->try_charge(malloc_usable_size(p))) return p;
      std::free(p);
      if (nothrow) return nullptr;
      throw std::bad_alloc();
    }
    std::new_handler h = std::get_new_handler();
    if (!h) {
      if (nothrow) return nullptr;
      throw std::bad_alloc();
    }
    h();
  }
}

void deallocate(void* p) noexcept {
  if (!p) return;
  if (MemoryBudget* b = tl_budget) b->release(malloc_usable_size(p));
  std::free(p);
}

}  // namespace

// The sanitizers bring their own operator new (with the checks they exist
// for); under them only tensor storage is charged.
#if defined(__SANITIZE_ADDRESS__)
#define MSL_SANITIZED_NEW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MSL_SANITIZED_NEW 1
#endif
#endif
#ifndef MSL_SANITIZED_NEW
void* operator new(size_t n) { return allocate(n, 0, false); }
void* operator new[](size_t n) { return allocate(n, 0, false); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0, true); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return allocate(n, 0, true); }
void* operator new(size_t n, std::align_val_t a) { return allocate(n, static_cast<size_t>(a), false); }
void* operator new[](size_t n, std::align_val_t a) { return allocate(n, static_cast<size_t>(a), false); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<size_t>(a), true);
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<size_t>(a), true);
}
void operator delete(void* p) noexcept { deallocate(p); }
void operator delete[](void* p) noexcept { deallocate(p); }
void operator delete(void* p, size_t) noexcept { deallocate(p); }
void operator delete[](void* p, size_t) noexcept { deallocate(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { deallocate(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { deallocate(p); }
void operator delete(void* p, std::align_val_t) noexcept { deallocate(p); }
void operator delete[](void* p, std::align_val_t) noexcept { deallocate(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { deallocate(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { deallocate(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { deallocate(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { deallocate(p); }
#endif
