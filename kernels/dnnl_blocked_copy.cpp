// The plain <-> two-inner-block copy loop (see dnnl_blocked_copy.h).
#include "kernels/dnnl_blocked_copy.h"

#include "kernels/parallel.h"

namespace msl::kernels::onednn {

namespace {

bool dense_float_blocking(const dnnl_memory_desc_t& d) {
  if (d.format_kind != dnnl_blocked || d.data_type != dnnl_f32 || d.offset0 != 0) return false;
  if (d.ndims < 1 || d.ndims > 6) return false;
  for (int i = 0; i < d.ndims; ++i)
    if (d.padded_dims[i] != d.dims[i] || d.padded_offsets[i] != 0 || d.dims[i] <= 0) return false;
  return true;
}

}  // namespace

BlockedCopy BlockedCopy::plan(const dnnl::memory::desc& plain_md, const dnnl::memory::desc& blocked_md) {
  BlockedCopy c;
  const dnnl_memory_desc_t &p = plain_md.data, &b = blocked_md.data;
  if (!dense_float_blocking(p) || !dense_float_blocking(b) || p.ndims != b.ndims) return c;
  const auto &pb = p.format_desc.blocking, &bb = b.format_desc.blocking;
  if (pb.inner_nblks != 0 || bb.inner_nblks != 2 || bb.inner_idxs[0] == bb.inner_idxs[1]) return c;
  c.ndims_ = p.ndims;
  for (int i = 0; i < c.ndims_; ++i) {
    if (p.dims[i] != b.dims[i] || pb.strides[i] <= 0) return c;
    c.block_[i] = 1;
    c.plain_stride_[i] = pb.strides[i];
    c.blocked_stride_[i] = bb.strides[i];
  }
  for (int k = 0; k < 2; ++k) {
    c.inner_[k] = bb.inner_blks[k];
    c.idx_[k] = static_cast<int>(bb.inner_idxs[k]);
    c.block_[c.idx_[k]] = bb.inner_blks[k];
  }
  for (int i = 0; i < c.ndims_; ++i) {
    if (b.dims[i] % c.block_[i]) return c;
    c.outer_[i] = b.dims[i] / c.block_[i];
  }
  c.ok_ = true;
  return c;
}

template <bool kToBlocked>
void BlockedCopy::copy(const float* src, float* dst) const {
  int64_t tiles = 1;
  for (int i = 0; i < ndims_; ++i) tiles *= outer_[i];
  const int64_t n0 = inner_[0], n1 = inner_[1];
  const int64_t s0 = plain_stride_[idx_[0]], s1 = plain_stride_[idx_[1]];
  parallel_for(tiles, 64, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      // The tile's outer block indices, row-major over the dimensions.
      int64_t rest = t, blocked = 0, plain = 0;
      for (int i = ndims_ - 1; i >= 0; --i) {
        int64_t o = rest % outer_[i];
        rest /= outer_[i];
        blocked += o * blocked_stride_[i];
        plain += o * block_[i] * plain_stride_[i];
      }
      for (int64_t j0 = 0; j0 < n0; ++j0) {
        const int64_t bp = blocked + j0 * n1, pp = plain + j0 * s0;
        if constexpr (kToBlocked) {
          for (int64_t j1 = 0; j1 < n1; ++j1) dst[bp + j1] = src[pp + j1 * s1];
        } else {
          for (int64_t j1 = 0; j1 < n1; ++j1) dst[pp + j1 * s1] = src[bp + j1];
        }
      }
    }
  });
}

void BlockedCopy::to_blocked(const float* plain, float* blocked) const { copy<true>(plain, blocked); }
void BlockedCopy::to_plain(const float* blocked, float* plain) const { copy<false>(blocked, plain); }

}  // namespace msl::kernels::onednn
