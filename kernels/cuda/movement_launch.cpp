// gather, scatter_add, one_hot, concat and pad on the GPU (movement_cuda.h).
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "kernels/cuda/copy_cuda.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/movement_cuda.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"

namespace msl::kernels::cuda {

namespace {

// The CPU's IndexError for the first index of `indices` outside [0, size),
// if any (read on the host: only after the kernel flagged one, or when
// nothing is computed).
void check_indices_on_host(const Tensor& indices, int64_t size, int axis) {
  Tensor h = indices.to_host();
  for (int64_t i = 0; i < h.numel(); ++i) {
    auto v = static_cast<int64_t>(h.item_at(i));
    if (v < 0 || v >= size)
      throw IndexError(
          fmt::format("gather: index {} is out of range for axis {} with size {}", v, axis, size));
  }
}

void cuda_gather(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  const int axis = normalize_axis("gather", a.attrs.get_int("axis", 0), a.in[0].ndim());
  Tensor params = a.in[0].contiguous(), indices = a.in[1].contiguous();
  if (indices.device() != out.device()) indices = indices.to_device(out.device());  // a host scalar index
  int64_t size = params.dim(axis), inner = 1, k = indices.numel();
  for (int i = axis + 1; i < params.ndim(); ++i) inner *= params.dim(i);
  int64_t n = out.numel();
  if (n == 0) {
    if (k > 0) check_indices_on_host(indices, size, axis);
    return;
  }
  if (gather_rows(out, params, indices, size, inner, "gather")) check_indices_on_host(indices, size, axis);
}

void cuda_scatter_add(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  const int axis = normalize_axis("scatter_add", a.attrs.get_int("axis", 0), out.ndim());
  Tensor indices = dense_on(a.in[1], a.in[1].dtype(), device_of(out));
  int64_t inner = 1;
  for (int i = axis + 1; i < out.ndim(); ++i) inner *= out.dim(i);
  // The CPU's checks on the host, for its error: the indices, with
  // stand-ins for x and the updates.
  auto cpu_check = [&] {
    Tensor in[] = {stand_in(a.in[0]), indices.to_host(), stand_in(a.in[2])};
    check_on_host(Prim::scatter_add, in, a.attrs);
  };
  if (a.in[2].numel() == 0 && indices.numel() > 0) cpu_check();  // no kernel reads them
  if (out.numel() == 0) return;
  if (scatter_add_rows(out, a.in[0], a.in[2], indices, out.dim(axis), inner, "scatter_add")) {
    cpu_check();
    throw DeviceError("scatter_add: the GPU kernel flagged an index the CPU accepts");
  }
}

void cuda_one_hot(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  int64_t n = out.numel();
  if (n == 0) return;
  Tensor ind = a.in[0].contiguous();
  const int axis = normalize_axis("one_hot", a.attrs.get_int("axis", -1), ind.ndim() + 1);
  int64_t depth = a.attrs.get_int("depth"), inner = 1;
  for (int i = axis; i < ind.ndim(); ++i) inner *= ind.dim(i);
  // on and off as the output's bit patterns, as the CPU converts them.
  uint64_t on = 0, off = 0;
  store_from_double(&on, out.dtype(), 0, a.attrs.get_float("on_value", 1));
  store_from_double(&off, out.dtype(), 0, a.attrs.get_float("off_value", 0));
  CudaDevice& dev = device_of(out);
  const size_t item = out.itemsize();
  std::string name = one_hot_kernel_name(item, ind.dtype());
  CUfunction f = text_kernel(dev, name, name, "one_hot",
                             [&] { return movement_prelude() + one_hot_kernel_text(item, ind.dtype()); });
  void* o = out.raw();
  void* idx = ind.raw();
  void* args[] = {&n, &o, &idx, &depth, &inner, &on, &off};  // on/off: their low bytes (little-endian)
  launch_over(dev, f, n, args, "one_hot");
}

// Each input copied (converted to the output's dtype) into its slot.
void cuda_concat(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  const int axis = normalize_axis("concat", a.attrs.get_int("axis", 0), out.ndim());
  int64_t pos = 0;
  for (const Tensor& t : a.in) {
    int64_t len = t.dim(axis);
    if (len > 0) copy_tensor(t, Tensor::view(out, t.shape(), out.strides(), out.offset() + pos * out.strides()[axis]));
    pos += len;
  }
}

// The fill value broadcast over the output, then the input into the
// interior (the interior is written twice; one pass per element is the
// next step).
void cuda_pad(const KernelArgs& a) {
  const Tensor& x = a.in[0];
  const Tensor& out = a.out[0];
  if (out.numel() == 0) return;
  std::vector<int64_t> p = a.attrs.get_ints("paddings");
  Tensor value(out.dtype(), Dims{});
  store_from_double(value.raw(), out.dtype(), 0, a.attrs.get_float("value", 0));
  Dims zeros;
  zeros.resize(out.ndim(), 0);
  copy_tensor(Tensor::view(value.to_device(out.device()), out.shape(), zeros, 0), out);
  if (x.numel() == 0) return;
  int64_t offset = out.offset();
  for (int d = 0; d < x.ndim(); ++d) offset += p[static_cast<size_t>(2 * d)] * out.strides()[d];
  copy_tensor(x, Tensor::view(out, x.shape(), out.strides(), offset));
}

}  // namespace

bool gather_rows(const Tensor& out, const Tensor& params, const Tensor& indices, int64_t size, int64_t inner,
                 const char* what) {
  int64_t n = out.numel(), k = indices.numel();
  if (n == 0) return false;
  CudaDevice& dev = device_of(out);
  const size_t item = out.itemsize();
  const DType it = indices.dtype();
  std::string name = gather_kernel_name(item, it);
  CUfunction f = text_kernel(dev, name, name, what, [&] { return movement_prelude() + gather_kernel_text(item, it); });
  ErrorFlag flag(dev);
  void* o = out.raw();
  void* p = params.raw();
  void* idx = indices.raw();
  void* args[] = {&n, &o, &p, &idx, &k, &size, &inner, flag.arg()};
  launch_over(dev, f, n, args, what);
  return flag.raised();
}

bool scatter_add_rows(const Tensor& out, const Tensor& x, const Tensor& updates, const Tensor& indices, int64_t size,
                      int64_t inner, const char* what) {
  CudaDevice& dev = device_of(out);
  const DType acc_dt = scatter_accumulator(out.dtype());
  Tensor acc = acc_dt == out.dtype() ? out : Tensor(acc_dt, out.shape(), &dev);
  copy_tensor(x, acc);
  int64_t n = updates.numel(), k = indices.numel();
  bool flagged = false;
  if (n > 0) {
    Tensor upd = dense_on(updates, acc_dt, dev);
    const DType it = indices.dtype();
    std::string name = scatter_add_kernel_name(acc_dt, it);
    CUfunction f =
        text_kernel(dev, name, name, what, [&] { return movement_prelude() + scatter_add_kernel_text(acc_dt, it); });
    ErrorFlag flag(dev);
    void* o = acc.raw();
    void* u = upd.raw();
    void* idx = indices.raw();
    void* args[] = {&n, &o, &u, &idx, &k, &size, &inner, flag.arg()};
    launch_over(dev, f, n, args, what);
    flagged = flag.raised();
  }
  if (acc_dt != out.dtype()) copy_tensor(acc, out);
  return flagged;
}

void register_movement_kernels() {
  set_device_kernel(Prim::gather, DeviceType::CUDA, &cuda_gather);
  set_device_kernel(Prim::scatter_add, DeviceType::CUDA, &cuda_scatter_add);
  set_device_kernel(Prim::one_hot, DeviceType::CUDA, &cuda_one_hot);
  set_device_kernel(Prim::concat, DeviceType::CUDA, &cuda_concat);
  set_device_kernel(Prim::pad, DeviceType::CUDA, &cuda_pad);
}

}  // namespace msl::kernels::cuda
