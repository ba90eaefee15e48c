// softmax / log_softmax, their gradients and the cross-entropy losses
// against float64 loops written here: float dtypes, every axis, rows and
// column tiles, views, 0-d and size-0 tensors, extreme logits, and errors.
#include <doctest/doctest.h>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

const DType kFloatDTypes[] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

Tensor run(Prim p, std::vector<Tensor> in, Attrs attrs = {}) { return execute1(p, in, attrs); }

// Calls f(base, stride) for the start and stride of every line along `axis`
// of a row-major shape (one line of one element for a 0-d shape).
template <class F>
void for_lines(const Dims& shape, int axis, F&& f) {
  if (shape.size() == 0) return f(int64_t{0}, int64_t{1}, int64_t{1});
  int64_t A = 1, N = shape[axis], B = 1;
  for (int i = 0; i < axis; ++i) A *= shape[i];
  for (int i = axis + 1; i < shape.size(); ++i) B *= shape[i];
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b) f(a * N * B + b, B, N);
}

std::vector<double> ref_softmax(const std::vector<double>& x, const Dims& shape, int axis, bool log) {
  std::vector<double> y(x.size());
  for_lines(shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    auto at = [&](int64_t i) { return static_cast<size_t>(base + i * stride); };
    double m = -INFINITY;
    for (int64_t i = 0; i < n; ++i) m = std::max(m, x[at(i)]);
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(x[at(i)] - m);
    for (int64_t i = 0; i < n; ++i) y[at(i)] = log ? x[at(i)] - m - std::log(s) : std::exp(x[at(i)] - m) / s;
  });
  return y;
}

std::vector<double> ref_grad(const std::vector<double>& y, const std::vector<double>& dy, const Dims& shape, int axis,
                             bool log) {
  std::vector<double> dx(y.size());
  for_lines(shape, axis, [&](int64_t base, int64_t stride, int64_t n) {
    auto at = [&](int64_t i) { return static_cast<size_t>(base + i * stride); };
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += log ? dy[at(i)] : dy[at(i)] * y[at(i)];
    for (int64_t i = 0; i < n; ++i) dx[at(i)] = log ? dy[at(i)] - std::exp(y[at(i)]) * s : y[at(i)] * (dy[at(i)] - s);
  });
  return dx;
}

struct AxisCase {
  Dims shape;
  int64_t axis;
};

const AxisCase kAxisCases[] = {{{2, 3, 4}, -1}, {{2, 3, 4}, 0}, {{2, 3, 4}, 1}, {{2, 3, 4}, -2},  {{5}, 0},
                               {{}, -1},        {{3, 0}, -1},   {{1, 1}, 0},    {{64, 1000}, -1}, {{4, 300, 70}, 1},
                               {{3, 40}, 0},    {{2, 5000}, 1}, {{7, 300}, 0}};

}  // namespace

TEST_CASE("softmax and log_softmax match float64 loops on every axis") {
  std::mt19937 rng(41);
  for (DType dt : kFloatDTypes)
    for (const AxisCase& c : kAxisCases)
      for (bool log : {false, true})
        for (bool view : {false, true}) {
          Tensor x = random_tensor(rng, dt, c.shape, -6, 6);
          if (view) x = noncontiguous_copy(x);
          int axis = c.shape.size() == 0 ? 0 : static_cast<int>(c.axis < 0 ? c.axis + c.shape.size() : c.axis);
          Tensor y = run(log ? Prim::log_softmax : Prim::softmax, {x}, {{"axis", c.axis}});
          CHECK(y.shape() == c.shape);
          CHECK(y.dtype() == dt);
          INFO(dtype_name(dt) << " " << c.shape.str() << " axis " << c.axis << (log ? " log" : ""));
          double tol = tolerance(dt) * 2;
          check_close(to_vector(y), ref_softmax(to_vector(x), c.shape, axis, log), tol, log ? 8 * tol : 1e-3 * tol);
        }
}

TEST_CASE("softmax rows sum to one and extreme logits stay finite") {
  std::mt19937 rng(42);
  Tensor x = random_tensor(rng, DType::Float32, Dims{50, 333}, -20, 20);
  std::vector<double> y = to_vector(run(Prim::softmax, {x}));
  for (int r = 0; r < 50; ++r) {
    double s = 0;
    for (int i = 0; i < 333; ++i) s += y[static_cast<size_t>(r * 333 + i)];
    CHECK(std::fabs(s - 1) < 1e-5);
  }
  Tensor big = from_vector(DType::Float32, Dims{4}, {1000, 1000, -1000, -INFINITY});
  CHECK(to_vector(run(Prim::softmax, {big})) == std::vector<double>{0.5, 0.5, 0, 0});
  std::vector<double> ls = to_vector(run(Prim::log_softmax, {from_vector(DType::Float32, Dims{2}, {1000, 0})}));
  CHECK(ls[0] == 0);
  CHECK(ls[1] == -1000);
  // A NaN poisons its row only.
  std::vector<double> n = to_vector(run(Prim::softmax, {from_vector(DType::Float64, Dims{2, 2}, {NAN, 1, 0, 0})}));
  CHECK(std::isnan(n[0]));
  CHECK(std::isnan(n[1]));
  CHECK(n[2] == 0.5);
  // Values far in the tail, through the vectorized exp: exp(-100) is a
  // float32 subnormal, good to one subnormal step (1.4e-45).
  Tensor tail = from_vector(DType::Float32, Dims{3}, {0, -80, -100});
  check_close(to_vector(run(Prim::softmax, {tail})), {1, std::exp(-80.0), std::exp(-100.0)}, 1e-5, 1.5e-45);
}

TEST_CASE("softmax does not depend on the number of threads") {
  std::mt19937 rng(43);
  Tensor x = random_tensor(rng, DType::Float32, Dims{256, 1000});
  for (int64_t axis : {0, 1}) {
    set_num_threads(1);
    std::vector<double> one = to_vector(run(Prim::softmax, {x}, {{"axis", axis}}));
    set_num_threads(2);
    std::vector<double> two = to_vector(run(Prim::softmax, {x}, {{"axis", axis}}));
    set_num_threads(0);
    CHECK(one == two);
  }
}

TEST_CASE("softmax_grad and log_softmax_grad match their formulas") {
  std::mt19937 rng(44);
  for (DType dt : kFloatDTypes)
    for (const AxisCase& c : kAxisCases)
      for (bool log : {false, true}) {
        int axis = c.shape.size() == 0 ? 0 : static_cast<int>(c.axis < 0 ? c.axis + c.shape.size() : c.axis);
        // y is a forward output: softmax (or log_softmax) of random logits.
        Tensor logits = random_tensor(rng, DType::Float64, c.shape, -3, 3);
        Tensor y = from_vector(dt, c.shape, ref_softmax(to_vector(logits), c.shape, axis, log));
        Tensor dy = random_tensor(rng, dt, c.shape);
        if (c.shape.size() == 2) dy = noncontiguous_copy(dy);
        Tensor dx = run(log ? Prim::log_softmax_grad : Prim::softmax_grad, {y, dy}, {{"axis", c.axis}});
        CHECK(dx.shape() == c.shape);
        INFO(dtype_name(dt) << " " << c.shape.str() << " axis " << c.axis << (log ? " log" : ""));
        double tol = tolerance(dt) * 4;
        check_close(to_vector(dx), ref_grad(to_vector(y), to_vector(dy), c.shape, axis, log), tol, tol);
      }
  Tensor y = Tensor::zeros(DType::Float32, Dims{2, 3});
  CHECK_THROWS_WITH_AS(run(Prim::softmax_grad, {y, Tensor::zeros(DType::Float32, Dims{3, 2})}),
                       "softmax_grad: dy has shape (3, 2) but y has shape (2, 3)", ShapeError);
  CHECK_THROWS_AS(run(Prim::log_softmax_grad, {y, Tensor::zeros(DType::Float64, Dims{2, 3})}), DTypeError);
}

TEST_CASE("softmax errors") {
  CHECK_THROWS_WITH_AS(run(Prim::softmax, {Tensor::zeros(DType::Int32, Dims{3})}), "softmax: unsupported dtype Int32",
                       DTypeError);
  CHECK_THROWS_AS(run(Prim::log_softmax, {Tensor::zeros(DType::Bool, Dims{3})}), DTypeError);
  CHECK_THROWS_WITH_AS(run(Prim::softmax, {Tensor::zeros(DType::Float32, Dims{3})}, {{"axis", int64_t{1}}}),
                       "softmax: axis 1 is out of range for a tensor of rank 1", ValueError);
}

TEST_CASE("softmax_cross_entropy: loss and dlogits for dense label distributions") {
  std::mt19937 rng(45);
  for (DType dt : kFloatDTypes)
    for (Dims shape : {Dims{4, 3}, Dims{1, 1}, Dims{0, 5}, Dims{3, 0}, Dims{64, 1000}}) {
      Tensor logits = random_tensor(rng, dt, shape, -5, 5);
      Tensor raw = random_tensor(rng, DType::Float64, shape, 0, 1);
      std::vector<double> lv = to_vector(raw);
      for (int64_t r = 0; r < shape[0]; ++r) {  // rows of probabilities
        double s = 0;
        for (int64_t c = 0; c < shape[1]; ++c) s += lv[static_cast<size_t>(r * shape[1] + c)];
        for (int64_t c = 0; c < shape[1]; ++c) lv[static_cast<size_t>(r * shape[1] + c)] /= s;
      }
      Tensor labels = from_vector(dt, shape, lv);
      if (shape[0] == 4) logits = noncontiguous_copy(logits);
      std::vector<Tensor> out;
      Tensor in[] = {logits, labels};
      execute(Prim::softmax_cross_entropy, in, {}, out);
      REQUIRE(out.size() == 2);
      CHECK(out[0].shape() == Dims{shape[0]});
      CHECK(out[1].shape() == shape);
      std::vector<double> x = to_vector(logits), l = to_vector(labels);
      std::vector<double> p = ref_softmax(x, shape, 1, false), lsm = ref_softmax(x, shape, 1, true);
      std::vector<double> want_loss, want_d;
      for (int64_t r = 0; r < shape[0]; ++r) {
        double loss = 0;
        for (int64_t c = 0; c < shape[1]; ++c) {
          size_t k = static_cast<size_t>(r * shape[1] + c);
          loss -= l[k] * lsm[k];
          want_d.push_back(p[k] - l[k]);
        }
        want_loss.push_back(loss);
      }
      INFO(dtype_name(dt) << " " << shape.str());
      double tol = tolerance(dt) * 2;
      check_close(to_vector(out[0]), want_loss, tol, tol);
      check_close(to_vector(out[1]), want_d, tol, tol);
    }
  Tensor in[] = {Tensor::zeros(DType::Float32, Dims{2, 3}), Tensor::zeros(DType::Float32, Dims{2, 4})};
  std::vector<Tensor> out;
  CHECK_THROWS_WITH_AS(execute(Prim::softmax_cross_entropy, in, {}, out),
                       "softmax_cross_entropy: labels have shape (2, 4) but logits have shape (2, 3)", ShapeError);
  Tensor in2[] = {Tensor::zeros(DType::Float32, Dims{3}), Tensor::zeros(DType::Float32, Dims{3})};
  CHECK_THROWS_AS(execute(Prim::softmax_cross_entropy, in2, {}, out), ShapeError);
}

TEST_CASE("sparse_softmax_cross_entropy: integer labels, IndexError outside [0, C)") {
  std::mt19937 rng(46);
  for (DType dt : kFloatDTypes)
    for (DType lt : {DType::Int32, DType::Int64})
      for (Dims shape : {Dims{5, 4}, Dims{1, 1}, Dims{0, 3}, Dims{32, 1000}}) {
        Tensor logits = random_tensor(rng, dt, shape, -5, 5);
        Tensor labels(lt, Dims{shape[0]});
        std::uniform_int_distribution<int> u(0, static_cast<int>(shape[1]) - 1);
        for (int64_t r = 0; r < shape[0]; ++r) store_from_double(labels.raw(), lt, r, u(rng));
        std::vector<Tensor> out;
        Tensor in[] = {logits, labels};
        execute(Prim::sparse_softmax_cross_entropy, in, {}, out);
        std::vector<double> x = to_vector(logits);
        std::vector<double> p = ref_softmax(x, shape, 1, false), lsm = ref_softmax(x, shape, 1, true);
        std::vector<double> want_loss, want_d;
        for (int64_t r = 0; r < shape[0]; ++r) {
          int64_t label = static_cast<int64_t>(labels.item_at(r));
          want_loss.push_back(-lsm[static_cast<size_t>(r * shape[1] + label)]);
          for (int64_t c = 0; c < shape[1]; ++c)
            want_d.push_back(p[static_cast<size_t>(r * shape[1] + c)] - (c == label));
        }
        INFO(dtype_name(dt) << " " << shape.str());
        double tol = tolerance(dt) * 2;
        check_close(to_vector(out[0]), want_loss, tol, tol);
        check_close(to_vector(out[1]), want_d, tol, tol);
      }
  Tensor in[] = {Tensor::zeros(DType::Float32, Dims{2, 3}), from_vector(DType::Int32, Dims{2}, {0, 5})};
  std::vector<Tensor> out;
  CHECK_THROWS_WITH_AS(execute(Prim::sparse_softmax_cross_entropy, in, {}, out),
                       "sparse_softmax_cross_entropy: label 5 is out of range for 3 classes", IndexError);
  Tensor in2[] = {Tensor::zeros(DType::Float32, Dims{2, 3}), from_vector(DType::Int64, Dims{2}, {-1, 0})};
  CHECK_THROWS_AS(execute(Prim::sparse_softmax_cross_entropy, in2, {}, out), IndexError);
  Tensor in3[] = {Tensor::zeros(DType::Float32, Dims{2, 3}), from_vector(DType::Float32, Dims{2}, {0, 1})};
  CHECK_THROWS_AS(execute(Prim::sparse_softmax_cross_entropy, in3, {}, out), DTypeError);
  Tensor in4[] = {Tensor::zeros(DType::Float32, Dims{2, 3}), from_vector(DType::Int32, Dims{3}, {0, 1, 2})};
  CHECK_THROWS_AS(execute(Prim::sparse_softmax_cross_entropy, in4, {}, out), ShapeError);
}
