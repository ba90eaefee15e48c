// onednn::BlockedCopy against offsets computed by hand from the format's
// definition and against dnnl::reorder, both directions.
#include <doctest/doctest.h>

#include <vector>

#include "kernels/dnnl_blocked_copy.h"
#include "kernels/dnnl_common.h"

using namespace msl::kernels;
using dnnl::memory;

namespace {

memory::desc md(const memory::dims& d, memory::format_tag tag) { return memory::desc(d, memory::data_type::f32, tag); }

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * 0.5f - 7.0f;
  return v;
}

std::vector<float> reorder_by_dnnl(const memory::desc& from, const memory::desc& to, std::vector<float> src) {
  std::vector<float> dst(to.get_size() / sizeof(float), -1.0f);
  memory a(from, onednn::engine(), src.data()), b(to, onednn::engine(), dst.data());
  dnnl::stream s(onednn::engine());
  dnnl::reorder(a, b).execute(s, a, b);
  s.wait();
  return dst;
}

}  // namespace

TEST_CASE("BlockedCopy writes OIhw16i16o weights where the format puts them") {
  const int64_t O = 32, I = 48, H = 3, W = 3;
  auto plain = md({O, I, H, W}, memory::format_tag::oihw), blocked = md({O, I, H, W}, memory::format_tag::OIhw16i16o);
  auto copy = onednn::BlockedCopy::plan(plain, blocked);
  REQUIRE(copy.ok());
  std::vector<float> src = iota(O * I * H * W), dst(src.size(), -1.0f);
  copy.to_blocked(src.data(), dst.data());
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          // [O/16][I/16][h][w][16i][16o]
          int64_t at = ((((o / 16) * (I / 16) + i / 16) * H + h) * W + w) * 256 + (i % 16) * 16 + o % 16;
          REQUIRE(dst[at] == src[((o * I + i) * H + h) * W + w]);
        }
  std::vector<float> back(src.size(), 0.0f);
  copy.to_plain(dst.data(), back.data());
  CHECK(back == src);
}

TEST_CASE("BlockedCopy agrees with dnnl::reorder for the weight formats convolutions choose") {
  for (auto tag : {memory::format_tag::OIhw16i16o, memory::format_tag::IOhw16o16i, memory::format_tag::OIhw16o16i}) {
    for (memory::dims d : {memory::dims{64, 32, 1, 1}, memory::dims{16, 16, 3, 3}, memory::dims{32, 64, 7, 5}}) {
      CAPTURE(static_cast<int>(tag));
      CAPTURE(d[0]);
      auto plain = md(d, memory::format_tag::oihw), blocked = md(d, tag);
      auto copy = onednn::BlockedCopy::plan(plain, blocked);
      REQUIRE(copy.ok());
      std::vector<float> src = iota(plain.get_size() / sizeof(float)), dst(src.size(), -1.0f);
      copy.to_blocked(src.data(), dst.data());
      CHECK(dst == reorder_by_dnnl(plain, blocked, src));
      std::vector<float> out(src.size(), 0.0f);
      copy.to_plain(dst.data(), out.data());
      CHECK(out == reorder_by_dnnl(blocked, plain, dst));
    }
  }
}

TEST_CASE("BlockedCopy declines layouts its loop does not cover") {
  // Padding: 3 input channels blocked by 16.
  CHECK_FALSE(onednn::BlockedCopy::plan(md({32, 3, 3, 3}, memory::format_tag::oihw),
                                        md({32, 3, 3, 3}, memory::format_tag::OIhw16i16o))
                  .ok());
  // One inner block (activations) and none (plain to plain).
  CHECK_FALSE(onednn::BlockedCopy::plan(md({2, 32, 4, 4}, memory::format_tag::nchw),
                                        md({2, 32, 4, 4}, memory::format_tag::nChw16c))
                  .ok());
  CHECK_FALSE(onednn::BlockedCopy::plan(md({2, 32, 4, 4}, memory::format_tag::nchw),
                                        md({2, 32, 4, 4}, memory::format_tag::nhwc))
                  .ok());
  // Other data types.
  CHECK_FALSE(onednn::BlockedCopy::plan(memory::desc({32, 32, 1, 1}, memory::data_type::bf16, memory::format_tag::oihw),
                                        memory::desc({32, 32, 1, 1}, memory::data_type::bf16,
                                                     memory::format_tag::OIhw16i16o))
                  .ok());
}
