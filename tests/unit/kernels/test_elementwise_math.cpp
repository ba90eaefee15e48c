// Accuracy of the float32 transcendental functions at every vector level,
// against libm in double rounded to float32, in ulps (distance in the ordered
// float32 encoding, so zero, denormals and infinities count like any value).
// Inputs: every 1021st float32 bit pattern (denormals, huge values, infinities
// and NaNs included), a dense sweep of [-12, 12], arguments next to multiples
// of pi/2 (sin/cos cancellation), and hand-picked edge cases (exp overflow and
// underflow, log of 0 and negatives, tanh saturation, sigmoid(+-100)).
// The generic build calls libm in double (the reference itself), so only the
// vector builds are swept. Run with -s to print the measured maxima.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "test_elementwise_util.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

namespace {

int64_t ordered(float f) {
  int32_t i;
  std::memcpy(&i, &f, 4);
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}

struct MathFn {
  Prim prim;
  const char* name;
  double (*ref)(double);
  int64_t max_ulp;  // the bound documented in kernels/vec_math.h
};

const MathFn kFns[] = {
    {Prim::exp, "exp", [](double x) { return std::exp(x); }, 1},
    {Prim::log, "log", [](double x) { return std::log(x); }, 1},
    {Prim::tanh, "tanh", [](double x) { return std::tanh(x); }, 1},
    {Prim::sigmoid, "sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, 2},
    {Prim::erf, "erf", [](double x) { return std::erf(x); }, 2},
    {Prim::sin, "sin", [](double x) { return std::sin(x); }, 2},
    {Prim::cos, "cos", [](double x) { return std::cos(x); }, 2},
    {Prim::sqrt, "sqrt", [](double x) { return std::sqrt(x); }, 0},
    {Prim::rsqrt, "rsqrt", [](double x) { return 1 / std::sqrt(x); }, 1},
    {Prim::reciprocal, "reciprocal", [](double x) { return 1 / x; }, 0},
};

std::vector<float> sweep_inputs() {
  std::vector<float> xs;
  for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 1021) {
    uint32_t b = static_cast<uint32_t>(u);
    float f;
    std::memcpy(&f, &b, 4);
    xs.push_back(f);
  }
  for (int i = 0; i <= (1 << 20); ++i) xs.push_back(-12.0f + 24.0f * static_cast<float>(i) / (1 << 20));
  for (int k = 1; k <= 20000; ++k) {
    float c = static_cast<float>(k * 1.5707963267948966);
    for (int d = -3; d <= 3; ++d) {
      float v = c;
      for (int j = 0; j < (d < 0 ? -d : d); ++j) v = std::nextafter(v, d < 0 ? -INFINITY : INFINITY);
      xs.push_back(v);
      xs.push_back(-v);
    }
  }
  const float specials[] = {
      0.0f,       -0.0f,      INFINITY, -INFINITY, NAN,    88.72283f, 88.72284f,       89.0f,      -87.33654f,
      -103.9721f, -103.9720f, -104.0f,  -150.0f,   1e-45f, -1e-45f,   1.17549435e-38f, 100.0f,     -100.0f,
      9.0f,       -9.0f,      0.625f,   0.921875f, 3.9f,   4.0f,      1048576.0f,      1048577.0f, 1e30f};
  xs.insert(xs.end(), std::begin(specials), std::end(specials));
  return xs;
}

}  // namespace

TEST_CASE("elementwise math: float32 functions stay within their ulp bounds at every vector level") {
  const std::vector<float> xs = sweep_inputs();
  const int64_t n = static_cast<int64_t>(xs.size());
  Tensor x(DType::Float32, Dims{n});
  std::memcpy(x.raw(), xs.data(), xs.size() * 4);
  for (const MathFn& fn : kFns) {
    std::vector<float> want(xs.size());
    for (size_t i = 0; i < xs.size(); ++i) want[i] = static_cast<float>(fn.ref(static_cast<double>(xs[i])));
    for (ew::SimdLevel level : simd_levels()) {
      if (level == ew::SimdLevel::Generic) continue;  // libm in double, the reference itself
      SimdScope scope(level);
      const std::string name = fn.name, lname = level_name(level);
      CAPTURE(name);
      CAPTURE(lname);
      Tensor y = run(fn.prim, {x});
      const float* got = y.data<float>();
      int64_t worst = 0, nan_mismatch = 0;
      float worst_x = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        bool gn = std::isnan(got[i]), wn = std::isnan(want[i]);
        if (gn || wn) {
          nan_mismatch += gn != wn;
          continue;
        }
        int64_t d = std::llabs(ordered(got[i]) - ordered(want[i]));
        if (d > worst) {
          worst = d;
          worst_x = xs[i];
        }
      }
      MESSAGE(name << " (" << lname << "): max error " << worst << " ulp at x = " << worst_x);
      CHECK(nan_mismatch == 0);
      CHECK(worst <= fn.max_ulp);
    }
  }
}

namespace {

int64_t ordered64(double f) {
  int64_t i;
  std::memcpy(&i, &f, 8);
  return i < 0 ? -(i & 0x7fffffffffffffff) : i;
}

}  // namespace

TEST_CASE("elementwise math: float64 exp, log and sigmoid (vectorized) against long double") {
  std::mt19937_64 rng(31);
  std::vector<double> xs;
  for (int i = 0; i < 400000; ++i) {  // random bit patterns: every exponent, denormals, inf, NaN
    uint64_t b = rng();
    double d;
    std::memcpy(&d, &b, 8);
    xs.push_back(d);
  }
  std::uniform_real_distribution<double> u(-760, 760), small(-1, 1);
  for (int i = 0; i < 400000; ++i) xs.push_back(u(rng));
  for (int i = 0; i < 200000; ++i) xs.push_back(small(rng) * 1e-3 + 1.0);  // log near 1
  const double specials[] = {0,
                             -0.0,
                             INFINITY,
                             -INFINITY,
                             NAN,
                             709.782712893384,
                             709.7827128933841,
                             -745.1332191019411,
                             -745.1332191019412,
                             -708.4,
                             1e-310,
                             4.9e-324,
                             1.0,
                             2.0,
                             0.5,
                             -1.0,
                             100,
                             -100};
  xs.insert(xs.end(), std::begin(specials), std::end(specials));
  Tensor x(DType::Float64, Dims{static_cast<int64_t>(xs.size())});
  std::memcpy(x.raw(), xs.data(), xs.size() * 8);
  struct Fn {
    Prim prim;
    const char* name;
    long double (*ref)(long double);
    int64_t max_ulp;
  };
  const Fn fns[] = {
      {Prim::exp, "exp", [](long double v) { return expl(v); }, 1},
      {Prim::log, "log", [](long double v) { return logl(v); }, 1},
      {Prim::sigmoid, "sigmoid", [](long double v) { return 1 / (1 + expl(-v)); }, 2},
  };
  for (const Fn& fn : fns) {
    for (ew::SimdLevel level : simd_levels()) {
      SimdScope scope(level);
      const std::string name = fn.name, lname = level_name(level);
      CAPTURE(name);
      CAPTURE(lname);
      Tensor y = run(fn.prim, {x});
      const double* got = y.data<double>();
      int64_t worst = 0, nan_mismatch = 0;
      double worst_x = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        double want = static_cast<double>(fn.ref(xs[i]));
        if (std::isnan(got[i]) || std::isnan(want)) {
          nan_mismatch += std::isnan(got[i]) != std::isnan(want);
          continue;
        }
        int64_t d = std::llabs(ordered64(got[i]) - ordered64(want));
        if (d > worst) {
          worst = d;
          worst_x = xs[i];
        }
      }
      MESSAGE(name << " float64 (" << lname << "): max error " << worst << " ulp at x = " << worst_x);
      CHECK(nan_mismatch == 0);
      CHECK(worst <= fn.max_ulp);
    }
  }
}

TEST_CASE("elementwise math: edge values are exact") {
  struct Case {
    Prim prim;
    float x, want;
  };
  const float inf = INFINITY;
  const Case cases[] = {
      {Prim::exp, 89.0f, inf},     {Prim::exp, -104.0f, 0.0f},    {Prim::exp, inf, inf},
      {Prim::exp, -inf, 0.0f},     {Prim::exp, 0.0f, 1.0f},       {Prim::log, 0.0f, -inf},
      {Prim::log, -0.0f, -inf},    {Prim::log, inf, inf},         {Prim::log, 1.0f, 0.0f},
      {Prim::tanh, 10.0f, 1.0f},   {Prim::tanh, -10.0f, -1.0f},   {Prim::tanh, inf, 1.0f},
      {Prim::tanh, -inf, -1.0f},   {Prim::sigmoid, 100.0f, 1.0f}, {Prim::sigmoid, inf, 1.0f},
      {Prim::sigmoid, -inf, 0.0f}, {Prim::sigmoid, 0.0f, 0.5f},   {Prim::erf, inf, 1.0f},
      {Prim::erf, -inf, -1.0f},    {Prim::erf, 5.0f, 1.0f},       {Prim::sin, 0.0f, 0.0f},
      {Prim::cos, 0.0f, 1.0f},     {Prim::relu, -inf, 0.0f},
  };
  for (ew::SimdLevel level : simd_levels()) {
    SimdScope scope(level);
    CAPTURE(std::string(level_name(level)));
    for (const Case& c : cases) {
      CAPTURE(std::string(prim_name(c.prim)));
      CAPTURE(c.x);
      CHECK(run(c.prim, {Tensor::scalar(DType::Float32, c.x)}).item() == c.want);
    }
    // sigmoid(-100) is a float32 denormal, about 3.7e-44; exact to one step.
    double s = run(Prim::sigmoid, {Tensor::scalar(DType::Float32, -100)}).item();
    CHECK(std::fabs(s - 3.7200759760208356e-44) <= 1.5e-45);
    for (Prim p : {Prim::exp, Prim::log, Prim::tanh, Prim::sigmoid, Prim::erf, Prim::sin, Prim::cos, Prim::relu}) {
      CAPTURE(std::string(prim_name(p)));
      CHECK(std::isnan(run(p, {Tensor::scalar(DType::Float32, NAN)}).item()));
    }
    CHECK(std::isnan(run(Prim::log, {Tensor::scalar(DType::Float32, -1)}).item()));
    CHECK(std::isnan(run(Prim::sin, {Tensor::scalar(DType::Float32, INFINITY)}).item()));
    CHECK(std::signbit(run(Prim::sin, {Tensor::scalar(DType::Float32, -0.0)}).item()));
    CHECK(std::signbit(run(Prim::tanh, {Tensor::scalar(DType::Float32, -0.0)}).item()));
  }
}
