// relu_grad(dy, y): dy where y > 0, else 0 (MindSpore's ReluGrad), with y
// relu's output. One pass instead of the three ops the rule needed before
// (greater, zeros_like, select: a bool mask and a zero tensor allocated per
// call); y > 0 exactly where x > 0, and NaN inputs (y NaN) get 0, as the
// comparison gave.
#include <fmt/format.h>

#include <cstring>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "kernels/primitives.h"
#include "kernels/simd_clones.h"

namespace msl::kernels {

namespace {

// dy[i] is read whether or not it is used: a load under the condition is
// one GCC will not turn into a vector select, and the loop stays scalar.
template <class T>
MSL_SIMD_CLONES void relu_grad_chunk(const T* __restrict dy, const T* __restrict y, T* __restrict out, int64_t b,
                                     int64_t e) {
  for (int64_t i = b; i < e; ++i) {
    T d = dy[i];
    out[i] = y[i] > T(0) ? d : T(0);
  }
}

template <class T>
void relu_grad_loop(const T* dy, const T* y, T* out, int64_t n) {
  parallel_for(n, kParallelGrain, [=](int64_t b, int64_t e) { relu_grad_chunk(dy, y, out, b, e); });
}

}  // namespace

void infer_relu_grad(const InferArgs& a) {
  const TensorSpec &dy = a.in[0], &y = a.in[1];
  if (dy.dtype != y.dtype)
    throw DTypeError(fmt::format("relu_grad: dy and y dtypes differ: {} and {}", dtype_display_name(dy.dtype),
                                 dtype_display_name(y.dtype)));
  if (!is_floating(dy.dtype))
    throw DTypeError(fmt::format("relu_grad: unsupported dtype {}", dtype_display_name(dy.dtype)));
  if (dy.shape != y.shape)
    throw ShapeError(fmt::format("relu_grad: dy has shape {} but y has shape {}", dy.shape.str(), y.shape.str()));
  a.out[0] = dy;
}

void cpu_relu_grad(const KernelArgs& a) {
  Tensor dy = a.in[0].contiguous(), y = a.in[1].contiguous();
  const Tensor& out = a.out[0];
  int64_t n = out.numel();
  switch (out.dtype()) {
    case DType::Float32: return relu_grad_loop(dy.data<float>(), y.data<float>(), out.data<float>(), n);
    case DType::Float64: return relu_grad_loop(dy.data<double>(), y.data<double>(), out.data<double>(), n);
    default: {
      // Half formats: through float32.
      Attrs f32{{"dtype", DType::Float32}};
      Tensor d = execute1(Prim::cast, std::span<const Tensor>(&dy, 1), f32);
      Tensor v = execute1(Prim::cast, std::span<const Tensor>(&y, 1), f32);
      Tensor r(DType::Float32, out.shape());
      relu_grad_loop(d.data<float>(), v.data<float>(), r.data<float>(), n);
      Tensor back = execute1(Prim::cast, std::span<const Tensor>(&r, 1), Attrs{{"dtype", out.dtype()}});
      std::memcpy(out.raw(), back.raw(), out.nbytes());
    }
  }
}

}  // namespace msl::kernels
