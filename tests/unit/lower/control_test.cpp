// Control flow: if/elif/else as branch graphs with the tuple join, return
// inside branches, while and for-range as tail-recursive loop graphs,
// nested defs, lambdas and conditional expressions as closures.
#include <doctest/doctest.h>

#include "lang/ir/ir_parser.h"
#include "lower_test_util.h"

using namespace msl;
using namespace msl::lower_test;
using kernels::Prim;

namespace {
bool is_free_var_of(const ir::FuncGraph& g, const std::string& name) {
  for (ir::Node* n : ir::free_variables(g))
    if (n->name() == name) return true;
  return false;
}
}  // namespace

TEST_CASE("if/else: branch graphs, switch, call, tuple join") {
  Lowered r = lower_source(
      "def f(x, c):\n"
      "    if c:\n"
      "        y = x + 1.0\n"
      "    else:\n"
      "        y = x * 2.0\n"
      "    return y\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x, %para2_c) {\n"
        "  %0 = switch(%para2_c, @f_true, @f_false)\n"
        "  %1 = %0()\n"
        "  %2(y) = tuple_getitem(%1, 0)\n"
        "  return(%2)\n"
        "}\n"
        "subgraph @f_true() parent=@f {\n"
        "  %0(y) = add(@f.%para1_x, 1.0)\n"
        "  %1 = make_tuple(%0)\n"
        "  return(%1)\n"
        "}\n"
        "subgraph @f_false() parent=@f {\n"
        "  %0(y) = mul(@f.%para1_x, 2.0)\n"
        "  %1 = make_tuple(%0)\n"
        "  return(%1)\n"
        "}\n");
  CHECK(ir::verify_module(*r.module).empty());
  CHECK(is_free_var_of(*r.graph("f_true"), "x"));
  CHECK(is_free_var_of(*r.graph("f_false"), "x"));
}

TEST_CASE("if without else keeps the old binding in the false branch; elif nests") {
  Lowered r = lower_source(
      "def f(x):\n"
      "    y = x\n"
      "    if x > 0:\n"
      "        y = neg(x)\n"
      "    elif x < -1:\n"
      "        y = x * x\n"
      "    return y\n");
  REQUIRE(r.errors.empty());
  CHECK(r.module->graphs().size() == 5);  // f, f_true, f_false, f_false_true, f_false_false
  CHECK(ir::verify_module(*r.module).empty());
  ir::FuncGraph* ff = r.graph("f_false");
  REQUIRE(ff != nullptr);
  CHECK(count_calls(*ff, ir::IrOp::switch_) == 1);
  CHECK(r.graph("f_false_true")->parent() == ff);
  // The innermost else returns the binding of f: a free variable two levels up.
  CHECK(r.graph("f_false_false")->output()->arg(0)->is_parameter());
}

TEST_CASE("return inside a branch: the rest of the function goes into both branches") {
  Lowered r = lower_source(
      "def f(x):\n"
      "    if x > 0:\n"
      "        return x\n"
      "    y = x * 3.0\n"
      "    return y\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x) {\n"
        "  %0 = greater(%para1_x, 0)\n"
        "  %1 = switch(%0, @f_true, @f_false)\n"
        "  %2 = %1()\n"
        "  return(%2)\n"
        "}\n"
        "subgraph @f_true() parent=@f {\n"
        "  return(@f.%para1_x)\n"
        "}\n"
        "subgraph @f_false() parent=@f {\n"
        "  %0(y) = mul(@f.%para1_x, 3.0)\n"
        "  return(%0)\n"
        "}\n");
  CHECK(ir::verify_module(*r.module).empty());
}

TEST_CASE("while: a tail-recursive loop graph over the loop-carried variables") {
  Lowered r = lower_source(
      "def count(n):\n"
      "    i = 0\n"
      "    s = 0\n"
      "    while i < n:\n"
      "        s = s + i\n"
      "        i = i + 1\n"
      "    return s\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @count(%para1_n) {\n"
        "  %0 = @count_while(0, 0)\n"
        "  %1(s) = tuple_getitem(%0, 1)\n"
        "  return(%1)\n"
        "}\n"
        "subgraph @count_while(%para1_i, %para2_s) parent=@count {\n"
        "  %0 = less(%para1_i, @count.%para1_n)\n"
        "  %1 = switch(%0, @count_while_body, @count_while_exit)\n"
        "  %2 = %1()\n"
        "  return(%2)\n"
        "}\n"
        "subgraph @count_while_body() parent=@count_while {\n"
        "  %0(i) = add(@count_while.%para1_i, 1)\n"
        "  %1(s) = add(@count_while.%para2_s, @count_while.%para1_i)\n"
        "  %2 = @count_while(%0, %1)\n"
        "  return(%2)\n"
        "}\n"
        "subgraph @count_while_exit() parent=@count_while {\n"
        "  %0 = make_tuple(@count_while.%para1_i, @count_while.%para2_s)\n"
        "  return(%0)\n"
        "}\n");
  CHECK(ir::verify_module(*r.module).empty());
  // Not unrolled: the body calls the loop graph itself.
  ir::FuncGraph* loop = r.graph("count_while");
  CHECK(r.graph("count_while_body")->output()->callee()->as_graph() == loop);
}

TEST_CASE("for i in range(a, b): counter parameter, less and add of the step") {
  Lowered r = lower_source(
      "def f(x, n):\n"
      "    for i in range(1, n):\n"
      "        x = x * i\n"
      "    return x\n");
  REQUIRE(r.errors.empty());
  ir::FuncGraph* loop = r.graph("f_for");
  REQUIRE(loop != nullptr);
  CHECK(loop->params().size() == 2);
  CHECK(loop->params()[0]->name() == "i");
  CHECK(loop->params()[1]->name() == "x");
  CHECK(count_calls(*loop, Prim::less) == 1);
  ir::FuncGraph* body = r.graph("f_for_body");
  CHECK(count_calls(*body, Prim::add) == 1);
  CHECK(count_calls(*body, Prim::mul) == 1);
  CHECK(body->output()->callee()->as_graph() == loop);
  CHECK(r.module->graphs().size() == 4);  // f, loop, body, exit: no unrolling
  CHECK(ir::verify_module(*r.module).empty());
  CHECK(r.text().find("  %0 = @f_for(1, %para1_x)\n") != std::string::npos);
}

TEST_CASE("nested def and lambda are closures called through their node") {
  Lowered r = lower_source(
      "def f(x, y):\n"
      "    def scale(a):\n"
      "        return a * y\n"
      "    sq = lambda b: b * b\n"
      "    return sq(scale(x))\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x, %para2_y) {\n"
        "  %0 = @scale(%para1_x)\n"
        "  %1 = @f_lambda(%0)\n"
        "  return(%1)\n"
        "}\n"
        "subgraph @scale(%para1_a) parent=@f {\n"
        "  %0 = mul(%para1_a, @f.%para2_y)\n"
        "  return(%0)\n"
        "}\n"
        "subgraph @f_lambda(%para1_b) parent=@f {\n"
        "  %0 = mul(%para1_b, %para1_b)\n"
        "  return(%0)\n"
        "}\n");
  CHECK(is_free_var_of(*r.graph("scale"), "y"));
  CHECK(ir::verify_module(*r.module).empty());
}

TEST_CASE("conditional expression: two branch graphs and a switch") {
  Lowered r = lower_source("def f(x, c):\n    y = x if c else -x\n    return y\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x, %para2_c) {\n"
        "  %0 = switch(%para2_c, @f_true, @f_false)\n"
        "  %1(y) = %0()\n"
        "  return(%1)\n"
        "}\n"
        "subgraph @f_true() parent=@f {\n"
        "  return(@f.%para1_x)\n"
        "}\n"
        "subgraph @f_false() parent=@f {\n"
        "  %0 = neg(@f.%para1_x)\n"
        "  return(%0)\n"
        "}\n");
}

TEST_CASE("lowered IR prints, parses back and prints the same") {
  Lowered r = lower_source(
      "def f(x, n):\n"
      "    s = x\n"
      "    for i in range(n):\n"
      "        if i > 2:\n"
      "            s = s + i\n"
      "    g = lambda a: a * s\n"
      "    return g(ops.relu(s))\n");
  REQUIRE(r.errors.empty());
  CHECK(ir::verify_module(*r.module).empty());
  std::string text = ir::print_module(*r.module);
  ir::IrModule m2;
  ir::IrParseResult p = ir::parse_ir(text, m2);
  REQUIRE_MESSAGE(p.ok(), p.error);
  CHECK(ir::print_module(m2) == text);
  CHECK(ir::verify_module(m2).empty());
}

TEST_CASE("augmented assignment and annotated assignment rebind the name") {
  Lowered r = lower_source("def f(x):\n    y: int = x\n    y += 2\n    y *= y\n    return y\n");
  REQUIRE(r.errors.empty());
  CHECK(r.text() ==
        "subgraph @f(%para1_x) {\n"
        "  %0(y) = add(%para1_x, 2)\n"
        "  %1(y) = mul(%0, %0)\n"
        "  return(%1)\n"
        "}\n");
}
