// Shape helpers shared by the inference functions of several primitive groups.
#pragma once

#include "kernels/tensor.h"

namespace msl::kernels {

// NumPy broadcasting of two shapes; ShapeError
// "<op>: cannot broadcast (3, 4) with (2, 4)" when they do not fit.
Dims broadcast_shapes(const char* op, const Dims& a, const Dims& b);
// Strides that read a tensor of shape `from` (with strides `strides`) as the
// broadcast shape `to` (stride 0 along broadcast dimensions).
Dims broadcast_strides(const Dims& from, const Dims& strides, const Dims& to);
// A possibly negative axis in [-ndim, ndim) as an index in [0, ndim);
// ValueError "<op>: axis 3 is out of range for a tensor of rank 2".
int normalize_axis(const char* op, int64_t axis, int ndim);

}  // namespace msl::kernels
