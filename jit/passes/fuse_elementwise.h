// Elementwise fusion: clusters of elementwise float32 primitives over one
// shape become a single node that runs one generated loop
// (jit/codegen/elementwise_jit.h), so a chain reads its inputs once and
// writes its result once instead of materialising every intermediate.
//
// What it does, on a specialized graph of primitives (after expansion):
//   * a node is fusible when it applies add, sub, mul, div, neg, relu,
//     relu_grad, maximum, minimum, exp, sigmoid or tanh, its result is a
//     float32 tensor, and each operand is either a float32 tensor of the
//     same shape or a float constant (a number or a one-element tensor);
//   * clusters grow from a root (visited from the output backwards) by
//     absorbing fusible operands all of whose users are already in the
//     cluster, so no intermediate value is needed outside it;
//   * a cluster of two or more ops is replaced by an Apply of a constant
//     FusedElementwise host object (the program and shape) to the
//     cluster's tensor inputs.
// What it does not do (yet): broadcasting operands, several outputs per
// cluster, other dtypes, reductions and the epilogues of matmul/conv.
#pragma once

#include <cstddef>
#include <string>

#include "jit/codegen/elementwise_jit.h"
#include "jit/specialize.h"
#include "kernels/tensor.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// The callee of a fused cluster: out = program(inputs...) over `shape`.
class FusedElementwise final : public ir::HostObject {
 public:
  FusedElementwise(codegen::EwProgram program, kernels::Dims shape, size_t ops)
      : program_(std::move(program)), shape_(std::move(shape)), ops_(ops) {}
  std::string name() const override { return "fused_elementwise_" + std::to_string(ops_) + "ops"; }
  const codegen::EwProgram& program() const { return program_; }
  const kernels::Dims& shape() const { return shape_; }
  // Runs the loop on the cluster's inputs (float32, `shape`, any strides).
  kernels::Tensor run(const std::vector<kernels::Tensor>& inputs) const;

 private:
  codegen::EwProgram program_;
  kernels::Dims shape_;
  size_t ops_;
};

// Fuses the clusters of `sp`'s root graph (not its nested graphs); returns
// how many clusters were formed. The types of `sp` stay valid for every
// node that remains.
size_t run_fuse_elementwise(ir::IrModule& m, Specialized& sp);

}  // namespace msl::jit
