// Epilogue fusion: a matmul or conv2d followed by its bias add or an
// inference batch norm (then perhaps a residual add), and/or a ReLU, becomes
// one fused contraction primitive (kernels/dnnl_fused.cpp), whose oneDNN
// kernel applies the bias (or the batch norm's per-channel scale and
// shift), the residual and the ReLU while the output is still in
// registers.
//
// Patterns, on the root graph of a specialized graph of primitives (after
// expansion, before elementwise fusion):
//   1. matmul(a, b) -> add(., bias) [-> relu]      => matmul_bias(a, b, bias)
//      bias: shape (N,) or (1, .., 1, N), the last dim of the product;
//   2. conv2d(x, w) -> add(., bias) [-> relu]      => conv2d_bias(x, w, bias)
//      bias: shape (1, C, 1, 1) or (C, 1, 1), the output channels (a (C,)
//      operand would broadcast along W);
//   3. conv2d(x, w) -> batch_norm[training=False](., gamma, beta, mean, var)
//      -> tuple_getitem(., 0) [-> relu]             => conv2d_bn(x, w, ...);
//   4. the same -> add(., residual) [-> relu]       => conv2d_bn_add(x, w, ...,
//      residual), residual of the result's shape (a ResNet block's end, the
//      residual added by oneDNN's `sum` post-op).
//   The add may take its operands in either order. Every tensor involved is
//   float32, and the add does not broadcast the product to a larger shape.
// A pattern is rewritten only when each intermediate (the product, the
// batch norm and, for the ReLU, the add or normalized value) has that one
// user and is neither the graph's output nor used by a nested graph: in a
// training graph the backward pass reads them, and recomputing them would
// cost more than fusing saves. When only the ReLU's input has other users
// the ReLU stays and the bias/normalization is still fused.
// Not done: a residual add after a bias (conv2d_bias), activations other
// than ReLU, other dtypes, nodes of nested graphs.
//
// The types side table stays valid: the fused nodes, their primitive
// constants and every node rebuilt because an input changed get the type
// of the node they replace.
#pragma once

#include <cstddef>

#include "jit/specialize.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// Rewrites the patterns of `sp`'s root graph; returns how many were fused.
size_t run_fuse_epilogue(ir::IrModule& m, Specialized& sp);

}  // namespace msl::jit
