// The GPU's primitive kernels (cuda_kernels.h).
#include "kernels/cuda/cuda_kernels.h"

#include <fmt/format.h>

#include <mutex>

#include "kernels/blocked_layout.h"
#include "kernels/cuda/copy_cuda.h"
#include "kernels/cuda/cuda_driver.h"
#include "kernels/cuda/device_cuda.h"
#include "kernels/cuda/indexing_cuda.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/movement_cuda.h"
#include "kernels/cuda/sort_cuda.h"
#include "kernels/cuda/optimizer_cuda.h"
#include "kernels/cuda/pointwise_cuda.h"
#include "kernels/cuda/random_cuda.h"
#include "kernels/cuda/reduce_cuda.h"
#include "kernels/cuda/softmax_cuda.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"

namespace msl::kernels::cuda {

namespace {

// ----------------------------------------------------------------- copies

// dst[...] = convert(src[...]) over dst's shape, src broadcast to it.
void strided_copy(const Tensor& dst, const Tensor& src, const char* what) {
  int64_t n = dst.numel();
  if (n == 0) return;
  CudaDevice& dev = device_of(dst);
  Dims src_strides = broadcast_strides(src.shape(), src.strides(), dst.shape());
  CopyGeometry g;
  g.ndim = dst.ndim();
  for (int k = 0; k < g.ndim; ++k) {
    g.shape[k] = dst.dim(k);
    g.dst[k] = dst.strides()[k];
    g.src[k] = src_strides[k];
  }
  DType dt = dst.dtype(), st = src.dtype();
  std::string name = copy_kernel_name(dt, st);
  CUfunction f = text_kernel(dev, name, name, what, [&] { return copy_kernel_source(dt, st); });
  void* d = dst.raw();
  void* s = src.raw();
  void* args[] = {&n, &d, &s, &g};
  launch_over(dev, f, n, args, what);
}

void cuda_assign(const KernelArgs& a) {
  const Tensor& p = a.in[0];
  Tensor v = a.in[1];
  if (p.numel() == 0) return;
  if (v.device() != p.device()) v = v.to_device(p.device());  // a host scalar
  if (v.shares_storage(p)) v = v.clone();                       // overlapping source and destination
  strided_copy(p, v, "assign");
}

void cuda_cast(const KernelArgs& a) {
  Tensor x = a.in[0];
  if (x.device() != a.out[0].device()) x = x.to_device(a.out[0].device());
  strided_copy(a.out[0], x, "cast");
}

// The channel-blocked layout's reorders: the strided copy between the
// blocked tensor and a view of the plain one as [N, C/b, H, W, b]
// (blocked_layout.h). The CPU's float32 path is a oneDNN reorder with the
// same result: a permutation moves values, not arithmetic.
void cuda_to_blocked(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  strided_copy(out, plain_as_blocked_view(a.in[0], out.dim(4)), "to_blocked");
}

void cuda_from_blocked(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  if (x.numel() == 0) return;
  strided_copy(plain_as_blocked_view(a.out[0], x.dim(4)), x, "from_blocked");
}

// View kernels make geometry over the input's storage and read no memory
// (reshape copies on the device when it must): the CPU's serve every device.
void register_views() {
  set_device_kernel(Prim::reshape, DeviceType::CUDA, &cpu_reshape);
  set_device_kernel(Prim::transpose, DeviceType::CUDA, &cpu_transpose);
  set_device_kernel(Prim::broadcast_to, DeviceType::CUDA, &cpu_broadcast_to);
  set_device_kernel(Prim::strided_slice, DeviceType::CUDA, &cpu_strided_slice);
}

}  // namespace

void register_cuda_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    set_device_kernel(Prim::assign, DeviceType::CUDA, &cuda_assign);
    set_device_kernel(Prim::cast, DeviceType::CUDA, &cuda_cast);
    set_device_kernel(Prim::to_blocked, DeviceType::CUDA, &cuda_to_blocked);
    set_device_kernel(Prim::from_blocked, DeviceType::CUDA, &cuda_from_blocked);
    register_views();
    register_pointwise_kernels();
    register_reduce_kernels();
    register_softmax_kernels();
    register_movement_kernels();
    register_indexing_kernels();
    register_sort_kernels();
    register_optimizer_kernels();
    register_random_kernels();
    register_collective_kernels();
  });
}

}  // namespace msl::kernels::cuda
