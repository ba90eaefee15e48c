// float32 max pooling 2x2, stride 2, on NCHW planes that the windows tile
// exactly (H = 2 * Ho, W = 2 * Wo, no padding): LeNet's and VGG's pools.
#pragma once

#include <cstdint>

#include "kernels/dnnl_window.h"

namespace msl::kernels {

// True when the 2x2 kernels below take a max pooling of window v over
// h x w planes.
bool max_pool_2x2_applies(int64_t h, int64_t w, const Window2d& v);

// y[r, k] = the first maximum, in row-major window order, of x's window
// (r, k); x holds `pairs` row pairs of 2 * wo floats (every plane's rows,
// back to back), y `pairs` rows of wo.
void max_pool_2x2_forward(const float* x, float* y, int64_t pairs, int64_t wo);

// dx: dy[r, k] at the first maximum of window (r, k), 0 elsewhere.
void max_pool_2x2_backward(const float* x, const float* dy, float* dx, int64_t pairs, int64_t wo);

}  // namespace msl::kernels
