// Closures and the free-variable envs: values captured by closures that are
// used before the captured value in topological order, loops nested in a
// function (the body names its loop graph, whose free variables live in the
// function), sibling closures, and closures passed to other graphs. All
// checked against finite differences of the primal graph.
#include <cmath>
#include <string>
#include <vector>

#include "ad_test_util.h"

using namespace ad_test;

TEST_CASE("a closure called before the value it captures in topological order") {
  // %0 (the call) comes before %1 (what @h captures) in f's topological
  // order; the sensitivity of %1 is only complete after %0's bprop ran.
  Fixture fx(
      "subgraph @f(%para1_x) {\n"
      "  %0 = @h(%para1_x)\n"
      "  %1 = sin(%para1_x)\n"
      "  %2 = make_tuple(%0, %1)\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @h(%para1_z) parent=@f {\n"
      "  %0 = mul(@f.%1, %para1_z)\n"
      "  return(%0)\n"
      "}\n");
  RtValue dout = msl::exec::make_tuple({f64({1.0, 2.0}, {2}), f64({-1.0, 0.5}, {2})});
  check_against_fd(fx, "f", {f64({0.7, -0.4}, {2})}, dout);
}

// The body names its enclosing loop graph, whose captured values come from
// the function around the loop (ir::free_variables must collect them, and
// only them, for the body).
TEST_CASE("a loop nested in a function: the body names its loop, which captures the function's values") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_w, %para3_n) {\n"
      "  %0 = exp(%para2_w)\n"
      "  %1 = @loop(0, %para1_x)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @loop(%para1_i, %para2_acc) parent=@f {\n"
      "  %0 = less(%para1_i, @f.%para3_n)\n"
      "  %1 = switch(%0, @body, @done)\n"
      "  %2 = %1()\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @body() parent=@loop {\n"
      "  %0 = add(@loop.%para1_i, 1)\n"
      "  %1 = mul(@loop.%para2_acc, @f.%0)\n"
      "  %2 = sin(%1)\n"
      "  %3 = @loop(%0, %2)\n"
      "  return(%3)\n"
      "}\n"
      "subgraph @done() parent=@loop {\n"
      "  %0 = mul(@loop.%para2_acc, @f.%para2_w)\n"
      "  return(%0)\n"
      "}\n");
  for (int64_t n : {0, 1, 4}) {
    INFO("n = " << n);
    check_against_fd(fx, "f", {f64({0.3, 0.9}, {2}), f64({0.2, -0.1}, {2}), RtValue(n)}, f64({1.0, 1.0}, {2}));
  }
  // Second order: d/dx of the first derivative in w.
  derivative(fx, fx.graph("f"), 1);
  check_against_fd(fx, "d_f", {f64({0.3, 0.9}, {2}), f64({0.2, -0.1}, {2}), RtValue(int64_t{3})}, f64({1.0, 1.0}, {2}));
}

TEST_CASE("a closure calling its sibling closure") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = mul(%para1_x, %para2_y)\n"
      "  %1 = @b(%para1_x)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @a(%para1_u) parent=@f {\n"
      "  %0 = mul(%para1_u, @f.%0)\n"
      "  return(%0)\n"
      "}\n"
      "subgraph @b(%para1_v) parent=@f {\n"
      "  %0 = @a(%para1_v)\n"
      "  %1 = mul(%0, @f.%para2_y)\n"
      "  return(%1)\n"
      "}\n");
  check_against_fd(fx, "f", {f64({0.6, -1.1}, {2}), f64({1.4, 0.3}, {2})}, f64({1.0, -1.0}, {2}));
}

TEST_CASE("closures passed to a top-level graph and chosen by switch") {
  // The sensitivity of a closure argument comes back from @twice's bprop as
  // an env and is split in f.
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = less(%para2_y, 0.0)\n"
      "  %1 = switch(%0, @neg_branch, @pos_branch)\n"
      "  %2 = @twice(%1, %para2_y)\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @neg_branch(%para1_v) parent=@f {\n"
      "  %0 = mul(%para1_v, @f.%para1_x)\n"
      "  return(%0)\n"
      "}\n"
      "subgraph @pos_branch(%para1_v) parent=@f {\n"
      "  %0 = sin(@f.%para1_x)\n"
      "  %1 = add(%para1_v, %0)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @twice(%para1_fn, %para2_v) {\n"
      "  %0 = %para1_fn(%para2_v)\n"
      "  %1 = %para1_fn(%0)\n"
      "  return(%1)\n"
      "}\n");
  check_against_fd(fx, "f", {f64(0.8), f64(-0.5)}, f64(1.0));
  check_against_fd(fx, "f", {f64(0.8), f64(0.5)}, f64(1.0));
}
