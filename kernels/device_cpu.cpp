// The CPU device and its caching allocator.
//
// Requests are rounded up to a size class (64-byte steps up to 1 KiB, then
// four classes per power of two) and freed blocks wait in a free list per
// class. Training allocates the same sizes every step, so after the first
// step nearly every allocation is a cache hit: no malloc, no page faults.
// The cache is bounded; past the bound, freed blocks go back to the system.
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "kernels/device.h"

namespace msl::kernels {

namespace {

constexpr size_t kAlign = 64;
constexpr size_t kMaxCachedBytes = size_t(2) << 30;

size_t size_class(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes <= 1024) return (bytes + kAlign - 1) & ~(kAlign - 1);
  // Four classes per power of two: at most 25% waste.
  size_t p = size_t(1) << (63 - __builtin_clzll(bytes - 1));  // largest power of two < bytes
  size_t step = p / 4;
  return (bytes + step - 1) / step * step;
}

class CpuDevice final : public Device {
 public:
  DeviceType type() const override { return DeviceType::CPU; }
  std::string name() const override { return "CPU"; }

  void* allocate(size_t bytes) override {
    size_t cls = size_class(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.allocations;
    std::vector<void*>& list = cls <= 1024 ? small_[cls / kAlign - 1] : free_[cls];
    if (!list.empty()) {
      void* p = list.back();
      list.pop_back();
      stats_.bytes_cached -= cls;
      ++stats_.cache_hits;
      note_use(cls);
      return p;
    }
    void* p = std::aligned_alloc(kAlign, cls);
    if (!p) {
      release_locked();
      p = std::aligned_alloc(kAlign, cls);
      if (!p) throw std::bad_alloc();
    }
    note_use(cls);
    return p;
  }

  void deallocate(void* p, size_t bytes) override {
    if (!p) return;
    size_t cls = size_class(bytes);
    std::lock_guard<std::mutex> lock(mu_);
    stats_.bytes_in_use -= cls;
    if (stats_.bytes_cached + cls > kMaxCachedBytes) {
      std::free(p);
      return;
    }
    (cls <= 1024 ? small_[cls / kAlign - 1] : free_[cls]).push_back(p);
    stats_.bytes_cached += cls;
  }

  void copy_to_host(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_from_host(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_within(void* dst, const void* src, size_t bytes) override { std::memmove(dst, src, bytes); }
  void synchronize() override {}

  AllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    release_locked();
  }
  void reset_peak() {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }

 private:
  void note_use(size_t cls) {
    stats_.bytes_in_use += cls;
    if (stats_.bytes_in_use > stats_.peak_bytes_in_use) stats_.peak_bytes_in_use = stats_.bytes_in_use;
  }
  void release_locked() {
    for (auto& [cls, list] : free_)
      for (void* p : list) std::free(p);
    free_.clear();
    for (auto& list : small_) {
      for (void* p : list) std::free(p);
      list.clear();
    }
    stats_.bytes_cached = 0;
  }

  std::mutex mu_;
  std::vector<void*> small_[1024 / kAlign];  // classes 64..1024, the tiny tensors of eager dispatch
  std::map<size_t, std::vector<void*>> free_;
  AllocatorStats stats_;
};

CpuDevice& cpu() {
  // Never destroyed: tensors held by static objects may be freed at exit.
  static CpuDevice* d = new CpuDevice();
  return *d;
}

}  // namespace

Device* cpu_device() { return &cpu(); }
AllocatorStats cpu_allocator_stats() { return cpu().stats(); }
void cpu_allocator_release_cache() { cpu().release(); }
void cpu_allocator_reset_peak() { cpu().reset_peak(); }

}  // namespace msl::kernels
