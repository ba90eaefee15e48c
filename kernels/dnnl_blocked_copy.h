// Copies between a plain (strided, unblocked) float32 layout and a oneDNN
// blocked layout with two inner blocks, the convolution weight formats
// (OIhw16i16o = ABcd16b16a, IOhw16o16i = BAcd16a16b, ...), by our own loop
// instead of dnnl::reorder.
//
// Why: oneDNN 2.6 runs these weight reorders with its generic "jit:uni"
// kernel at 3-8 GB/s here (a 2048x1024 1x1 weight took 3-4.7 ms), and a
// training step reorders every convolution weight three times (into the
// forward's and the backward-data's layouts, and the weight gradient out):
// ~35 ms of ResNet-50's ~130 ms step at batch 8. The loop below walks the
// blocked side in order, one 2-D tile of the two inner blocks at a time, so
// both sides stay in cache lines it has just touched.
//
// Only layouts the loop handles exactly get a plan: no padding (every
// blocked dimension a multiple of its block), no offset, two inner blocks on
// different dimensions, at most 6 dimensions. Everything else keeps
// dnnl::reorder.
#pragma once

#include <dnnl.hpp>

#include <cstdint>

namespace msl::kernels::onednn {

class BlockedCopy {
 public:
  // A plan for copying between `plain` and `blocked` (either direction);
  // ok() is false when the pair is not one this loop handles.
  static BlockedCopy plan(const dnnl::memory::desc& plain, const dnnl::memory::desc& blocked);
  bool ok() const { return ok_; }
  void to_blocked(const float* plain, float* blocked) const;
  void to_plain(const float* blocked, float* plain) const;

 private:
  template <bool kToBlocked>
  void copy(const float* src, float* dst) const;

  bool ok_ = false;
  int ndims_ = 0;
  int64_t outer_[6] = {};           // blocks per dimension
  int64_t block_[6] = {};           // elements per block of each dimension (1 when unblocked)
  int64_t plain_stride_[6] = {};    // element strides of the plain layout
  int64_t blocked_stride_[6] = {};  // strides of the blocked layout's outer blocks
  int64_t inner_[2] = {};           // the two inner block sizes, outer first
  int idx_[2] = {};                 // the dimensions they block
};

}  // namespace msl::kernels::onednn
