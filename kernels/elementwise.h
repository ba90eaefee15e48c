// Internals shared by the elementwise primitives (unary, binary, select, cast).
//
// The work splits in two layers:
//  - inner loops ("LoopFn"): one contiguous run of n elements of one compute
//    dtype, compiled several times (generic, AVX2, AVX-512; see
//    elementwise_ops.h) and collected in a LoopTable chosen at run time by
//    CPU detection (elementwise_dispatch.cpp), so the library needs no
//    -march flag;
//  - the driver (run_loop, elementwise_iter.cpp): shapes, broadcasting,
//    strides, dtype conversion into small stack blocks, streaming stores and
//    threads. It hands inner loops runs that are as long as the geometry
//    allows.
// Half-precision values are computed in float32 (converted per block), so the
// tables have no Float16/BFloat16 entries except for conversions.
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/tensor.h"

namespace msl::kernels::ew {

// clang-format off
enum class UOp : uint8_t {
  Neg, Abs, Sign, Exp, Log, Sqrt, Rsqrt, Reciprocal, Sin, Cos, Tanh, Sigmoid, Relu, Erf, Floor, LogicalNot, kCount
};
enum class BOp : uint8_t {
  Add, Sub, Mul, Div, FloorDiv, Mod, Pow, Maximum, Minimum,
  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual, LogicalAnd, LogicalOr, kCount
};
// clang-format on
constexpr int kNumUOps = static_cast<int>(UOp::kCount);
constexpr int kNumBOps = static_cast<int>(BOp::kCount);

// Flags of a loop call. kScalarN: input N is one element repeated (only for
// loops that accept it, see run_loop).
constexpr unsigned kScalar0 = 1, kScalar1 = 2;

// in[k] points at n elements (one if its kScalar flag is set) of the loop's
// input dtype; out at n elements of its output dtype. Inputs may alias each
// other; the output aliases no input.
using LoopFn = void (*)(const void* const* in, void* out, int64_t n, unsigned flags);

struct LoopTable {
  // Indexed by the compute dtype (the dtype of the inputs as the loop sees
  // them); nullptr where the op does not exist for that dtype.
  LoopFn unary[kNumUOps][kNumDTypes] = {};
  LoopFn binary[kNumBOps][kNumDTypes] = {};
  // select(cond, x, y) on raw elements of 1, 2, 4 or 8 bytes (index: log2 of
  // the size); cond is Bool.
  LoopFn select[4] = {};
  // convert[from][to]: element conversion with store_from_double semantics
  // (float to int truncates and saturates, NaN to 0; to Bool is != 0).
  LoopFn convert[kNumDTypes][kNumDTypes] = {};
};

// Each fills the entries its instruction set implements; the wider ones run
// after the generic fill and override it.
void fill_loops_generic(LoopTable& t);
void fill_loops_avx2(LoopTable& t);
void fill_loops_avx512(LoopTable& t);

enum class SimdLevel : uint8_t { Generic, AVX2, AVX512 };
// The loops in use: the widest the CPU supports unless capped.
const LoopTable& loops();
SimdLevel simd_level();
// Caps the instruction set (for tests and benchmarks that compare paths);
// asking for more than the CPU has gives what it has. Not thread-safe: call
// it while no kernel runs.
void set_simd_level(SimdLevel level);
SimdLevel max_simd_level();

// dtype_size without the call, for the per-op fast paths (DType order).
constexpr uint8_t kDTypeSize[kNumDTypes] = {1, 1, 1, 4, 8, 2, 2, 4, 8};
inline size_t size_of(DType t) { return kDTypeSize[static_cast<int>(t)]; }

// The dtype arithmetic happens in: half formats compute in float32.
inline DType compute_dtype(DType t) { return t == DType::Float16 || t == DType::BFloat16 ? DType::Float32 : t; }

// What bounds a loop's speed on large tensors, which decides how the driver
// runs it: Memory loops (arithmetic, comparisons, casts) write large outputs
// with non-temporal stores; Compute loops (vector transcendental functions)
// write them normally, since the extra copy into streaming stores costs more
// than the read-for-ownership it saves when the loop is not waiting on
// memory (measured: exp, tanh, sigmoid, log run 20-30% slower streamed);
// Libm loops (tens of cycles per element: float64 libm calls, pow, float
// floordiv/mod) also split across threads from smaller sizes.
enum class Cost : uint8_t { Memory, Compute, Libm };

// Runs `fn` over every element of `out` (a new contiguous tensor, aliasing no
// input) with the inputs broadcast to its shape. Input k is converted to
// ctype[k] on the way in (unless it already is); the loop writes `ktype`,
// converted to out's dtype on the way out. scalar_ok: bit k set when the loop
// accepts kScalar<k>.
void run_loop(LoopFn fn, unsigned scalar_ok, int nin, const Tensor* const* in, const DType* ctype, const Tensor& out,
              DType ktype, Cost cost);

}  // namespace msl::kernels::ew
