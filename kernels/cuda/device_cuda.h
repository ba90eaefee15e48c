// The CUDA device: one NVIDIA GPU through the driver API (cuda_driver.h).
//
// Memory comes from cuMemAlloc behind the stream-ordered CachingAllocator
// (no cuMemAlloc/cuMemFree per tensor); events guard reuse across streams.
// All work of the device is queued on one compute stream, which is what the
// null Stream means for it, in launch order: a kernel never waits for the
// host, and the host waits only where it reads a result (copy_to_host,
// synchronize). An error of an asynchronous kernel therefore surfaces at
// the next synchronization; the device remembers the last primitive it
// launched and names it in that error.
//
// The driver's primary context of the GPU is made current on whichever
// thread calls (dataset workers copy batches from their own threads).
#pragma once

#include <cuda.h>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "kernels/caching_allocator.h"
#include "kernels/device.h"

namespace msl::kernels::cuda {

struct GpuInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  int arch = 0;      // compute capability as 10 * major + minor: 90
  int multiprocessors = 0;
  size_t total_bytes = 0;
};

class CudaDevice final : public Device {
 public:
  // Opens GPU `ordinal`; throws DeviceError (no driver, no such GPU).
  explicit CudaDevice(int ordinal);
  ~CudaDevice() override;

  std::string name() const override;  // "GPU:0"
  void* allocate(size_t bytes, Stream stream) override;
  void deallocate(void* p, size_t bytes, Stream stream) override;
  void copy_to_host(void* host_dst, const void* src, size_t bytes) override;
  void copy_from_host(void* dst, const void* host_src, size_t bytes) override;
  void copy_within(void* dst, const void* src, size_t bytes) override;
  void synchronize() override;
  AllocatorStats memory_stats() override { return cache_.stats(); }
  void reset_peak_memory() override { cache_.reset_peak(); }
  void release_cached_memory() override { cache_.release_cache(); }

  const GpuInfo& info() const { return info_; }
  CUstream stream() const { return stream_; }
  CachingAllocator& cache() { return cache_; }

  // The kernel `kernel` of CUDA C `source`, compiled by NVRTC for this GPU
  // on first use and kept for the process (keyed by the source text).
  // `what` names the primitive or program in errors.
  CUfunction function(const std::string& source, const char* kernel, const char* what);
  // The kernel `kernel` of an image NVRTC already made (a cubin or PTX),
  // loaded on first use and kept for the process under `key` (whatever
  // identifies the image: its source and target).
  CUfunction function_in_image(const std::string& key, const std::string& image, const char* kernel,
                               const char* what);
  // Queues `f` on the compute stream with a grid of `blocks` blocks of
  // `threads` threads; `args` as cuLaunchKernel takes them. `what` names
  // the primitive, for this call's errors and for an asynchronous fault
  // found at the next synchronization.
  void launch(CUfunction f, unsigned blocks, unsigned threads, void** args, const char* what,
              unsigned shared_bytes = 0);
  // Blocks and threads for a grid-stride loop over n elements.
  void grid_for(int64_t n, unsigned& blocks, unsigned& threads) const;

  // Makes the device's context current on the calling thread.
  void make_current() const;

 private:
  class Blocks;
  // The function of the module kept under `key`, loading `image()` first
  // when there is none yet.
  CUfunction module_function(const std::string& key, const char* kernel, const char* what,
                             const std::function<std::string()>& image);
  void check_sync(CUresult r, const char* call);

  GpuInfo info_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  std::unique_ptr<Blocks> blocks_;
  CachingAllocator cache_;
  std::mutex modules_mu_;
  std::map<std::string, CUmodule> modules_;
  const char* last_launch_ = "";  // the primitive of the latest kernel, for asynchronous errors
};

// What NVRTC compiles for a GPU of compute capability `gpu_arch`: its own
// architecture as a cubin, or, for a GPU newer than NVRTC, PTX for the
// newest architecture NVRTC knows (the driver compiles that for the GPU).
void nvrtc_target_for(int gpu_arch, int& arch, bool& ptx);

// GPU `ordinal`, opened on first use and kept for the process. Throws
// DeviceError naming what is missing.
CudaDevice& gpu(int ordinal = 0);

}  // namespace msl::kernels::cuda
