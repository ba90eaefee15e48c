// Launches of the strided pointwise kernels (pointwise_cuda.h).
#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "kernels/cuda/launch.h"
#include "kernels/cuda/pointwise_cuda.h"
#include "kernels/elementwise_program.h"
#include "kernels/errors.h"
#include "kernels/shape_util.h"

namespace msl::kernels::cuda {

namespace {

// The error a failing integer kernel reports, as the CPU words it.
[[noreturn]] void throw_integer_error(Prim p) {
  if (p == Prim::pow) throw ValueError("pow: integers to negative integer powers are not allowed");
  throw ZeroDivisionError(
      fmt::format("{}: integer {} by zero", prim_name(p), p == Prim::mod ? "modulo" : "division"));
}

}  // namespace

void cuda_pointwise(const KernelArgs& a) {
  const char* what = prim_name(a.prim);
  const Tensor& out = a.out[0];
  int64_t n = out.numel();
  if (n == 0) return;
  CudaDevice& dev = device_of(out);
  const int nin = static_cast<int>(a.in.size());
  std::vector<DType> dtypes;
  std::vector<Dims> strides;
  uint32_t by_value = 0;
  // Per input: a device pointer, or the host scalar's bytes passed by value.
  void* pointers[3] = {};
  alignas(8) unsigned char values[3][8] = {};
  for (int k = 0; k < nin; ++k) {
    const Tensor& x = a.in[k];
    dtypes.push_back(x.dtype());
    if (host_scalar(x)) {
      by_value |= 1u << k;
      std::memcpy(values[k], x.raw(), x.itemsize());
      strides.push_back(Dims{});
      strides.back().resize(out.ndim(), 0);
      continue;
    }
    pointers[k] = x.raw();
    strides.push_back(broadcast_strides(x.shape(), x.strides(), out.shape()));
  }
  PointwiseKernel k = pointwise_kernel(a.prim, dtypes, out.dtype(), by_value);
  // A divisor (exponent) on the host is checked here; one on the device by
  // the kernel, which flags it in `err`, read back after the launch.
  bool flag = pointwise_may_fail(k);
  if (flag && (by_value & 2)) {
    double v = a.in[1].item();
    if (a.prim == Prim::pow ? v < 0 : v == 0) throw_integer_error(a.prim);
    flag = false;
  }
  Tensor err_flag;
  void* err = nullptr;
  if (flag) {
    err_flag = Tensor(DType::Int32, Dims{1}, &dev);
    int32_t zero = 0;
    dev.copy_from_host(err_flag.raw(), &zero, sizeof zero);
    err = err_flag.raw();
  }
  PointwiseGeometry g = pointwise_geometry(out.shape(), strides);
  std::string name = pointwise_kernel_name(k);
  CUfunction f = text_kernel(dev, name, name, what, [&] { return pointwise_source(k); });
  void* out_ptr = out.raw();
  std::vector<void*> args{&n, &out_ptr};
  for (int i = 0; i < nin; ++i) args.push_back(by_value >> i & 1 ? static_cast<void*>(values[i]) : &pointers[i]);
  args.push_back(&g);
  args.push_back(&err);
  launch_over(dev, f, n, args.data(), what);
  if (flag) {
    int32_t failed = 0;
    dev.copy_to_host(&failed, err, sizeof failed);  // synchronizes
    if (failed) throw_integer_error(a.prim);
  }
}

void register_pointwise_kernels() {
  // Every elementwise primitive, those of the program representation
  // included: eager results are the eager CPU kernels' bits (the programs'
  // renderer, elementwise_cuda.h, is graph mode's, which matches graph
  // mode's CPU loop).
#define MSL_X(o, prim, arity) set_device_kernel(Prim::prim, DeviceType::CUDA, &cuda_pointwise);
  MSL_EW_OPS(MSL_X)
#undef MSL_X
  for (Prim p : {Prim::abs, Prim::sign, Prim::log, Prim::sqrt, Prim::rsqrt, Prim::reciprocal, Prim::sin, Prim::cos,
                 Prim::erf, Prim::floor, Prim::logical_not, Prim::floordiv, Prim::mod, Prim::pow, Prim::equal,
                 Prim::not_equal, Prim::less, Prim::less_equal, Prim::greater, Prim::greater_equal,
                 Prim::logical_and, Prim::logical_or, Prim::select})
    set_device_kernel(p, DeviceType::CUDA, &cuda_pointwise);
}

}  // namespace msl::kernels::cuda
