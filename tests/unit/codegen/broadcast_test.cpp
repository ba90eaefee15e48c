// Fused loops with broadcast inputs, element i reading input[(i / inner) %
// count]: a bias over rows (inner == 1), a per-channel scale and shift over
// NCHW (inner > 1), tensor scalars, against the same expression in float64
// with the index computed per element; lengths that are not whole rows;
// every [begin, end) sub-range of a small loop (what a thread gets) and
// loops split across 1 to 4 threads; the pattern in the program text;
// programs whose patterns cannot share one loop rejected.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "jit/codegen/elementwise_jit.h"
#include "kernels/parallel.h"
#include "random_floats.h"

using namespace msl::jit::codegen;
using msl::jit::codegen::test::check_range;
using msl::jit::codegen::test::random_floats;

namespace {

// out0 = relu(x * scale + shift), out1 = out0 - x * s: x full, scale and
// shift broadcast as `how`, s a tensor scalar.
EwProgram scale_shift_relu(EwIndexing how) {
  EwProgram p;
  int x = p.input(0), scale = p.input(1, how), shift = p.input(2, how), s = p.input(3, EwIndexing{1, 1});
  int y = p.unary(EwOp::Relu, p.binary(EwOp::Add, p.binary(EwOp::Mul, x, scale), shift));
  p.outputs = {y, p.binary(EwOp::Sub, y, p.binary(EwOp::Mul, x, s))};
  return p;
}

struct Data {
  std::vector<float> x, scale, shift, s;
  std::vector<double> want0, want1;
};

Data make_data(int64_t n, EwIndexing how) {
  Data d;
  d.x = random_floats(static_cast<size_t>(n), 11);
  d.scale = random_floats(static_cast<size_t>(how.count), 12);
  d.shift = random_floats(static_cast<size_t>(how.count), 13);
  d.s = {0.75f};
  for (int64_t i = 0; i < n; ++i) {
    size_t c = static_cast<size_t>((i / how.inner) % how.count);
    double xi = d.x[static_cast<size_t>(i)];
    double y = std::max(0.0, xi * d.scale[c] + d.shift[c]);
    d.want0.push_back(y);
    d.want1.push_back(y - xi * d.s[0]);
  }
  return d;
}


struct ThreadsGuard {
  ~ThreadsGuard() { msl::kernels::set_num_threads(0); }
};

}  // namespace

TEST_CASE("broadcast inputs: sub-ranges [begin, end) of a loop, as threads get them") {
  // Each way a pattern is generated, at lengths that are not a whole number
  // of rows or blocks: short rows of 5 and short blocks of 4 (a tile of
  // the period), rows of 130, blocks of 130 (one value per block), blocks
  // of 3 whose period is too long for a tile, a scalar. Small loops try
  // every sub-range, larger ones a grid of them.
  struct Case {
    EwIndexing how;
    int64_t n;
  };
  const Case cases[] = {{{1, 5}, 29},      {{4, 3}, 29},        {{1, 1}, 29},      {{1, 5}, 2 * 1020 + 13},
                        {{1, 130}, 397},   {{130, 3}, 791},     {{3, 2000}, 6100}, {{49, 3}, 3 * 147 + 5}};
  for (const Case& c : cases) {
    const EwIndexing how = c.how;
    const int64_t n = c.n, step = std::max<int64_t>(1, n / 23);
    CAPTURE(how.inner);
    CAPTURE(how.count);
    EwProgram p = scale_shift_relu(how);
    EwFunction fn = ElementwiseJit::instance().compile(p);
    Data d = make_data(n, how);
    const float* in[] = {d.x.data(), d.scale.data(), d.shift.data(), d.s.data()};
    for (int64_t begin = 0; begin < n; begin += begin < 3 ? 1 : step)
      for (int64_t end = begin + 1; end <= n; end = end == n || end + step <= n ? end + step : n) {
        CAPTURE(begin);
        CAPTURE(end);
        std::vector<float> out0(static_cast<size_t>(n), -7.0f), out1(static_cast<size_t>(n), -7.0f);
        float* outs[] = {out0.data(), out1.data()};
        fn(in, outs, begin, end);
        check_range(out0, d.want0, begin, end);
        check_range(out1, d.want1, begin, end);
      }
  }
}

TEST_CASE("broadcast inputs: Dense bias and NCHW channel shapes on 1 to 4 threads") {
  ThreadsGuard restore;
  const int64_t grain = msl::kernels::kParallelGrain;
  struct Case {
    EwIndexing how;
    int64_t n;
  };
  const Case cases[] = {
      {{1, 256}, 64 * 256},                 // Dense bias [256] over [64, 256]
      {{1, 1000}, 3 * grain + 7},           // rows that threads split mid-row, a partial last row
      {{1024, 64}, 32 * 64 * 1024},         // conv bias [1, 64, 1, 1] over [32, 64, 32, 32]
      {{49, 3}, 5 * grain + 11},            // 7x7 maps: channel blocks cut by threads
      {{3, 7}, 4 * grain + 1},              // short blocks
      {{1, 3}, 2 * grain + 2},              // short rows
      {{1, 10}, 3 * grain + 3},             // logits bias [10]: tiles of 1020
      {{49, 64}, 2 * grain + 17},           // 7x7 maps of 64 channels: a tile of 3136
  };
  for (int threads : {1, 2, 3, 4}) {
    msl::kernels::set_num_threads(threads);
    for (const Case& c : cases) {
      CAPTURE(threads);
      CAPTURE(c.how.inner);
      CAPTURE(c.how.count);
      CAPTURE(c.n);
      Data d = make_data(c.n, c.how);
      std::vector<float> out0(static_cast<size_t>(c.n), -7.0f), out1(static_cast<size_t>(c.n), -7.0f);
      const float* in[] = {d.x.data(), d.scale.data(), d.shift.data(), d.s.data()};
      float* outs[] = {out0.data(), out1.data()};
      ElementwiseJit::instance().run(scale_shift_relu(c.how), in, outs, c.n);
      check_range(out0, d.want0, 0, c.n);
      check_range(out1, d.want1, 0, c.n);
    }
  }
}

TEST_CASE("broadcast loops are vectorized and keyed by their pattern") {
  ElementwiseJit& jit = ElementwiseJit::instance();
  for (EwIndexing how : {EwIndexing{1, 256}, EwIndexing{1024, 64}}) {
    std::string ir = jit.llvm_ir(scale_shift_relu(how));
    CHECK(ir.find("x float>") != std::string::npos);  // vector arithmetic in the inner loop
    // One division, where a thread's range starts: none per element or segment.
    size_t divisions = 0;
    for (size_t at = ir.find(" sdiv "); at != std::string::npos; at = ir.find(" sdiv ", at + 1)) ++divisions;
    CHECK(divisions == 1);
  }
  std::string text = scale_shift_relu(EwIndexing{1024, 64}).text();
  CHECK(text.find("input 1 at (i / 1024) % 64") != std::string::npos);
  CHECK(text.find("input 3 at (i / 1) % 1") != std::string::npos);
  CHECK(text.find("input 0 at") == std::string::npos);  // full inputs keep the plain text
  EwFunction a = jit.compile(scale_shift_relu(EwIndexing{1, 64})), b = jit.compile(scale_shift_relu(EwIndexing{2, 32}));
  CHECK(reinterpret_cast<const void*>(a) != reinterpret_cast<const void*>(b));
}

TEST_CASE("broadcast patterns that cannot share one loop are rejected") {
  ElementwiseJit& jit = ElementwiseJit::instance();
  EwProgram two;
  two.outputs = {two.binary(EwOp::Add, two.input(0, EwIndexing{1, 4}), two.input(1, EwIndexing{4, 4}))};
  CHECK_THROWS_AS(jit.compile(two), std::invalid_argument);
  CHECK_THROWS_AS(two.broadcast(), std::invalid_argument);
  EwProgram zero_inner;
  zero_inner.outputs = {zero_inner.unary(EwOp::Neg, zero_inner.input(0, EwIndexing{0, 4}))};
  CHECK_THROWS_AS(jit.compile(zero_inner), std::invalid_argument);
  EwProgram stray;  // indexing for an input the program does not have
  stray.outputs = {stray.unary(EwOp::Neg, stray.input(0))};
  stray.indexing.resize(3);
  CHECK_THROWS_AS(jit.compile(stray), std::invalid_argument);
  // Scalars fit beside any pattern; a program with one pattern reports it.
  EwProgram ok;
  ok.outputs = {ok.binary(EwOp::Add, ok.input(0, EwIndexing{1, 1}), ok.input(1, EwIndexing{8, 3}))};
  CHECK(ok.broadcast() == EwIndexing{8, 3});
  CHECK(ok.input_indexing(0).scalar());
  CHECK(ok.input_indexing(5).full());
}
