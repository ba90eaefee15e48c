// CUDA C of the strided pointwise kernels: every elementwise primitive in
// every dtype the CPU accepts, over any strides and broadcasting. The
// float32 programs of elementwise_cuda.h stay the GPU's path for float32
// inputs of the EwOp list; everything else elementwise comes here: the
// other primitives (abs, log, floordiv, comparisons, select, ...), the
// EwOps in other dtypes and mixed-dtype calls.
//
// One kernel per (operation, input dtypes, compute dtype, output dtype,
// inputs passed by value), a grid-stride loop over the contiguous output:
//
//   struct msl_pw_geometry { int ndim; long long shape[8], in[3][8]; };
//   extern "C" __global__ void NAME(long long n, OUT* out,
//       const T0* in0 | T0 in0, ...,      // by value: a host scalar
//       msl_pw_geometry g, int* err)
//
// Element i (row-major over the output's shape) reads input k at the
// offset its strides give (0 strides broadcast), converts it to the compute
// dtype as the CPU's run_loop does (cvt, elementwise_ops.h), applies the
// CPU's scalar operator and converts the result to the output dtype
// (16-bit floats compute in float32 and round to nearest even once).
//
// Exactness against the CPU: integer ops, comparisons, select and the IEEE
// operations (+ - * /, sqrt, floor, fmod in floordiv/mod, abs, ...) are bit
// for bit. float32 (and 16-bit floats, computed in float32) follow the
// CPU's vector loops, which any x86 CPU with AVX2 runs: rsqrt is 1.0f /
// sqrtf(x), and exp, log, tanh, sigmoid and erf are vec_math.h's functions
// ported lane for lane (same polynomials, same explicit FMAs): the CPU's
// bits. (The CPU's plain C++ loops, used only without AVX2, compute in
// double and round once: within 2 ulps.) sin, cos and pow compute in double
// and round to float32 once: within 1 ulp of the CPU's vector sin/cos
// (measured under host emulation), pow the CPU's bits. float64 functions
// call libm: the CPU's bits under host emulation, within 1 ulp where the
// CPU uses its vector float64 exp, log and sigmoid, and within CUDA's
// documented 1-2 ulps of libm on a GPU.
//
// Integer floordiv/mod by zero (ZeroDivisionError) and integer pow with a
// negative exponent (ValueError) are detected by the kernel: it stores 1
// in *err and writes 0 for that element; the launch reads err back after
// the kernel (one synchronization, only for those integer kernels, and
// none when the divisor is a host scalar, which is checked on the host).
// The CPU scans the divisor before computing instead; on the GPU that scan
// would be a second pass and a synchronization anyway.
//
// Like elementwise_cuda.h, the text needs no CUDA to be built.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"

namespace msl::kernels::cuda {

// The operations, each a primitive of the same name.
// clang-format off
#define MSL_PW_OPS(X) \
  X(neg, 1) X(abs, 1) X(sign, 1) X(exp, 1) X(log, 1) X(sqrt, 1) X(rsqrt, 1) X(reciprocal, 1) X(sin, 1) \
  X(cos, 1) X(tanh, 1) X(sigmoid, 1) X(relu, 1) X(erf, 1) X(floor, 1) X(logical_not, 1) X(relu_grad, 2) \
  X(add, 2) X(sub, 2) X(mul, 2) X(div, 2) X(floordiv, 2) X(mod, 2) X(pow, 2) X(maximum, 2) X(minimum, 2) \
  X(equal, 2) X(not_equal, 2) X(less, 2) X(less_equal, 2) X(greater, 2) X(greater_equal, 2) \
  X(logical_and, 2) X(logical_or, 2) X(select, 3)
// clang-format on

// One kernel's identity: what its text depends on.
struct PointwiseKernel {
  Prim prim = Prim::add;
  int arity = 0;
  DType in[3] = {};  // the inputs' dtypes as stored
  DType compute = DType::Float32;
  DType out = DType::Float32;
  uint32_t by_value = 0;  // bit k: input k is a host scalar passed by value
};

// True when `p` is one of MSL_PW_OPS.
bool is_pointwise(Prim p);

// The kernel of `p` on inputs of dtypes `in` giving `out` (the inferred
// output dtype), with the compute dtype chosen as the CPU kernel chooses it.
// Throws DTypeError for a dtype the CPU rejects.
PointwiseKernel pointwise_kernel(Prim p, std::span<const DType> in, DType out, uint32_t by_value = 0);

// "msl_pw_add_float32_int32_to_float32_v2" (v: the by-value mask).
std::string pointwise_kernel_name(const PointwiseKernel& k);
// The definitions every pointwise kernel uses, once per translation unit
// (copy_cuda.h's conversions included), and one kernel.
std::string pointwise_prelude();
std::string pointwise_kernel_text(const PointwiseKernel& k);
std::string pointwise_source(const PointwiseKernel& k);
// The kernel's parameter types in order, as C ("msl_i64", "float*", ...).
std::vector<std::string> pointwise_param_types(const PointwiseKernel& k);
// True when the kernel can report an error through err (integer
// floordiv/mod: division by zero; integer pow: a negative exponent).
bool pointwise_may_fail(const PointwiseKernel& k);

// The kernel's msl_pw_geometry as the host passes it (the same layout).
struct PointwiseGeometry {
  int32_t ndim = 0;
  int64_t shape[8] = {}, in[3][8] = {};
};
static_assert(kMaxDims == 8, "msl_pw_geometry's arrays hold kMaxDims dimensions");

// The geometry of a contiguous output of `shape` read from inputs with
// `strides` (each already broadcast to `shape`: 0 where broadcast), with
// size-1 dimensions dropped and neighbours merged where every input allows.
PointwiseGeometry pointwise_geometry(const Dims& shape, std::span<const Dims> strides);

// The GPU kernel of every MSL_PW_OPS primitive (pointwise_launch.cpp, CUDA
// builds only): registered for the non-EwOp primitives, and called by the
// float32 program path for the calls it does not take.
void cuda_pointwise(const KernelArgs& a);
void register_pointwise_kernels();

}  // namespace msl::kernels::cuda
