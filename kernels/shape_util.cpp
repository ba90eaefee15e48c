#include "kernels/shape_util.h"

#include <fmt/format.h>

#include "kernels/errors.h"

namespace msl::kernels {

Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b) {
  if (a == b) return a;
  int n = std::max(a.size(), b.size());
  Dims out;
  out.resize(n);
  for (int i = 0; i < n; ++i) {
    int ia = a.size() - n + i, ib = b.size() - n + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      throw ShapeError(fmt::format("{}: cannot broadcast {} with {}", op, a.str(), b.str()));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Dims broadcast_strides(const Dims& from, const Dims& strides, const Dims& to) {
  Dims out;
  out.resize(to.size());
  int off = to.size() - from.size();
  for (int i = 0; i < to.size(); ++i) {
    int j = i - off;
    out[i] = (j < 0 || from[j] == 1) ? 0 : strides[j];
  }
  return out;
}

int normalize_axis(const char* op, int64_t axis, int ndim) {
  int64_t lim = ndim == 0 ? 1 : ndim;  // a scalar accepts axis 0 / -1, as NumPy does for reductions
  if (axis < -lim || axis >= lim)
    throw ValueError(fmt::format("{}: axis {} is out of range for a tensor of rank {}", op, axis, ndim));
  return static_cast<int>(axis < 0 ? axis + lim : axis);
}

}  // namespace msl::kernels
