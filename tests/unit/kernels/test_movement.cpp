// View primitives (reshape, transpose, broadcast_to, strided_slice) and the
// row copies concat and pad, against index arithmetic written here: values,
// shapes, storage sharing of views (writes through one seen by the other),
// non-contiguous inputs, size-0 dimensions, dtype promotion and errors.
#include <doctest/doctest.h>

#include <climits>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

using Ints = std::vector<int64_t>;

Tensor run(Prim p, std::vector<Tensor> in, Attrs attrs = {}) { return execute1(p, in, attrs); }

// Row-major multi-index of flat index i.
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

// A view of a fresh buffer whose strides are reversed (a transposed layout)
// holding t's values.
Tensor transposed_view(const Tensor& t) {
  Dims rs;
  for (int i = t.ndim() - 1; i >= 0; --i) rs.push_back(t.dim(i));
  Tensor base(t.dtype(), rs);
  Dims st = contiguous_strides(rs), vst;
  for (int i = t.ndim() - 1; i >= 0; --i) vst.push_back(st[i]);
  Tensor v = Tensor::view(base, t.shape(), vst, 0);
  for (int64_t i = 0; i < t.numel(); ++i)
    store_from_double(base.raw(), t.dtype(), strided_offset(t.shape(), vst, i), t.item_at(i));
  return v;
}

// Writes v at flat (row-major) index i of a possibly strided tensor.
void set_at(const Tensor& t, int64_t i, double v) {
  store_from_double(t.storage()->data, t.dtype(), t.offset() + strided_offset(t.shape(), t.strides(), i), v);
}

}  // namespace

TEST_CASE("reshape views contiguous inputs, infers -1 and copies when strides do not allow a view") {
  std::mt19937 rng(21);
  for (DType dt : {DType::Float32, DType::Int8, DType::Float16, DType::Int64}) {
    Tensor x = random_tensor(rng, dt, Dims{2, 3, 4});
    Tensor y = run(Prim::reshape, {x}, {{"shape", Ints{4, -1}}});
    CHECK(y.shape() == Dims{4, 6});
    CHECK(y.shares_storage(x));
    CHECK(to_vector(y) == to_vector(x));
    set_at(y, 7, 99);
    CHECK(x.item_at(7) == 99);
  }
  Tensor x = random_tensor(rng, DType::Float64, Dims{4, 6});
  // Every other row: strides (12, 1); splitting the last axis is still a view.
  Tensor rows = Tensor::view(x, Dims{2, 6}, Dims{12, 1}, 0);
  Tensor y = run(Prim::reshape, {rows}, {{"shape", Ints{2, 2, 3}}});
  CHECK(y.shares_storage(x));
  CHECK(y.strides() == Dims{12, 3, 1});
  CHECK(to_vector(y) == to_vector(rows));
  // A transposed matrix flattened cannot be a view: a contiguous copy.
  Tensor t = transposed_view(x);
  Tensor f = run(Prim::reshape, {t}, {{"shape", Ints{-1}}});
  CHECK_FALSE(f.shares_storage(t));
  CHECK(f.is_contiguous());
  CHECK(to_vector(f) == to_vector(t));
  // ... but adding unit dimensions to it can.
  Tensor u = run(Prim::reshape, {t}, {{"shape", Ints{1, 4, 1, 6}}});
  CHECK(u.shares_storage(t));
  CHECK(to_vector(u) == to_vector(t));
  // 0-d and size-0.
  Tensor s = Tensor::scalar(DType::Float32, 3);
  CHECK(run(Prim::reshape, {s}, {{"shape", Ints{1, 1}}}).shape() == Dims{1, 1});
  CHECK(run(Prim::reshape, {run(Prim::reshape, {s}, {{"shape", Ints{1}}})}, {{"shape", Ints{}}}).item() == 3);
  Tensor e = Tensor::zeros(DType::Float32, Dims{0, 3});
  CHECK(run(Prim::reshape, {e}, {{"shape", Ints{3, 0, 5}}}).shape() == Dims{3, 0, 5});
}

TEST_CASE("reshape errors") {
  Tensor x = Tensor::zeros(DType::Float32, Dims{2, 3});
  CHECK_THROWS_WITH_AS(run(Prim::reshape, {x}, {{"shape", Ints{4, 2}}}),
                       "reshape: cannot reshape a tensor of shape (2, 3) into (4, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(run(Prim::reshape, {x}, {{"shape", Ints{-1, 4}}}),
                       "reshape: cannot reshape a tensor of shape (2, 3) into (-1, 4)", ShapeError);
  CHECK_THROWS_AS(run(Prim::reshape, {x}, {{"shape", Ints{-1, -1}}}), ValueError);
  CHECK_THROWS_AS(run(Prim::reshape, {x}, {{"shape", Ints{-2, -3}}}), ValueError);
  CHECK_THROWS_AS(run(Prim::reshape, {x}, {{"shape", Ints{INT64_MAX, INT64_MAX}}}), ShapeError);
  Tensor e = Tensor::zeros(DType::Float32, Dims{0, 3});
  CHECK_THROWS_AS(run(Prim::reshape, {e}, {{"shape", Ints{-1, 0}}}), ShapeError);
}

TEST_CASE("transpose permutes strides and shares storage") {
  std::mt19937 rng(22);
  for (DType dt : {DType::Float32, DType::Bool, DType::BFloat16}) {
    Tensor x = random_tensor(rng, dt, Dims{2, 3, 4});
    for (Ints perm : {Ints{2, 0, 1}, Ints{0, 1, 2}, Ints{-1, -2, -3}, Ints{1, 0, 2}}) {
      Tensor y = run(Prim::transpose, {x}, {{"perm", perm}});
      CHECK(y.shares_storage(x));
      std::vector<double> xv = to_vector(x), yv = to_vector(y);
      for (int64_t i = 0; i < y.numel(); ++i) {
        Ints yi = unravel(i, y.shape());
        Ints xi(3);
        for (size_t d = 0; d < 3; ++d) xi[static_cast<size_t>(perm[d] < 0 ? perm[d] + 3 : perm[d])] = yi[d];
        REQUIRE(yv[static_cast<size_t>(i)] == xv[static_cast<size_t>(ravel(xi, x.shape()))]);
      }
    }
  }
  Tensor x = random_tensor(rng, DType::Float32, Dims{3, 5});
  Tensor y = run(Prim::transpose, {x});  // no perm: reversed axes
  CHECK(y.shape() == Dims{5, 3});
  set_at(y, 1, 42);  // y[0][1] == x[1][0]
  CHECK(x.item_at(5) == 42);
  Tensor s = Tensor::scalar(DType::Float32, 2);
  CHECK(run(Prim::transpose, {s}, {{"perm", Ints{}}}).item() == 2);
  CHECK_THROWS_WITH_AS(run(Prim::transpose, {x}, {{"perm", Ints{0, 0}}}),
                       "transpose: perm (0, 0) is not a permutation of the axes of a tensor of rank 2", ValueError);
  CHECK_THROWS_AS(run(Prim::transpose, {x}, {{"perm", Ints{0}}}), ValueError);
  CHECK_THROWS_AS(run(Prim::transpose, {x}, {{"perm", Ints{0, 2}}}), ValueError);
}

TEST_CASE("broadcast_to makes zero strides and follows NumPy's rules") {
  std::mt19937 rng(23);
  Tensor x = random_tensor(rng, DType::Int32, Dims{3, 1});
  Tensor y = run(Prim::broadcast_to, {x}, {{"shape", Ints{2, -1, 4}}});
  CHECK(y.shape() == Dims{2, 3, 4});
  CHECK(y.strides() == Dims{0, 1, 0});
  CHECK(y.shares_storage(x));
  std::vector<double> xv = to_vector(x), yv = to_vector(y);
  for (int64_t i = 0; i < y.numel(); ++i)
    CHECK(yv[static_cast<size_t>(i)] == xv[static_cast<size_t>(unravel(i, y.shape())[1])]);
  // A transposed input keeps its strides along the kept axes.
  Tensor t = transposed_view(random_tensor(rng, DType::Float32, Dims{2, 3}));
  Tensor b = run(Prim::broadcast_to, {t}, {{"shape", Ints{4, 2, 3}}});
  for (int64_t i = 0; i < b.numel(); ++i) CHECK(b.item_at(i) == t.item_at(i % 6));
  Tensor s = Tensor::scalar(DType::Float64, 1.5);
  CHECK(to_vector(run(Prim::broadcast_to, {s}, {{"shape", Ints{2, 0}}})).empty());
  CHECK(to_vector(run(Prim::broadcast_to, {s}, {{"shape", Ints{2}}})) == std::vector<double>{1.5, 1.5});
  CHECK_THROWS_WITH_AS(
      run(Prim::broadcast_to, {random_tensor(rng, DType::Float32, Dims{3, 4})}, {{"shape", Ints{2, 4}}}),
      "broadcast_to: cannot broadcast (3, 4) to (2, 4)", ShapeError);
  CHECK_THROWS_AS(run(Prim::broadcast_to, {x}, {{"shape", Ints{3}}}), ShapeError);
  CHECK_THROWS_AS(run(Prim::broadcast_to, {x}, {{"shape", Ints{-1, 3, 1}}}), ValueError);
  CHECK_THROWS_AS(run(Prim::broadcast_to, {x}, {{"shape", Ints{3, -2}}}), ValueError);
  CHECK_THROWS_AS(run(Prim::broadcast_to, {s}, {{"shape", Ints{INT64_MAX, INT64_MAX}}}), ShapeError);
}

namespace {

struct SliceCase {
  int64_t n, start, stop, step;
  Ints want;  // computed with CPython: list(range(n))[start:stop:step]
};

const SliceCase kSliceCases[] = {
    {10, 0, 10, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
    {10, 8, -12, -3, {8, 5, 2}},
    {10, -3, 100, 1, {7, 8, 9}},
    {10, 100, -100, -1, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}},
    {10, 2, 2, 1, {}},
    {10, -1, -11, -2, {9, 7, 5, 3, 1}},
    {10, 5, 1, 1, {}},
    {7, -100, 100, 3, {0, 3, 6}},
    {0, 0, 5, 1, {}},
    {5, INT64_MIN, INT64_MAX, 1, {0, 1, 2, 3, 4}},
    {5, INT64_MAX, INT64_MIN, -1, {4, 3, 2, 1, 0}},
    {6, 1, 5, INT64_MAX, {1}},
    {6, 4, INT64_MIN, -INT64_MAX, {4}},
    {6, 4, INT64_MIN, INT64_MIN, {4}},
};

}  // namespace

TEST_CASE("strided_slice follows Python slice semantics per axis") {
  for (const SliceCase& c : kSliceCases) {
    Tensor x(DType::Int64, Dims{c.n});
    for (int64_t i = 0; i < c.n; ++i) x.data<int64_t>()[i] = i;
    Tensor y =
        run(Prim::strided_slice, {x}, {{"begin", Ints{c.start}}, {"end", Ints{c.stop}}, {"strides", Ints{c.step}}});
    std::vector<double> want(c.want.begin(), c.want.end());
    INFO("n=" << c.n << " start=" << c.start << " stop=" << c.stop << " step=" << c.step);
    CHECK(to_vector(y) == want);
    CHECK(y.shares_storage(x));
  }
  // Several axes at once, on a non-contiguous input, and writes through.
  std::mt19937 rng(24);
  Tensor base = random_tensor(rng, DType::Float32, Dims{5, 6, 7});
  Tensor x = transposed_view(base);  // shape (5, 6, 7), reversed strides
  Tensor y = run(Prim::strided_slice, {x},
                 {{"begin", Ints{4, 1, -1}}, {"end", Ints{INT64_MIN, 6, -8}}, {"strides", Ints{-2, 2, -3}}});
  CHECK(y.shape() == Dims{3, 3, 3});
  for (int64_t i = 0; i < y.numel(); ++i) {
    Ints yi = unravel(i, y.shape());
    Ints xi = {4 - 2 * yi[0], 1 + 2 * yi[1], 6 - 3 * yi[2]};
    REQUIRE(y.item_at(i) == x.item_at(ravel(xi, x.shape())));
  }
  set_at(y, 0, -7);
  CHECK(x.item_at(ravel({4, 1, 6}, x.shape())) == -7);
  // Size-0 results and 0-d inputs.
  CHECK(run(Prim::strided_slice, {x}, {{"begin", Ints{0, 3, 0}}, {"end", Ints{5, 3, 7}}, {"strides", Ints{1, 1, 1}}})
            .shape() == Dims{5, 0, 7});
  Tensor s = Tensor::scalar(DType::Float32, 5);
  CHECK(run(Prim::strided_slice, {s}, {{"begin", Ints{}}, {"end", Ints{}}, {"strides", Ints{}}}).item() == 5);
  CHECK_THROWS_WITH_AS(
      run(Prim::strided_slice, {x}, {{"begin", Ints{0, 0, 0}}, {"end", Ints{1, 1, 1}}, {"strides", Ints{1, 0, 1}}}),
      "strided_slice: slice step cannot be zero (axis 1)", ValueError);
  CHECK_THROWS_AS(run(Prim::strided_slice, {x}, {{"begin", Ints{0}}, {"end", Ints{1}}, {"strides", Ints{1}}}),
                  ValueError);
}

namespace {

// Naive concat: output element at index idx comes from the input whose
// range along `axis` contains idx[axis].
std::vector<double> ref_concat(const std::vector<Tensor>& in, int axis, const Dims& out_shape) {
  std::vector<double> out(static_cast<size_t>(out_shape.product()));
  for (int64_t i = 0; i < out_shape.product(); ++i) {
    Ints idx = unravel(i, out_shape);
    int64_t pos = idx[static_cast<size_t>(axis)];
    for (const Tensor& t : in) {
      if (pos < t.dim(axis)) {
        idx[static_cast<size_t>(axis)] = pos;
        out[static_cast<size_t>(i)] = t.item_at(ravel(idx, t.shape()));
        break;
      }
      pos -= t.dim(axis);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("concat joins along any axis, promotes dtypes and reads views") {
  std::mt19937 rng(25);
  const DType dts[] = {DType::Float32, DType::Float64, DType::Int8, DType::Float16, DType::Bool, DType::Int64};
  for (DType dt : dts)
    for (int axis = -3; axis < 3; ++axis) {
      int a = axis < 0 ? axis + 3 : axis;
      std::vector<Tensor> in;
      for (int64_t len : {2, 0, 3, 1}) {
        Dims s{4, 3, 5};
        s[a] = len;
        Tensor t = random_tensor(rng, dt, s);
        if (len == 3) t = noncontiguous_copy(t);
        if (len == 1) t = transposed_view(t);
        in.push_back(t);
      }
      Tensor y = run(Prim::concat, in, {{"axis", int64_t{axis}}});
      Dims want{4, 3, 5};
      want[a] = 6;
      CHECK(y.shape() == want);
      CHECK(y.dtype() == dt);
      CHECK(to_vector(y) == ref_concat(in, a, want));
    }
  // Mixed dtypes promote; a single input is a copy.
  std::vector<Tensor> mixed = {random_tensor(rng, DType::Int32, Dims{2, 2}),
                               random_tensor(rng, DType::Float16, Dims{1, 2}),
                               random_tensor(rng, DType::Bool, Dims{3, 2})};
  Tensor y = run(Prim::concat, mixed, {{"axis", int64_t{0}}});
  CHECK(y.dtype() == DType::Float16);
  CHECK(to_vector(y) == ref_concat(mixed, 0, Dims{6, 2}));
  Tensor one = random_tensor(rng, DType::Float32, Dims{3});
  Tensor c = run(Prim::concat, {one});
  CHECK_FALSE(c.shares_storage(one));
  CHECK(to_vector(c) == to_vector(one));
  // Large enough for the parallel row copies.
  std::vector<Tensor> big = {random_tensor(rng, DType::Float32, Dims{300, 200}),
                             random_tensor(rng, DType::Float32, Dims{300, 100})};
  CHECK(to_vector(run(Prim::concat, big, {{"axis", int64_t{1}}})) == ref_concat(big, 1, Dims{300, 300}));
  CHECK(to_vector(run(Prim::concat, {big[0], big[0]}, {{"axis", int64_t{0}}})) ==
        ref_concat({big[0], big[0]}, 0, Dims{600, 200}));
}

TEST_CASE("concat errors") {
  Tensor a = Tensor::zeros(DType::Float32, Dims{2, 3}), b = Tensor::zeros(DType::Float32, Dims{3, 4});
  CHECK_THROWS_WITH_AS(run(Prim::concat, {a, b}, {{"axis", int64_t{1}}}),
                       "concat: cannot concatenate (2, 3) with (3, 4) along axis 1", ShapeError);
  CHECK_THROWS_AS(run(Prim::concat, {a, Tensor::zeros(DType::Float32, Dims{6})}), ShapeError);
  CHECK_THROWS_AS(run(Prim::concat, {}), ValueError);
  CHECK_THROWS_AS(run(Prim::concat, {Tensor::scalar(DType::Float32, 1)}), ValueError);
  CHECK_THROWS_AS(run(Prim::concat, {a, a}, {{"axis", int64_t{2}}}), ValueError);
}

TEST_CASE("pad fills around the input with a constant") {
  std::mt19937 rng(26);
  const DType dts[] = {DType::Float32, DType::Float64, DType::Int32, DType::UInt8, DType::BFloat16, DType::Bool};
  for (DType dt : dts)
    for (int variant = 0; variant < 3; ++variant) {
      Tensor x = random_tensor(rng, dt, Dims{3, 2, 4});
      if (variant == 1) x = noncontiguous_copy(x);
      if (variant == 2) x = transposed_view(x);
      Ints p = {1, 0, 0, 2, 3, 1};
      Tensor y = run(Prim::pad, {x}, {{"paddings", p}, {"value", 1.5}});
      CHECK(y.shape() == Dims{4, 4, 8});
      double fill = to_vector(from_vector(dt, Dims{1}, {1.5}))[0];
      for (int64_t i = 0; i < y.numel(); ++i) {
        Ints yi = unravel(i, y.shape());
        Ints xi = {yi[0] - 1, yi[1], yi[2] - 3};
        bool inside = xi[0] >= 0 && xi[0] < 3 && xi[1] < 2 && xi[2] >= 0 && xi[2] < 4;
        REQUIRE(y.item_at(i) == (inside ? x.item_at(ravel(xi, x.shape())) : fill));
      }
    }
  // Default value 0, large input, size-0 input dims, 0-d input.
  Tensor big = random_tensor(rng, DType::Float32, Dims{500, 300});
  Tensor y = run(Prim::pad, {big}, {{"paddings", Ints{2, 2, 1, 1}}});
  CHECK(y.shape() == Dims{504, 302});
  CHECK(y.item_at(0) == 0);
  CHECK(y.item_at(2 * 302 + 1) == big.item_at(0));
  CHECK(y.item_at(503 * 302 + 301) == 0);
  Tensor e = Tensor::zeros(DType::Float32, Dims{0, 2});
  CHECK(to_vector(run(Prim::pad, {e}, {{"paddings", Ints{1, 0, 0, 1}}, {"value", 7.0}})) ==
        std::vector<double>{7, 7, 7});
  CHECK(run(Prim::pad, {Tensor::scalar(DType::Int32, 4)}, {{"paddings", Ints{}}}).item() == 4);
  CHECK_THROWS_WITH_AS(run(Prim::pad, {big}, {{"paddings", Ints{0, 0, -1, 0}}}),
                       "pad: negative padding -1 before axis 1", ValueError);
  CHECK_THROWS_AS(run(Prim::pad, {big}, {{"paddings", Ints{0, 0}}}), ValueError);
}
