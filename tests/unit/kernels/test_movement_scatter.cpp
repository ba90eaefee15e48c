// gather_nd, tensor_scatter_update, tensor_scatter_add, nonzero, masked_fill
// and strided_slice_update against loops written here: every dtype,
// int32/int64 [..., K] indices with negative entries, repeated rows (last
// update wins, adds accumulate in order), strided inputs, and the errors
// (nothing is written when a row is out of range).
#include <doctest/doctest.h>

#include "kernels/errors.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

const DType kAllDTypes[] = {DType::Bool,    DType::Int8,     DType::UInt8,   DType::Int32,  DType::Int64,
                            DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

Tensor run(Prim p, std::vector<Tensor> in, Attrs attrs = {}) { return execute1(p, in, attrs); }

// Rows of a [R, K] index tensor, negative entries wrapped by `shape`.
std::vector<int64_t> flat_rows(const std::vector<std::vector<int64_t>>& rows, const Dims& shape) {
  std::vector<int64_t> out;
  for (const auto& r : rows) {
    int64_t f = 0;
    for (size_t j = 0; j < r.size(); ++j) {
      int64_t n = shape[static_cast<int>(j)];
      f = f * n + (r[j] < 0 ? r[j] + n : r[j]);
    }
    out.push_back(f);
  }
  return out;
}

Tensor index_tensor(DType dt, const std::vector<std::vector<int64_t>>& rows) {
  std::vector<double> v;
  for (const auto& r : rows)
    for (int64_t x : r) v.push_back(static_cast<double>(x));
  return from_vector(dt, Dims{static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}, v);
}

}  // namespace

TEST_CASE("gather_nd reads the block of every index row") {
  std::mt19937 rng(5);
  const std::vector<std::vector<int64_t>> rows = {{2, 0}, {-1, 1}, {0, -2}, {2, 0}};
  for (DType dt : kAllDTypes)
    for (DType it : {DType::Int32, DType::Int64}) {
      Tensor x = random_tensor(rng, dt, Dims{3, 2, 4});
      Tensor y = run(Prim::gather_nd, {noncontiguous_copy(x), index_tensor(it, rows)});
      CHECK(y.shape() == Dims{4, 4});
      std::vector<double> xv = to_vector(x), want;
      for (int64_t f : flat_rows(rows, x.shape()))
        for (int64_t c = 0; c < 4; ++c) want.push_back(xv[static_cast<size_t>(f * 4 + c)]);
      CHECK(to_vector(y) == want);
    }
}

TEST_CASE("tensor_scatter_update copies x and writes rows in order") {
  std::mt19937 rng(6);
  const std::vector<std::vector<int64_t>> rows = {{1}, {-3}, {1}};
  for (DType dt : kAllDTypes) {
    Tensor x = random_tensor(rng, dt, Dims{3, 2});
    Tensor u = random_tensor(rng, dt, Dims{3, 2});
    std::vector<double> before = to_vector(x);
    Tensor y = run(Prim::tensor_scatter_update, {x, index_tensor(DType::Int64, rows), u});
    std::vector<double> want = before, uv = to_vector(u);
    // Row 0 then row 2 write x[1]: row 2's values stay; row 1 writes x[0].
    for (int r : {0, 1, 2}) {
      int64_t f = flat_rows({rows[static_cast<size_t>(r)]}, x.shape())[0];
      for (int c = 0; c < 2; ++c) want[static_cast<size_t>(f * 2 + c)] = uv[static_cast<size_t>(r * 2 + c)];
    }
    CHECK(to_vector(y) == want);
    CHECK(to_vector(x) == before);
  }
}

TEST_CASE("tensor_scatter_add accumulates repeated rows") {
  Tensor x = from_vector(DType::Float64, Dims{2, 2}, {1, 2, 3, 4});
  Tensor u = from_vector(DType::Float64, Dims{3}, {10, 20, 40});
  Tensor y = run(Prim::tensor_scatter_add, {x, index_tensor(DType::Int32, {{0, 1}, {1, 0}, {0, -1}}), u});
  CHECK(to_vector(y) == std::vector<double>{1, 52, 23, 4});
  Tensor h = run(Prim::tensor_scatter_add, {from_vector(DType::Float16, Dims{2}, {1, 2}),
                                            index_tensor(DType::Int64, {{1}, {1}}),
                                            from_vector(DType::Float16, Dims{2}, {0.5, 0.25})});
  CHECK(to_vector(h) == std::vector<double>{1, 2.75});
}

TEST_CASE("nonzero lists coordinates in row-major order") {
  Tensor m = from_vector(DType::Float32, Dims{2, 3}, {0, 1.5, 0, -2, 0, 3});
  Tensor y = run(Prim::nonzero, {noncontiguous_copy(m)});
  CHECK(y.shape() == Dims{3, 2});
  CHECK(to_vector(y) == std::vector<double>{0, 1, 1, 0, 1, 2});
  CHECK(run(Prim::nonzero, {from_vector(DType::Bool, Dims{4}, {0, 0, 0, 0})}).shape() == Dims{0, 1});
}

TEST_CASE("masked_fill broadcasts the mask and the value to x") {
  for (DType dt : kAllDTypes) {
    Tensor x = from_vector(dt, Dims{2, 3}, {1, 0, 1, 0, 1, 1});
    Tensor mask = from_vector(DType::Bool, Dims{2, 1}, {1, 0});
    Tensor v = from_vector(dt, Dims{3}, {0, 1, 0});
    CHECK(to_vector(run(Prim::masked_fill, {x, mask, v})) == std::vector<double>{0, 1, 0, 0, 1, 1});
  }
  CHECK_THROWS_AS(run(Prim::masked_fill, {from_vector(DType::Float32, Dims{2}, {1, 2}),
                                          from_vector(DType::Bool, Dims{2, 2}, {1, 0, 0, 1}),
                                          from_vector(DType::Float32, Dims{}, {0})}),
                  ShapeError);
}

TEST_CASE("strided_slice_update writes the slice of a copy") {
  Tensor x = from_vector(DType::Int32, Dims{3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  Tensor v = from_vector(DType::Int32, Dims{2, 1}, {-1, -2});
  Attrs a{{"begin", std::vector<int64_t>{2, 1}}, {"end", std::vector<int64_t>{-4, 2}},
          {"strides", std::vector<int64_t>{-2, 1}}};
  CHECK(to_vector(run(Prim::strided_slice_update, {x, v}, a)) == std::vector<double>{0, -2, 2, 3, 4, 5, 6, -1, 8});
  CHECK(to_vector(x)[1] == 1);
}

TEST_CASE("index errors name the bad entry and write nothing") {
  Tensor x = from_vector(DType::Float32, Dims{2, 3}, {0, 1, 2, 3, 4, 5});
  try {
    run(Prim::tensor_scatter_update, {x, index_tensor(DType::Int64, {{0, 0}, {1, 3}}),
                                      from_vector(DType::Float32, Dims{2}, {9, 9})});
    FAIL("no error");
  } catch (const IndexOutOfRange& e) {
    CHECK(std::string(e.what()) == "tensor_scatter_update: index 3 is out of bounds for axis 1 with size 3");
    CHECK(e.dim == 1);
  }
  CHECK(to_vector(x) == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK_THROWS_AS(run(Prim::gather_nd, {x, index_tensor(DType::Int32, {{-3}})}), IndexError);
  CHECK_THROWS_AS(run(Prim::gather_nd, {x, from_vector(DType::Int64, Dims{}, {0})}), ShapeError);
  CHECK_THROWS_AS(run(Prim::strided_slice_update, {x, from_vector(DType::Float64, Dims{2, 3}, {0, 0, 0, 0, 0, 0})}),
                  DTypeError);
}
