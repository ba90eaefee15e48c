// J applied to its own output: second and third derivatives. The
// first-derivative graph d(x..) = grad_graph(g)(x..)[1][k] is itself a
// primal graph made of what the transform emits (J_p/B_p graphs, rule
// calls, env and tuple operators, bprop closures); transforming it again and
// comparing with finite differences of d (and with values worked out by
// hand) proves those emitted operators are differentiated correctly.
#include <cmath>
#include <string>
#include <vector>

#include "ad_test_util.h"

using namespace ad_test;
using msl::ir::FuncGraph;
using msl::ir::IrOp;
using msl::ir::Node;

namespace {
const char* kCube =
    "subgraph @cube(%para1_x) {\n"
    "  %0 = mul(%para1_x, %para1_x)\n"
    "  %1 = mul(%0, %para1_x)\n"
    "  return(%1)\n"
    "}\n";
}  // namespace

TEST_CASE("second and third derivative of x*x*x at 2.0") {
  Fixture fx(kCube);
  FuncGraph* d1 = derivative(fx, fx.graph("cube"), 0);
  FuncGraph* d2 = derivative(fx, d1, 0);
  FuncGraph* d3 = derivative(fx, d2, 0);
  CHECK(exec_test::scalar(msl::exec::run_graph(*d1, {f64(2.0)})) == doctest::Approx(12.0));  // 3x^2
  CHECK(exec_test::scalar(msl::exec::run_graph(*d2, {f64(2.0)})) == doctest::Approx(12.0));  // 6x
  CHECK(exec_test::scalar(msl::exec::run_graph(*d3, {f64(2.0)})) == doctest::Approx(6.0));   // 6
  fx.verify();
}

TEST_CASE("second derivative of sin(x) * x against finite differences of the first") {
  Fixture fx(
      "subgraph @f(%para1_x) {\n"
      "  %0 = sin(%para1_x)\n"
      "  %1 = mul(%0, %para1_x)\n"
      "  return(%1)\n"
      "}\n");
  derivative(fx, fx.graph("f"), 0);
  JResult r = check_against_fd(fx, "d_f", {f64({0.3, 1.7}, {2})}, f64({1.0, 1.0}, {2}));
  // (sin x  x)'' = 2 cos x - x sin x.
  CHECK(exec_test::values(r.grads[1])[1] == doctest::Approx(2 * std::cos(1.7) - 1.7 * std::sin(1.7)));
}

TEST_CASE("second derivative through a loop with closures (x^8)") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_n) {\n"
      "  %0 = @loop(0, %para2_n, %para1_x)\n"
      "  return(%0)\n"
      "}\n"
      "subgraph @loop(%para1_i, %para2_n, %para3_x) {\n"
      "  %0 = less(%para1_i, %para2_n)\n"
      "  %1 = switch(%0, @body, @done)\n"
      "  %2 = %1()\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @body() parent=@loop {\n"
      "  %0 = add(@loop.%para1_i, 1)\n"
      "  %1 = mul(@loop.%para3_x, @loop.%para3_x)\n"
      "  %2 = @loop(%0, @loop.%para2_n, %1)\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @done() parent=@loop {\n"
      "  return(@loop.%para3_x)\n"
      "}\n");
  derivative(fx, fx.graph("f"), 0);
  JResult r = check_against_fd(fx, "d_f", {f64({1.1}, {1}), RtValue(int64_t{3})}, f64({1.0}, {1}));
  CHECK(exec_test::values(r.grads[1])[0] == doctest::Approx(56 * std::pow(1.1, 6)));
}

TEST_CASE("second derivative with a closure over an outer value and a partial") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = exp(%para1_x)\n"
      "  %1 = @inner(%para2_y)\n"
      "  %2 = partial(mul, %1)\n"
      "  %3 = %2(%para1_x)\n"
      "  return(%3)\n"
      "}\n"
      "subgraph @inner(%para1_z) parent=@f {\n"
      "  %0 = mul(@f.%0, %para1_z)\n"
      "  %1 = mul(%0, @f.%para1_x)\n"
      "  return(%1)\n"
      "}\n");
  // f = e^x z x * x: second derivatives in x and (mixed) in y.
  derivative(fx, fx.graph("f"), 0);
  check_against_fd(fx, "d_f", {f64({0.4, -0.3}, {2}), f64({1.5, 0.5}, {2})}, f64({1.0, 1.0}, {2}));
}

TEST_CASE("second derivative of recursion") {
  Fixture fx(
      "subgraph @pw(%para1_x, %para2_n) {\n"
      "  %0 = less(%para2_n, 1)\n"
      "  %1 = switch(%0, @base, @rec)\n"
      "  %2 = %1()\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @base() parent=@pw {\n"
      "  %0 = zeros_like(@pw.%para1_x)\n"
      "  %1 = add(%0, 1.0)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @rec() parent=@pw {\n"
      "  %0 = sub(@pw.%para2_n, 1)\n"
      "  %1 = @pw(@pw.%para1_x, %0)\n"
      "  %2 = mul(@pw.%para1_x, %1)\n"
      "  return(%2)\n"
      "}\n");
  derivative(fx, fx.graph("pw"), 0);
  JResult r = check_against_fd(fx, "d_pw", {f64({1.2}, {1}), RtValue(int64_t{5})}, f64({1.0}, {1}));
  CHECK(exec_test::values(r.grads[1])[0] == doctest::Approx(20 * std::pow(1.2, 3)));  // (x^5)''
}
