// The CUDA device (device_cuda.h).
#include "kernels/cuda/device_cuda.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>

#include "kernels/cuda/cuda_driver.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/image_cache.h"
#include "kernels/cuda/nvrtc_compiler.h"
#include "kernels/errors.h"

namespace msl::kernels::cuda {

namespace {

// Freed device memory kept for reuse beyond this goes back to the driver.
constexpr size_t kMaxCachedBytes = size_t(8) << 30;
constexpr int kMaxGpus = 16;

std::string mib(size_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

}  // namespace

class CudaDevice::Blocks final : public BlockSource {
 public:
  explicit Blocks(CudaDevice& dev) : dev_(dev) {}
  void* raw_allocate(size_t bytes) override {
    dev_.make_current();
    CUdeviceptr p = 0;
    CUresult r = driver().cuMemAlloc(&p, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY) return nullptr;  // the allocator releases its cache and retries
    check(r, "cuMemAlloc");
    return reinterpret_cast<void*>(p);
  }
  void raw_free(void* p, size_t) override {
    dev_.make_current();
    // Freeing waits for the device's work (cuMemFree synchronizes): only the
    // allocator's cache release and trims come here, never a tensor's free.
    check(driver().cuMemFree(reinterpret_cast<CUdeviceptr>(p)), "cuMemFree");
  }
  void* record_event(Stream stream) override {
    dev_.make_current();
    CUevent e = nullptr;
    check(driver().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    check(driver().cuEventRecord(e, stream ? static_cast<CUstream>(stream) : dev_.stream_), "cuEventRecord");
    return e;
  }
  bool event_done(void* e) override { return driver().cuEventQuery(static_cast<CUevent>(e)) == CUDA_SUCCESS; }
  void destroy_event(void* e) override { driver().cuEventDestroy(static_cast<CUevent>(e)); }

 private:
  CudaDevice& dev_;
};

CudaDevice::CudaDevice(int ordinal)
    : Device(DeviceType::CUDA), blocks_(std::make_unique<Blocks>(*this)), cache_(*blocks_, kMaxCachedBytes) {
  const Driver& d = driver();
  int count = 0;
  check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0) throw DeviceError("no CUDA device: the NVIDIA driver found no GPU");
  if (ordinal < 0 || ordinal >= count)
    throw DeviceError(fmt::format("no CUDA device {}: this machine has {} (device_id 0 to {})", ordinal, count,
                                  count - 1));
  info_.ordinal = ordinal;
  check(d.cuDeviceGet(&dev_, ordinal), "cuDeviceGet");
  char name[256] = {};
  check(d.cuDeviceGetName(name, sizeof name, dev_), "cuDeviceGetName");
  info_.name = name;
  int major = 0, minor = 0;
  check(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_), "cuDeviceGetAttribute");
  check(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_), "cuDeviceGetAttribute");
  info_.arch = 10 * major + minor;
  check(d.cuDeviceGetAttribute(&info_.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev_),
        "cuDeviceGetAttribute");
  check(d.cuDeviceTotalMem(&info_.total_bytes, dev_), "cuDeviceTotalMem");
  check(d.cuDevicePrimaryCtxRetain(&ctx_, dev_), "cuDevicePrimaryCtxRetain");
  make_current();
  check(d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
}

CudaDevice::~CudaDevice() = default;  // kept for the process (gpu()): the driver unloads its contexts at exit

std::string CudaDevice::name() const { return fmt::format("GPU:{}", info_.ordinal); }

void CudaDevice::make_current() const {
  // Each thread's current context; a thread that used another GPU since is
  // switched back.
  thread_local CUcontext current = nullptr;
  if (current == ctx_) return;
  check(driver().cuCtxSetCurrent(ctx_), "cuCtxSetCurrent");
  current = ctx_;
}

void* CudaDevice::allocate(size_t bytes, Stream stream) {
  try {
    return cache_.allocate(bytes, stream);
  } catch (const std::bad_alloc&) {
    AllocatorStats s = cache_.stats();
    size_t free_bytes = 0, total = 0;
    make_current();
    driver().cuMemGetInfo(&free_bytes, &total);
    throw OutOfMemory(fmt::format("{} out of memory: tried to allocate {}; tensors hold {} (peak {}), the cache "
                                  "{} more; the GPU has {} free of {}",
                                  name(), mib(bytes), mib(s.bytes_in_use), mib(s.peak_bytes_in_use),
                                  mib(s.bytes_cached), mib(free_bytes), mib(total)));
  }
}

void CudaDevice::deallocate(void* p, size_t bytes, Stream stream) { cache_.free(p, bytes, stream); }

void CudaDevice::check_sync(CUresult r, const char* call) {
  // A fault of a kernel queued earlier is reported by the first call that
  // waits for it: name the kernel, not the waiting call.
  if (r == CUDA_SUCCESS) return;
  std::string what = *last_launch_ ? fmt::format("after the kernel of {}", last_launch_) : std::string();
  check(r, call, what.c_str());
}

void CudaDevice::copy_to_host(void* host_dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  make_current();
  const Driver& d = driver();
  check_sync(d.cuMemcpyDtoHAsync(host_dst, reinterpret_cast<CUdeviceptr>(src), bytes, stream_), "cuMemcpyDtoHAsync");
  check_sync(d.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void CudaDevice::copy_from_host(void* dst, const void* host_src, size_t bytes) {
  if (bytes == 0) return;
  make_current();
  const Driver& d = driver();
  check_sync(d.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), host_src, bytes, stream_), "cuMemcpyHtoDAsync");
  // The caller may free or reuse the host buffer on return.
  check_sync(d.cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void CudaDevice::copy_within(void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  make_current();
  check(driver().cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes,
                                   stream_),
        "cuMemcpyDtoDAsync");
}

void CudaDevice::synchronize() {
  make_current();
  check_sync(driver().cuStreamSynchronize(stream_), "cuStreamSynchronize");
}

void nvrtc_target_for(int gpu_arch, int& arch, bool& ptx) {
  // A GPU newer than this NVRTC gets PTX for the newest architecture NVRTC
  // knows, which the driver compiles for the GPU.
  std::vector<int> archs = nvrtc_supported_archs();
  bool known = std::find(archs.begin(), archs.end(), gpu_arch) != archs.end();
  arch = known || archs.empty() ? gpu_arch : archs.back();
  ptx = !known;
}

CUfunction CudaDevice::function(const std::string& source, const char* kernel, const char* what) {
  return module_function(source, kernel, what, [&] {
    int arch = 0;
    bool ptx = false;
    nvrtc_target_for(info_.arch, arch, ptx);
    return compile_cached(source, what, arch, ptx).image;
  });
}

CUfunction CudaDevice::function_in_image(const std::string& key, const std::string& image, const char* kernel,
                                         const char* what) {
  return module_function(key, kernel, what, [&] { return image; });
}

CUfunction CudaDevice::module_function(const std::string& key, const char* kernel, const char* what,
                                       const std::function<std::string()>& image) {
  std::lock_guard lock(modules_mu_);
  make_current();
  CUmodule& m = modules_[key];
  if (!m) {
    try {
      std::string bytes = image();
      check(driver().cuModuleLoadData(&m, bytes.data()), "cuModuleLoadData", what);
    } catch (...) {
      modules_.erase(key);
      throw;
    }
  }
  CUfunction f = nullptr;
  check(driver().cuModuleGetFunction(&f, m, kernel), "cuModuleGetFunction", what);
  return f;
}

void CudaDevice::grid_for(int64_t n, unsigned& blocks, unsigned& threads) const {
  threads = 256;
  // Enough blocks to fill every multiprocessor a few times over; the loops
  // stride over the rest.
  int64_t want = (n + threads - 1) / threads;
  int64_t cap = int64_t{info_.multiprocessors} * 8;
  blocks = static_cast<unsigned>(std::max<int64_t>(1, std::min(want, cap)));
}

void CudaDevice::launch(CUfunction f, unsigned blocks, unsigned threads, void** args, const char* what,
                        unsigned shared_bytes) {
  make_current();
  last_launch_ = what;
  check(driver().cuLaunchKernel(f, blocks, 1, 1, threads, 1, 1, shared_bytes, stream_, args, nullptr), "cuLaunchKernel",
        what);
}

CudaDevice& gpu(int ordinal) {
  static std::mutex mu;
  static std::array<CudaDevice*, kMaxGpus> devices{};
  if (ordinal < 0 || ordinal >= kMaxGpus) throw DeviceError(fmt::format("no CUDA device {}", ordinal));
  std::lock_guard lock(mu);
  CudaDevice*& d = devices[static_cast<size_t>(ordinal)];
  if (!d) {
    // Never destroyed: tensors held by static objects may be freed at exit.
    d = new CudaDevice(ordinal);
    register_cuda_kernels();
    register_matmul_kernels();
    register_conv_kernels();
    register_pool_kernels();
    register_batch_norm_kernels();
  }
  return *d;
}

}  // namespace msl::kernels::cuda

namespace msl::kernels {

Device* cuda_device(int ordinal) { return &cuda::gpu(ordinal); }

std::string cuda_unavailable_reason(int ordinal) {
  try {
    cuda::gpu(ordinal);
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace msl::kernels
