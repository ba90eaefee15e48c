// float32 max pooling 2x2, stride 2, on NCHW planes that the windows tile
// exactly (H = 2 * Ho, W = 2 * Wo, no padding): LeNet's and VGG's pools.
#pragma once

#include <cstdint>

namespace msl::kernels {

// True when the 2x2 kernels below take a max pooling of this geometry.
bool max_pool_2x2_applies(int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t sh, int64_t sw, int64_t pad_sum,
                          int64_t dilation_h, int64_t dilation_w, int64_t ho, int64_t wo);

// y[r, k] = the first maximum, in row-major window order, of x's window
// (r, k); x holds `pairs` row pairs of 2 * wo floats (every plane's rows,
// back to back), y `pairs` rows of wo.
void max_pool_2x2_forward(const float* x, float* y, int64_t pairs, int64_t wo);

// dx: dy[r, k] at the first maximum of window (r, k), 0 elsewhere.
void max_pool_2x2_backward(const float* x, const float* dy, float* dx, int64_t pairs, int64_t wo);

}  // namespace msl::kernels
