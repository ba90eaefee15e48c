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
#include <string>

#include "jit/fused_elementwise.h"
#include "jit/specialize.h"
#include "kernels/tensor.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// Fuses the clusters of `sp`'s root graph (not its nested graphs); returns
// how many clusters were formed. The types of `sp` stay valid for every
// node that remains.
size_t run_fuse_elementwise(ir::IrModule& m, Specialized& sp);

}  // namespace msl::jit
