// reduce_sum / reduce_max / reduce_min / argmax / argmin against naive
// float64 loops written here: every dtype, negative and multiple axes,
// keep_dims both ways, size-0/size-1 dimensions, 0-d tensors, views, NaN,
// accuracy of float32 sums and independence from the thread count.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

const DType kAllDTypes[] = {DType::Bool,    DType::Int8,     DType::UInt8,   DType::Int32,  DType::Int64,
                            DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

enum class Red { Sum, Max, Min };

struct RefResult {
  std::vector<double> val;
  std::vector<double> abs_sum;  // sum of |x| per output, for sum tolerances
  Dims shape;
};

// Row-major multi-index of flat index i.
std::vector<int64_t> unravel(int64_t i, const Dims& shape) {
  std::vector<int64_t> idx(static_cast<size_t>(shape.size()));
  for (int d = shape.size() - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

RefResult ref_reduce(const std::vector<double>& x, const Dims& shape, std::vector<bool> red, bool keep, Red op) {
  RefResult r;
  Dims kept;  // output dims without keep_dims
  for (int d = 0; d < shape.size(); ++d) {
    if (!red[static_cast<size_t>(d)]) kept.push_back(shape[d]);
    if (!red[static_cast<size_t>(d)] || keep) r.shape.push_back(red[static_cast<size_t>(d)] ? 1 : shape[d]);
  }
  size_t n_out = static_cast<size_t>(kept.product());
  double init = op == Red::Sum ? 0 : op == Red::Max ? -INFINITY : INFINITY;
  r.val.assign(n_out, init);
  r.abs_sum.assign(n_out, 0);
  std::vector<bool> nan(n_out, false);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    auto idx = unravel(i, shape);
    int64_t o = 0;
    for (int d = 0; d < shape.size(); ++d)
      if (!red[static_cast<size_t>(d)]) o = o * shape[d] + idx[static_cast<size_t>(d)];
    double v = x[static_cast<size_t>(i)];
    size_t oo = static_cast<size_t>(o);
    if (std::isnan(v)) nan[oo] = true;
    if (op == Red::Sum) r.val[oo] += v;
    if (op == Red::Max) r.val[oo] = std::max(r.val[oo], v);
    if (op == Red::Min) r.val[oo] = std::min(r.val[oo], v);
    r.abs_sum[oo] += std::fabs(v);
  }
  for (size_t o = 0; o < n_out; ++o)
    if (nan[o]) r.val[o] = NAN;
  return r;
}

// The value an integer sum wraps to in its output dtype.
double wrap(double v, DType dt) {
  int64_t i = static_cast<int64_t>(v);
  switch (dt) {
    case DType::Int8: return static_cast<int8_t>(i);
    case DType::UInt8: return static_cast<uint8_t>(i);
    case DType::Int32: return static_cast<int32_t>(i);
    default: return v;
  }
}

Tensor reduce(Prim p, const Tensor& x, std::vector<int64_t> axes, bool keep) {
  Tensor in[] = {x};
  return execute1(p, in, Attrs{{"axes", axes}, {"keep_dims", keep}});
}

// A view with the values of `t` whose strides are the reverse of a
// contiguous layout (a transposed tensor read in logical order).
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

void check_reduce(Red op, const Tensor& x, std::vector<int64_t> axes, bool keep) {
  Prim p = op == Red::Sum ? Prim::reduce_sum : op == Red::Max ? Prim::reduce_max : Prim::reduce_min;
  std::vector<bool> red(static_cast<size_t>(x.ndim()), axes.empty());
  if (x.ndim() > 0)  // a 0-d tensor accepts axis 0 and reduces nothing
    for (int64_t a : axes) red[static_cast<size_t>(a < 0 ? a + x.ndim() : a)] = true;
  RefResult want = ref_reduce(to_vector(x), x.shape(), red, keep, op);
  Tensor y = reduce(p, x, axes, keep);
  INFO(prim_name(p) << " " << dtype_name(x.dtype()) << " shape " << x.shape().str() << " axes " << axes.size()
                    << " keep " << keep);
  CHECK(y.shape() == want.shape);
  DType odt = op == Red::Sum && x.dtype() == DType::Bool ? DType::Int64 : x.dtype();
  CHECK(y.dtype() == odt);
  std::vector<double> got = to_vector(y);
  REQUIRE(got.size() == want.val.size());
  double tol = is_floating(odt) ? tolerance(odt) : 0;
  for (size_t i = 0; i < got.size(); ++i) {
    double w = is_floating(odt) ? want.val[i] : wrap(want.val[i], odt);
    if (odt == DType::Bool) w = w != 0;
    bool ok = (std::isnan(w) && std::isnan(got[i])) || got[i] == w ||
              std::fabs(got[i] - w) <= tol * (std::fabs(w) + (op == Red::Sum ? want.abs_sum[i] : 0));
    if (!ok) {
      INFO("output " << i << ": got " << got[i] << ", want " << w);
      CHECK(ok);
      return;
    }
  }
}

struct Case {
  Dims shape;
  std::vector<int64_t> axes;
};

const Case kCases[] = {
    {{2, 3, 4}, {}},
    {{2, 3, 4}, {0}},
    {{2, 3, 4}, {1}},
    {{2, 3, 4}, {-1}},
    {{2, 3, 4}, {0, 2}},
    {{2, 3, 4}, {2, 1}},
    {{2, 3, 4}, {-3, -2, -1}},
    {{5}, {0}},
    {{}, {}},
    {{}, {0}},
    {{1, 7, 1, 5}, {0, 2}},
    {{1, 7, 1, 5}, {1}},
    {{3, 0, 4}, {1}},
    {{3, 0, 4}, {0}},
    {{70, 150}, {0}},
    {{70, 150}, {1}},
    {{3, 700, 5}, {1}},
    {{2, 3, 4, 5, 6}, {0, 2, 4}},
    {{2, 3, 4, 5, 6}, {1, 3}},
    {{4, 1100, 3}, {0, 2}},
    {{9000}, {}},
    {{3, 1200, 2}, {1}},
};

}  // namespace

TEST_CASE("reduce_sum/max/min match float64 loops for every dtype, axis set and keep_dims") {
  std::mt19937 rng(11);
  for (DType dt : kAllDTypes)
    for (const Case& c : kCases)
      for (bool keep : {false, true})
        for (Red op : {Red::Sum, Red::Max, Red::Min}) {
          bool empty_reduction = false;
          for (int64_t a : c.axes) empty_reduction |= c.shape[static_cast<int>(a < 0 ? a + c.shape.size() : a)] == 0;
          if (c.axes.empty()) empty_reduction = c.shape.product() == 0;
          if (c.shape.size() == 0) empty_reduction = false;
          if (op != Red::Sum && empty_reduction) continue;  // an error, tested below
          Tensor x = random_tensor(rng, dt, c.shape, -3, 3);
          check_reduce(op, x, c.axes, keep);
        }
}

TEST_CASE("reductions read non-contiguous inputs") {
  std::mt19937 rng(12);
  for (DType dt : {DType::Float32, DType::Float64, DType::Int32, DType::Float16, DType::Int8})
    for (Red op : {Red::Sum, Red::Max, Red::Min}) {
      Tensor x = random_tensor(rng, dt, Dims{6, 5, 40});
      check_reduce(op, noncontiguous_copy(x), {1}, false);
      check_reduce(op, transposed_view(x), {0}, true);
      check_reduce(op, transposed_view(x), {-1}, false);
      check_reduce(op, transposed_view(x), {0, 2}, false);
    }
}

TEST_CASE("reduce_sum of a million float32 values is accurate") {
  std::mt19937 rng(13);
  Tensor x = random_tensor(rng, DType::Float32, Dims{1 << 20}, 0, 1);
  std::vector<double> v = to_vector(x);
  double want = 0;
  for (double e : v) want += e;
  double got = reduce(Prim::reduce_sum, x, {}, false).item();
  // A sequential float32 loop is off by ~1e-4 relative here.
  CHECK(std::fabs(got - want) <= 2e-7 * want);

  // Column and row sums over long axes.
  Tensor cols = Tensor::view(x, Dims{1 << 17, 8}, Dims{8, 1}, 0);
  std::vector<double> got_c = to_vector(reduce(Prim::reduce_sum, cols, {0}, false));
  Tensor rows = Tensor::view(x, Dims{8, 1 << 17}, Dims{1 << 17, 1}, 0);
  std::vector<double> got_r = to_vector(reduce(Prim::reduce_sum, rows, {1}, false));
  for (int j = 0; j < 8; ++j) {
    double wc = 0, wr = 0;
    for (int64_t i = 0; i < (1 << 17); ++i) {
      wc += v[static_cast<size_t>(i * 8 + j)];
      wr += v[static_cast<size_t>(j * (1 << 17) + i)];
    }
    CHECK(std::fabs(got_c[static_cast<size_t>(j)] - wc) <= 2e-7 * wc);
    CHECK(std::fabs(got_r[static_cast<size_t>(j)] - wr) <= 2e-7 * wr);
  }
}

TEST_CASE("reductions do not depend on the number of threads") {
  // Shapes that take each split: many rows, few long rows split into
  // blocks, many column tiles, one tile with its row blocks split.
  std::mt19937 rng(14);
  Tensor x = random_tensor(rng, DType::Float32, Dims{4, 300, 1000});
  Tensor tall = random_tensor(rng, DType::Float32, Dims{20000, 100});
  struct Case {
    Tensor t;
    std::vector<int64_t> axes;
  };
  const Case cases[] = {{x, {}}, {x, {0}}, {x, {1}}, {x, {2}}, {x, {0, 2}}, {tall, {0}}, {tall, {1}}};
  for (Prim p : {Prim::reduce_sum, Prim::reduce_max})
    for (const Case& c : cases) {
      set_num_threads(1);
      std::vector<double> one = to_vector(reduce(p, c.t, c.axes, false));
      set_num_threads(2);
      std::vector<double> two = to_vector(reduce(p, c.t, c.axes, false));
      set_num_threads(0);
      CHECK(one == two);
    }
}

TEST_CASE("reduce_max/min propagate NaN and reject zero-size reductions") {
  Tensor x = from_vector(DType::Float32, Dims{2, 3}, {1, NAN, 3, -1, -2, -3});
  std::vector<double> mx = to_vector(reduce(Prim::reduce_max, x, {1}, false));
  CHECK(std::isnan(mx[0]));
  CHECK(mx[1] == -1);
  std::vector<double> mn = to_vector(reduce(Prim::reduce_min, x, {0}, false));
  CHECK(mn[0] == -1);
  CHECK(std::isnan(mn[1]));
  CHECK(mn[2] == -3);
  // NaN in a long row (the vector-lane path).
  Tensor big = Tensor::zeros(DType::Float64, Dims{1000});
  big.data<double>()[777] = NAN;
  CHECK(std::isnan(reduce(Prim::reduce_max, big, {}, false).item()));

  Tensor e = Tensor::zeros(DType::Float32, Dims{3, 0});
  CHECK_THROWS_WITH_AS(reduce(Prim::reduce_max, e, {1}, false), "reduce_max: zero-size reduction has no identity",
                       ValueError);
  CHECK_THROWS_AS(reduce(Prim::reduce_min, e, {}, false), ValueError);
  // No reduction actually happens when the output is empty.
  CHECK(reduce(Prim::reduce_max, e, {0}, false).shape() == Dims{0});
  // A sum over nothing is 0.
  CHECK(to_vector(reduce(Prim::reduce_sum, e, {1}, true)) == std::vector<double>{0, 0, 0});
}

TEST_CASE("reduction axes are validated") {
  Tensor x = Tensor::zeros(DType::Float32, Dims{2, 3, 4});
  CHECK_THROWS_WITH_AS(reduce(Prim::reduce_sum, x, {3}, false),
                       "reduce_sum: axis 3 is out of range for a tensor of rank 3", ValueError);
  CHECK_THROWS_WITH_AS(reduce(Prim::reduce_sum, x, {1, -2}, false), "reduce_sum: duplicate axis -2 in axes (1, -2)",
                       ValueError);
  CHECK_THROWS_AS(reduce(Prim::reduce_max, x, {-4}, false), ValueError);
  // Absent axes mean all axes.
  Tensor in[] = {x};
  CHECK(execute1(Prim::reduce_sum, in).shape() == Dims{});
}

namespace {

std::vector<double> ref_arg(const std::vector<double>& x, const Dims& shape, int axis, bool is_max) {
  int64_t A = 1, B = 1, R = shape[axis];
  for (int i = 0; i < axis; ++i) A *= shape[i];
  for (int i = axis + 1; i < shape.size(); ++i) B *= shape[i];
  std::vector<double> out;
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) {
      int64_t best = 0;
      for (int64_t r = 0; r < R; ++r) {
        double v = x[static_cast<size_t>((a * R + r) * B + b)];
        double bv = x[static_cast<size_t>((a * R + best) * B + b)];
        if (std::isnan(bv)) break;
        if (std::isnan(v) || (is_max ? v > bv : v < bv)) best = r;
      }
      out.push_back(static_cast<double>(best));
    }
  return out;
}

}  // namespace

TEST_CASE("argmax/argmin: first index among ties, NaN first, int32 output") {
  std::mt19937 rng(15);
  struct ArgCase {
    Dims shape;
    int64_t axis;
  };
  const ArgCase cases[] = {{{7}, 0},      {{4, 5}, 1},    {{4, 5}, 0}, {{3, 4, 5}, -2}, {{2, 300}, -1},
                           {{300, 3}, 0}, {{1, 1, 9}, 2}, {{6, 1}, 1}, {{3, 2000}, 1},  {{2, 1500, 3}, 1}};
  for (DType dt : kAllDTypes)
    for (const ArgCase& c : cases)
      for (bool keep : {false, true})
        for (bool is_max : {true, false}) {
          // Few distinct values, so ties are common.
          Tensor x = random_tensor(rng, dt, c.shape, -2, 2);
          bool view = c.shape.size() >= 2 && (c.axis & 1);
          if (view) x = transposed_view(x);
          Tensor in[] = {x};
          Tensor y = execute1(is_max ? Prim::argmax : Prim::argmin, in, Attrs{{"axis", c.axis}, {"keep_dims", keep}});
          int axis = static_cast<int>(c.axis < 0 ? c.axis + c.shape.size() : c.axis);
          Dims want_shape;
          for (int i = 0; i < c.shape.size(); ++i)
            if (i != axis || keep) want_shape.push_back(i == axis ? 1 : c.shape[i]);
          INFO(dtype_name(dt) << " " << c.shape.str() << " axis " << c.axis);
          CHECK(y.dtype() == DType::Int32);
          CHECK(y.shape() == want_shape);
          CHECK(to_vector(y) == ref_arg(to_vector(x), c.shape, axis, is_max));
        }
  // NaN is returned first for both, as NumPy does.
  Tensor n = from_vector(DType::Float32, Dims{5}, {1, 5, NAN, 7, NAN});
  Tensor in[] = {n};
  CHECK(execute1(Prim::argmax, in).item() == 2);
  CHECK(execute1(Prim::argmin, in).item() == 2);
  Tensor longrow = Tensor::zeros(DType::Float32, Dims{3000});
  longrow.data<float>()[2500] = 1;
  longrow.data<float>()[2600] = 1;
  Tensor in2[] = {longrow};
  CHECK(execute1(Prim::argmax, in2, Attrs{{"axis", int64_t{0}}}).item() == 2500);
  CHECK(execute1(Prim::argmin, in2, Attrs{{"axis", int64_t{0}}}).item() == 0);
  // A 0-d tensor has index 0.
  Tensor s[] = {Tensor::scalar(DType::Float32, 4)};
  CHECK(execute1(Prim::argmax, s).item() == 0);
}

TEST_CASE("argmax errors") {
  Tensor in[] = {Tensor::zeros(DType::Float32, Dims{3, 0})};
  CHECK_THROWS_WITH_AS(execute1(Prim::argmax, in, Attrs{{"axis", int64_t{1}}}),
                       "argmax: axis 1 has size 0 (an empty sequence has no maximum)", ValueError);
  CHECK(execute1(Prim::argmax, in, Attrs{{"axis", int64_t{0}}}).shape() == Dims{0});
  CHECK_THROWS_WITH_AS(execute1(Prim::argmin, in, Attrs{{"axis", int64_t{2}}}),
                       "argmin: axis 2 is out of range for a tensor of rank 2", ValueError);
}
