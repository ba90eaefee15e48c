// The AVX2+FMA+F16C build of the elementwise inner loops, for x86 CPUs
// without AVX-512. elementwise_ops.h explains why the loops are compiled per
// instruction set from one source.
#include "kernels/elementwise.h"

#if defined(__x86_64__) || defined(__i386__)
// GCC 12 reports the _mm*_undefined_*() placeholders inside its own
// intrinsics as maybe-uninitialized once they are inlined (a false positive).
// Diagnostics are classified by the header's lines, so this stays local.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2,lzcnt,popcnt")
#define MSL_SIMD_NS simd_avx2
#define MSL_SIMD_WIDTH 256
// Order matters: each header uses the ones before it.
// clang-format off
#include "kernels/vec_math.h"
#include "kernels/elementwise_ops.h"
#include "kernels/elementwise_loops.h"
// clang-format on

namespace msl::kernels::ew {
void fill_loops_avx2(LoopTable& t) { simd_avx2::fill(t); }
}  // namespace msl::kernels::ew
#pragma GCC pop_options

#else
namespace msl::kernels::ew {
void fill_loops_avx2(LoopTable&) {}  // not an x86 build: the generic loops serve
}  // namespace msl::kernels::ew
#endif
