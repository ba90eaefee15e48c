// Fused elementwise loops generated with LLVM: each op and the chain of the
// graph-mode benchmark, relu(x*a + b) * sigmoid(x) - tanh(x)/2, against the
// same expression in float64 written here; lengths around the vector width
// and large enough to split across threads; NaN and infinity handling;
// programs compiled once; malformed programs rejected.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "jit/codegen/elementwise_jit.h"
#include "kernels/parallel.h"

using namespace msl::jit::codegen;

namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// |got - want| <= rtol |want| + atol for every element.
void check_close(const std::vector<float>& got, const std::vector<double>& want, double rtol, double atol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", want " << want[i]);
    REQUIRE(std::fabs(got[i] - want[i]) <= rtol * std::fabs(want[i]) + atol);
  }
}

EwProgram chain() {
  // relu(x*a + b) * sigmoid(x) - tanh(x)/2
  EwProgram p;
  int x = p.input(0), a = p.input(1), b = p.input(2);
  int r = p.unary(EwOp::Relu, p.binary(EwOp::Add, p.binary(EwOp::Mul, x, a), b));
  int s = p.binary(EwOp::Mul, r, p.unary(EwOp::Sigmoid, x));
  p.outputs = {p.binary(EwOp::Sub, s, p.binary(EwOp::Div, p.unary(EwOp::Tanh, x), p.constant(2.0f)))};
  return p;
}

}  // namespace

TEST_CASE("fused chain relu(x*a + b) * sigmoid(x) - tanh(x)/2 against float64") {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{16}, size_t{33},
                   static_cast<size_t>(3 * msl::kernels::kParallelGrain + 5)}) {
    CAPTURE(n);
    std::vector<float> x = random_floats(n, 1, -6, 6), a = random_floats(n, 2, -2, 2), b = random_floats(n, 3, -1, 1);
    std::vector<float> out(n, -1.0f);
    const float* in[] = {x.data(), a.data(), b.data()};
    float* outs[] = {out.data()};
    ElementwiseJit::instance().run(chain(), in, outs, static_cast<int64_t>(n));
    std::vector<double> want(n);
    for (size_t i = 0; i < n; ++i) {
      double xi = x[i];
      want[i] = std::max(0.0, xi * a[i] + b[i]) * ref_sigmoid(xi) - std::tanh(xi) / 2;
    }
    check_close(out, want, 1e-5, 1e-6);
  }
}

TEST_CASE("each op against float64, including exp's range ends") {
  struct Case {
    EwOp op;
    bool binary;
    double (*ref)(double, double);
  };
  const Case cases[] = {
      {EwOp::Add, true, [](double u, double v) { return u + v; }},
      {EwOp::Sub, true, [](double u, double v) { return u - v; }},
      {EwOp::Mul, true, [](double u, double v) { return u * v; }},
      {EwOp::Div, true, [](double u, double v) { return u / v; }},
      {EwOp::Max, true, [](double u, double v) { return std::max(u, v); }},
      {EwOp::Min, true, [](double u, double v) { return std::min(u, v); }},
      {EwOp::Neg, false, [](double u, double) { return -u; }},
      {EwOp::Relu, false, [](double u, double) { return std::max(u, 0.0); }},
      {EwOp::ReluGrad, true, [](double u, double v) { return v > 0 ? u : 0.0; }},
      {EwOp::Exp, false, [](double u, double) { return std::exp(u); }},
      {EwOp::Sigmoid, false, [](double u, double) { return ref_sigmoid(u); }},
      {EwOp::Tanh, false, [](double u, double) { return std::tanh(u); }},
  };
  std::vector<float> x = random_floats(1000, 4, -80, 80), y = random_floats(1000, 5, 0.5f, 3);
  for (const Case& c : cases) {
    EwProgram p;
    int u = p.input(0), v = p.input(1);
    p.outputs = {c.binary ? p.binary(c.op, u, v) : p.unary(c.op, u)};
    std::vector<float> out(x.size());
    const float* in[] = {x.data(), y.data()};
    float* outs[] = {out.data()};
    ElementwiseJit::instance().run(p, in, outs, static_cast<int64_t>(x.size()));
    std::vector<double> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = c.ref(x[i], y[i]);
    CAPTURE(static_cast<int>(c.op));
    // Arithmetic: one float32 rounding; exp: a few ulp relative; sigmoid and
    // tanh (built on exp) also lose relative precision near 0 (tanh = 2 / (1 +
    // e^-2x) - 1), so an absolute ulp of 1 is allowed there.
    bool via_exp = c.op == EwOp::Sigmoid || c.op == EwOp::Tanh;
    check_close(out, want, c.op == EwOp::Exp || via_exp ? 1.2e-6 : 3e-7, via_exp ? 1.2e-7 : 1e-30);
  }
}

TEST_CASE("NaN propagates and infinities saturate") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {nan, inf, -inf, 100.0f, -100.0f, 0.0f};
  for (EwOp op : {EwOp::Exp, EwOp::Sigmoid, EwOp::Tanh, EwOp::Relu}) {
    EwProgram p;
    p.outputs = {p.unary(op, p.input(0))};
    std::vector<float> out(x.size());
    const float* in[] = {x.data()};
    float* outs[] = {out.data()};
    ElementwiseJit::instance().run(p, in, outs, static_cast<int64_t>(x.size()));
    CAPTURE(static_cast<int>(op));
    CHECK(std::isnan(out[0]));
    if (op == EwOp::Exp) {
      CHECK(out[1] == inf);
      CHECK(out[2] < 1e-37f);
      CHECK(out[3] == inf);
      CHECK(out[5] == 1.0f);
    } else if (op == EwOp::Sigmoid) {
      CHECK(out[1] == 1.0f);
      CHECK(out[2] == 0.0f);
      CHECK(out[4] == 0.0f);
      CHECK(out[5] == 0.5f);
    } else if (op == EwOp::Tanh) {
      CHECK(out[1] == 1.0f);
      CHECK(out[2] == -1.0f);
      CHECK(out[3] == 1.0f);
      CHECK(out[4] == -1.0f);
      CHECK(out[5] == 0.0f);
    } else {
      CHECK(out[1] == inf);
      CHECK(out[2] == 0.0f);
    }
  }
}

TEST_CASE("a program compiles once; malformed programs are rejected; the IR is available") {
  ElementwiseJit& jit = ElementwiseJit::instance();
  EwFunction f1 = jit.compile(chain()), f2 = jit.compile(chain());
  CHECK(reinterpret_cast<const void*>(f1) == reinterpret_cast<const void*>(f2));
  std::string ir = jit.llvm_ir(chain());
  CHECK(ir.find("define void @msl_fused") != std::string::npos);
  CHECK(ir.find("<") != std::string::npos);  // vector types: the loop was vectorized
  EwProgram bad;
  bad.input(0);
  CHECK_THROWS_AS(jit.compile(bad), std::invalid_argument);  // no output
  bad.outputs = {bad.binary(EwOp::Add, 0, 5)};
  CHECK_THROWS_AS(jit.compile(bad), std::invalid_argument);  // operand defined later
  CHECK(!jit.target().empty());
}
