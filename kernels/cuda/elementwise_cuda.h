// CUDA C for elementwise programs (elementwise_program.h): the GPU's
// renderer of the representation graph mode renders to LLVM IR for the CPU
// (jit/codegen/elementwise_jit.h). Eager elementwise primitives on a GPU
// run single-operation programs rendered here; graph mode's fused clusters
// are the same programs with more values.
//
// The kernel is a grid-stride loop over the n elements:
//
//   extern "C" __global__ void NAME(long long n,
//       const float* in0, ...,   // one per input
//       float* out0, ...,        // one per output
//       float* sum0, ...)        // one per sum
//
// An input may instead be passed by value (`const float in0`): a Python
// number or host scalar of an eager call, which needs no device memory and
// no copy; the program is the same, so one kernel serves every value.
//
// No pointer is __restrict__: graph mode writes an output into the buffer
// of an input it has released (jit/fused_elementwise.h), which element i
// reads before it stores; restrict would let the compiler reload the input
// after the store (or through the read-only cache).
//
// Element i reads each input as its EwIndexing says, computes the values
// in order, stores the outputs at i and adds the sums' values into their
// arrays with atomicAdd (the caller zeroes them first), a warp's 32 values
// added first where they all go to one element. The arithmetic is
// the CPU loop's, operation for operation: IEEE single precision without
// contraction into FMA (NVRTC's --fmad=false, nvrtc_compiler.h), exp by the
// same Cody-Waite reduction and Cephes polynomial, maximum/minimum
// propagating NaN and ordering -0 below +0, so an output is bit-identical
// to the CPU's; only sums differ, by the order of their additions.
//
// Nothing here needs CUDA: the text is built on any machine, and the tests
// compile it with NVRTC (when the toolkit is there) and, through a small
// prelude that defines CUDA's built-ins for the host, with the host's C++
// compiler to check its numbers against the CPU loop without a GPU.
#pragma once

#include <string>

#include "kernels/elementwise_program.h"

namespace msl::kernels::cuda {

// The CUDA C translation unit of `p`'s kernel, named `name` (an identifier);
// bit k of `by_value` passes input k by value (it must be read as a
// scalar). Throws std::invalid_argument for a malformed program
// (validate_program) or a by-value input that is not a scalar.
std::string render_cuda(const EwProgram& p, const std::string& name, uint64_t by_value = 0);
// The same in two parts, for a translation unit of several kernels (one
// NVRTC compile for all the kernels of a graph): the helpers every kernel
// calls, once per unit, and one kernel.
std::string cuda_elementwise_helpers();
std::string render_cuda_kernel(const EwProgram& p, const std::string& name, uint64_t by_value = 0);

// The kernel name render_cuda is given for `p` by its users: "msl_ew_"
// and 16 hex digits of a hash of the program's text, so equal programs
// share one compiled kernel.
std::string cuda_kernel_name(const EwProgram& p);

}  // namespace msl::kernels::cuda
