// Launches of the random kernels (random_cuda.h).
#include <cmath>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/random_cuda.h"
#include "kernels/random_ops.h"

namespace msl::kernels::cuda {

namespace {

void cuda_random(const KernelArgs& a) {
  const char* what = prim_name(a.prim);
  const Tensor& out = a.out[0];
  int64_t n = out.numel();
  if (n == 0) return;
  CudaDevice& dev = device_of(out);
  DType t = out.dtype();
  // One thread per Philox counter: the counters the CPU's kernel consumes.
  auto counters = static_cast<int64_t>(random_blocks_used(a.prim, n, t));
  unsigned long long seed = static_cast<uint64_t>(a.attrs.get_int("seed"));
  unsigned long long offset = static_cast<uint64_t>(a.attrs.get_int("offset"));
  std::string name = random_kernel_name(a.prim, t);
  CUfunction f = text_kernel(dev, name, name, what, [&] { return random_source(a.prim, t); });
  void* o = out.raw();
  if (a.prim != Prim::dropout) {
    void* args[] = {&counters, &n, &o, &seed, &offset};
    launch_over(dev, f, counters, args, what);
    return;
  }
  const Tensor& mask = a.out[1];
  Tensor x = a.in[0].device() == out.device() ? a.in[0].contiguous() : a.in[0].to_device(out.device());
  // As the CPU: u < keep with u = k / 2^24 <=> k < ceil(keep * 2^24);
  // scale = 1 / keep rounded once to the compute type.
  double keep = a.attrs.get_float("keep_prob", 0.5);
  unsigned threshold = static_cast<unsigned>(std::ceil(keep * 16777216.0));
  double scale64 = 1.0 / keep;
  float scale32 = static_cast<float>(scale64);
  void* m = mask.raw();
  void* xp = x.raw();
  void* scale = t == DType::Float64 ? static_cast<void*>(&scale64) : static_cast<void*>(&scale32);
  void* args[] = {&counters, &n, &o, &m, &xp, &seed, &offset, &threshold, scale};
  launch_over(dev, f, counters, args, what);
}

}  // namespace

void register_random_kernels() {
  for (Prim p : {Prim::random_uniform, Prim::random_normal, Prim::dropout})
    set_device_kernel(p, DeviceType::CUDA, &cuda_random);
}

}  // namespace msl::kernels::cuda
