// gather, scatter_add, one_hot and assign against loops written here:
// every dtype, int32/int64 indices of several ranks, negative axes, repeated
// indices, views, broadcasting and aliasing for assign, and the IndexError /
// ShapeError messages.
#include <doctest/doctest.h>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

using Ints = std::vector<int64_t>;

const DType kAllDTypes[] = {DType::Bool,    DType::Int8,     DType::UInt8,   DType::Int32,  DType::Int64,
                            DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

Tensor run(Prim p, std::vector<Tensor> in, Attrs attrs = {}) { return execute1(p, in, attrs); }

Ints unravel(int64_t i, const Dims& shape) {
  Ints idx(static_cast<size_t>(shape.size()));
  for (int d = shape.size() - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

int64_t ravel(const Ints& idx, const Dims& shape) {
  int64_t f = 0;
  for (int d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[static_cast<size_t>(d)];
  return f;
}

Tensor random_indices(std::mt19937& rng, DType dt, const Dims& shape, int64_t n) {
  Tensor t(dt, shape);
  std::uniform_int_distribution<int64_t> u(0, n - 1);
  for (int64_t i = 0; i < t.numel(); ++i) store_from_double(t.raw(), dt, i, static_cast<double>(u(rng)));
  return t;
}

// Output index (params[:axis] + indices + params[axis+1:]) -> the params
// index it reads.
Ints gather_source(const Ints& oi, const Tensor& indices, int axis, int prank) {
  int ir = indices.ndim();
  Ints ii(oi.begin() + axis, oi.begin() + axis + ir);
  Ints pi(oi.begin(), oi.begin() + axis);
  pi.push_back(static_cast<int64_t>(indices.item_at(ravel(ii, indices.shape()))));
  for (int d = axis + ir; d < static_cast<int>(oi.size()); ++d) pi.push_back(oi[static_cast<size_t>(d)]);
  (void)prank;
  return pi;
}

}  // namespace

TEST_CASE("gather takes rows along an axis for every dtype and index shape") {
  std::mt19937 rng(31);
  for (DType dt : kAllDTypes)
    for (DType it : {DType::Int32, DType::Int64})
      for (int64_t axis : {0, 1, -1})
        for (Dims ishape : {Dims{4}, Dims{2, 3}, Dims{}, Dims{0}}) {
          Tensor params = random_tensor(rng, dt, Dims{3, 5, 4}, -5, 5);
          if (axis == 1) params = noncontiguous_copy(params);
          int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
          Tensor idx = random_indices(rng, it, ishape, params.dim(a));
          Tensor y = run(Prim::gather, {params, idx}, {{"axis", axis}});
          Dims want;
          for (int d = 0; d < a; ++d) want.push_back(params.dim(d));
          for (int64_t d : ishape) want.push_back(d);
          for (int d = a + 1; d < 3; ++d) want.push_back(params.dim(d));
          CHECK(y.shape() == want);
          CHECK(y.dtype() == dt);
          for (int64_t i = 0; i < y.numel(); ++i) {
            Ints pi = gather_source(unravel(i, want), idx, a, 3);
            REQUIRE(y.item_at(i) == params.item_at(ravel(pi, params.shape())));
          }
        }
  // Embedding-sized rows and a long index list (parallel paths).
  Tensor table = random_tensor(rng, DType::Float32, Dims{1000, 64});
  Tensor ids = random_indices(rng, DType::Int64, Dims{64, 20}, 1000);
  Tensor y = run(Prim::gather, {table, ids});
  CHECK(y.shape() == Dims{64, 20, 64});
  for (int64_t i = 0; i < y.numel(); i += 37) {
    Ints oi = unravel(i, y.shape());
    REQUIRE(y.item_at(i) == table.item_at(static_cast<int64_t>(ids.item_at(oi[0] * 20 + oi[1])) * 64 + oi[2]));
  }
}

TEST_CASE("gather rejects bad indices before writing") {
  Tensor params = Tensor::zeros(DType::Float32, Dims{5, 2});
  Tensor idx = from_vector(DType::Int32, Dims{3}, {1, 7, 2});
  CHECK_THROWS_WITH_AS(run(Prim::gather, {params, idx}, {{"axis", int64_t{0}}}),
                       "gather: index 7 is out of range for axis 0 with size 5", IndexError);
  Tensor neg = from_vector(DType::Int64, Dims{1}, {-1});
  CHECK_THROWS_WITH_AS(run(Prim::gather, {params, neg}, {{"axis", int64_t{-1}}}),
                       "gather: index -1 is out of range for axis 1 with size 2", IndexError);
  CHECK_THROWS_WITH_AS(run(Prim::gather, {params, from_vector(DType::Float32, Dims{1}, {0})}),
                       "gather: indices must be Int32 or Int64, got Float32", DTypeError);
  CHECK_THROWS_AS(run(Prim::gather, {Tensor::scalar(DType::Float32, 1), neg}), ValueError);
  CHECK_THROWS_AS(run(Prim::gather, {params, neg}, {{"axis", int64_t{2}}}), ValueError);
  // An index into an empty axis is always out of range.
  CHECK_THROWS_AS(
      run(Prim::gather, {Tensor::zeros(DType::Float32, Dims{0, 3}), from_vector(DType::Int32, Dims{1}, {0})}),
      IndexError);
}

TEST_CASE("scatter_add sums updates into a copy of x, repeated indices accumulating") {
  std::mt19937 rng(32);
  for (DType dt : kAllDTypes) {
    if (dt == DType::Bool) continue;
    for (int64_t axis : {0, 1, -1})
      for (DType it : {DType::Int32, DType::Int64}) {
        Tensor x = random_tensor(rng, dt, Dims{3, 4, 5}, -3, 3);
        int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
        Tensor idx = random_indices(rng, it, Dims{2, 3}, x.dim(a));  // 6 indices into 3..5: repeats
        Dims ushape;
        for (int d = 0; d < a; ++d) ushape.push_back(x.dim(d));
        ushape.push_back(2);
        ushape.push_back(3);
        for (int d = a + 1; d < 3; ++d) ushape.push_back(x.dim(d));
        Tensor upd = random_tensor(rng, dt, ushape, -3, 3);
        if (axis == 1) upd = noncontiguous_copy(upd);
        Tensor y = run(Prim::scatter_add, {x, idx, upd}, {{"axis", axis}});
        CHECK(y.shape() == x.shape());
        CHECK(y.dtype() == dt);
        std::vector<double> want = to_vector(x);
        for (int64_t i = 0; i < upd.numel(); ++i) {
          Ints src = gather_source(unravel(i, ushape), idx, a, 3);
          want[static_cast<size_t>(ravel(src, x.shape()))] += upd.item_at(i);
        }
        // Integers wrap like the dtype; 16-bit floats round once at the end.
        std::vector<double> w2 = to_vector(from_vector(dt, x.shape(), want));
        INFO(dtype_name(dt) << " axis " << axis);
        check_close(to_vector(y), is_floating(dt) ? want : w2, is_floating(dt) ? tolerance(dt) : 0,
                    is_floating(dt) ? tolerance(dt) : 0);
        CHECK_FALSE(y.shares_storage(x));
      }
  }
  // Many repeated indices into few rows, large enough to run in parallel;
  // identical for 1 and 2 threads.
  Tensor x = Tensor::zeros(DType::Float32, Dims{4, 512});
  Tensor idx = random_indices(rng, DType::Int64, Dims{200}, 4);
  Tensor upd = random_tensor(rng, DType::Float32, Dims{200, 512});
  set_num_threads(1);
  std::vector<double> one = to_vector(run(Prim::scatter_add, {x, idx, upd}));
  set_num_threads(2);
  std::vector<double> two = to_vector(run(Prim::scatter_add, {x, idx, upd}));
  set_num_threads(0);
  CHECK(one == two);
  std::vector<double> want(4 * 512, 0.0);
  for (int64_t k = 0; k < 200; ++k)
    for (int64_t j = 0; j < 512; ++j)
      want[static_cast<size_t>(static_cast<int64_t>(idx.item_at(k)) * 512 + j)] += upd.item_at(k * 512 + j);
  check_close(one, want, 1e-5, 1e-5);
}

TEST_CASE("scatter_add errors") {
  Tensor x = Tensor::zeros(DType::Float32, Dims{5, 2});
  Tensor idx = from_vector(DType::Int32, Dims{2}, {1, 5});
  CHECK_THROWS_WITH_AS(run(Prim::scatter_add, {x, idx, Tensor::zeros(DType::Float32, Dims{2, 2})}),
                       "scatter_add: index 5 is out of range for axis 0 with size 5", IndexError);
  CHECK_THROWS_WITH_AS(run(Prim::scatter_add, {x, idx, Tensor::zeros(DType::Float32, Dims{3, 2})}),
                       "scatter_add: updates has shape (3, 2) but x of shape (5, 2) with indices of shape (2,) along "
                       "axis 0 needs (2, 2)",
                       ShapeError);
  CHECK_THROWS_AS(run(Prim::scatter_add, {x, idx, Tensor::zeros(DType::Float64, Dims{2, 2})}), DTypeError);
  CHECK_THROWS_AS(
      run(Prim::scatter_add, {Tensor::zeros(DType::Bool, Dims{5}), idx, Tensor::zeros(DType::Bool, Dims{2})}),
      DTypeError);
}

TEST_CASE("one_hot: depth along any axis, out-of-range indices give all-off rows") {
  std::mt19937 rng(33);
  for (DType it : {DType::Int32, DType::Int64, DType::UInt8, DType::Int8})
    for (int64_t axis : {-1, 0, 1, 2})
      for (DType dt : {DType::Float32, DType::Int32, DType::Float16, DType::Bool, DType::Float64}) {
        Tensor idx = random_tensor(rng, it, Dims{3, 4}, -2, 6);  // some outside [0, 4)
        Tensor y = run(Prim::one_hot, {idx},
                       {{"depth", int64_t{4}}, {"on_value", 5.0}, {"off_value", -1.0}, {"axis", axis}, {"dtype", dt}});
        int a = static_cast<int>(axis < 0 ? 2 : axis);
        Dims want{3, 4};
        Dims ws;
        for (int d = 0; d < 3; ++d) ws.push_back(d == a ? 4 : want[d < a ? d : d - 1]);
        CHECK(y.shape() == ws);
        CHECK(y.dtype() == dt);
        double on = to_vector(from_vector(dt, Dims{1}, {5}))[0], off = to_vector(from_vector(dt, Dims{1}, {-1}))[0];
        for (int64_t i = 0; i < y.numel(); ++i) {
          Ints oi = unravel(i, ws);
          int64_t depth_i = oi[static_cast<size_t>(a)];
          oi.erase(oi.begin() + a);
          REQUIRE(y.item_at(i) == (idx.item_at(ravel(oi, want)) == static_cast<double>(depth_i) ? on : off));
        }
      }
  // Defaults: on 1, off 0, axis -1, Float32.
  Tensor y = run(Prim::one_hot, {from_vector(DType::Int64, Dims{2}, {2, 0})}, {{"depth", int64_t{3}}});
  CHECK(y.dtype() == DType::Float32);
  CHECK(to_vector(y) == std::vector<double>{0, 0, 1, 1, 0, 0});
  CHECK(run(Prim::one_hot, {Tensor::scalar(DType::Int32, 1)}, {{"depth", int64_t{0}}}).shape() == Dims{0});
  CHECK_THROWS_WITH_AS(run(Prim::one_hot, {from_vector(DType::Int64, Dims{2}, {2, 0})}, {{"depth", int64_t{-1}}}),
                       "one_hot: depth must be >= 0, got -1", ValueError);
  CHECK_THROWS_AS(run(Prim::one_hot, {from_vector(DType::Float32, Dims{1}, {1})}, {{"depth", int64_t{2}}}), DTypeError);
  CHECK_THROWS_AS(
      run(Prim::one_hot, {from_vector(DType::Int32, Dims{1}, {1})}, {{"depth", int64_t{2}}, {"axis", int64_t{2}}}),
      ValueError);
}

TEST_CASE("assign writes a broadcast, cast value through the parameter's strides") {
  std::mt19937 rng(34);
  for (DType pdt : kAllDTypes)
    for (DType vdt : {DType::Float64, DType::Int32, pdt}) {
      Tensor p = random_tensor(rng, pdt, Dims{3, 4});
      Tensor v = random_tensor(rng, vdt, Dims{4}, -3, 3);
      Tensor y = run(Prim::assign, {p, v});
      CHECK(y.shares_storage(p));
      CHECK(y.raw() == p.raw());
      std::vector<double> want;
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 4; ++c) want.push_back(v.item_at(c));
      CHECK(to_vector(p) == to_vector(from_vector(pdt, Dims{3, 4}, want)));
    }
  // Into a strided view of a larger tensor: only the viewed elements change.
  Tensor base = Tensor::zeros(DType::Float32, Dims{4, 6});
  Tensor view = Tensor::view(base, Dims{2, 3}, Dims{12, 2}, 1);  // base[::2, 1::2]
  Tensor v = random_tensor(rng, DType::Float32, Dims{2, 1});
  run(Prim::assign, {view, v});
  for (int64_t i = 0; i < 24; ++i) {
    int64_t r = i / 6, c = i % 6;
    double want = (r % 2 == 0 && c % 2 == 1) ? v.item_at(r / 2) : 0;
    REQUIRE(base.item_at(i) == want);
  }
  // A value that aliases the parameter in reverse order.
  Tensor x = random_tensor(rng, DType::Float64, Dims{7});
  std::vector<double> before = to_vector(x);
  Tensor rev = Tensor::view(x, Dims{7}, Dims{-1}, 6);
  run(Prim::assign, {x, rev});
  std::vector<double> want(before.rbegin(), before.rend());
  CHECK(to_vector(x) == want);
  // A large transposed assignment (parallel strided copy).
  Tensor big = random_tensor(rng, DType::Float32, Dims{300, 200});
  Tensor dst = Tensor::zeros(DType::Float32, Dims{200, 300});
  run(Prim::assign, {dst, Tensor::view(big, Dims{200, 300}, Dims{1, 200}, 0)});
  for (int64_t i = 0; i < dst.numel(); i += 13) REQUIRE(dst.item_at(i) == big.item_at((i % 300) * 200 + i / 300));
  // ... and into a transposed view of the parameter.
  Tensor base2 = Tensor::zeros(DType::Float32, Dims{300, 200});
  run(Prim::assign, {Tensor::view(base2, Dims{200, 300}, Dims{1, 200}, 0), dst});
  CHECK(to_vector(base2) == to_vector(big));
  // Casts saturate integers and send NaN to 0, as store_from_double does.
  Tensor ints = Tensor::zeros(DType::Int32, Dims{4});
  run(Prim::assign, {ints, from_vector(DType::Float64, Dims{4}, {NAN, 1e10, -1e10, -2.7})});
  CHECK(to_vector(ints) == std::vector<double>{0, 2147483647.0, -2147483648.0, -2});
  CHECK_THROWS_WITH_AS(
      run(Prim::assign, {Tensor::zeros(DType::Float32, Dims{2, 4}), Tensor::zeros(DType::Float32, Dims{3})}),
      "assign: cannot broadcast a value of shape (3,) to the parameter's shape (2, 4)", ShapeError);
  // The value may not grow the parameter.
  CHECK_THROWS_AS(
      run(Prim::assign, {Tensor::zeros(DType::Float32, Dims{4}), Tensor::zeros(DType::Float32, Dims{2, 4})}),
      ShapeError);
}

TEST_CASE("converting copies widen every float16 pattern exactly") {
  // concat and assign convert through the typed copy; float16 -> float32
  // has its own branch-free widening.
  Tensor h(DType::Float16, Dims{1 << 16});
  for (uint32_t i = 0; i < (1u << 16); ++i) h.data<uint16_t>()[i] = static_cast<uint16_t>(i);
  Tensor f = Tensor::zeros(DType::Float32, Dims{1 << 16});
  run(Prim::assign, {f, h});
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    float want = half_to_float(static_cast<uint16_t>(i)), got = f.data<float>()[i];
    uint32_t wb, gb;
    std::memcpy(&wb, &want, 4);
    std::memcpy(&gb, &got, 4);
    REQUIRE(wb == gb);
  }
  // And back (NaNs come back as the canonical quiet NaN), plus float64 ->
  // bfloat16.
  Tensor h2 = Tensor::zeros(DType::Float16, Dims{1 << 16});
  run(Prim::assign, {h2, f});
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    bool nan = std::isnan(half_to_float(static_cast<uint16_t>(i)));
    REQUIRE(h2.data<uint16_t>()[i] == (nan ? ((i & 0x8000u) | 0x7e00u) : i));
  }
  Tensor d = from_vector(DType::Float64, Dims{3}, {1.0 + 1.0 / 256, 3.0, -1e39});
  Tensor b = Tensor::zeros(DType::BFloat16, Dims{3});
  run(Prim::assign, {b, d});
  CHECK(to_vector(b) == to_vector(from_vector(DType::BFloat16, Dims{3}, {1.0 + 1.0 / 256, 3.0, -1e39})));
}
