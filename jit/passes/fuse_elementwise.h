// Elementwise fusion: clusters of elementwise float32 primitives over one
// shape become a single node that runs one generated loop
// (jit/codegen/elementwise_jit.h), so a chain reads its inputs once and
// writes its result once instead of materialising every intermediate.
//
// What it does, on a specialized graph of primitives (after expansion):
//   * a node is fusible when it applies add, sub, mul, div, neg, relu,
//     relu_grad, maximum, minimum, exp, sigmoid or tanh, its result is a
//     float32 tensor, and each operand is a float constant (a number, or a
//     tensor whose elements are all equal: a gradient's seed), a float32
//     tensor of the same shape, or a float32 tensor that broadcasts to it
//     in a way one loop reads with a per-thread division only: right-
//     aligned, its dims that are not 1 are one contiguous block of the
//     result's (a bias [C] over [N, C], [1, C, 1, 1] over [N, C, H, W],
//     [N, 1] over [N, C], a tensor scalar); see EwIndexing;
//   * a connected group of fusible nodes of one shape is one cluster when
//     no path leaves it and comes back (it is convex) and its broadcast
//     operands share one pattern (scalars aside); otherwise clusters grow
//     from a root (visited from the output backwards) by absorbing fusible
//     producers of the same shape whose broadcast operands fit the
//     cluster's pattern, unless another user of the producer leads back
//     into the cluster (the cluster would then depend on itself);
//   * every member used outside the cluster is an output, so values a
//     gradient's several results share are computed once in one loop;
//   * a cluster of two or more ops is replaced by an Apply of a constant
//     FusedElementwise host object (the program and shape) to the
//     cluster's tensor inputs (tuple_getitem of it for each output when
//     there are several).
// What it does not do (yet): two broadcast patterns in one loop (an outer
// sum [N, 1] + [1, C] is split), operands broadcast in several blocks
// ([C, 1, W] over [N, C, H, W]), other dtypes, reductions (a bias
// gradient's reduce_sum stays a kernel after the fused loop); matmul/conv
// epilogues are fuse_epilogue's.
#pragma once

#include <cstddef>
#include <mutex>
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
  // Runs the loop on the cluster's inputs (float32, any strides; `shape`,
  // or for a broadcast input the elements its EwIndexing counts, read in
  // its own shape): one tensor per output of the program. ShapeError for
  // an input of another size or dtype. An input buffer nothing but
  // `inputs` holds (the executor released it at this node) receives a
  // result instead of a new buffer.
  std::vector<kernels::Tensor> run(const std::vector<kernels::Tensor>& inputs) const;

 private:
  codegen::EwProgram program_;
  kernels::Dims shape_;
  size_t ops_;
  // Compiled on the first run, then reused: a training step runs the same
  // node every step.
  mutable std::once_flag compiled_;
  mutable codegen::EwFunction fn_ = nullptr;
};

// Fuses the clusters of `sp`'s root graph (not its nested graphs); returns
// how many clusters were formed. The types of `sp` stay valid for every
// node that remains.
size_t run_fuse_elementwise(ir::IrModule& m, Specialized& sp);

}  // namespace msl::jit
