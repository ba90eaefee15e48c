// Devices.
//
// A Device allocates, frees and copies raw memory and can wait for its queued
// work. Work is ordered by streams: a Stream is an opaque handle the device
// understands (a cudaStream_t for a GPU); nullptr is the device's default
// stream, and the CPU's only one (it runs everything synchronously).
// Allocation goes through a CachingAllocator (caching_allocator.h).
//
// Host code reads and writes tensor memory only on the CPU device. Anything
// else goes through copy_to_host / copy_from_host (Tensor::to_host,
// Tensor::to_device); the kernels of a device run with its memory
// accessible. The Debug device (device_debug.h, for tests) is host memory
// that is unreadable outside its kernels, which makes any other access fail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace msl::kernels {

enum class DeviceType : uint8_t { CPU, CUDA, Debug };
constexpr int kNumDeviceTypes = 3;
// "CPU", "CUDA", "Debug".
const char* device_type_name(DeviceType t);

using Stream = void*;

// Statistics of a caching allocator, for tests and memory reports.
struct AllocatorStats {
  size_t bytes_in_use = 0;
  size_t bytes_cached = 0;
  size_t peak_bytes_in_use = 0;
  uint64_t allocations = 0;
  uint64_t cache_hits = 0;
};

class Device {
 public:
  explicit Device(DeviceType type) : type_(type) {}
  virtual ~Device() = default;
  // Not virtual: eager dispatch checks it on every call.
  DeviceType type() const { return type_; }
  virtual std::string name() const = 0;  // "CPU", "GPU:0", "Debug"
  // At least `bytes` bytes, 64-byte aligned, for work on `stream`. Throws
  // std::bad_alloc when the device is out of memory even after releasing
  // its cache.
  virtual void* allocate(size_t bytes, Stream stream) = 0;
  virtual void deallocate(void* p, size_t bytes, Stream stream) = 0;
  // Copies between this device and the host (or within this device).
  virtual void copy_to_host(void* host_dst, const void* src, size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* host_src, size_t bytes) = 0;
  virtual void copy_within(void* dst, const void* src, size_t bytes) = 0;
  virtual void synchronize() = 0;
  // The device's caching allocator (msl.runtime.memory_allocated and
  // friends): its statistics, a new peak measurement, and returning its
  // cached blocks to the system. A device without one reports nothing.
  virtual AllocatorStats memory_stats() { return {}; }
  virtual void reset_peak_memory() {}
  virtual void release_cached_memory() {}

 private:
  DeviceType type_;
};

Device* cpu_device();
AllocatorStats cpu_allocator_stats();
// Frees every cached (unused) CPU block.
void cpu_allocator_release_cache();
// Starts a new peak measurement: peak_bytes_in_use = bytes_in_use.
void cpu_allocator_reset_peak();

// NVIDIA GPU `ordinal` (kernels/cuda/device_cuda.h), opened on first use.
// Throws DeviceError (errors.h) naming what is missing: a build without
// CUDA, no NVIDIA driver, no GPU, no GPU of that number.
Device* cuda_device(int ordinal = 0);
// "" when cuda_device(ordinal) succeeds, else its message; never throws.
std::string cuda_unavailable_reason(int ordinal = 0);

// The device new tensors of the language are made on (msl.Tensor(...),
// creation ops, primitives without tensor inputs). The CPU, unless the
// environment variable MSL_DEFAULT_DEVICE names another ("debug": the Debug
// device) when it is first asked; that variable is for tests only.
Device* default_device();
void set_default_device(Device* d);
namespace detail {
// default_device() is not the CPU: what eager dispatch checks before asking
// where host scalars alone compute (no function call on the CPU's path).
extern bool default_device_off_cpu;
}  // namespace detail

}  // namespace msl::kernels
