// Graph executor on graphs written as IR text: tensor arithmetic, multi-output
// primitives, closures, `if` via switch, loops as tail-recursive graphs,
// recursion, tuples, partial and print order. Expected values are computed
// here with plain C++ arithmetic.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "exec_test_util.h"

using namespace exec_test;
using msl::exec::ExecOptions;
using msl::exec::RtValue;
using msl::kernels::DType;

TEST_CASE("straight-line tensor arithmetic with broadcasting") {
  auto m = parse(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = mul(%para1_x, %para2_y)\n"
      "  %1 = add(%0, 1.5)\n"
      "  %2 = reduce_sum[axes=(1,), keep_dims=False](%1)\n"
      "  %3 = make_tuple(%1, %2)\n"
      "  return(%3)\n"
      "}\n");
  std::vector<double> x = {1, 2, 3, 4, 5, 6}, y = {0.5, -1, 2};
  RtValue r = run(*m, "f", {tensor(DType::Float64, {2, 3}, x), tensor(DType::Float64, {3}, y)});
  REQUIRE(r.is<msl::exec::RtTuple>());
  REQUIRE(r.tuple().size() == 2);
  std::vector<double> e1(6), e2(2, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      e1[i * 3 + j] = x[i * 3 + j] * y[j] + 1.5;
      e2[i] += e1[i * 3 + j];
    }
  CHECK(values(r.tuple()[0]) == e1);
  CHECK(values(r.tuple()[1]) == e2);
  CHECK(r.tuple()[1].tensor().dtype() == DType::Float64);
}

TEST_CASE("python scalars take the dtype of the first tensor input") {
  auto m = parse(
      "subgraph @f(%para1_x) {\n"
      "  %0 = add(2, %para1_x)\n"
      "  %1 = mul(%0, 3)\n"
      "  return(%1)\n"
      "}\n");
  RtValue r = run(*m, "f", {tensor(DType::Int32, {3}, {1, 2, 3})});
  CHECK(r.tensor().dtype() == DType::Int32);
  CHECK(values(r) == std::vector<double>{9, 12, 15});
  // No tensor at all: Python numbers stay numbers (Python semantics).
  RtValue s = run(*m, "f", {RtValue(int64_t{4})});
  CHECK(s.as<int64_t>() == 18);
}

TEST_CASE("arithmetic on Python numbers follows Python") {
  auto m = parse(
      "subgraph @f(%para1_a, %para2_b) {\n"
      "  %0 = floordiv(%para1_a, %para2_b)\n"
      "  %1 = mod(%para1_a, %para2_b)\n"
      "  %2 = div(%para1_a, %para2_b)\n"
      "  %3 = less(%para1_a, %para2_b)\n"
      "  %4 = mul(%para1_a, 0.5)\n"
      "  %5 = make_tuple(%0, %1, %2, %3, %4)\n"
      "  return(%5)\n"
      "}\n");
  RtValue r = run(*m, "f", {RtValue(int64_t{-7}), RtValue(int64_t{2})});
  CHECK(r.tuple()[0].as<int64_t>() == -4);  // floor, not truncation
  CHECK(r.tuple()[1].as<int64_t>() == 1);
  CHECK(r.tuple()[2].as<double>() == -3.5);  // true division gives a float
  CHECK(r.tuple()[3].as<bool>() == true);
  CHECK(r.tuple()[4].as<double>() == -3.5);
  CHECK(run_error(*m, "f", {RtValue(int64_t{1}), RtValue(int64_t{0})}).find("division or modulo by zero") !=
        std::string::npos);
}

TEST_CASE("multi-output primitives give a tuple") {
  auto m = parse(
      "subgraph @f(%para1_logits, %para2_labels) {\n"
      "  %0 = softmax_cross_entropy(%para1_logits, %para2_labels)\n"
      "  %1 = tuple_getitem(%0, 0)\n"
      "  %2 = tuple_getitem(%0, 1)\n"
      "  %3 = tuple_len(%0)\n"
      "  %4 = make_tuple(%1, %2, %3)\n"
      "  return(%4)\n"
      "}\n");
  std::vector<double> x = {1, 2, 3, -1, 0, 4}, lab = {0, 0, 1, 0.5, 0.5, 0};
  RtValue r = run(*m, "f", {tensor(DType::Float64, {2, 3}, x), tensor(DType::Float64, {2, 3}, lab)});
  const auto& t = r.tuple();
  CHECK(scalar(t[2]) == 2);
  std::vector<double> loss = values(t[0]), grad = values(t[1]);
  REQUIRE(loss.size() == 2);
  REQUIRE(grad.size() == 6);
  for (int i = 0; i < 2; ++i) {
    double mx = -INFINITY, se = 0, l = 0;
    for (int j = 0; j < 3; ++j) mx = std::max(mx, x[i * 3 + j]);
    for (int j = 0; j < 3; ++j) se += std::exp(x[i * 3 + j] - mx);
    double lse = mx + std::log(se);
    for (int j = 0; j < 3; ++j) {
      l += lab[i * 3 + j] * (lse - x[i * 3 + j]);
      CHECK(grad[i * 3 + j] == doctest::Approx(std::exp(x[i * 3 + j] - lse) - lab[i * 3 + j]).epsilon(1e-12));
    }
    CHECK(loss[i] == doctest::Approx(l).epsilon(1e-12));
  }
}

TEST_CASE("closures capture outer values, also ones the outer graph never uses itself") {
  auto m = parse(
      "subgraph @main(%para1_x, %para2_y) {\n"
      "  %0 = mul(%para1_x, 2.0)\n"
      "  %1 = @inner(%para2_y)\n"
      "  return(%1)\n"
      "}\n"
      "subgraph @inner(%para1_z) parent=@main {\n"
      "  %0 = add(@main.%0, %para1_z)\n"
      "  %1 = sub(%0, @main.%para1_x)\n"
      "  return(%1)\n"
      "}\n");
  RtValue r = run(*m, "main", {tensor(DType::Float64, {2}, {1, 2}), RtValue(10.0)});
  CHECK(values(r) == std::vector<double>{1 * 2.0 + 10 - 1, 2 * 2.0 + 10 - 2});
}

TEST_CASE("nested closures returned and called later") {
  // make_adder(a) returns fn(b) returning fn(c) = a*100 + b*10 + c.
  auto m = parse(
      "subgraph @make_adder(%para1_a) {\n"
      "  return(@mid)\n"
      "}\n"
      "subgraph @mid(%para1_b) parent=@make_adder {\n"
      "  %0 = mul(@make_adder.%para1_a, 100)\n"
      "  return(@inner)\n"
      "}\n"
      "subgraph @inner(%para1_c) parent=@mid {\n"
      "  %0 = mul(@mid.%para1_b, 10)\n"
      "  %1 = add(@mid.%0, %0)\n"
      "  %2 = add(%1, %para1_c)\n"
      "  return(%2)\n"
      "}\n");
  RtValue mid = run(*m, "make_adder", {RtValue(int64_t{3})});
  REQUIRE(mid.is<msl::exec::RtClosure>());
  RtValue inner = msl::exec::call_value(mid, {RtValue(int64_t{4})});
  RtValue r1 = msl::exec::call_value(inner, {RtValue(int64_t{5})});
  RtValue r2 = msl::exec::call_value(inner, {RtValue(int64_t{7})});
  CHECK(scalar(r1) == 345);
  CHECK(scalar(r2) == 347);
}

namespace {
const char* kAbsIf =
    "subgraph @f(%para1_c, %para2_x) {\n"
    "  %0 = switch(%para1_c, @t, @e)\n"
    "  %1 = %0()\n"
    "  return(%1)\n"
    "}\n"
    "subgraph @t() parent=@f {\n"
    "  %0 = mul(@f.%para2_x, 2.0)\n"
    "  return(%0)\n"
    "}\n"
    "subgraph @e() parent=@f {\n"
    "  %0 = neg(@f.%para2_x)\n"
    "  return(%0)\n"
    "}\n";
}  // namespace

TEST_CASE("if via switch with bool and tensor conditions") {
  auto m = parse(kAbsIf);
  auto x = tensor(DType::Float32, {2}, {1.5, -2});
  CHECK(values(run(*m, "f", {RtValue(true), x})) == std::vector<double>{3, -4});
  CHECK(values(run(*m, "f", {RtValue(false), x})) == std::vector<double>{-1.5, 2});
  CHECK(values(run(*m, "f", {tensor(DType::Bool, {}, {1}), x})) == std::vector<double>{3, -4});
  CHECK(values(run(*m, "f", {tensor(DType::Float32, {1}, {0}), x})) == std::vector<double>{-1.5, 2});
  std::string e = run_error(*m, "f", {tensor(DType::Bool, {2}, {1, 0}), x});
  CHECK_MESSAGE(e.find("exactly one") != std::string::npos, e);
}

TEST_CASE("a while loop as a tail-recursive graph runs 100000 iterations") {
  auto m = parse(
      "subgraph @loop(%para1_i, %para2_acc) {\n"
      "  %0 = less_equal(%para1_i, 100000)\n"
      "  %1 = switch(%0, @body, @done)\n"
      "  %2 = %1()\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @body() parent=@loop {\n"
      "  %0 = add(@loop.%para2_acc, @loop.%para1_i)\n"
      "  %1 = add(@loop.%para1_i, 1)\n"
      "  %2 = @loop(%1, %0)\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @done() parent=@loop {\n"
      "  return(@loop.%para2_acc)\n"
      "}\n");
  int64_t expect = 0;
  for (int64_t i = 1; i <= 100000; ++i) expect += i;
  ExecOptions opts;
  opts.max_depth = 8;  // tail calls must not count
  RtValue r = run(*m, "loop", {RtValue(int64_t{1}), RtValue(int64_t{0})}, opts);
  CHECK(r.as<int64_t>() == expect);
}

namespace {
const char* kRecursion =
    "subgraph @fact(%para1_n) {\n"
    "  %0 = less_equal(%para1_n, 1)\n"
    "  %1 = switch(%0, @fact_base, @fact_rec)\n"
    "  %2 = %1()\n"
    "  return(%2)\n"
    "}\n"
    "subgraph @fact_base() parent=@fact {\n"
    "  return(1)\n"
    "}\n"
    "subgraph @fact_rec() parent=@fact {\n"
    "  %0 = sub(@fact.%para1_n, 1)\n"
    "  %1 = @fact(%0)\n"
    "      # In file rec.msl:12\n"
    "  %2 = mul(@fact.%para1_n, %1)\n"
    "  return(%2)\n"
    "}\n"
    "subgraph @fib(%para1_n) {\n"
    "  %0 = less(%para1_n, 2)\n"
    "  %1 = switch(%0, @fib_base, @fib_rec)\n"
    "  %2 = %1()\n"
    "  return(%2)\n"
    "}\n"
    "subgraph @fib_base() parent=@fib {\n"
    "  return(@fib.%para1_n)\n"
    "}\n"
    "subgraph @fib_rec() parent=@fib {\n"
    "  %0 = sub(@fib.%para1_n, 1)\n"
    "  %1 = @fib(%0)\n"
    "  %2 = sub(@fib.%para1_n, 2)\n"
    "  %3 = @fib(%2)\n"
    "  %4 = add(%1, %3)\n"
    "  return(%4)\n"
    "}\n";
}  // namespace

TEST_CASE("recursion: factorial and fibonacci") {
  auto m = parse(kRecursion);
  double f = 1;
  for (int i = 2; i <= 15; ++i) f *= i;
  CHECK(scalar(run(*m, "fact", {RtValue(int64_t{15})})) == f);
  CHECK(scalar(run(*m, "fact", {RtValue(int64_t{0})})) == 1);
  std::vector<int64_t> fib = {0, 1};
  for (int i = 2; i <= 18; ++i) fib.push_back(fib[i - 1] + fib[i - 2]);
  CHECK(scalar(run(*m, "fib", {RtValue(int64_t{18})})) == static_cast<double>(fib[18]));
  CHECK(scalar(run(*m, "fib", {RtValue(int64_t{1})})) == 1);
}

TEST_CASE("deep non-tail recursion gives the depth error, not a crash") {
  auto m = parse(kRecursion);
  std::string e = run_error(*m, "fact", {RtValue(int64_t{100000})});
  CHECK_MESSAGE(e.find("maximum recursion depth (1000) exceeded") != std::string::npos, e);
  CHECK_MESSAGE(e.find("rec.msl:12") != std::string::npos, e);
  ExecOptions opts;
  opts.max_depth = 10;
  CHECK(run_error(*m, "fact", {RtValue(int64_t{9})}, opts) == "");
  CHECK(run_error(*m, "fact", {RtValue(int64_t{11})}, opts) != "");
}

TEST_CASE("tuples") {
  auto m = parse(
      "subgraph @f(%para1_x) {\n"
      "  %0 = make_tuple(1, 2.5, \"s\", %para1_x)\n"
      "  %1 = tuple_getitem(%0, -1)\n"
      "  %2 = tuple_len(%0)\n"
      "  %3 = make_tuple(%0, %1, %2)\n"
      "  %4 = tuple_getitem(%3, 0)\n"
      "  %5 = tuple_getitem(%4, 2)\n"
      "  %6 = make_tuple(%1, %2, %5, %4)\n"
      "  return(%6)\n"
      "}\n");
  RtValue r = run(*m, "f", {RtValue(true)});
  const auto& t = r.tuple();
  CHECK(t[0].as<bool>() == true);
  CHECK(t[1].as<int64_t>() == 4);
  CHECK(t[2].as<std::string>() == "s");
  CHECK(msl::exec::to_string(t[3]) == "(1, 2.5, s, True)");
  auto bad = parse("subgraph @g() {\n  %0 = make_tuple(1)\n  %1 = tuple_getitem(%0, 3)\n  return(%1)\n}\n");
  std::string e = run_error(*bad, "g", {});
  CHECK_MESSAGE(e.find("out of range") != std::string::npos, e);
}

TEST_CASE("partial applications of graphs and primitives") {
  auto m = parse(
      "subgraph @f(%para1_x) {\n"
      "  %0 = partial(@affine, 3.0)\n"
      "  %1 = partial(%0, %para1_x)\n"
      "  %2 = %1(0.5)\n"
      "  %3 = partial(mul, 2.0)\n"
      "  %4 = %3(%2)\n"
      "  return(%4)\n"
      "}\n"
      "subgraph @affine(%para1_a, %para2_x, %para3_b) {\n"
      "  %0 = mul(%para1_a, %para2_x)\n"
      "  %1 = add(%0, %para3_b)\n"
      "  return(%1)\n"
      "}\n");
  RtValue r = run(*m, "f", {tensor(DType::Float64, {3}, {1, 2, -3})});
  CHECK(values(r) == std::vector<double>{2 * (3.0 * 1 + 0.5), 2 * (3.0 * 2 + 0.5), 2 * (3.0 * -3 + 0.5)});
}

TEST_CASE("print writes in program order along the state chain") {
  auto m = parse(
      "subgraph @main(%para1_x, %para2_u) {\n"
      "  %0 = print(\"first\", %para1_x, %para2_u)\n"
      "  %1 = update_state(%para2_u, %0)\n"
      "  %2 = mul(%para1_x, 2)\n"
      "  %3 = print(\"second\", %2, 2.5, %1)\n"
      "  %4 = update_state(%1, %3)\n"
      "  %5 = depend(%2, %4)\n"
      "  %6 = stop_gradient(%5)\n"
      "  %7 = make_tuple(%6, %4)\n"
      "  return(%7)\n"
      "}\n");
  std::vector<std::string> lines;
  ExecOptions opts;
  opts.print = [&](const std::string& s) { lines.push_back(s); };
  RtValue r = run(*m, "main", {RtValue(int64_t{3}), RtValue(msl::exec::StateToken{})}, opts);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0] == "first 3");
  CHECK(lines[1].rfind("second ", 0) == 0);
  CHECK(lines[1].find("6") != std::string::npos);
  CHECK(lines[1].find(" 2.5") != std::string::npos);
  CHECK(scalar(r.tuple()[0]) == 6);
  CHECK(r.tuple()[1].as<msl::exec::StateToken>().serial == 2);
}

TEST_CASE("zeros_like") {
  auto m = parse(
      "subgraph @f(%para1_x) {\n"
      "  %0 = make_tuple(%para1_x, 3, 2.0)\n"
      "  %1 = zeros_like(%0)\n"
      "  return(%1)\n"
      "}\n");
  RtValue r = run(*m, "f", {tensor(DType::Float16, {2, 2}, {1, 2, 3, 4})});
  const auto& t = r.tuple();
  CHECK(t[0].tensor().dtype() == DType::Float16);
  CHECK(values(t[0]) == std::vector<double>{0, 0, 0, 0});
  CHECK(t[1].as<int64_t>() == 0);
  CHECK(t[2].as<double>() == 0.0);
}
