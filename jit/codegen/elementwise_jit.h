// CPU code generation for fused elementwise clusters with LLVM 19's ORC
// JIT: the first piece of graph mode's native back end.
//
// A cluster (chain or DAG of elementwise ops over same-shaped float32
// tensors) is described as an EwProgram: numbered values, each an input, a
// constant or an op of earlier values, and the values it outputs (a
// gradient's several results share their intermediates in one loop). compile() turns it into one loop
// over the elements, optimized at O3 for the host CPU (LLVM's loop
// vectorizer then uses AVX-512 or AVX2 as the CPU has them), cached by the
// program's text; run() splits the elements across the kernel threads.
// Reading each input once and writing the output once is what makes a
// fused chain memory-bound instead of one pass per op.
//
// exp (and sigmoid, tanh through it) is generated inline as a Cody-Waite
// range reduction with a degree-6 polynomial (Cephes expf, ~1 ulp), so it
// vectorizes like the arithmetic; NaN propagates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace msl::jit::codegen {

enum class EwOp : uint8_t { Input, Const, Add, Sub, Mul, Div, Neg, Relu, ReluGrad, Max, Min, Exp, Sigmoid, Tanh };

struct EwValue {
  EwOp op = EwOp::Input;
  int a = -1, b = -1;  // operand values (earlier indices)
  int input = 0;       // Input: which input
  float constant = 0;  // Const
};

struct EwProgram {
  int num_inputs = 0;
  std::vector<EwValue> values;
  std::vector<int> outputs;  // the values stored, one output array each

  int input(int k);
  int constant(float c);
  int unary(EwOp op, int a);
  int binary(EwOp op, int a, int b);
  // A canonical text of the program: the compile cache key, and what
  // --emit shows next to the LLVM IR.
  std::string text() const;
};

// out[k][i] = output k of program(in[0][i], in[1][i], ...), i in [begin, end).
using EwFunction = void (*)(const float* const* in, float* const* out, int64_t begin, int64_t end);

class ElementwiseJit {
 public:
  static ElementwiseJit& instance();
  ~ElementwiseJit();

  // The compiled loop of `p` (compiled once per distinct program). Throws
  // std::invalid_argument for a malformed program, std::runtime_error when
  // LLVM fails.
  EwFunction compile(const EwProgram& p);
  // Runs the compiled loop over n elements, split across kernel threads.
  void run(const EwProgram& p, const float* const* in, float* const* out, int64_t n);
  // The same with a loop compile() returned (no program lookup per call).
  static void run(EwFunction fn, const float* const* in, float* const* out, int64_t n);
  // The optimized LLVM IR of `p`'s loop (msl --emit=llvm).
  std::string llvm_ir(const EwProgram& p);
  // The host CPU and features code is generated for.
  std::string target() const;

 private:
  ElementwiseJit();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace msl::jit::codegen
