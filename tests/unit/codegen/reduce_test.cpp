// Fused loops with sums (EwProgram::reductions): a bias gradient reduce_sum
// of dy = relu_grad(g, y) over every axis but the channel, for a Dense
// [N, C] (rows of C: the sum at (i / 1) % C) and an NCHW conv
// (channel blocks: (i / H*W) % C), at sizes that take each segment layout
// (tiles of a short period, rows, one index per segment), lengths that
// are not a multiple of the vector width, loops longer than one thread's
// chunk on 1 to 4 threads, and every [begin, end) a thread could get;
// totals against float64 sums with a tolerance growing with sqrt(n). A
// program may sum without storing anything; scalar sums sit beside any
// pattern; mismatched patterns and bad sums are rejected.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "jit/codegen/elementwise_jit.h"
#include "kernels/parallel.h"
#include "random_floats.h"

using namespace msl::jit::codegen;
using msl::jit::codegen::test::random_floats;

namespace {

// sum[(i / inner) % count] += relu_grad(g, y)[i] = (y > 0 ? g : 0), and a
// scalar sum of g * y; nothing stored.
EwProgram bias_grad(EwIndexing how) {
  EwProgram p;
  int g = p.input(0), y = p.input(1);
  int dy = p.binary(EwOp::ReluGrad, g, y);
  p.reductions = {{dy, how}, {p.binary(EwOp::Mul, g, y), EwIndexing{1, 1}}};
  return p;
}

struct Sums {
  std::vector<double> bias, abs_bias;  // per channel: the sum and the sum of magnitudes
  double dot = 0, abs_dot = 0;
  std::vector<int64_t> terms;  // per channel: how many elements it sums
};

Sums reference(const std::vector<float>& g, const std::vector<float>& y, EwIndexing how, int64_t begin, int64_t end) {
  Sums s;
  s.bias.assign(static_cast<size_t>(how.count), 0.0);
  s.abs_bias.assign(static_cast<size_t>(how.count), 0.0);
  s.terms.assign(static_cast<size_t>(how.count), 0);
  for (int64_t i = begin; i < end; ++i) {
    size_t c = static_cast<size_t>((i / how.inner) % how.count);
    double gi = g[static_cast<size_t>(i)], yi = y[static_cast<size_t>(i)];
    double dy = yi > 0 ? gi : 0.0;
    s.bias[c] += dy;
    s.abs_bias[c] += std::fabs(dy);
    ++s.terms[c];
    s.dot += gi * yi;
    s.abs_dot += std::fabs(gi * yi);
  }
  return s;
}

// float32 accumulation: an error of a few ulps of the magnitudes' sum per
// sqrt(term), as rounding errors add like a random walk (16 for margin).
void check_sum(float got, double want, double magnitude, int64_t terms) {
  double tol = 16 * std::sqrt(static_cast<double>(terms) + 1) * 6e-8 * magnitude + 1e-6;
  INFO("got " << got << ", want " << want << ", tolerance " << tol);
  CHECK(std::fabs(got - want) <= tol);
}

void check_sums(const std::vector<float>& bias, float dot, const Sums& want) {
  for (size_t c = 0; c < want.bias.size(); ++c) {
    CAPTURE(c);
    check_sum(bias[c], want.bias[c], want.abs_bias[c], want.terms[c]);
  }
  int64_t n = 0;
  for (int64_t t : want.terms) n += t;
  check_sum(dot, want.dot, want.abs_dot, n);
}

struct ThreadsGuard {
  ~ThreadsGuard() { msl::kernels::set_num_threads(0); }
};

}  // namespace

TEST_CASE("sums: Dense and NCHW bias gradients on 1 to 4 threads against float64") {
  ThreadsGuard restore;
  const int64_t grain = msl::kernels::kParallelGrain;
  struct Case {
    const char* what;
    EwIndexing how;
    int64_t n;
  };
  const Case cases[] = {
      {"Dense [7, 10]: a tile", {1, 10}, 70},
      {"Dense [9, 33]: a tile, odd width", {1, 33}, 9 * 33},
      {"Dense [300, 130]: rows, several threads", {1, 130}, 300 * 130},
      {"Dense [64, 1000]: rows", {1, 1000}, 64 * 1000},
      {"Dense [4000, 10]: tiles, several threads", {1, 10}, 4000 * 10},
      {"NCHW [2, 3, 5, 7]: a tile", {35, 3}, 2 * 3 * 35},
      {"NCHW [4, 8, 12, 13]: a sum per segment", {156, 8}, 4 * 8 * 156},
      {"NCHW [32, 64, 7, 7]: tiles of 3136, several threads", {49, 64}, 32 * 64 * 49},
      {"NCHW [8, 16, 17, 19]: per segment, several threads", {17 * 19, 16}, 8 * 16 * 17 * 19},
      {"NCHW [3, 2, 70, 70]: a period too long for a tile", {4900, 2}, 3 * 2 * 4900},
      {"a partial last row beyond 2 chunks", {1, 1000}, 2 * grain + 7},
  };
  for (int threads : {1, 2, 3, 4}) {
    msl::kernels::set_num_threads(threads);
    for (const Case& c : cases) {
      CAPTURE(threads);
      CAPTURE(c.what);
      std::vector<float> g = random_floats(static_cast<size_t>(c.n), 21),
                         y = random_floats(static_cast<size_t>(c.n), 22);
      // The arrays get garbage first: run() overwrites them with the totals.
      std::vector<float> bias(static_cast<size_t>(c.how.count), 123.0f), dot(1, 123.0f);
      const float* in[] = {g.data(), y.data()};
      float* outs[] = {bias.data(), dot.data()};
      ElementwiseJit::instance().run(bias_grad(c.how), in, outs, c.n);
      check_sums(bias, dot[0], reference(g, y, c.how, 0, c.n));
    }
  }
}

TEST_CASE("sums: every sub-range [begin, end) a thread could get adds into the arrays") {
  // The loop itself adds into what the arrays hold: called on one range
  // with arrays holding 1, it leaves 1 + the range's sums.
  const EwIndexing patterns[] = {{1, 5}, {4, 3}, {1, 130}, {130, 3}, {3, 2000}};
  for (EwIndexing how : patterns) {
    CAPTURE(how.inner);
    CAPTURE(how.count);
    const int64_t n = how.inner * how.count * 2 + 17, step = std::max<int64_t>(1, n / 19);
    EwFunction fn = ElementwiseJit::instance().compile(bias_grad(how));
    std::vector<float> g = random_floats(static_cast<size_t>(n), 31), y = random_floats(static_cast<size_t>(n), 32);
    const float* in[] = {g.data(), y.data()};
    for (int64_t begin = 0; begin < n; begin += begin < 3 ? 1 : step)
      for (int64_t end = begin + 1; end <= n; end = end == n || end + step <= n ? end + step : n) {
        CAPTURE(begin);
        CAPTURE(end);
        std::vector<float> bias(static_cast<size_t>(how.count), 1.0f), dot(1, 1.0f);
        float* outs[] = {bias.data(), dot.data()};
        fn(in, outs, begin, end);
        for (float& b : bias) b -= 1.0f;
        check_sums(bias, dot[0] - 1.0f, reference(g, y, how, begin, end));
      }
  }
}

TEST_CASE("sums beside stored outputs and broadcast inputs of the same pattern") {
  // y = relu(x + b) stored, its channel sums and its total: b broadcast as
  // the sums are, over NCHW [5, 3, 11, 13] and Dense [41, 77].
  for (EwIndexing how : {EwIndexing{143, 3}, EwIndexing{1, 77}}) {
    const int64_t n = how.inner * how.count * (how.inner > 1 ? 5 : 41);
    EwProgram p;
    int x = p.input(0), b = p.input(1, how);
    int yv = p.unary(EwOp::Relu, p.binary(EwOp::Add, x, b));
    p.outputs = {yv};
    p.reductions = {{yv, how}, {x, EwIndexing{1, 1}}};
    std::vector<float> xs = random_floats(static_cast<size_t>(n), 41),
                       bs = random_floats(static_cast<size_t>(how.count), 42);
    std::vector<float> y(static_cast<size_t>(n), -7.0f), sums(static_cast<size_t>(how.count), 5.0f), total(1, 5.0f);
    const float* in[] = {xs.data(), bs.data()};
    float* outs[] = {y.data(), sums.data(), total.data()};
    ElementwiseJit::instance().run(p, in, outs, n);
    std::vector<double> want(static_cast<size_t>(how.count), 0.0), mag(static_cast<size_t>(how.count), 0.0);
    double want_total = 0, mag_total = 0;
    for (int64_t i = 0; i < n; ++i) {
      size_t c = static_cast<size_t>((i / how.inner) % how.count);
      double v = std::max(0.0, static_cast<double>(xs[static_cast<size_t>(i)]) + bs[c]);
      REQUIRE(std::fabs(y[static_cast<size_t>(i)] - v) <= 1e-6 * std::fabs(v) + 1e-6);
      want[c] += v;
      mag[c] += v;
      want_total += xs[static_cast<size_t>(i)];
      mag_total += std::fabs(xs[static_cast<size_t>(i)]);
    }
    for (size_t c = 0; c < want.size(); ++c) check_sum(sums[c], want[c], mag[c], n / how.count);
    check_sum(total[0], want_total, mag_total, n);
  }
}

TEST_CASE("sums: program text, vectorized accumulation, compiled per pattern") {
  ElementwiseJit& jit = ElementwiseJit::instance();
  std::string text = bias_grad(EwIndexing{49, 64}).text();
  CHECK(text.find("sum %2 at (i / 49) % 64\nsum %3 at (i / 1) % 1\n") != std::string::npos);
  CHECK(bias_grad(EwIndexing{49, 64}).broadcast() == EwIndexing{49, 64});
  for (EwIndexing how : {EwIndexing{1, 256}, EwIndexing{1024, 64}, EwIndexing{49, 64}}) {
    CAPTURE(how.inner);
    std::string ir = jit.llvm_ir(bias_grad(how));
    CHECK(ir.find("x float>") != std::string::npos);  // the accumulation is vector arithmetic
  }
  EwFunction a = jit.compile(bias_grad(EwIndexing{1, 64})), b = jit.compile(bias_grad(EwIndexing{2, 32}));
  CHECK(reinterpret_cast<const void*>(a) != reinterpret_cast<const void*>(b));
}

TEST_CASE("sums with another pattern than the inputs', or of no value, are rejected") {
  ElementwiseJit& jit = ElementwiseJit::instance();
  EwProgram two;
  int x = two.input(0), b = two.input(1, EwIndexing{1, 4});
  two.outputs = {two.binary(EwOp::Add, x, b)};
  two.reductions = {{x, EwIndexing{4, 4}}};
  CHECK_THROWS_AS(jit.compile(two), std::invalid_argument);
  EwProgram stray;
  stray.reductions = {{stray.unary(EwOp::Neg, stray.input(0)), EwIndexing{1, 3}}, {7, EwIndexing{1, 3}}};
  CHECK_THROWS_AS(jit.compile(stray), std::invalid_argument);
  EwProgram empty_pattern;
  empty_pattern.reductions = {{empty_pattern.input(0), EwIndexing{1, 0}}};
  CHECK_THROWS_AS(jit.compile(empty_pattern), std::invalid_argument);
  // A scalar sum beside a pattern is fine; the loop then has no stored output.
  EwProgram ok;
  int v = ok.binary(EwOp::Mul, ok.input(0), ok.input(1, EwIndexing{8, 3}));
  ok.reductions = {{v, EwIndexing{1, 1}}};
  CHECK(ok.broadcast() == EwIndexing{8, 3});
  CHECK_NOTHROW(jit.compile(ok));
}
