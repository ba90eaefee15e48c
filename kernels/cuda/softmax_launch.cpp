// Launches of the softmax family's kernels (softmax_cuda.h).
#include <fmt/format.h>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/softmax_cuda.h"
#include "kernels/errors.h"
#include "kernels/shape_util.h"

namespace msl::kernels::cuda {

namespace {

// A contiguous copy of `t` on `dev` (a 0-d input may be a host scalar).
Tensor contiguous_on(const Tensor& t, CudaDevice& dev) {
  return t.device() == &dev ? t.contiguous() : t.to_device(&dev);
}

CUfunction kernel_for(CudaDevice& dev, const SoftmaxKernel& k, const char* what) {
  std::string name = softmax_kernel_name(k);
  return text_kernel(dev, name, name, what, [&] { return softmax_source(k); });
}

// softmax, log_softmax and their gradients: rows of n elements at stride b
// in the contiguous [A, n, b] view around the axis.
void cuda_softmax_like(const KernelArgs& a) {
  const char* what = prim_name(a.prim);
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  CudaDevice& dev = device_of(out);
  int axis = normalize_axis(what, a.attrs.get_int("axis", -1), out.ndim());
  int64_t n = out.ndim() == 0 ? 1 : out.dim(axis), b = 1;
  for (int i = axis + 1; i < out.ndim(); ++i) b *= out.dim(i);
  int64_t rows = out.numel() / n;
  CUfunction f = kernel_for(dev, {a.prim, out.dtype()}, what);
  Tensor x = contiguous_on(a.in[0], dev);
  void* o = out.raw();
  void* x_ptr = x.raw();
  if (a.in.size() == 1) {
    void* args[] = {&rows, &o, &x_ptr, &n, &b};
    launch_over(dev, f, rows, args, what);
    return;
  }
  Tensor dy = contiguous_on(a.in[1], dev);
  void* dy_ptr = dy.raw();
  void* args[] = {&rows, &o, &x_ptr, &dy_ptr, &n, &b};
  launch_over(dev, f, rows, args, what);
}

void cuda_cross_entropy(const KernelArgs& a) {
  const char* what = prim_name(a.prim);
  const Tensor &loss = a.out[0], &dlogits = a.out[1];
  int64_t rows = dlogits.dim(0), n = dlogits.dim(1);
  if (rows == 0) return;
  CudaDevice& dev = device_of(loss);
  const bool sparse = a.prim == Prim::sparse_softmax_cross_entropy;
  Tensor x = contiguous_on(a.in[0], dev), labels = contiguous_on(a.in[1], dev);
  CUfunction f = kernel_for(dev, {a.prim, loss.dtype(), labels.dtype()}, what);
  void* l = loss.raw();
  void* d = dlogits.raw();
  void* x_ptr = x.raw();
  void* lab = labels.raw();
  if (!sparse) {
    void* args[] = {&rows, &l, &d, &x_ptr, &lab, &n};
    launch_over(dev, f, rows, args, what);
    return;
  }
  // A label out of range is flagged by the kernel; the message names the
  // first one, as the CPU's, found on the host once the flag is seen.
  Tensor flag(DType::Int32, Dims{1}, &dev);
  int32_t zero = 0;
  dev.copy_from_host(flag.raw(), &zero, sizeof zero);
  void* err = flag.raw();
  void* args[] = {&rows, &l, &d, &x_ptr, &lab, &n, &err};
  launch_over(dev, f, rows, args, what);
  int32_t failed = 0;
  dev.copy_to_host(&failed, err, sizeof failed);
  if (!failed) return;
  Tensor host = labels.to_host();
  for (int64_t r = 0; r < rows; ++r) {
    auto v = static_cast<int64_t>(host.item_at(r));
    if (v < 0 || v >= n)
      throw IndexError(fmt::format("sparse_softmax_cross_entropy: label {} is out of range for {} classes", v, n));
  }
}

}  // namespace

void register_softmax_kernels() {
  for (Prim p : {Prim::softmax, Prim::log_softmax, Prim::softmax_grad, Prim::log_softmax_grad})
    set_device_kernel(p, DeviceType::CUDA, &cuda_softmax_like);
  set_device_kernel(Prim::softmax_cross_entropy, DeviceType::CUDA, &cuda_cross_entropy);
  set_device_kernel(Prim::sparse_softmax_cross_entropy, DeviceType::CUDA, &cuda_cross_entropy);
}

}  // namespace msl::kernels::cuda
