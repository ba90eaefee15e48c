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
//     [N, 1] over [N, C], a tensor scalar), or such a block and a trailing
//     block that ends at the last dim (a "lane": the per-channel operand
//     [1, C/16, 1, 1, 16] of a channel-blocked [N, C/16, H, W, 16] tensor,
//     what the layout pass makes of [1, C, 1, 1] over NCHW); see
//     EwIndexing;
//   * a connected group of fusible nodes of one shape is one cluster when
//     no path leaves it and comes back (it is convex) and its broadcast
//     operands share one pattern (scalars aside); otherwise clusters grow
//     from a root (visited from the output backwards) by absorbing fusible
//     producers of the same shape whose broadcast operands fit the
//     cluster's pattern, unless another user of the producer leads back
//     into the cluster (the cluster would then depend on itself);
//   * a float32 reduce_sum of a member (or of a full-shaped input no
//     cluster can hold, a matmul's result) joins the cluster as a sum when
//     the elements it keeps are one broadcast pattern fitting the
//     cluster's (a bias gradient: [N, C] over axis 0 keeps (i / 1) % C,
//     [N, C, H, W] over (0, 2, 3) keeps (i / H*W) % C; everything: a
//     scalar) and its result does not lead back into the cluster
//     (softmax's sum, which its division reads, joins the exponentials'
//     loop instead); the loop accumulates it (elementwise_reduce.h), so a
//     dy only summed is never stored (a channel-blocked batch norm's
//     per-channel sums over [N, C/16, H, W, 16] keep a lane pattern);
//   * every member used outside the cluster (its sums aside) is an output,
//     so values a gradient's several results share are computed once in
//     one loop;
//   * a cluster of two or more ops (sums included) is replaced by an Apply
//     of a constant FusedElementwise host object (the program and shape)
//     to the cluster's tensor inputs (tuple_getitem of it for each output
//     when there are several: the stored members, then the sums).
// What it does not do (yet): two broadcast patterns in one loop (an outer
// sum [N, 1] + [1, C] is split; a bias gradient beside a row statistic
// [N, 1], as in the gradient of softmax_cross_entropy with label
// smoothing, stays a reduce_sum kernel), operands broadcast in blocks
// other than the two above ([C, 1, W, 1] over [N, C, H, W, 2]), other
// dtypes, other reductions (max, min; sums over axes that keep blocks
// other than a broadcast operand's); matmul/conv epilogues are
// fuse_epilogue's.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>

#include "jit/codegen/elementwise_jit.h"
#include "jit/specialize.h"
#include "kernels/tensor.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// The callee of a fused cluster: out = program(inputs...) over `shape`,
// then the program's sums, sum k of shape sum_shapes[k].
class FusedElementwise final : public ir::HostObject {
 public:
  FusedElementwise(codegen::EwProgram program, kernels::Dims shape, size_t ops,
                   std::vector<kernels::Dims> sum_shapes = {})
      : program_(std::move(program)), shape_(std::move(shape)), ops_(ops), sum_shapes_(std::move(sum_shapes)) {}
  std::string name() const override { return "fused_elementwise_" + std::to_string(ops_) + "ops"; }
  size_t ops() const { return ops_; }  // primitives the cluster replaced (names the node)
  const codegen::EwProgram& program() const { return program_; }
  const kernels::Dims& shape() const { return shape_; }
  // The shapes of the program's sums' results (their keep_dims differ).
  const std::vector<kernels::Dims>& sum_shapes() const { return sum_shapes_; }
  // Runs the loop on the cluster's inputs (float32, any strides; `shape`,
  // or for a broadcast input the elements its EwIndexing counts, read in
  // its own shape): one tensor per output of the program, then one per
  // sum. ShapeError for an input of another size or dtype. An input buffer
  // nothing but `inputs` holds (the executor released it at this node)
  // receives a result of `shape` instead of a new buffer.
  std::vector<kernels::Tensor> run(const std::vector<kernels::Tensor>& inputs) const;

 private:
  codegen::EwProgram program_;
  kernels::Dims shape_;
  size_t ops_;
  std::vector<kernels::Dims> sum_shapes_;
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
