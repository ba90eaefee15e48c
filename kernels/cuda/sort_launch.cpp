// The sort primitive's launch (sort_cuda.h).
#include "kernels/cuda/launch.h"
#include "kernels/cuda/sort_cuda.h"
#include "kernels/primitives.h"

namespace msl::kernels::cuda {

namespace {

void cuda_sort(const KernelArgs& a) {
  const Tensor &values = a.out[0], &indices = a.out[1];
  if (values.numel() == 0) return;
  CudaDevice& dev = device_of(values);
  const Tensor& x = a.in[0];
  long long n = x.dim(x.ndim() - 1), rows = x.numel() / n;
  bool descending = a.attrs.get_bool("descending");
  DType key = sort_key_dtype(x.dtype());
  Tensor xc = dense_on(x, x.dtype(), dev);
  Tensor keys = dense_on(xc, key, dev);
  Tensor scratch(DType::Int32, x.shape(), &dev);
  std::string name = sort_kernel_name(key, x.itemsize(), descending);
  CUfunction f = text_kernel(dev, name, name, "sort", [&] { return sort_kernel_text(key, x.itemsize(), descending); });
  void* k = keys.raw();
  void* xp = xc.raw();
  void* v = values.raw();
  void* i = indices.raw();
  void* s = scratch.raw();
  void* args[] = {&rows, &n, &k, &xp, &v, &i, &s};
  launch_over(dev, f, rows, args, "sort");
}

}  // namespace

void register_sort_kernels() { set_device_kernel(Prim::sort, DeviceType::CUDA, &cuda_sort); }

}  // namespace msl::kernels::cuda
