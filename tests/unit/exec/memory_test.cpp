// The executor releases each value after its last use (lang/ir/liveness.h):
// a long chain over a large tensor needs two buffers at a time, not one
// per op. Measured with the CPU allocator's peak, values checked against
// the same arithmetic in double.
#include <cmath>
#include <string>
#include <vector>

#include "exec_test_util.h"
#include "kernels/device.h"

using namespace exec_test;
using msl::exec::RtValue;
using msl::kernels::DType;

TEST_CASE("a chain of ops on a large tensor keeps two buffers live, not one per op") {
  // y = ((((x*1.5)+1)*0.5)-2) ... eight ops, each result used once.
  auto m = parse(
      "subgraph @f(%para1_x) {\n"
      "  %0 = mul(%para1_x, 1.5)\n"
      "  %1 = add(%0, 1.0)\n"
      "  %2 = mul(%1, 0.5)\n"
      "  %3 = sub(%2, 2.0)\n"
      "  %4 = neg(%3)\n"
      "  %5 = add(%4, 3.0)\n"
      "  %6 = mul(%5, 2.0)\n"
      "  %7 = sub(%6, 0.25)\n"
      "  return(%7)\n"
      "}\n");
  const int64_t n = int64_t{1} << 20;  // 4 MiB of float32
  std::vector<double> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<double>(i % 97) * 0.25 - 7;
  RtValue in = tensor(DType::Float32, {n}, x);
  const int64_t buffer = n * 4;
  msl::kernels::cpu_allocator_reset_peak();
  size_t before = msl::kernels::cpu_allocator_stats().bytes_in_use;
  RtValue r = run(*m, "f", {in});
  size_t peak = msl::kernels::cpu_allocator_stats().peak_bytes_in_use;
  // The operand and the result of one op (plus the 0-d constants).
  CHECK(static_cast<int64_t>(peak - before) <= 2 * buffer + 4096);
  CHECK(static_cast<int64_t>(peak - before) >= buffer);
  std::vector<double> got = values(r);
  for (int64_t i = 0; i < n; i += 4099) {
    double v = x[static_cast<size_t>(i)];
    double e = ((-((v * 1.5 + 1.0) * 0.5 - 2.0)) + 3.0) * 2.0 - 0.25;
    CHECK(got[static_cast<size_t>(i)] == doctest::Approx(e).epsilon(1e-6));
  }
}

TEST_CASE("values used again later, by the output or by a closure, survive release") {
  auto m = parse(
      "subgraph @main(%para1_x) {\n"
      "  %0 = mul(%para1_x, 2.0)\n"
      "  %1 = exp(%0)\n"
      "  %2 = neg(%1)\n"
      "  %3 = @inner(%2)\n"
      "  %4 = add(%3, %0)\n"
      "  %5 = make_tuple(%4, %1)\n"
      "  return(%5)\n"
      "}\n"
      "subgraph @inner(%para1_z) parent=@main {\n"
      "  %0 = sub(%para1_z, @main.%0)\n"
      "  return(%0)\n"
      "}\n");
  RtValue r = run(*m, "main", {tensor(DType::Float64, {3}, {0.5, -1, 2})});
  REQUIRE(r.is<msl::exec::RtTuple>());
  std::vector<double> a = values(r.tuple()[0]), b = values(r.tuple()[1]);
  std::vector<double> xs{0.5, -1, 2};
  for (size_t i = 0; i < 3; ++i) {
    double t = xs[i] * 2;
    CHECK(a[i] == doctest::Approx(-std::exp(t) - t + t));
    CHECK(b[i] == doctest::Approx(std::exp(t)));
  }
}
