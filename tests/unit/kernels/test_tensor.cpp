// Tensor storage, views, dtype conversion and promotion, the allocator and
// the Philox generator.
#include <doctest/doctest.h>

#include "kernels/errors.h"
#include "kernels/philox.h"
#include "kernels/shape_util.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

TEST_CASE("contiguous tensors have row-major strides and 64-byte aligned data") {
  Tensor t(DType::Float32, Dims{2, 3, 4});
  CHECK(t.strides() == Dims{12, 4, 1});
  CHECK(t.numel() == 24);
  CHECK(t.nbytes() == 96);
  CHECK(reinterpret_cast<uintptr_t>(t.raw()) % 64 == 0);
  CHECK(t.is_contiguous());
}

TEST_CASE("views share storage and see writes") {
  std::mt19937 rng(1);
  Tensor t = random_tensor(rng, DType::Float64, Dims{3, 4});
  Tensor tr = Tensor::view(t, Dims{4, 3}, Dims{1, 4}, 0);
  CHECK_FALSE(tr.is_contiguous());
  CHECK(tr.shares_storage(t));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) CHECK(tr.item_at(j * 3 + i) == t.item_at(i * 4 + j));
  store_from_double(t.raw(), DType::Float64, 5, 42.0);  // t[1][1]
  CHECK(tr.item_at(1 * 3 + 1) == 42.0);
  Tensor c = tr.contiguous();
  CHECK(c.is_contiguous());
  CHECK_FALSE(c.shares_storage(t));
  CHECK(to_vector(c) == to_vector(tr));
}

TEST_CASE("copy_strided converts dtypes and handles size-0 tensors") {
  Tensor src = from_vector(DType::Float64, Dims{4}, {1.5, -2.7, 3e10, -1e10});
  Tensor dst(DType::Int32, Dims{4});
  copy_strided(src, dst);
  CHECK(to_vector(dst) == std::vector<double>{1, -2, 2147483647.0, -2147483648.0});
  Tensor e1(DType::Float32, Dims{0, 3}), e2(DType::Float32, Dims{0, 3});
  copy_strided(e1, e2);
  CHECK(e1.numel() == 0);
}

TEST_CASE("half and bfloat16 round to nearest even") {
  CHECK(half_to_float(float_to_half(1.0f)) == 1.0f);
  CHECK(half_to_float(float_to_half(65504.0f)) == 65504.0f);
  CHECK(std::isinf(half_to_float(float_to_half(70000.0f))));
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1.0).
  CHECK(half_to_float(float_to_half(1.0f + 1.0f / 2048)) == 1.0f);
  CHECK(half_to_float(float_to_half(1.0f + 3.0f / 2048)) == 1.0f + 2.0f / 1024);
  // Smallest subnormal 2^-24.
  CHECK(half_to_float(float_to_half(std::ldexp(1.0f, -24))) == std::ldexp(1.0f, -24));
  CHECK(half_to_float(0x8000) == 0.0f);
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(std::isnan(half_to_float(float_to_half(NAN))));
  CHECK(bf16_to_float(float_to_bf16(1.0f)) == 1.0f);
  CHECK(bf16_to_float(float_to_bf16(1.0f + 1.0f / 256)) == 1.0f);  // tie to even
  CHECK(bf16_to_float(float_to_bf16(3.0f)) == 3.0f);
  // Every half bit pattern survives a round trip through float.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    REQUIRE(float_to_half(f) == h);
  }
}

TEST_CASE("type promotion follows NumPy within MSL's dtypes") {
  CHECK(promote_types(DType::Int32, DType::Float32) == DType::Float32);
  CHECK(promote_types(DType::Int64, DType::Int32) == DType::Int64);
  CHECK(promote_types(DType::Bool, DType::Int32) == DType::Int32);
  CHECK(promote_types(DType::Float16, DType::Float32) == DType::Float32);
  CHECK(promote_types(DType::Float16, DType::BFloat16) == DType::Float32);
  CHECK(promote_types(DType::Int8, DType::UInt8) == DType::Int32);
  CHECK(promote_types(DType::Float64, DType::Float16) == DType::Float64);
}

TEST_CASE("broadcasting shapes and its error message") {
  CHECK(broadcast_shapes("add", Dims{3, 1}, Dims{4}) == Dims{3, 4});
  CHECK(broadcast_shapes("add", Dims{}, Dims{2, 2}) == Dims{2, 2});
  CHECK(broadcast_shapes("add", Dims{0, 1}, Dims{1, 5}) == Dims{0, 5});
  CHECK_THROWS_WITH_AS(broadcast_shapes("add", Dims{3, 4}, Dims{2, 4}), "add: cannot broadcast (3, 4) with (2, 4)",
                       ShapeError);
  CHECK(broadcast_strides(Dims{3, 1}, Dims{1, 1}, Dims{2, 3, 4}) == Dims{0, 1, 0});
}

TEST_CASE("the caching allocator reuses freed blocks") {
  cpu_allocator_release_cache();
  { Tensor a(DType::Float32, Dims{1000}); }
  AllocatorStats before = cpu_allocator_stats();
  { Tensor b(DType::Float32, Dims{1000}); }
  AllocatorStats after = cpu_allocator_stats();
  CHECK(after.cache_hits == before.cache_hits + 1);
  CHECK(after.bytes_in_use == before.bytes_in_use);
}

TEST_CASE("Philox4x32-10 matches the Random123 known-answer vectors") {
  // Random123's kat_vectors: philox4x32 10 rounds, counter 0 / key 0 and
  // counter all-ones / key all-ones (the upper counter words are zero here,
  // so only the first vector applies directly).
  auto r = philox4x32(0, 0);
  CHECK(r[0] == 0x6627e8d5u);
  CHECK(r[1] == 0xe169c58du);
  CHECK(r[2] == 0xbc57ac4cu);
  CHECK(r[3] == 0x9b00dbd8u);
  // Different counters and keys give different streams.
  CHECK(philox4x32(1, 0) != r);
  CHECK(philox4x32(0, 1) != r);
}

TEST_CASE("dims larger than kMaxDims are a ShapeError") {
  std::vector<int64_t> nine(9, 1);
  CHECK_THROWS_AS(Dims(std::span<const int64_t>(nine)), ShapeError);
  CHECK(Dims{3}.str() == "(3,)");
  CHECK(Dims{}.str() == "()");
}
