// Helpers of the channel-blocked layout tests (test_blocked_layout.cpp,
// test_blocked_pool.cpp): the layout attribute of a block size and the two
// reorder primitives called eagerly.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/primitives.h"

namespace msl::kernels::testing {

inline const char* layout_of_block(int64_t b) { return b == 16 ? "nChw16c" : "nChw8c"; }

inline Tensor to_blocked(const Tensor& x, int64_t b) {
  return execute1(Prim::to_blocked, std::span<const Tensor>(&x, 1), Attrs{{"block", b}});
}

inline Tensor from_blocked(const Tensor& x) { return execute1(Prim::from_blocked, std::span<const Tensor>(&x, 1)); }

}  // namespace msl::kernels::testing
