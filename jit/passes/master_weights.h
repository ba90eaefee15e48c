// Mixed precision's master weights on the CPU: a convolution of bfloat16 or
// float16 activations reads its float32 weight itself, and writes its
// weight gradient in float32, instead of through casts.
//
// The graph of an O2 step casts each float32 weight to the activations'
// dtype (a pass over the weight writing a low-precision copy) before
// conv2d and conv2d_backprop_input reorder that copy into oneDNN's layout,
// and casts each low-precision weight gradient back to float32. oneDNN's
// reorder converts while it reorders, and its backward-weights kernel
// accumulates in float32 anyway, so (kernels/dnnl_conv.cpp):
//   conv2d(x, cast(w)), conv2d_backprop_input(dy, cast(w))
//       -> the same with w, when w is float32 and cast(w) has x's (dy's)
//          bfloat16/float16 dtype;
//   cast[dtype=Float32](conv2d_backprop_filter(dy, x))
//       -> conv2d_backprop_filter[dtype=Float32](dy, x), when the gradient
//          is bfloat16/float16 and the cast its only user.
// Results are the same values: the weight is rounded to the low dtype once
// either way (round to nearest even), and the gradient is the float32 sum
// the kernel computed, rounded once less. On the root graph of a
// specialized graph of primitives on the CPU, after fuse_epilogue (whose
// fused contractions are float32 only) and before layout_choice. The
// casts left without users fall away with the rebuild.
#pragma once

#include <cstddef>

#include "jit/specialize.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// Rewrites `sp`'s root graph; returns how many nodes were rewritten.
size_t run_master_weights(ir::IrModule& m, Specialized& sp);

}  // namespace msl::jit
