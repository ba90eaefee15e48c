// Straight-line code: parameters, SSA assignments, operators, constants,
// tuples, calls of primitives (with attributes) and of other functions.
#include <doctest/doctest.h>

#include "lower_test_util.h"

using namespace msl;
using namespace msl::lower_test;
using kernels::Prim;

TEST_CASE("operators and SSA assignments lower to primitive applications") {
  Lowered r = lower_source(
      "def f(x, y):\n"
      "    z = x * y + 1.0\n"
      "    z = z @ y\n"
      "    return -z < 2\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x, %para2_y) {\n"
        "  %0 = mul(%para1_x, %para2_y)\n"
        "  %1(z) = add(%0, 1.0)\n"
        "  %2(z) = matmul(%1, %para2_y)\n"
        "  %3 = neg(%2)\n"
        "  %4 = less(%3, 2)\n"
        "  return(%4)\n"
        "}\n");
  CHECK(ir::verify_module(*r.module).empty());
}

TEST_CASE("tuples: make_tuple, constant index, unpacking") {
  Lowered r = lower_source(
      "def f(x, y):\n"
      "    t = (x, y, 3)\n"
      "    a, b = t[0], t[-1]\n"
      "    return a - b\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x, %para2_y) {\n"
        "  %0(t) = make_tuple(%para1_x, %para2_y, 3)\n"
        "  %1 = tuple_getitem(%0, 0)\n"
        "  %2 = tuple_getitem(%0, -1)\n"
        "  %3 = make_tuple(%1, %2)\n"
        "  %4(a) = tuple_getitem(%3, 0)\n"
        "  %5(b) = tuple_getitem(%3, 1)\n"
        "  %6 = sub(%4, %5)\n"
        "  return(%6)\n"
        "}\n");
  CHECK(ir::verify_module(*r.module).empty());
}

TEST_CASE("no return yields None; docstrings and pass lower to nothing") {
  Lowered r = lower_source("def f(x):\n    \"doc\"\n    pass\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() == "subgraph @f(%para1_x) {\n  return(None)\n}\n");
}

TEST_CASE("primitive calls resolve by name, dotted name and class style, with attributes") {
  Lowered r = lower_source(
      "def f(x):\n"
      "    a = relu(x)\n"
      "    b = ops.reduce_sum(a, axes=(0, 1), keep_dims=True)\n"
      "    c = msl.ops.softmax(b, axis=-1)\n"
      "    d = P.ReLU()(c)\n"
      "    e = P.ReduceSum(keep_dims=False)(d)\n"
      "    return e\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x) {\n"
        "  %0(a) = relu(%para1_x)\n"
        "  %1(b) = reduce_sum[axes=(0, 1), keep_dims=True](%0)\n"
        "  %2(c) = softmax[axis=-1](%1)\n"
        "  %3(d) = relu(%2)\n"
        "  %4(e) = reduce_sum[keep_dims=False](%3)\n"
        "  return(%4)\n"
        "}\n");
  CHECK(ir::verify_module(*r.module).empty());
}

TEST_CASE("a call of another top-level def is a call of its graph; each def is lowered once") {
  Lowered r = lower_source(
      "def g(a):\n"
      "    return a + a\n"
      "def f(x):\n"
      "    return g(x) * g(2.0)\n");
  REQUIRE(r.errors.empty());
  CHECK(r.module->graphs().size() == 2);
  CHECK(r.text() ==
        "subgraph @g(%para1_a) {\n"
        "  %0 = add(%para1_a, %para1_a)\n"
        "  return(%0)\n"
        "}\n"
        "subgraph @f(%para1_x) {\n"
        "  %0 = @g(%para1_x)\n"
        "  %1 = @g(2.0)\n"
        "  %2 = mul(%0, %1)\n"
        "  return(%2)\n"
        "}\n");
}

TEST_CASE("recursion refers to the graph being lowered") {
  Lowered r = lower_source(
      "def fact(n):\n"
      "    if n < 1:\n"
      "        return 1\n"
      "    return n * fact(n - 1)\n");
  REQUIRE(r.errors.empty());
  CHECK(r.module->graphs().size() == 3);
  CHECK(ir::verify_module(*r.module).empty());
  CHECK(r.text().find("= @fact(") != std::string::npos);
}

TEST_CASE("every apply carries its source location") {
  Lowered r = lower_source("def f(x):\n    y = x + 1.0\n    return y\n");
  REQUIRE(r.errors.empty());
  ir::Node* out = r.graph("f")->output();
  CHECK(out->name() == "y");
  CHECK(out->loc().valid());
  CHECK(out->loc().line == 2);
  CHECK(out->loc().col == 9);
  CHECK(*out->loc().file == "t.msl");
  CHECK(ir::print_module(*r.module).find("# In file t.msl:2:9") != std::string::npos);
}

TEST_CASE("a call of a parameter or local value is an Apply of that node") {
  Lowered r = lower_source("def f(fn, x):\n    h = fn\n    return h(x, 1)\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_fn, %para2_x) {\n"
        "  %0 = %para1_fn(%para2_x, 1)\n"
        "  return(%0)\n"
        "}\n");
}

TEST_CASE("unsupported operators name themselves") {
  Lowered r = lower_source("def f(x):\n    return x << 1\n");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.error_text().substr(0, r.error_text().find('\n')) ==
        "t.msl:2:14: error: operator '<<' is not supported in graph mode");
}
