// The portable build of the elementwise inner loops (the x86-64 baseline, or
// any other target): plain C++ loops and libm only. Every entry exists here;
// the vector builds override the ones they speed up.
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/elementwise.h"

#define MSL_SIMD_NS simd_generic
#define MSL_SIMD_WIDTH 0
// Order matters: each header uses the ones before it.
// clang-format off
#include "kernels/elementwise_ops.h"
#include "kernels/elementwise_loops.h"
// clang-format on

namespace msl::kernels::ew {
void fill_loops_generic(LoopTable& t) { simd_generic::fill(t); }
}  // namespace msl::kernels::ew
