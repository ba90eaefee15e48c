// The program of an elementwise loop: what a fused cluster of graph mode,
// or one elementwise primitive on a device, computes, apart from how it is
// generated. One representation, several renderers: LLVM IR for the CPU
// (jit/codegen/elementwise_jit.h, which documents the loop it generates)
// and CUDA C for NVIDIA GPUs (kernels/cuda/elementwise_cuda.h).
//
// A program is numbered values, each an input, a constant or an op of
// earlier values, and the values it outputs (stored, one array each) or
// sums (added into fewer elements, as a bias gradient). Inputs may be
// broadcast over the loop by an EwIndexing pattern.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace msl::kernels {

// The operations a fused loop computes, each the kernel primitive of the
// same name (kernels/primitives.h) with its arity: the one list from which
// EwOp, the names in a program's text, the arity check, the fusion pass's
// primitive -> EwOp mapping and the graph format's bound derive. Append
// only: the graph format stores an operation as its EwOp value.
#define MSL_EW_OPS(X)                                                                                    \
  X(Add, add, 2) X(Sub, sub, 2) X(Mul, mul, 2) X(Div, div, 2) X(Neg, neg, 1) X(Relu, relu, 1)            \
  X(ReluGrad, relu_grad, 2) X(Max, maximum, 2) X(Min, minimum, 2) X(Exp, exp, 1) X(Sigmoid, sigmoid, 1) \
  X(Tanh, tanh, 1)

enum class EwOp : uint8_t {
  Input,
  Const,
#define MSL_X(op, prim, arity) op,
  MSL_EW_OPS(MSL_X)
#undef MSL_X
};
// The number of EwOp values (Input and Const included).
#define MSL_X(op, prim, arity) +1
constexpr int kNumEwOps = 2 MSL_EW_OPS(MSL_X);
#undef MSL_X

struct EwValue {
  EwOp op = EwOp::Input;
  int a = -1, b = -1;  // operand values (earlier indices)
  int input = 0;       // Input: which input
  float constant = 0;  // Const
};

// How element i of the loop reads an input: full (count == 0), the input
// has the loop's length and is read at i; broadcast, the input has
// count * lane elements and is read at ((i / inner) % count) * lane +
// i % lane (lane == 1: at (i / inner) % count; count == 1 and lane == 1: a
// scalar). lane > 1 needs inner % lane == 0: a row of `lane` values is
// read over each `inner` elements.
struct EwIndexing {
  int64_t inner = 1, count = 0, lane = 1;
  bool full() const { return count == 0; }
  bool scalar() const { return count == 1 && lane == 1; }
  int64_t elements() const { return count * lane; }  // the input's elements
  // The same reads with count == 1 written as a plain pattern: {inner, 1,
  // lane} reads i % lane, as {1, lane, 1} does. Patterns are made
  // normalized (EwProgram::input does it), so equal reads compare equal.
  EwIndexing normalized() const { return count == 1 && lane > 1 ? EwIndexing{1, lane, 1} : *this; }
  bool operator==(const EwIndexing&) const = default;
};

// A sum the loop accumulates: acc[(i / how.inner) % how.count] += value
// at element i (count >= 1; count == 1 and lane == 1: the sum of all
// elements), or with a lane at ((i / inner) % count) * lane + i % lane.
struct EwReduction {
  int value = -1;
  EwIndexing how{1, 1};
  bool operator==(const EwReduction&) const = default;
};

struct EwProgram {
  int num_inputs = 0;
  std::vector<EwIndexing> indexing;  // per input; inputs beyond its end are full
  std::vector<EwValue> values;
  std::vector<int> outputs;             // the values stored, one output array each
  std::vector<EwReduction> reductions;  // the values summed, after the outputs

  int input(int k, EwIndexing how = {});  // `how` is stored normalized()
  EwIndexing input_indexing(int k) const;
  // The (inner, count, lane) the broadcast inputs and sums that are not
  // scalars share;
  // full() when there are none. Throws std::invalid_argument when they
  // differ.
  EwIndexing broadcast() const;
  int constant(float c);
  int unary(EwOp op, int a);
  int binary(EwOp op, int a, int b);
  // A canonical text of the program: the compile cache key, and what
  // --emit shows next to the LLVM IR.
  std::string text() const;
};

// Throws std::invalid_argument saying what is wrong when `p` is not a
// program compile() takes: an output or a sum, operands defined before
// their use, inputs, outputs and sums in range, patterns well formed
// (inner >= 1, lane >= 1 dividing inner, no overflow) and one of them
// besides scalars.
void validate_program(const EwProgram& p);

}  // namespace msl::kernels
