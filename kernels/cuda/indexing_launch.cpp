// NumPy-style indexing on the GPU (indexing_cuda.h): gather_nd, the tensor
// scatters, nonzero, masked_fill and strided_slice_update.
//
// The N-d index primitives first turn the index rows into block offsets of
// x (one kernel), and read its error flag back (one synchronization) before
// anything else runs: the CPU checks every row before writing, and raises
// IndexOutOfRange for the first bad one, which the host then finds by
// running the CPU's own check. tensor_scatter_add adds with atomicAdd: its
// integer results are the CPU's, float ones may differ in the last bits
// where a position repeats (movement_cuda.h's scatter_add says why).
#include <fmt/format.h>

#include "kernels/cuda/cuda_driver.h"
#include "kernels/cuda/indexing_cuda.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/movement_cuda.h"
#include "kernels/cuda/pointwise_cuda.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels::cuda {

namespace {

// x viewed as [positions, inner] around an [..., K] index tensor, and the
// position of each index row.
struct NdRows {
  int64_t rows = 1, positions = 1, inner = 1;
  Tensor indices;  // the index tensor, contiguous on the device
  Tensor offs;     // Int64 [rows]
};

// The offsets of a call of `a.prim` (x, indices[, updates]), checked as the
// CPU checks them.
NdRows nd_rows(const KernelArgs& a) {
  const char* what = prim_name(a.prim);
  const Tensor& x = a.in[0];
  CudaDevice& dev = device_of(a.out[0]);
  NdRows r;
  r.indices = dense_on(a.in[1], a.in[1].dtype(), dev);
  const int nd = r.indices.ndim(), K = static_cast<int>(r.indices.dim(nd - 1));
  for (int i = 0; i + 1 < nd; ++i) r.rows *= r.indices.dim(i);
  NdDims dims;
  dims.ndim = K;
  for (int j = 0; j < x.ndim(); ++j) (j < K ? r.positions : r.inner) *= x.dim(j);
  for (int j = 0; j < K; ++j) dims.d[j] = x.dim(j);
  r.offs = Tensor(DType::Int64, Dims{r.rows}, &dev);
  if (r.rows == 0) return r;
  const DType it = r.indices.dtype();
  std::string name = nd_offsets_kernel_name(it);
  CUfunction f = text_kernel(dev, name, name, what, [&] { return indexing_prelude() + nd_offsets_kernel_text(it); });
  ErrorFlag flag(dev);
  void* o = r.offs.raw();
  void* idx = r.indices.raw();
  void* args[] = {&r.rows, &o, &idx, &dims, flag.arg()};
  launch_over(dev, f, r.rows, args, what);
  if (flag.raised()) {
    std::vector<Tensor> host{stand_in(x), r.indices.to_host()};
    if (a.in.size() == 3) host.push_back(stand_in(a.in[2]));
    check_on_host(a.prim, host, a.attrs);
    throw DeviceError(fmt::format("{}: the GPU kernel flagged an index the CPU accepts", what));
  }
  return r;
}

void cuda_gather_nd(const KernelArgs& a) {
  NdRows r = nd_rows(a);
  Tensor x = dense_on(a.in[0], a.in[0].dtype(), device_of(a.out[0]));
  if (gather_rows(a.out[0], x, r.offs, r.positions, r.inner, "gather_nd"))
    throw DeviceError("gather_nd: a checked row offset was out of range");
}

// x copied, then each position written by the last row that names it.
void cuda_tensor_scatter_update(const KernelArgs& a) {
  const char* what = "tensor_scatter_update";
  NdRows r = nd_rows(a);
  const Tensor& out = a.out[0];
  copy_tensor(a.in[0], out);
  int64_t n = r.rows * r.inner;
  if (n == 0) return;
  CudaDevice& dev = device_of(out);
  // The last row (+ 1) naming each position; 0: none.
  Tensor last(DType::Int64, Dims{r.positions}, &dev);
  dev.make_current();
  check(driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(last.raw()), 0, last.nbytes(), dev.stream()),
        "cuMemsetD8Async", what);
  std::string mark = nd_last_row_kernel_name();
  CUfunction f = text_kernel(dev, mark, mark, what, [] { return indexing_prelude() + nd_last_row_kernel_text(); });
  void* o = r.offs.raw();
  void* l = last.raw();
  void* mark_args[] = {&r.rows, &o, &l};
  launch_over(dev, f, r.rows, mark_args, what);
  const size_t item = out.itemsize();
  std::string name = nd_update_kernel_name(item);
  f = text_kernel(dev, name, name, what, [&] { return indexing_prelude() + nd_update_kernel_text(item); });
  Tensor upd = dense_on(a.in[2], out.dtype(), dev);
  void* dst = out.raw();
  void* u = upd.raw();
  void* args[] = {&n, &dst, &u, &o, &l, &r.inner};
  launch_over(dev, f, n, args, what);
}

void cuda_tensor_scatter_add(const KernelArgs& a) {
  NdRows r = nd_rows(a);
  if (a.out[0].numel() == 0) return;
  if (scatter_add_rows(a.out[0], a.in[0], a.in[2], r.offs, r.positions, r.inner, "tensor_scatter_add"))
    throw DeviceError("tensor_scatter_add: a checked row offset was out of range");
}

// Counts per chunk, their prefix sums and the total (read back: the
// output's length), then each chunk's coordinates from its prefix.
void cuda_nonzero(const KernelArgs& a) {
  const char* what = "nonzero";
  const Tensor& out = a.out[0];
  CudaDevice& dev = device_of(out);
  Tensor x = dense_on(a.in[0], a.in[0].dtype(), dev);
  const DType t = x.dtype();
  int64_t n = x.numel(), nnz = 0;
  if (n > 0) {
    int64_t chunk = nonzero_chunk(n), chunks = (n + chunk - 1) / chunk, one = 1;
    Tensor counts(DType::Int64, Dims{chunks + 1}, &dev);
    void* xp = x.raw();
    void* c = counts.raw();
    std::string name = nonzero_count_kernel_name(t);
    CUfunction f =
        text_kernel(dev, name, name, what, [&] { return indexing_prelude() + nonzero_count_kernel_text(t); });
    void* count_args[] = {&chunks, &xp, &n, &chunk, &c};
    launch_over(dev, f, chunks, count_args, what);
    name = nonzero_scan_kernel_name();
    f = text_kernel(dev, name, name, what, [] { return indexing_prelude() + nonzero_scan_kernel_text(); });
    void* scan_args[] = {&one, &chunks, &c};
    launch_over(dev, f, 1, scan_args, what);
    dev.copy_to_host(&nnz, counts.data<int64_t>() + chunks, sizeof nnz);
    if (nnz > 0) {
      NdDims shape;
      shape.ndim = x.ndim();
      for (int j = 0; j < x.ndim(); ++j) shape.d[j] = x.dim(j);
      name = nonzero_fill_kernel_name(t);
      f = text_kernel(dev, name, name, what, [&] { return indexing_prelude() + nonzero_fill_kernel_text(t); });
      void* o = out.raw();
      void* fill_args[] = {&chunks, &xp, &n, &chunk, &c, &o, &shape};
      launch_over(dev, f, chunks, fill_args, what);
    }
  }
  Dims shape{nnz, static_cast<int64_t>(x.ndim())};
  a.out[0] = Tensor::view(out, shape, contiguous_strides(shape), out.offset());
}

// select(mask, value, x), as the CPU's: the pointwise select kernel.
void cuda_masked_fill(const KernelArgs& a) {
  const Tensor in[3] = {a.in[1], a.in[2], a.in[0]};
  cuda_pointwise(KernelArgs{Prim::select, std::span<const Tensor>(in, 3), a.attrs, a.out});
}

// x copied, then the value into the slice of the copy (strided_slice's
// view of it): two strided copies.
void cuda_strided_slice_update(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  copy_tensor(a.in[0], out);
  Tensor window;
  cpu_strided_slice(
      KernelArgs{Prim::strided_slice, std::span<const Tensor>(&out, 1), a.attrs, std::span<Tensor>(&window, 1)});
  if (window.numel() > 0) copy_tensor(a.in[1], window);
}

}  // namespace

void register_indexing_kernels() {
  set_device_kernel(Prim::gather_nd, DeviceType::CUDA, &cuda_gather_nd);
  set_device_kernel(Prim::tensor_scatter_update, DeviceType::CUDA, &cuda_tensor_scatter_update);
  set_device_kernel(Prim::tensor_scatter_add, DeviceType::CUDA, &cuda_tensor_scatter_add);
  set_device_kernel(Prim::nonzero, DeviceType::CUDA, &cuda_nonzero);
  set_device_kernel(Prim::masked_fill, DeviceType::CUDA, &cuda_masked_fill);
  set_device_kernel(Prim::strided_slice_update, DeviceType::CUDA, &cuda_strided_slice_update);
}

}  // namespace msl::kernels::cuda
