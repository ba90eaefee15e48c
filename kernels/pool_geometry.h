// The geometry of max_pool2d, avg_pool2d and their gradients, shared by the
// CPU's kernels (dnnl_pool.cpp) and the GPU's (kernels/cuda/pool_*).
#pragma once

#include "kernels/attrs.h"
#include "kernels/dnnl_window.h"
#include "kernels/tensor.h"

namespace msl::kernels {

struct PoolGeom {
  int64_t n = 0, c = 0, h = 0, w = 0;
  Window2d win;
  bool include_pad = false;  // avg: the divisor is kh * kw wherever the window lies
  Dims x_shape() const { return {n, c, h, w}; }
  Dims y_shape() const { return {n, c, win.ho, win.wo}; }
};

// The geometry of an NCHW input `xs` under `op`'s attributes (kernel_size,
// stride, padding, pad_mode; count_include_pad when `avg`); ShapeError or
// ValueError naming `op`. Padding must be smaller than the kernel, so every
// window holds an input element.
PoolGeom pool_geometry(const char* op, const Dims& xs, const Attrs& attrs, bool avg);
// avg_pool2d_grad's input_shape attribute.
Dims pool_input_shape_attr(const char* op, const Attrs& attrs);

}  // namespace msl::kernels
