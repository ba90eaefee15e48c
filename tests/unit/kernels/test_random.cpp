// dropout, random_uniform and random_normal: the documented counter-to-
// element mapping (checked against philox4x32 directly), statistics over a
// million draws, reproducibility, independence from the thread count, and
// the counter blocks each op reports.
#include <doctest/doctest.h>

#include "kernels/errors.h"
#include "kernels/parallel.h"
#include "kernels/philox.h"
#include "kernels/random_ops.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

const DType kFloatDTypes[] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

Tensor make(Prim p, std::vector<int64_t> shape, DType dt, int64_t seed, int64_t offset) {
  return execute1(p, {}, {{"shape", shape}, {"dtype", dt}, {"seed", seed}, {"offset", offset}});
}

std::pair<Tensor, Tensor> dropout(const Tensor& x, double keep, int64_t seed, int64_t offset) {
  std::vector<Tensor> out;
  Tensor in[] = {x};
  execute(Prim::dropout, in, {{"keep_prob", keep}, {"seed", seed}, {"offset", offset}}, out);
  return {out[0], out[1]};
}

struct Moments {
  double mean, var, min, max;
};

Moments moments(const std::vector<double>& v) {
  Moments m{0, 0, INFINITY, -INFINITY};
  for (double x : v) {
    m.mean += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.var += (x - m.mean) * (x - m.mean);
  m.var /= static_cast<double>(v.size());
  return m;
}

}  // namespace

TEST_CASE("dropout keeps element i when the Philox lane for i is below keep_prob") {
  std::mt19937 rng(51);
  for (DType dt : kFloatDTypes) {
    Tensor x = random_tensor(rng, dt, Dims{3, 7});
    for (bool view : {false, true}) {
      Tensor xin = view ? noncontiguous_copy(x) : x;
      auto [y, mask] = dropout(xin, 0.6, 1234, 17);
      CHECK(y.dtype() == dt);
      CHECK(mask.dtype() == dt);
      CHECK(mask.shape() == x.shape());
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto lanes = philox4x32(17 + static_cast<uint64_t>(i / 4), 1234);
        bool keep = uint_to_unit_float(lanes[static_cast<size_t>(i % 4)]) < 0.6;
        REQUIRE(mask.item_at(i) == (keep ? 1 : 0));
        double want = keep ? x.item_at(i) / 0.6 : 0;
        REQUIRE(std::fabs(y.item_at(i) - want) <= tolerance(dt) * std::fabs(want));
      }
    }
  }
  // keep_prob 1 keeps everything unchanged.
  Tensor x = random_tensor(rng, DType::Float32, Dims{100});
  auto [y, mask] = dropout(x, 1.0, 5, 0);
  CHECK(to_vector(y) == to_vector(x));
  CHECK(to_vector(mask) == std::vector<double>(100, 1.0));
  // Empty input.
  CHECK(dropout(Tensor::zeros(DType::Float32, Dims{0, 4}), 0.5, 1, 0).first.shape() == Dims{0, 4});
}

TEST_CASE("dropout statistics, reproducibility and thread independence") {
  const int64_t n = 1 << 20;
  Tensor x = Tensor::zeros(DType::Float32, Dims{n});
  for (int64_t i = 0; i < n; ++i) x.data<float>()[i] = 1.0f;
  for (double keep : {0.1, 0.5, 0.9}) {
    auto [y, mask] = dropout(x, keep, 42, 1000);
    std::vector<double> m = to_vector(mask);
    double kept = 0;
    for (double v : m) kept += v;
    double frac = kept / static_cast<double>(n), sigma = std::sqrt(keep * (1 - keep) / static_cast<double>(n));
    CHECK(std::fabs(frac - keep) < 4 * sigma);
    // y is 1 / keep where kept; E[y] = 1.
    double mean_y = moments(to_vector(y)).mean;
    CHECK(std::fabs(mean_y - 1) < 4 * sigma / keep);
  }
  auto a = dropout(x, 0.5, 7, 0).second, b = dropout(x, 0.5, 7, 0).second;
  auto c = dropout(x, 0.5, 7, 1).second, d = dropout(x, 0.5, 8, 0).second;
  CHECK(to_vector(a) == to_vector(b));
  CHECK(to_vector(a) != to_vector(c));
  CHECK(to_vector(a) != to_vector(d));
  // Offset o + 1 continues the stream of offset o four elements later.
  std::vector<double> av = to_vector(a), cv = to_vector(c);
  CHECK(std::equal(cv.begin(), cv.begin() + 1000, av.begin() + 4));
  set_num_threads(1);
  auto one = dropout(x, 0.3, 99, 5);
  set_num_threads(2);
  auto two = dropout(x, 0.3, 99, 5);
  set_num_threads(0);
  CHECK(to_vector(one.first) == to_vector(two.first));
  CHECK(to_vector(one.second) == to_vector(two.second));
}

TEST_CASE("dropout errors") {
  Tensor x = Tensor::zeros(DType::Float32, Dims{4});
  CHECK_THROWS_WITH_AS(dropout(x, 0.0, 1, 0), "dropout: keep_prob must be in (0, 1], got 0", ValueError);
  CHECK_THROWS_AS(dropout(x, 1.5, 1, 0), ValueError);
  CHECK_THROWS_AS(dropout(x, NAN, 1, 0), ValueError);
  CHECK_THROWS_WITH_AS(dropout(Tensor::zeros(DType::Int32, Dims{4}), 0.5, 1, 0), "dropout: unsupported dtype Int32",
                       DTypeError);
}

TEST_CASE("random_uniform: [0, 1), documented lanes, mean and variance") {
  const int64_t n = 1 << 20;
  for (DType dt : kFloatDTypes) {
    Tensor u = make(Prim::random_uniform, {1024, 1024}, dt, 3, 11);
    CHECK(u.dtype() == dt);
    CHECK(u.shape() == Dims{1024, 1024});
    std::vector<double> v = to_vector(u);
    Moments m = moments(v);
    INFO(dtype_name(dt));
    CHECK(m.min >= 0);
    CHECK(m.max < 1);
    double sigma = std::sqrt(1.0 / 12 / static_cast<double>(n));
    // bfloat16 rounding (8 bits) biases the mean by up to ~1e-3.
    CHECK(std::fabs(m.mean - 0.5) < 4 * sigma + (dt == DType::BFloat16 ? 2e-3 : 0));
    CHECK(std::fabs(m.var - 1.0 / 12) < 1e-3);
    // The lanes, as documented in random_ops.cpp.
    std::vector<int64_t> check(4096);
    for (int64_t i = 0; i < 4096; ++i) check[static_cast<size_t>(i)] = i;
    check.push_back(n - 3);
    check.push_back(n - 1);
    for (int64_t i : check) {
      double want;
      if (dt == DType::Float64) {
        auto l = philox4x32(11 + static_cast<uint64_t>(i / 2), 3);
        want = i % 2 == 0 ? uints_to_unit_double(l[0], l[1]) : uints_to_unit_double(l[2], l[3]);
      } else {
        auto l = philox4x32(11 + static_cast<uint64_t>(i / 4), 3);
        want = to_vector(from_vector(dt, Dims{1}, {uint_to_unit_float(l[static_cast<size_t>(i % 4)])}))[0];
        if (want >= 1) want = -1;  // rounded to 1: the value below 1 is checked by the range test
      }
      if (want >= 0) CHECK(v[static_cast<size_t>(i)] == want);
    }
  }
  // Same seed/offset reproduces; threads do not matter; offsets advance.
  std::vector<double> a = to_vector(make(Prim::random_uniform, {5000}, DType::Float32, 1, 0));
  CHECK(a == to_vector(make(Prim::random_uniform, {5000}, DType::Float32, 1, 0)));
  set_num_threads(1);
  std::vector<double> one = to_vector(make(Prim::random_uniform, {100000}, DType::Float64, 9, 2));
  set_num_threads(2);
  std::vector<double> two = to_vector(make(Prim::random_uniform, {100000}, DType::Float64, 9, 2));
  set_num_threads(0);
  CHECK(one == two);
  std::vector<double> next = to_vector(make(Prim::random_uniform, {5000}, DType::Float32, 1, 1));
  CHECK(std::equal(next.begin(), next.end() - 4, a.begin() + 4));
  CHECK(make(Prim::random_uniform, {0, 3}, DType::Float32, 1, 0).numel() == 0);
  CHECK(make(Prim::random_uniform, {}, DType::Float32, 1, 0).shape() == Dims{});
}

TEST_CASE("random_normal: mean 0, variance 1, Gaussian tails, thread independence") {
  const int64_t n = 1 << 20;
  for (DType dt : kFloatDTypes) {
    std::vector<double> v = to_vector(make(Prim::random_normal, {n}, dt, 77, 123));
    Moments m = moments(v);
    INFO(dtype_name(dt));
    CHECK(std::isfinite(m.min));
    CHECK(std::isfinite(m.max));
    CHECK(std::fabs(m.mean) < 4 / std::sqrt(static_cast<double>(n)));
    CHECK(std::fabs(m.var - 1) < 4 * std::sqrt(2.0 / static_cast<double>(n)) + (dt == DType::BFloat16 ? 2e-3 : 0));
    // Fraction within one and two standard deviations (0.6827, 0.9545).
    double in1 = 0, in2 = 0;
    for (double x : v) {
      in1 += std::fabs(x) < 1;
      in2 += std::fabs(x) < 2;
    }
    CHECK(std::fabs(in1 / static_cast<double>(n) - 0.6827) < 3e-3);
    CHECK(std::fabs(in2 / static_cast<double>(n) - 0.9545) < 2e-3);
    // Box-Muller from the documented lanes.
    if (dt == DType::Float32) {
      auto l = philox4x32(123, 77);
      float r = std::sqrt(-2.0f * std::log(1.0f - uint_to_unit_float(l[2])));
      double want = r * std::sin(2.0f * static_cast<float>(M_PI) * uint_to_unit_float(l[3]));
      CHECK(std::fabs(v[3] - want) < 1e-5);
    }
    if (dt == DType::Float64) {
      auto l = philox4x32(124, 77);
      double r = std::sqrt(-2.0 * std::log(1.0 - uints_to_unit_double(l[0], l[1])));
      CHECK(std::fabs(v[2] - r * std::cos(2 * M_PI * uints_to_unit_double(l[2], l[3]))) < 1e-12);
    }
  }
  for (DType dt : {DType::Float32, DType::Float64}) {
    set_num_threads(1);
    std::vector<double> one = to_vector(make(Prim::random_normal, {300, 333}, dt, 5, 0));
    set_num_threads(2);
    std::vector<double> two = to_vector(make(Prim::random_normal, {300, 333}, dt, 5, 0));
    set_num_threads(0);
    CHECK(one == two);
    CHECK(one != to_vector(make(Prim::random_normal, {300, 333}, dt, 6, 0)));
  }
}

TEST_CASE("random creation errors and counter blocks used") {
  CHECK_THROWS_WITH_AS(make(Prim::random_uniform, {2}, DType::Int32, 0, 0), "random_uniform: unsupported dtype Int32",
                       DTypeError);
  CHECK_THROWS_AS(make(Prim::random_normal, {2, -1}, DType::Float32, 0, 0), ValueError);
  CHECK_THROWS_AS(make(Prim::random_normal, {1 << 30, 1 << 30}, DType::Float32, 0, 0), ShapeError);
  CHECK(random_blocks_used(Prim::dropout, 10, DType::Float64) == 3);
  CHECK(random_blocks_used(Prim::random_uniform, 8, DType::Float32) == 2);
  CHECK(random_blocks_used(Prim::random_uniform, 9, DType::Float16) == 3);
  CHECK(random_blocks_used(Prim::random_uniform, 9, DType::Float64) == 5);
  CHECK(random_blocks_used(Prim::random_normal, 0, DType::Float64) == 0);
  CHECK(random_blocks_used(Prim::random_normal, 4, DType::Float64) == 2);
  CHECK(random_blocks_used(Prim::add, 100, DType::Float32) == 0);
}
