// Launches of the reduction kernels (reduce_cuda.h).
#include <vector>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/reduce_cuda.h"
#include "kernels/shape_util.h"

namespace msl::kernels::cuda {

namespace {

// The reduced axes as a bit mask (inference has validated them): `axes`
// (empty: all) for the reduce_ primitives, `axis` for argmax/argmin.
uint32_t reduced_axes(const KernelArgs& a, int ndim) {
  const char* what = prim_name(a.prim);
  if (ndim == 0) return 0;
  if (a.prim == Prim::argmax || a.prim == Prim::argmin)
    return 1u << normalize_axis(what, a.attrs.get_int("axis", -1), ndim);
  std::vector<int64_t> axes = a.attrs.get_ints("axes");
  if (axes.empty()) return (1u << ndim) - 1;
  uint32_t mask = 0;
  for (int64_t ax : axes) mask |= 1u << normalize_axis(what, ax, ndim);
  return mask;
}

void cuda_reduce(const KernelArgs& a) {
  const char* what = prim_name(a.prim);
  const Tensor& x = a.in[0];
  const Tensor& out = a.out[0];
  int64_t n = out.numel();
  if (n == 0) return;
  CudaDevice& dev = device_of(out);
  int64_t count = 0;
  ReduceGeometry g = reduce_geometry(x.shape(), x.strides(), reduced_axes(a, x.ndim()), count);
  ReduceKernel k{a.prim, x.dtype(), out.dtype()};
  std::string name = reduce_kernel_name(k);
  CUfunction f = text_kernel(dev, name, name, what, [&] { return reduce_source(k); });
  void* out_ptr = out.raw();
  void* x_ptr = x.raw();
  void* args[] = {&n, &out_ptr, &x_ptr, &g, &count};
  launch_over(dev, f, n, args, what);
}

}  // namespace

void register_reduce_kernels() {
  for (Prim p : {Prim::reduce_sum, Prim::reduce_max, Prim::reduce_min, Prim::argmax, Prim::argmin})
    set_device_kernel(p, DeviceType::CUDA, &cuda_reduce);
}

}  // namespace msl::kernels::cuda
