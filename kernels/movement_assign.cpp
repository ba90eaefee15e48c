// assign(param, value): the one in-place primitive. The registry makes the
// output the parameter itself; the kernel writes value, broadcast to the
// parameter's shape and cast to its dtype, through the parameter's own
// strides, so assigning into a view (a slice of a larger tensor) updates the
// base tensor, which is how `x[1:3] = y` is lowered.
//
// A value that shares storage with the parameter (assign(p, p[::-1])) is
// copied first: writing elementwise while reading the same memory in
// another order would read already-overwritten elements.
#include <fmt/format.h>

#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

void infer_assign(const InferArgs& a) {
  const TensorSpec &p = a.in[0], &v = a.in[1];
  bool ok = v.shape.size() <= p.shape.size();
  for (int i = 0; ok && i < v.shape.size(); ++i) {
    int64_t dv = v.shape[v.shape.size() - 1 - i], dp = p.shape[p.shape.size() - 1 - i];
    ok = dv == dp || dv == 1;
  }
  if (!ok)
    throw ShapeError(fmt::format("assign: cannot broadcast a value of shape {} to the parameter's shape {}",
                                 v.shape.str(), p.shape.str()));
  a.out[0] = p;
}

void cpu_assign(const KernelArgs& a) {
  const Tensor& p = a.in[0];
  Tensor v = a.in[1];
  if (p.numel() == 0) return;
  if (v.shares_storage(p)) {
    Tensor c(v.dtype(), v.shape(), v.device());
    strided_iter::copy_same_dtype(v, c);
    v = c;
  }
  Tensor vb = Tensor::view(v, p.shape(), broadcast_strides(v.shape(), v.strides(), p.shape()), v.offset());
  strided_iter::copy_convert(vb, p);
}

}  // namespace msl::kernels
