// Fused loops with lane patterns, element i reading input[((i / inner) %
// count) * lane + i % lane] (a per-channel operand of a channel-blocked
// tensor): against the same expression in float64 with the index computed
// per element, for lanes of 16 and 8 (AVX-512's and AVX2's blocks), lanes
// the vectors do not fill (24, 32, 100, 3), periods below and above the
// tile limit, several inputs sharing the pattern; sub-ranges [begin, end)
// starting and ending off the multiples of lane and inner (what a thread
// gets), loops split across 1 to 4 threads, a result written over its
// input; sums with the lane pattern and scalar sums beside it; which code
// each pattern gets; malformed patterns rejected.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "jit/codegen/elementwise_jit.h"
#include "kernels/parallel.h"
#include "random_floats.h"

using namespace msl::jit::codegen;
using msl::jit::codegen::test::check_range;
using msl::jit::codegen::test::random_floats;

namespace {

// a = x * g0 + g1 + x * g2 + ... + x * g(K-1); out0 = relu(a), out1 =
// sigmoid(a) * s: x full, the g broadcast as `how`, s a tensor scalar.
EwProgram lane_program(EwIndexing how, int k_inputs) {
  EwProgram p;
  int x = p.input(0), s = p.input(1, EwIndexing{1, 1});
  int a = p.binary(EwOp::Add, p.binary(EwOp::Mul, x, p.input(2, how)), p.input(3, how));
  for (int k = 2; k < k_inputs; ++k) a = p.binary(EwOp::Add, a, p.binary(EwOp::Mul, x, p.input(2 + k, how)));
  p.outputs = {p.unary(EwOp::Relu, a), p.binary(EwOp::Mul, p.unary(EwOp::Sigmoid, a), s)};
  return p;
}

struct Data {
  std::vector<std::vector<float>> arrays;  // x, s, g0, g1, ...
  std::vector<double> want0, want1;
  std::vector<const float*> in() const {
    std::vector<const float*> v;
    for (const auto& a : arrays) v.push_back(a.data());
    return v;
  }
};

Data make_data(int64_t n, EwIndexing how, int k_inputs) {
  Data d;
  d.arrays.push_back(random_floats(static_cast<size_t>(n), 21));
  d.arrays.push_back({0.625f});
  for (int k = 0; k < k_inputs; ++k)
    d.arrays.push_back(random_floats(static_cast<size_t>(how.count * how.lane), 30 + static_cast<uint32_t>(k)));
  for (int64_t i = 0; i < n; ++i) {
    size_t at = static_cast<size_t>(((i / how.inner) % how.count) * how.lane + i % how.lane);
    double x = d.arrays[0][static_cast<size_t>(i)];
    double a = x * d.arrays[2][at] + d.arrays[3][at];
    for (int k = 2; k < k_inputs; ++k) a += x * d.arrays[2 + static_cast<size_t>(k)][at];
    d.want0.push_back(std::max(0.0, a));
    d.want1.push_back(1.0 / (1.0 + std::exp(-a)) * d.arrays[1][0]);
  }
  return d;
}


struct Case {
  EwIndexing how;
  int64_t n;
  int k_inputs = 2;
};

// Each way a lane pattern is generated, at lengths that are not a whole
// number of periods: segments shorter than two vectors with periods that
// fit are tiled, the rest are vectors of lcm(lane, 16) (at most 64: whole
// rows) or gcd(lane, 16) elements (parts of rows).
const Case kCases[] = {
    {{16, 12, 16}, 2 * 192 + 37},       // one vector of 16 per segment: a tile
    {{8, 20, 8}, 3 * 160 + 11, 3},      // segments of 8, three inputs: a tile
    {{6, 4, 3}, 24 * 3 + 5},            // lanes of 3: a tile
    {{16, 1000, 16}, 16000 * 2 + 333},  // a period just below the tile limit
    {{16, 1100, 16}, 17600 + 1000},     // above it: a vector per segment
    {{16, 1000, 16}, 16000 + 555, 6},   // six tiles would not fit the stack budget: vectors
    {{64, 3, 16}, 192 * 5 + 7},         // four vectors of 16 per segment
    {{512, 4, 8}, 2048 * 2 + 45},       // vectors of 16 holding two rows of 8 ([N, 4, 8, 8, 8])
    {{1024, 4, 16}, 4096 * 2 + 21, 3},  // vectors of 16 ([N, 4, 8, 8, 16])
    {{288, 3, 24}, 864 * 2 + 19},       // vectors of 48 holding two rows of 24
    {{512, 3, 32}, 1536 * 2 + 9},       // vectors of 32
    {{300, 2, 3}, 600 * 2 + 7},         // vectors of 48 holding 16 rows of 3, the last of a segment masked
    {{160, 3, 80}, 480 * 2 + 17},       // vectors of 16, five per row of 80
    {{200, 3, 100}, 600 * 2 + 77},      // vectors of 4, 25 per row of 100
};

// acc0[((i / inner) % count) * lane + i % lane] += x * g + 0.25 and acc1
// += x + 1 (not 0 where x is: the elements a masked vector leaves out add
// nothing); out0 = relu(x * g).
EwProgram lane_sums(EwIndexing how) {
  EwProgram p;
  int x = p.input(0), y = p.binary(EwOp::Mul, x, p.input(1, how));
  p.outputs = {p.unary(EwOp::Relu, y)};
  p.reductions = {EwReduction{p.binary(EwOp::Add, y, p.constant(0.25f)), how},
                  EwReduction{p.binary(EwOp::Add, x, p.constant(1.0f)), EwIndexing{1, 1}}};
  return p;
}

// Checks the sums of lane_sums over [begin, end) against float64 sums: an
// error of a few ulps of the magnitudes' sum per sqrt(term).
void check_lane_sums(const std::vector<float>& x, const std::vector<float>& g, EwIndexing how, int64_t begin,
                     int64_t end, const std::vector<float>& acc0, float acc1) {
  std::vector<double> want(acc0.size(), 0.0), magnitude(acc0.size(), 0.0);
  std::vector<int64_t> terms(acc0.size(), 0);
  double total = 0, total_magnitude = 0;
  for (int64_t i = begin; i < end; ++i) {
    size_t at = static_cast<size_t>(((i / how.inner) % how.count) * how.lane + i % how.lane);
    double y = static_cast<double>(x[static_cast<size_t>(i)]) * g[at] + 0.25, t = x[static_cast<size_t>(i)] + 1.0;
    want[at] += y, magnitude[at] += std::fabs(y), ++terms[at];
    total += t, total_magnitude += std::fabs(t);
  }
  auto close = [](float got, double w, double mag, int64_t n) {
    return std::fabs(got - w) <= 16 * std::sqrt(static_cast<double>(n) + 1) * 6e-8 * mag + 1e-6;
  };
  for (size_t k = 0; k < acc0.size(); ++k) {
    INFO("sum element " << k << ": got " << acc0[k] << ", want " << want[k]);
    REQUIRE(close(acc0[k], want[k], magnitude[k], terms[k]));
  }
  INFO("total: got " << acc1 << ", want " << total);
  REQUIRE(close(acc1, total, total_magnitude, end - begin));
}

struct ThreadsGuard {
  ~ThreadsGuard() { msl::kernels::set_num_threads(0); }
};

}  // namespace

TEST_CASE("lane patterns: sub-ranges [begin, end) off the multiples of lane and inner") {
  for (const Case& c : kCases) {
    const EwIndexing how = c.how;
    const int64_t n = c.n, lane = how.lane, inner = how.inner, period = how.inner * how.count;
    CAPTURE(how.inner);
    CAPTURE(how.count);
    CAPTURE(how.lane);
    CAPTURE(c.k_inputs);
    EwProgram p = lane_program(how, c.k_inputs);
    EwFunction fn = ElementwiseJit::instance().compile(p);
    Data d = make_data(n, how, c.k_inputs);
    std::vector<const float*> in = d.in();
    std::set<std::pair<int64_t, int64_t>> ranges;
    for (int64_t begin :
         {int64_t{0}, int64_t{1}, lane - 1, lane + 3, inner - 1, inner + lane + 5, period - 7, period + 1, n / 2 + 3})
      for (int64_t end : {begin + 1, begin + lane + 1, begin + inner + 3, n - lane - 2, n - 1, n})
        if (begin >= 0 && begin < end && end <= n) ranges.insert({begin, end});
    for (auto [begin, end] : ranges) {
      CAPTURE(begin);
      CAPTURE(end);
      std::vector<float> out0(static_cast<size_t>(n), -7.0f), out1(static_cast<size_t>(n), -7.0f);
      float* outs[] = {out0.data(), out1.data()};
      fn(in.data(), outs, begin, end);
      check_range(out0, d.want0, begin, end, 2e-6);
      check_range(out1, d.want1, begin, end, 2e-6);
    }
  }
}

TEST_CASE("lane sums over sub-ranges and on 1 to 4 threads") {
  ThreadsGuard restore;
  for (const Case& c : kCases) {
    const EwIndexing how = c.how;
    const int64_t n = c.n, lane = how.lane, inner = how.inner;
    CAPTURE(how.inner);
    CAPTURE(how.count);
    CAPTURE(how.lane);
    EwProgram p = lane_sums(how);
    EwFunction fn = ElementwiseJit::instance().compile(p);
    std::vector<float> x = random_floats(static_cast<size_t>(n), 41),
                       g = random_floats(static_cast<size_t>(how.elements()), 42);
    const float* in[] = {x.data(), g.data()};
    for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, n},
                              {1, n - 1},
                              {lane + 3, inner + lane + 5},
                              {inner - 1, n - lane - 2},
                              {n / 2 + 3, n},
                              {3, 4}}) {
      if (begin >= end || end > n) continue;
      CAPTURE(begin);
      CAPTURE(end);
      std::vector<float> out0(static_cast<size_t>(n), -7.0f), acc0(static_cast<size_t>(how.elements()), 0.0f);
      float acc1 = 0;
      float* outs[] = {out0.data(), acc0.data(), &acc1};
      fn(in, outs, begin, end);
      check_lane_sums(x, g, how, begin, end, acc0, acc1);
      for (int64_t i = 0; i < n; ++i) {
        size_t at = static_cast<size_t>(((i / how.inner) % how.count) * how.lane + i % how.lane);
        float want = i >= begin && i < end ? std::max(0.0f, x[static_cast<size_t>(i)] * g[at]) : -7.0f;
        REQUIRE(out0[static_cast<size_t>(i)] == doctest::Approx(want).epsilon(1e-6));
      }
    }
  }
  // Whole loops split across threads: each adds into arrays of its own.
  for (int threads : {1, 2, 3, 4}) {
    msl::kernels::set_num_threads(threads);
    for (EwIndexing how : {EwIndexing{4096, 4, 16}, EwIndexing{8, 128, 8}, EwIndexing{160, 3, 80}}) {
      CAPTURE(threads);
      CAPTURE(how.inner);
      const int64_t n = 3 * msl::kernels::kParallelGrain + how.inner * how.count + 5;
      std::vector<float> x = random_floats(static_cast<size_t>(n), 43),
                         g = random_floats(static_cast<size_t>(how.elements()), 44);
      std::vector<float> out0(static_cast<size_t>(n)), acc0(static_cast<size_t>(how.elements()), 99.0f);
      float acc1 = 99.0f;  // run() overwrites the sums' arrays
      const float* in[] = {x.data(), g.data()};
      float* outs[] = {out0.data(), acc0.data(), &acc1};
      ElementwiseJit::instance().run(lane_sums(how), in, outs, n);
      check_lane_sums(x, g, how, 0, n, acc0, acc1);
    }
  }
}

TEST_CASE("lane patterns of channel-blocked shapes on 1 to 4 threads") {
  ThreadsGuard restore;
  const Case cases[] = {
      {{4096, 4, 16}, 8 * 4 * 16 * 16 * 16},  // [8, 4, 16, 16, 16]: vectors
      {{8, 128, 8}, 64 * 128 * 8},            // [64, 128, 1, 1, 8]: a tile of 1024
      {{256, 64, 16}, 2 * 64 * 4 * 4 * 16},   // [2, 64, 4, 4, 16]: a period of 16384, vectors
      {{16, 64, 16}, 37 * 1024 + 5},          // a tile, threads cutting periods
  };
  for (int threads : {1, 2, 3, 4}) {
    msl::kernels::set_num_threads(threads);
    for (const Case& c : cases) {
      CAPTURE(threads);
      CAPTURE(c.how.inner);
      CAPTURE(c.how.count);
      CAPTURE(c.how.lane);
      Data d = make_data(c.n, c.how, c.k_inputs);
      std::vector<float> out0(static_cast<size_t>(c.n), -7.0f), out1(static_cast<size_t>(c.n), -7.0f);
      std::vector<const float*> in = d.in();
      float* outs[] = {out0.data(), out1.data()};
      ElementwiseJit::instance().run(lane_program(c.how, c.k_inputs), in.data(), outs, c.n);
      check_range(out0, d.want0, 0, c.n, 2e-6);
      check_range(out1, d.want1, 0, c.n, 2e-6);
    }
  }
}

TEST_CASE("a lane loop writes its result over its full input") {
  for (EwIndexing how : {EwIndexing{16, 12, 16}, EwIndexing{1024, 4, 16}}) {
    CAPTURE(how.inner);
    const int64_t n = 3 * how.inner * how.count + 13;
    Data d = make_data(n, how, 2);
    std::vector<float> x = d.arrays[0], out1(static_cast<size_t>(n), -7.0f);
    std::vector<const float*> in = d.in();
    in[0] = x.data();
    float* outs[] = {x.data(), out1.data()};  // out0 over x
    ElementwiseJit::instance().compile(lane_program(how, 2))(in.data(), outs, 0, n);
    check_range(x, d.want0, 0, n, 2e-6);
    check_range(out1, d.want1, 0, n, 2e-6);
  }
}

TEST_CASE("lane patterns: tiles below the tile limit, hand-built vectors above it, keyed by the lane") {
  ElementwiseJit& jit = ElementwiseJit::instance();
  std::string tiled = jit.llvm_ir(lane_program(EwIndexing{16, 1000, 16}, 2));
  CHECK(tiled.find("alloca [") != std::string::npos);  // the tiles
  CHECK(tiled.find("x float>") != std::string::npos);
  for (EwIndexing how : {EwIndexing{16, 1100, 16}, EwIndexing{1024, 4, 16}, EwIndexing{512, 4, 8}}) {
    CAPTURE(how.inner);
    std::string ir = jit.llvm_ir(lane_program(how, 2));
    CHECK(ir.find("alloca") == std::string::npos);
    CHECK(ir.find("<16 x float>") != std::string::npos);
    CHECK(ir.find("llvm.masked.store") != std::string::npos);  // the clipped ends
    CHECK(ir.find("gather") == std::string::npos);             // rows are loaded, not gathered
  }
  EwProgram p = lane_program(EwIndexing{1024, 4, 16}, 2);
  CHECK(p.text().find("input 2 at ((i / 1024) % 4) * 16 + i % 16\n") != std::string::npos);
  CHECK(p.text().find("input 1 at (i / 1) % 1\n") != std::string::npos);
  EwFunction a = jit.compile(lane_program(EwIndexing{1024, 4, 16}, 2));
  EwFunction b = jit.compile(lane_program(EwIndexing{1024, 8, 8}, 2));
  CHECK(reinterpret_cast<const void*>(a) != reinterpret_cast<const void*>(b));
  // count == 1 with lanes reads i % lane: stored as the plain pattern.
  EwProgram one;
  one.outputs = {one.binary(EwOp::Add, one.input(0), one.input(1, EwIndexing{64, 1, 16}))};
  CHECK(one.input_indexing(1) == EwIndexing{1, 16, 1});
}

TEST_CASE("malformed lane patterns and sums beside lanes are rejected") {
  ElementwiseJit& jit = ElementwiseJit::instance();
  auto with = [](EwIndexing how) {
    EwProgram p;
    p.outputs = {p.binary(EwOp::Add, p.input(0), p.input(1))};
    p.indexing = {EwIndexing{}, how};
    return p;
  };
  for (EwIndexing bad : {EwIndexing{20, 3, 8},                               // lane does not divide inner
                         EwIndexing{16, 3, 0},                               // no lane
                         EwIndexing{16, 3, -16},                             // negative lane
                         EwIndexing{1, 0, 2},                                // a full input with a lane
                         EwIndexing{int64_t{1} << 40, int64_t{1} << 30, 1},  // period past int64
                         EwIndexing{int64_t{1} << 40, int64_t{1} << 30, int64_t{1} << 40}}) {
    CAPTURE(bad.inner);
    CAPTURE(bad.count);
    CAPTURE(bad.lane);
    CHECK_THROWS_AS(validate_program(with(bad)), std::invalid_argument);
    CHECK_THROWS_AS(jit.compile(with(bad)), std::invalid_argument);
  }
  CHECK_NOTHROW(validate_program(with(EwIndexing{32, 3, 8})));
  // Two lanes over one segment length: two patterns.
  EwProgram two;
  two.outputs = {two.binary(EwOp::Add, two.input(0, EwIndexing{64, 4, 16}), two.input(1, EwIndexing{64, 4, 8}))};
  CHECK_THROWS_AS(two.broadcast(), std::invalid_argument);
  // A sum's pattern is checked as an input's, and shares the program's.
  EwProgram sum = with(EwIndexing{32, 3, 8});
  sum.reductions = {EwReduction{0, EwIndexing{20, 3, 8}}};
  CHECK_THROWS_AS(validate_program(sum), std::invalid_argument);
  sum.reductions = {EwReduction{0, EwIndexing{32, 3, 16}}};
  CHECK_THROWS_AS(validate_program(sum), std::invalid_argument);
  sum.reductions = {EwReduction{0, EwIndexing{32, 3, 8}}, EwReduction{0, EwIndexing{1, 1}}};
  CHECK_NOTHROW(validate_program(sum));
  CHECK(sum.text().find("sum %0 at ((i / 32) % 3) * 8 + i % 8\n") != std::string::npos);
}
