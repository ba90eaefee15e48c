// The CPU device: host memory from aligned_alloc behind a CachingAllocator,
// one (null) stream, synchronous copies.
#include <cstdlib>
#include <cstring>

#include "kernels/caching_allocator.h"
#include "kernels/device.h"

namespace msl::kernels {

namespace {

constexpr size_t kMaxCachedBytes = size_t(2) << 30;

class HostBlocks final : public BlockSource {
 public:
  void* raw_allocate(size_t bytes) override { return std::aligned_alloc(64, bytes); }
  void raw_free(void* p, size_t) override { std::free(p); }
  // The CPU runs its work when it is queued: every event is complete.
  void* record_event(Stream) override { return nullptr; }
  bool event_done(void*) override { return true; }
  void destroy_event(void*) override {}
};

class CpuDevice final : public Device {
 public:
  CpuDevice() : Device(DeviceType::CPU), cache_(blocks_, kMaxCachedBytes) {}
  std::string name() const override { return "CPU"; }
  void* allocate(size_t bytes, Stream stream) override { return cache_.allocate(bytes, stream); }
  void deallocate(void* p, size_t bytes, Stream stream) override { cache_.free(p, bytes, stream); }
  void copy_to_host(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_from_host(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void copy_within(void* dst, const void* src, size_t bytes) override { std::memmove(dst, src, bytes); }
  void synchronize() override {}
  AllocatorStats memory_stats() override { return cache_.stats(); }
  void reset_peak_memory() override { cache_.reset_peak(); }
  void release_cached_memory() override { cache_.release_cache(); }
  CachingAllocator& cache() { return cache_; }

 private:
  HostBlocks blocks_;
  CachingAllocator cache_;
};

CpuDevice& cpu() {
  // Never destroyed: tensors held by static objects may be freed at exit.
  static CpuDevice* d = new CpuDevice();
  return *d;
}

}  // namespace

const char* device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::CPU: return "CPU";
    case DeviceType::CUDA: return "CUDA";
    case DeviceType::Debug: return "Debug";
  }
  return "?";
}

Device* cpu_device() { return &cpu(); }
AllocatorStats cpu_allocator_stats() { return cpu().cache().stats(); }
void cpu_allocator_release_cache() { cpu().cache().release_cache(); }
void cpu_allocator_reset_peak() { cpu().cache().reset_peak(); }

}  // namespace msl::kernels
