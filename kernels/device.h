// Devices and their allocators.
//
// A Device allocates, frees and copies raw memory and can wait for its queued
// work. The CPU device runs everything synchronously; the CUDA device (the
// GPU back end) implements the same interface with a stream. Allocation goes
// through a caching allocator: freed blocks are kept in per-size free lists
// and reused, because training allocates the same sizes every step and
// malloc/free of large blocks (page faults, zeroing) is slow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace msl::kernels {

enum class DeviceType : uint8_t { CPU, CUDA };

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceType type() const = 0;
  virtual std::string name() const = 0;  // "CPU", "GPU:0"
  // At least `bytes` bytes, 64-byte aligned. Throws std::bad_alloc when the
  // device is out of memory even after releasing its cache.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p, size_t bytes) = 0;
  // Copies between this device and the host (or within this device).
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void copy_within(void* dst, const void* src, size_t bytes) = 0;
  virtual void synchronize() = 0;
};

// Statistics of a caching allocator, for tests and memory reports.
struct AllocatorStats {
  size_t bytes_in_use = 0;
  size_t bytes_cached = 0;
  size_t peak_bytes_in_use = 0;
  uint64_t allocations = 0;
  uint64_t cache_hits = 0;
};

Device* cpu_device();
AllocatorStats cpu_allocator_stats();
// Frees every cached (unused) CPU block.
void cpu_allocator_release_cache();
// Starts a new peak measurement: peak_bytes_in_use = bytes_in_use.
void cpu_allocator_reset_peak();

}  // namespace msl::kernels
