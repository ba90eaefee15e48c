// oneDNN's channel-blocked activation layout (nChw16c / nChw8c) as MSL
// tensors, shared by to_blocked/from_blocked (blocked_layout.cpp) and the
// convolution and batch-normalization kernels that take a `layout`
// attribute.
//
// A blocked tensor of logical NCHW shape [N, C, H, W] with block b (C % b
// == 0) is a contiguous 5-D tensor [N, C/b, H, W, b]; logical element
// (n, c, h, w) sits at flat index (((n*(C/b) + c/b)*H + h)*W + w)*b + c%b,
// exactly oneDNN's nChw{b}c memory. Graph mode keeps ResNet activations in
// this layout between consecutive oneDNN ops, so that each op hands oneDNN
// the layout its kernels want instead of reordering NCHW in and out.
//
// The layout-aware ops take a blocked operand as it is (a rank-5 tensor
// whose last dim is b) and produce blocked activations; paths other than
// oneDNN's (float64 loops, the few-channel and single-tap convolutions)
// unblock their inputs into plain temporaries and block the result.
#pragma once

#include <dnnl.hpp>

#include "kernels/attrs.h"
#include "kernels/tensor.h"

namespace msl::kernels {

// The block size named by the `layout` attribute: 0 when it is absent or
// "" (plain NCHW), 16 for "nChw16c", 8 for "nChw8c"; ValueError naming `op`
// for anything else.
int64_t layout_block(const char* op, const Attrs& attrs);

// The logical NCHW shape of an activation operand under block `block`: a
// rank-5 blocked shape [N, C/b, H, W, b] gives [N, C, H, W]; a rank-4 shape
// is plain and returned as it is when `plain_ok`. ShapeError naming `op`
// and `what` for other ranks, a last dim other than `block`, or a plain
// operand where only blocked ones are accepted.
Dims logical_shape(const char* op, const char* what, const Dims& shape, int64_t block, bool plain_ok);

// The blocked shape [N, C/b, H, W, b] of a logical [N, C, H, W] result;
// ShapeError naming `op` and `what` when C % block != 0.
Dims blocked_shape(const char* op, const char* what, const Dims& logical, int64_t block);

// True for a rank-5 operand (blocked, where a layout is given).
inline bool is_blocked(const Tensor& t) { return t.ndim() == 5; }

// A new contiguous plain [N, C, H, W] tensor with the values of the blocked
// tensor `blocked` (any strides).
Tensor unblock(const Tensor& blocked);
// Writes the blocked tensor `blocked` into the plain tensor `plain` of the
// same dtype (any strides each).
void unblock_into(const Tensor& blocked, const Tensor& plain);
// The plain tensor `plain` ([N, C, H, W], any strides, C % block == 0)
// viewed as the blocked shape [N, C/b, H, W, b], element for element (a
// view: to_blocked and from_blocked are copies between it and the blocked
// tensor on any device).
Tensor plain_as_blocked_view(const Tensor& plain, int64_t block);
// Writes the plain [N, C, H, W] tensor `plain` (any strides) into the
// contiguous blocked tensor `blocked_out` of the same dtype.
void block_into(const Tensor& plain, const Tensor& blocked_out);

namespace onednn {
// The oneDNN descriptor of a contiguous blocked tensor: the logical 4-D
// dims with format tag nChw16c or nChw8c.
dnnl::memory::desc blocked_md(const Dims& logical, int64_t block, dnnl::memory::data_type dt);
}  // namespace onednn

}  // namespace msl::kernels
