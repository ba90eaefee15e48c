// The GPU's primitive kernels (cuda_kernels.h).
#include "kernels/cuda/cuda_kernels.h"

#include <fmt/format.h>

#include <mutex>

#include "kernels/cuda/copy_cuda.h"
#include "kernels/cuda/cuda_driver.h"
#include "kernels/cuda/device_cuda.h"
#include "kernels/cuda/elementwise_cuda.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/movement_cuda.h"
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

// ------------------------------------------------------------ elementwise

bool ew_op_of(Prim p, EwOp& op) {
  switch (p) {
#define MSL_X(o, prim, arity) \
  case Prim::prim: op = EwOp::o; return true;
    MSL_EW_OPS(MSL_X)
#undef MSL_X
    default: return false;
  }
}

// How `x` is read over `out`'s elements without a copy: full (its elements
// in out's order), a scalar, or broadcast along one run of out's dimensions;
// false when none fits.
bool read_pattern(const Tensor& x, const Dims& out, EwIndexing& how) {
  if (!x.is_contiguous()) return false;
  if (x.numel() == out.product()) {
    how = {};
    return true;
  }
  if (x.numel() == 1) {
    how = {1, 1, 1};
    return true;
  }
  // x's shape left-padded to out's rank: the dimensions it keeps (not 1
  // where out's is larger) must be one run [lo, hi) equal to out's.
  int pad = out.size() - x.ndim();
  int lo = -1, hi = -1;
  for (int k = 0; k < out.size(); ++k) {
    int64_t xs = k < pad ? 1 : x.dim(k - pad);
    bool kept = xs == out[k] && out[k] != 1;
    if (xs != out[k] && xs != 1) return false;
    if (!kept) continue;
    if (hi >= 0 && hi != k) return false;
    if (lo < 0) lo = k;
    hi = k + 1;
  }
  if (lo < 0) return false;
  int64_t inner = 1, count = 1;
  for (int k = hi; k < out.size(); ++k) inner *= out[k];
  for (int k = lo; k < hi; ++k) count *= out[k];
  how = {inner, count, 1};
  return true;
}

struct EwCall {
  EwProgram program;
  uint64_t by_value = 0;
  std::string name;
};

void cuda_elementwise(const KernelArgs& a) {
  const char* what = prim_name(a.prim);
  const Tensor& out = a.out[0];
  // Float32 programs read float32 memory or take a float by value; other
  // dtypes, mixed ones included, go to the strided pointwise kernels.
  bool float32 = out.dtype() == DType::Float32;
  for (const Tensor& x : a.in) float32 = float32 && (host_scalar(x) || x.dtype() == DType::Float32);
  if (!float32) return cuda_pointwise(a);
  int64_t n = out.numel();
  if (n == 0) return;
  EwOp op{};
  ew_op_of(a.prim, op);
  CudaDevice& dev = device_of(out);
  EwCall call;
  std::vector<Tensor> keep;  // inputs copied to fit a pattern live until the launch
  std::vector<float> values(a.in.size());
  std::vector<void*> pointers(a.in.size());
  int operands[2] = {-1, -1};
  bool shared_pattern_taken = false;
  EwIndexing shared{};
  for (size_t k = 0; k < a.in.size(); ++k) {
    Tensor x = a.in[k];
    if (host_scalar(x)) {
      values[k] = static_cast<float>(x.item());
      call.by_value |= uint64_t{1} << k;
      operands[k] = call.program.input(static_cast<int>(k), EwIndexing{1, 1, 1});
      continue;
    }
    EwIndexing how;
    bool fits = read_pattern(x, out.shape(), how);
    // The program's broadcast inputs share one pattern.
    if (fits && !how.full() && !how.scalar()) {
      if (shared_pattern_taken && !(how == shared)) fits = false;
      shared_pattern_taken = fits || shared_pattern_taken;
      if (fits) shared = how;
    }
    if (!fits) {
      Tensor full(x.dtype(), out.shape(), &dev);
      strided_copy(full, x, what);
      x = full;
      how = {};
    }
    keep.push_back(x);
    pointers[k] = x.raw();
    operands[k] = call.program.input(static_cast<int>(k), how);
  }
  int r = operands[1] < 0 ? call.program.unary(op, operands[0]) : call.program.binary(op, operands[0], operands[1]);
  call.program.outputs = {r};
  std::string key = fmt::format("{}|{}", call.program.text(), call.by_value);
  call.name = cuda_kernel_name(call.program);
  CUfunction f =
      text_kernel(dev, key, call.name, what, [&] { return render_cuda(call.program, call.name, call.by_value); });
  void* out_ptr = out.raw();
  std::vector<void*> args;
  args.push_back(&n);
  for (size_t k = 0; k < a.in.size(); ++k)
    args.push_back(call.by_value >> k & 1 ? static_cast<void*>(&values[k]) : static_cast<void*>(&pointers[k]));
  args.push_back(&out_ptr);
  launch_over(dev, f, n, args.data(), what);
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
#define MSL_X(o, prim, arity) set_device_kernel(Prim::prim, DeviceType::CUDA, &cuda_elementwise);
    MSL_EW_OPS(MSL_X)
#undef MSL_X
    set_device_kernel(Prim::assign, DeviceType::CUDA, &cuda_assign);
    set_device_kernel(Prim::cast, DeviceType::CUDA, &cuda_cast);
    register_views();
    register_pointwise_kernels();
    register_reduce_kernels();
    register_softmax_kernels();
    register_movement_kernels();
    register_optimizer_kernels();
    register_random_kernels();
  });
}

}  // namespace msl::kernels::cuda
