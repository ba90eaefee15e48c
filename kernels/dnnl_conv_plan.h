// What conv2d and its gradients (dnnl_conv.cpp) and the fused convolutions
// (dnnl_fused.cpp) share: the geometry of a 2-D convolution, the memory
// descriptors oneDNN needs for it, and the part of a cached plan that moves
// the three operands between the caller's layout and the primitive's.
//
// A plan keeps user[i] (the caller's NCHW / [O, C/groups, kh, kw] layout,
// with the actual strides, or nChw16c / nChw8c for a channel-blocked
// activation: blocked_layout.h) and inner[i] (the layout oneDNN chose with
// format_tag::any or was asked for); where they differ, operands 0 and 1 are reordered into
// scratch memory before the primitive and operand 2, the result, back out
// after it, all temporaries in one Scratch.
#pragma once

#include <dnnl.hpp>

#include <mutex>

#include "kernels/attrs.h"
#include "kernels/dnnl_blocked_copy.h"
#include "kernels/dnnl_common.h"
#include "kernels/dnnl_window.h"
#include "kernels/tensor.h"

namespace msl::kernels {

// conv2d and its two gradients: (x, w) -> y, (dy, w) -> dx, (dy, x) -> dw.
enum class ConvOp : int { Forward, BackpropInput, BackpropFilter };

struct ConvGeom {
  int64_t n = 0, c = 0, h = 0, w = 0, o = 0, kh = 0, kw = 0, groups = 1;
  Window2d win;
  Dims x_shape() const { return {n, c, h, w}; }
  Dims y_shape() const { return {n, o, win.ho, win.wo}; }
  Dims w_shape() const { return {o, c / groups, kh, kw}; }
};

// The dtype of op's weight side: the weight in1 (forward, backward data) or
// the weight gradient `out` (backward filter). Float32 under bfloat16/
// float16 activations is mixed precision's master weight.
inline DType conv_weight_dtype(ConvOp op, const Tensor& in1, const Tensor& out) {
  return op == ConvOp::BackpropFilter ? out.dtype() : in1.dtype();
}

// The geometry of input shape `xs` and weight shape `ws` under conv2d's
// attributes; ShapeError/ValueError naming `op` for shapes that do not fit.
ConvGeom conv_geometry(const char* op, const Dims& xs, const Dims& ws, const Attrs& attrs);

// A forward convolution's call under the `layout` attribute
// (blocked_layout.h), shared by conv2d and the fused convolutions: the
// geometry of x's logical shape, the block of x (0: plain) and of the
// result (0 without a layout), and the result's shape (blocked with one).
struct ForwardConvCall {
  ConvGeom g;
  int64_t x_block = 0, y_block = 0;
  Dims out_shape;
};
ForwardConvCall forward_conv_call(const char* op, const Dims& x, const Dims& w, const Attrs& attrs);

namespace onednn {

// A weight [O, C/g, kh, kw] in oneDNN's grouped form [g, O/g, C/g, kh, kw]
// when groups > 1 (the same memory).
dnnl::memory::desc conv_weights_md(const Dims& shape, const Dims& strides, int64_t groups, dnnl::memory::data_type dt);
// convolution_auto, except for outputs smaller than 4x4: there oneDNN still
// takes Winograd F(4x4, 3x3) for 3x3 layers with many channels, and its
// tiles are mostly padding (ResNet-18's 512-channel layers at 1x1: 7-9 ms
// per call at batch 32 against 0.3-0.7 ms direct; at 2x2, 3x slower).
dnnl::algorithm conv_algorithm(const ConvGeom& g);
// A descriptor with the layout `tag`.
dnnl::memory::desc tagged_md(const Dims& shape, dnnl::memory::data_type dt, dnnl::memory::format_tag tag);
// A descriptor leaving the layout to the primitive (format_tag::any).
dnnl::memory::desc any_md(const Dims& shape, dnnl::memory::data_type dt);
// The geometry's part of a plan cache key.
Key& add_conv_geometry(Key& key, const ConvGeom& g);

struct ConvOperands {
  bool supported = false;
  dnnl::memory user[3], inner[3], scratchpad;
  dnnl::reorder reorder[3];
  BlockedCopy fast[3];  // our loop instead of reorder[i] where it applies (weights)
  bool reordered[3] = {false, false, false};
  size_t offset[3] = {0, 0, 0}, scratchpad_offset = 0, scratch_bytes = 0;
  std::mutex mu;  // a plan's memory objects are bound per call

  // Plans the reorders of operands whose user and inner layouts differ and
  // the primitive's scratchpad, sizing scratch_bytes.
  void plan_operands(const dnnl::memory::desc (&user_md)[3], const dnnl::memory::desc (&inner_md)[3],
                     const dnnl::memory::desc& scratch_md);
  // Binds the tensors and scratch parts and reorders operands 0 and 1 in;
  // args[i] is the memory the primitive uses for operand i.
  void bind_operands(const Tensor* const (&t)[3], const Scratch& scratch, const dnnl::memory* (&args)[3]);
  // Reorders the result out when the primitive wrote it elsewhere.
  void finish_result();
};

}  // namespace onednn
}  // namespace msl::kernels
