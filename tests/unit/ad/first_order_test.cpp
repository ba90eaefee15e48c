// First-order gradients of the J transform on graphs written as IR text:
// straight-line code, accumulation, tuples, switch, loops, recursion,
// closures, graph calls, partial and stop_gradient. Every gradient is
// checked against float64 central finite differences of the primal graph
// (ad_test_util.h), or, where noted, against a value worked out by hand.
#include <cmath>
#include <string>
#include <vector>

#include "ad_test_util.h"

using namespace ad_test;
using msl::exec::RtTuple;

TEST_CASE("straight-line code: mul, add, sin") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = mul(%para1_x, %para2_y)\n"
      "  %1 = sin(%0)\n"
      "  %2 = add(%1, %para1_x)\n"
      "  return(%2)\n"
      "}\n");
  RtValue x = f64({0.5, -1.25, 2.0}, {3}), y = f64({1.5, 0.75, -0.3}, {3});
  JResult r = check_against_fd(fx, "f", {x, y}, f64({1.0, -2.0, 0.5}, {3}));
  // By hand for element 0: d/dx = cos(xy) y + 1, d/dy = cos(xy) x.
  CHECK(exec_test::values(r.grads[1])[0] == doctest::Approx(std::cos(0.75) * 1.5 + 1));
  CHECK(exec_test::values(r.grads[2])[0] == doctest::Approx(std::cos(0.75) * 0.5));
  // A graph without free variables returns an empty env.
  CHECK(r.grads[0].as<msl::exec::RtEnv>()->items.empty());
}

TEST_CASE("a value used several times accumulates its sensitivities") {
  Fixture fx(
      "subgraph @f(%para1_x) {\n"
      "  %0 = mul(%para1_x, %para1_x)\n"
      "  %1 = add(%0, %para1_x)\n"
      "  %2 = exp(%para1_x)\n"
      "  %3 = mul(%1, %2)\n"
      "  return(%3)\n"
      "}\n");
  JResult r = check_against_fd(fx, "f", {f64({0.3, -0.7}, {2})}, f64({1.0, 1.0}, {2}));
  // (x^2 + x) e^x -> (x^2 + 3x + 1) e^x.
  CHECK(exec_test::values(r.grads[1])[0] == doctest::Approx((0.09 + 0.9 + 1) * std::exp(0.3)));
}

TEST_CASE("a parameter that does not reach the output gets zeros") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_unused) {\n"
      "  %0 = neg(%para1_x)\n"
      "  return(%0)\n"
      "}\n");
  JResult r = check_against_fd(fx, "f", {f64({1, 2}, {2}), f64({3, 4, 5}, {3})}, f64({1, 1}, {2}));
  CHECK(exec_test::values(r.grads[2]) == std::vector<double>{0, 0, 0});
}

TEST_CASE("tuples in and out") {
  Fixture fx(
      "subgraph @f(%para1_t, %para2_z) {\n"
      "  %0 = tuple_getitem(%para1_t, 0)\n"
      "  %1 = tuple_getitem(%para1_t, 1)\n"
      "  %2 = mul(%0, %1)\n"
      "  %3 = mul(%2, %para2_z)\n"
      "  %4 = make_tuple(%3, %0, %para2_z)\n"
      "  return(%4)\n"
      "}\n");
  RtValue a = f64({2.0}, {1}), b = f64({-3.0}, {1}), z = f64({0.5}, {1});
  RtValue t = msl::exec::make_tuple({a, b, f64(7.0)});
  RtValue dout = msl::exec::make_tuple({f64({1.0}, {1}), f64({10.0}, {1}), f64({100.0}, {1})});
  JResult r = run_j(fx.j("f"), {t, z}, dout);
  // out0 = a b z, out1 = a, out2 = z; sensitivities (1, 10, 100).
  REQUIRE(r.grads[1].is<RtTuple>());
  const auto& dt = r.grads[1].tuple();
  REQUIRE(dt.size() == 3);
  CHECK(exec_test::values(dt[0])[0] == doctest::Approx(-3.0 * 0.5 + 10));
  CHECK(exec_test::values(dt[1])[0] == doctest::Approx(2.0 * 0.5));
  CHECK(exec_test::scalar(dt[2]) == 0);  // the unused item: zeros of its structure
  CHECK(exec_test::values(r.grads[2])[0] == doctest::Approx(2.0 * -3.0 + 100));
  CHECK(exec_test::values(r.value.tuple()[0])[0] == doctest::Approx(-3.0));
  fx.verify();
}

namespace {
const char* kIf =
    "subgraph @f(%para1_x, %para2_y) {\n"
    "  %0 = less(%para1_x, 1.0)\n"
    "  %1 = switch(%0, @then, @else)\n"
    "  %2 = %1()\n"
    "  %3 = switch(%0, %para1_x, %para2_y)\n"
    "  %4 = mul(%2, %3)\n"
    "  return(%4)\n"
    "}\n"
    "subgraph @then() parent=@f {\n"
    "  %0 = mul(@f.%para1_x, @f.%para2_y)\n"
    "  return(%0)\n"
    "}\n"
    "subgraph @else() parent=@f {\n"
    "  %0 = sin(@f.%para1_x)\n"
    "  return(%0)\n"
    "}\n";
}  // namespace

TEST_CASE("if via switch on a tensor condition, both branches") {
  Fixture fx(kIf);
  RtValue y = f64(-1.5);
  // then: (x y) x -> d/dx = 2 x y, d/dy = x^2.
  JResult t = check_against_fd(fx, "f", {f64(0.5), y}, f64(1.0));
  CHECK(exec_test::scalar(t.grads[1]) == doctest::Approx(2 * 0.5 * -1.5));
  CHECK(exec_test::scalar(t.grads[2]) == doctest::Approx(0.25));
  // else: sin(x) y -> d/dx = cos(x) y, d/dy = sin(x).
  JResult e = check_against_fd(fx, "f", {f64(2.0), y}, f64(1.0));
  CHECK(exec_test::scalar(e.grads[1]) == doctest::Approx(std::cos(2.0) * -1.5));
  CHECK(exec_test::scalar(e.grads[2]) == doctest::Approx(std::sin(2.0)));
}

namespace {
// x -> x*x repeated n times (x^(2^n)), as a tail-recursive loop graph whose
// body is a closure over the loop's parameters.
const char* kLoop =
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
    "}\n";
}  // namespace

TEST_CASE("a while loop as a tail-recursive graph with a loop-carried variable") {
  Fixture fx(kLoop);
  for (int64_t n : {0, 1, 3}) {
    INFO("n = " << n);
    JResult r = check_against_fd(fx, "f", {f64({1.1, -0.9}, {2}), RtValue(n)}, f64({1.0, 0.5}, {2}));
    double p = std::pow(2.0, static_cast<double>(n));
    CHECK(exec_test::values(r.grads[1])[0] == doctest::Approx(p * std::pow(1.1, p - 1)));
  }
}

TEST_CASE("recursion: a factorial-like product x (x+1) ... (x+n-1)") {
  Fixture fx(
      "subgraph @prod(%para1_x, %para2_n) {\n"
      "  %0 = less(%para2_n, 1)\n"
      "  %1 = switch(%0, @base, @rec)\n"
      "  %2 = %1()\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @base() parent=@prod {\n"
      "  %0 = zeros_like(@prod.%para1_x)\n"
      "  %1 = add(%0, 1.0)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @rec() parent=@prod {\n"
      "  %0 = add(@prod.%para1_x, 1.0)\n"
      "  %1 = sub(@prod.%para2_n, 1)\n"
      "  %2 = @prod(%0, %1)\n"
      "  %3 = mul(@prod.%para1_x, %2)\n"
      "  return(%3)\n"
      "}\n");
  JResult r = check_against_fd(fx, "prod", {f64({1.5}, {1}), RtValue(int64_t{4})}, f64({1.0}, {1}));
  // d/dx of x(x+1)(x+2)(x+3) at 1.5, by the product rule.
  double x = 1.5, d = 0;
  for (int i = 0; i < 4; ++i) {
    double term = 1;
    for (int j = 0; j < 4; ++j)
      if (j != i) term *= x + j;
    d += term;
  }
  CHECK(exec_test::values(r.grads[1])[0] == doctest::Approx(d));
}

TEST_CASE("a closure reading an outer variable sends its sensitivity through the env") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = sin(%para1_x)\n"
      "  %1 = @inner(%para2_y)\n"
      "  %2 = add(%1, %para1_x)\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @inner(%para1_z) parent=@f {\n"
      "  %0 = mul(@f.%0, %para1_z)\n"
      "  %1 = mul(%0, @f.%para1_x)\n"
      "  return(%1)\n"
      "}\n");
  check_against_fd(fx, "f", {f64({0.4, 1.2}, {2}), f64({2.0, -1.0}, {2})}, f64({1.0, 3.0}, {2}));
  // J(inner) alone: its bprop's env holds the sensitivities of f's nodes it
  // reads, keyed by their ids.
  msl::ir::FuncGraph* f = fx.graph("f");
  msl::ir::FuncGraph* inner = fx.graph("inner");
  msl::ir::FuncGraph* jinner = fx.ad->j_graph(inner);
  CHECK(jinner->parent() == fx.ad->j_graph(f));
  std::vector<msl::ir::Node*> fvs = msl::ir::free_variables(*inner);
  CHECK(fvs.size() == 2);
}

TEST_CASE("nested closures two levels deep") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = mul(%para1_x, %para2_y)\n"
      "  %1 = @mid(%para2_y)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @mid(%para1_a) parent=@f {\n"
      "  %0 = sin(%para1_a)\n"
      "  %1 = @inner(@f.%para1_x)\n"
      "  %2 = add(%1, %0)\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @inner(%para1_b) parent=@mid {\n"
      "  %0 = mul(%para1_b, @mid.%0)\n"
      "  %1 = mul(%0, @f.%0)\n"
      "  %2 = mul(%1, @mid.%para1_a)\n"
      "  return(%2)\n"
      "}\n");
  check_against_fd(fx, "f", {f64({0.4, -1.2}, {2}), f64({0.7, 1.3}, {2})}, f64({1.0, -2.0}, {2}));
}

TEST_CASE("a closure returned by one graph and called by another") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = @make(%para1_x)\n"
      "  %1 = %0(%para2_y)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @make(%para1_a) {\n"
      "  %0 = exp(%para1_a)\n"
      "  return(@scale)\n"
      "}\n"
      "subgraph @scale(%para1_b) parent=@make {\n"
      "  %0 = mul(@make.%0, %para1_b)\n"
      "  %1 = mul(%0, %para1_b)\n"
      "  return(%1)\n"
      "}\n");
  check_against_fd(fx, "f", {f64({0.3, -0.2}, {2}), f64({1.5, 2.5}, {2})}, f64({1.0, 1.0}, {2}));
}

TEST_CASE("calling another graph") {
  Fixture fx(
      "subgraph @f(%para1_x) {\n"
      "  %0 = @sq(%para1_x)\n"
      "  %1 = @sq(%0)\n"
      "  %2 = mul(%1, %para1_x)\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @sq(%para1_v) {\n"
      "  %0 = mul(%para1_v, %para1_v)\n"
      "  return(%0)\n"
      "}\n");
  JResult r = check_against_fd(fx, "f", {f64({1.3}, {1})}, f64({1.0}, {1}));
  CHECK(exec_test::values(r.grads[1])[0] == doctest::Approx(5 * std::pow(1.3, 4)));
  // @sq is transformed once, however many call sites.
  CHECK(fx.ad->j_graph(fx.graph("sq")) == fx.ad->j_graph(fx.graph("sq")));
}

TEST_CASE("partial of graphs and primitives, called here and passed to another graph") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = partial(@affine, %para1_x)\n"
      "  %1 = partial(%0, %para2_y)\n"
      "  %2 = %1(0.5)\n"
      "  %3 = partial(mul, %para2_y)\n"
      "  %4 = @apply(%3, %2)\n"
      "  %5 = %0(%4, %para1_x)\n"
      "  return(%5)\n"
      "}\n"
      "subgraph @affine(%para1_a, %para2_x, %para3_b) {\n"
      "  %0 = mul(%para1_a, %para2_x)\n"
      "  %1 = add(%0, %para3_b)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @apply(%para1_fn, %para2_v) {\n"
      "  %0 = %para1_fn(%para2_v)\n"
      "  %1 = sin(%0)\n"
      "  return(%1)\n"
      "}\n");
  check_against_fd(fx, "f", {f64({0.3, -1.1}, {2}), f64({1.7, 0.4}, {2})}, f64({1.0, 2.0}, {2}));
}

TEST_CASE("stop_gradient blocks the sensitivity of its operand") {
  Fixture fx(
      "subgraph @f(%para1_x) {\n"
      "  %0 = stop_gradient(%para1_x)\n"
      "  %1 = mul(%0, %para1_x)\n"
      "  return(%1)\n"
      "}\n");
  JResult r = run_j(fx.j("f"), {f64({3.0}, {1})}, f64({1.0}, {1}));
  CHECK(exec_test::values(r.value)[0] == 9.0);
  CHECK(exec_test::values(r.grads[1])[0] == 3.0);  // not 2x = 6
}

TEST_CASE("a variadic primitive: the rule takes the inputs as one tuple") {
  Fixture fx(
      "subgraph @f(%para1_a, %para2_b) {\n"
      "  %0 = concat[axis=0](%para1_a, %para2_b, %para1_a)\n"
      "  %1 = sin(%0)\n"
      "  return(%1)\n"
      "}\n",
      "subgraph @rule_concat(%para1_xs, %para2_out, %para3_dout) {\n"
      "  %0 = strided_slice[begin=(0,), end=(2,), strides=(1,)](%para3_dout)\n"
      "  %1 = strided_slice[begin=(2,), end=(3,), strides=(1,)](%para3_dout)\n"
      "  %2 = strided_slice[begin=(3,), end=(5,), strides=(1,)](%para3_dout)\n"
      "  %3 = make_tuple(%0, %1, %2)\n"
      "  %4 = make_tuple(%3)\n"
      "  return(%4)\n"
      "}\n");
  check_against_fd(fx, "f", {f64({0.1, 0.2}, {2}), f64({0.3}, {1})}, f64({1, 2, 3, 4, 5}, {5}));
}

TEST_CASE("effects stay in the J graph, in order, and get no sensitivity") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_u) {\n"
      "  %0 = print(\"a\", %para1_x, %para2_u)\n"
      "  %1 = update_state(%para2_u, %0)\n"
      "  %2 = mul(%para1_x, %para1_x)\n"
      "  %3 = print(\"b\", %1)\n"
      "  %4 = update_state(%1, %3)\n"
      "  %5 = depend(%2, %4)\n"
      "  %6 = make_tuple(%5, %4)\n"
      "  return(%6)\n"
      "}\n");
  std::vector<std::string> lines;
  msl::exec::ExecOptions opts;
  opts.print = [&](const std::string& s) { lines.push_back(s); };
  RtValue pair = msl::exec::run_graph(*fx.j("f"), {f64(2.0), RtValue(msl::exec::StateToken{})}, opts);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("a ", 0) == 0);
  CHECK(lines[1] == "b");
  RtValue dout = msl::exec::make_tuple({f64(1.0), RtValue()});
  RtValue r = msl::exec::call_value(pair.tuple()[1], {dout}, opts);
  CHECK(lines.size() == 2);  // the backpropagator prints nothing
  CHECK(exec_test::scalar(r.tuple()[1]) == 4.0);
  fx.verify();
}

TEST_CASE("environment and tuple_setitem operators in the primal") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = env_new()\n"
      "  %1 = mul(%para1_x, %para2_y)\n"
      "  %2 = env_setitem(%0, 7, %1)\n"
      "  %3 = env_setitem(%2, 8, %para1_x)\n"
      "  %4 = zeros_like(%para1_x)\n"
      "  %5 = env_getitem(%3, 7, %4)\n"
      "  %6 = env_getitem(%3, 8, %4)\n"
      "  %7 = grad_add(%5, %6)\n"
      "  %8 = make_tuple(%para1_x, %para1_x)\n"
      "  %9 = tuple_setitem(%8, 1, %7)\n"
      "  %10 = tuple_getitem(%9, 1)\n"
      "  %11 = tuple_getitem(%9, 0)\n"
      "  %12 = mul(%10, %11)\n"
      "  return(%12)\n"
      "}\n");
  // (x y + x) x.
  check_against_fd(fx, "f", {f64({0.5, 2.0}, {2}), f64({-1.0, 3.0}, {2})}, f64({1.0, 1.0}, {2}));
}

TEST_CASE("grad_graph: value and gradients, with ones or a given sensitivity") {
  Fixture fx(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = mul(%para1_x, %para2_y)\n"
      "  %1 = mul(%0, %para1_x)\n"
      "  return(%1)\n"
      "}\n");
  RtValue x = f64({2.0, 3.0}, {2}), y = f64({5.0, 7.0}, {2});
  RtValue r = msl::exec::run_graph(*fx.ad->grad_graph(fx.graph("f"), false), {x, y});
  CHECK(exec_test::values(r.tuple()[0]) == std::vector<double>{20, 63});
  const auto& d = r.tuple()[1].tuple();
  REQUIRE(d.size() == 2);
  CHECK(exec_test::values(d[0]) == std::vector<double>{20, 42});  // 2 x y
  CHECK(exec_test::values(d[1]) == std::vector<double>{4, 9});    // x^2
  RtValue s = msl::exec::run_graph(*fx.ad->grad_graph(fx.graph("f"), true), {x, y, f64({1.0, -2.0}, {2})});
  CHECK(exec_test::values(s.tuple()[1].tuple()[0]) == std::vector<double>{20, -84});
  fx.verify();
}
