// Layout choice for oneDNN: activations stay in oneDNN's channel-blocked
// layout between consecutive oneDNN ops, reordered only where a consumer
// needs NCHW.
//
// oneDNN's convolution and batch-norm kernels run on nChw16c (nChw8c on
// AVX2) data: a logical [N, C, H, W] tensor stored as [N, C/b, H, W, b].
// Called on NCHW tensors, every conv2d and batch_norm reorders its
// activations in and its result back out: two or three extra passes over
// memory per op, about 5% of a ResNet training step. This pass makes the
// blocked layout explicit in the graph of primitives, as ordinary 5-D
// tensors, so everything downstream (elementwise fusion, memory planning,
// the executor, the disk cache) handles it without knowing about layouts.
//
// On the root graph of a specialized graph of primitives (after
// fuse_epilogue, before fuse_elementwise), for floating-point (float32,
// bfloat16, float16) 4-D activations
// whose channel count is a multiple of the block b:
//   * conv2d and conv2d_backprop_input produce blocked results and read a
//     blocked x / dy when one exists (attribute layout="nChw<b>c"; a plain
//     operand such as a 3-channel image is still accepted); so do the fused
//     inference contractions conv2d_bias, conv2d_bn and conv2d_bn_add (its
//     residual read in either layout);
//     conv2d_backprop_filter reads blocked operands and gives plain weights;
//   * batch_norm and batch_norm_grad read and produce blocked data,
//     converting a plain operand in (cheaper than their internal reorders,
//     and the result stays blocked for the next op);
//   * elementwise primitives whose full-shape operands are mostly blocked
//     run on 5-D tensors: other full-shape operands are converted, per-
//     channel operands ([1, C, 1, 1], [N, C, 1, 1]) are reshaped to
//     [.., C/b, 1, 1, b] (free), operands constant along C to [.., 1];
//   * max_pool2d and max_pool2d_grad run blocked when an operand is;
//   * broadcast_to of a per-channel tensor whose users are all elementwise
//     (a mean's gradient) becomes the blocked view of its reshape;
//   * reduce_sum/max/min over H and W (or over C) of a blocked tensor
//     reduce the 5-D tensor and reshape (a global average pool);
//   * depend passes a blocked value through, tuple_getitem takes item 0 of
//     a blocked batch norm blocked;
//   * any other consumer, and the graph's output, gets the NCHW value: a
//     from_blocked reorder, made once per value (a reshape when H*W == 1,
//     where both layouts are the same memory).
// Nodes whose operands do not change are kept. New nodes get their types
// in the specialized types table.
//
// Not done: average pooling and grouped convolutions take NCHW; channel
// counts that are not a multiple of the block stay NCHW (oneDNN would pad
// them); nested graphs (the pass only runs on graphs without them).
#pragma once

#include <cstddef>

#include "jit/specialize.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

struct LayoutReport {
  size_t blocked = 0;      // primitives rewritten to blocked operands
  size_t to_blocked = 0;   // reorders into the blocked layout
  size_t from_blocked = 0; // reorders back to NCHW
};

// Rewrites `sp`'s root graph for channel block `block` (16 or 8; 0 leaves
// the graph alone). Does nothing when the graph has nested graphs.
LayoutReport run_layout_choice(ir::IrModule& m, Specialized& sp, int block);

}  // namespace msl::jit
