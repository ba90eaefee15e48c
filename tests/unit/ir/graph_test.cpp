// FuncGraph construction and the on-demand analyses: topological order,
// nesting, free variables, users and deep copy.
#include <doctest/doctest.h>

#include <algorithm>
#include <unordered_map>

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"
#include "lang/ir/printer.h"

using namespace msl;
using namespace msl::ir;
using kernels::Prim;

TEST_CASE("a builder-made graph prints in MindSpore .ir style") {
  IrModule m;
  FuncGraph* f = m.new_graph("f", nullptr, m.loc("file.msl", 3));
  Node* x = f->add_param("x");
  Node* y = f->add_param("y");
  Node* z = f->apply(Prim::mul, {x, y}, "z", m.loc("file.msl", 4));
  Node* r = f->apply(Prim::add, {z, f->constant(1.0)}, "", m.loc("file.msl", 5));
  f->set_output(r);
  CHECK(print_graph(*f) ==
        "# IR of: f (file.msl:3)\n"
        "subgraph @f(%para1_x, %para2_y) {\n"
        "  %0(z) = mul(%para1_x, %para2_y)\n"
        "      # In file file.msl:4\n"
        "  %1 = add(%0, 1.0)\n"
        "      # In file file.msl:5\n"
        "  return(%1)\n"
        "}\n");
  CHECK(r->is_call_of(Prim::add));
  CHECK_FALSE(r->is_call_of(Prim::mul));
  CHECK(r->num_args() == 2);
  CHECK(r->arg(0) == z);
}

namespace {
// def outer(x):
//     y = x * 2.0
//     def inner(a):
//         return a + y          # y is a free variable of inner
//     return inner(x)
struct Closure {
  IrModule m;
  FuncGraph* outer;
  FuncGraph* inner;
  Node *x, *y, *a, *sum, *call;
  Closure() {
    outer = m.new_graph("outer");
    x = outer->add_param("x");
    y = outer->apply(Prim::mul, {x, outer->constant(2.0)}, "y");
    inner = m.new_graph("inner", outer);
    a = inner->add_param("a");
    sum = inner->apply(Prim::add, {a, y});
    inner->set_output(sum);
    call = outer->apply({outer->constant(inner), x});
    outer->set_output(call);
  }
};
}  // namespace

TEST_CASE("topological order: parameters first, inputs before users, stops at free variables") {
  Closure c;
  auto order = topo_order(*c.outer);
  // y is only used by the closure, yet it is outer's node.
  REQUIRE(order.size() == 6);  // x, @inner, call, then mul, 2.0, y
  CHECK(order[0] == c.x);
  CHECK(std::find(order.begin(), order.end(), c.y) != order.end());
  CHECK(order.back() == c.y);  // reached through the nested graph, after the output's nodes
  auto inner = topo_order(*c.inner);
  CHECK(inner.size() == 3);  // a, add (constant), sum
  CHECK(std::find(inner.begin(), inner.end(), c.y) == inner.end());
  CHECK(inner.back() == c.sum);
}

TEST_CASE("nesting tree and free variables") {
  Closure c;
  CHECK(children(*c.outer) == std::vector<FuncGraph*>{c.inner});
  CHECK(children(*c.inner).empty());
  CHECK(nested_graphs(*c.outer) == std::vector<FuncGraph*>{c.outer, c.inner});
  CHECK(free_variables(*c.inner) == std::vector<Node*>{c.y});
  CHECK(free_variables(*c.outer).empty());
  CHECK(c.inner->is_nested_in(c.outer));
  CHECK_FALSE(c.outer->is_nested_in(c.inner));

  // A doubly nested closure: the free variable of the innermost graph is
  // also one of the middle graph (it must capture it to pass it on).
  FuncGraph* deep = c.m.new_graph("deep", c.inner);
  deep->set_output(deep->apply(Prim::neg, {c.y}));
  CHECK(free_variables(*deep) == std::vector<Node*>{c.y});
  CHECK(free_variables(*c.inner) == std::vector<Node*>{c.y});
  // A closure whose body is just the captured value (`lambda: x`).
  FuncGraph* k = c.m.new_graph("k", c.outer);
  k->set_output(c.x);
  CHECK(free_variables(*k) == std::vector<Node*>{c.x});
}

TEST_CASE("users side table") {
  Closure c;
  UsersMap users = compute_users(*c.outer);
  REQUIRE(users.count(c.y));
  CHECK(users[c.y] == Users{{c.sum, 2}});
  REQUIRE(users.count(c.x));
  CHECK(users[c.x].size() == 2);  // y = x * 2.0 and inner(x)
}

TEST_CASE("graph names are unique and printable") {
  IrModule m;
  FuncGraph* a = m.new_graph("f");
  FuncGraph* b = m.new_graph("f");
  FuncGraph* c = m.new_graph("<lambda>");
  CHECK(a->name() == "f");
  CHECK(b->name() == "f_1");
  CHECK(c->name() == "_lambda_");
  CHECK(m.find_graph("f_1") == b);
  CHECK(m.find_graph("nope") == nullptr);
}

TEST_CASE("node ids are dense and constants hold every kind of value") {
  IrModule m;
  FuncGraph* g = m.new_graph("g");
  Node* c0 = g->constant(NoneValue{});
  Node* c1 = g->constant(int64_t{3});
  Node* c2 = m.new_constant(std::string("hi"));
  CHECK(c0->id() == 0);
  CHECK(c1->id() == 1);
  CHECK(c2->id() == 2);
  CHECK(m.num_nodes() == 3);
  CHECK(c2->graph() == nullptr);
  CHECK(const_value_str(c0->value()) == "None");
  CHECK(const_value_str(c1->value()) == "3");
  CHECK(const_value_str(c2->value()) == "\"hi\"");
  CHECK(const_value_str(ConstValue{2.5}) == "2.5");
  CHECK(const_value_str(ConstValue{1e20}) == "1e+20");
  CHECK(const_value_str(ConstValue{-3.0}) == "-3.0");
  CHECK(const_value_str(ConstValue{0.1}) == "0.1");
  CHECK(const_value_str(ConstValue{true}) == "True");
  CHECK(const_value_str(ConstValue{IrOp::tuple_getitem}) == "tuple_getitem");
  CHECK(const_value_str(ConstValue{g}) == "@g");
  CHECK(const_value_str(
            ConstValue{PrimRef{Prim::reduce_sum, {{"axes", std::vector<int64_t>{0}}, {"keep_dims", true}}}}) ==
        "reduce_sum[axes=(0,), keep_dims=True]");
  CHECK(const_value_str(ConstValue{PrimRef{Prim::cast, {{"dtype", kernels::DType::Float16}}}}) ==
        "cast[dtype=Float16]");
  auto t = tensor_from_values(kernels::DType::Float32, kernels::Dims{2, 2}, {1, 2, 3, 4.5});
  CHECK(const_value_str(ConstValue{t}) == "Tensor[Float32](2, 2)[1.0, 2.0, 3.0, 4.5]");
  auto b = tensor_from_values(kernels::DType::Bool, kernels::Dims{2}, {1, 0});
  CHECK(const_value_str(ConstValue{b}) == "Tensor[Bool](2)[True, False]");
  auto s = tensor_from_values(kernels::DType::Int32, kernels::Dims{}, {7});
  CHECK(const_value_str(ConstValue{s}) == "Tensor[Int32]()[7]");
}

TEST_CASE("IR operators and kernel primitives have disjoint names") {
  for (int i = 0; i < kernels::kNumPrims; ++i) {
    IrOp op;
    CHECK_FALSE(find_ir_op(kernels::prim_name(static_cast<Prim>(i)), op));
  }
  IrOp op;
  REQUIRE(find_ir_op("switch", op));
  CHECK(op == IrOp::switch_);
  CHECK(ir_op_arity(IrOp::update_state) == 2);
}

TEST_CASE("clone copies a graph and its nested graphs, sharing outer free variables") {
  Closure c;
  FuncGraph* copy = clone_graph(*c.outer, "outer_copy");
  CHECK(copy->name() == "outer_copy");
  CHECK(copy->params().size() == 1);
  CHECK(copy->params()[0] != c.x);
  // Same text apart from the names of the graphs.
  std::string a = print_graph(*c.outer), b = print_graph(*copy);
  auto replace_all = [](std::string s, const std::string& from, const std::string& to) {
    for (size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size()) s.replace(p, from.size(), to);
    return s;
  };
  b = replace_all(replace_all(b, "@inner_1", "@inner"), "@outer_copy", "@outer");
  b = replace_all(b, "IR of: inner_1", "IR of: inner");
  b = replace_all(b, "IR of: outer_copy", "IR of: outer");
  CHECK(a == b);
  // The cloned closure captures the cloned y, not the original.
  auto kids = children(*copy);
  REQUIRE(kids.size() == 1);
  CHECK(kids[0] != c.inner);
  auto fv = free_variables(*kids[0]);
  REQUIRE(fv.size() == 1);
  CHECK(fv[0] != c.y);
  CHECK(fv[0]->graph() == copy);

  // Cloning the inner graph alone keeps y shared (it lives outside the clone).
  FuncGraph* inner2 = clone_graph(*c.inner);
  CHECK(inner2->parent() == c.outer);
  CHECK(free_variables(*inner2) == std::vector<Node*>{c.y});
}

TEST_CASE("nested graphs print after their parents with free variables as @graph.%n") {
  Closure c;
  c.outer->flags().set("is_bprop", true);
  CHECK(print_graph(*c.outer) ==
        "# IR of: outer\n"
        "subgraph @outer(%para1_x) flags[is_bprop=True] {\n"
        "  %0 = @inner(%para1_x)\n"
        "  %1(y) = mul(%para1_x, 2.0)\n"
        "  return(%0)\n"
        "}\n"
        "\n"
        "# IR of: inner\n"
        "subgraph @inner(%para1_a) parent=@outer {\n"
        "  %0 = add(%para1_a, @outer.%1)\n"
        "  return(%0)\n"
        "}\n");
}

TEST_CASE("types from a side table follow each Apply") {
  IrModule m;
  FuncGraph* f = m.new_graph("f");
  Node* x = f->add_param("x");
  Node* y = f->add_param("y");
  Node* z = f->apply(Prim::mul, {x, y}, "z");
  f->set_output(z);
  std::unordered_map<uint32_t, std::string> types{
      {x->id(), "Tensor[Float32](2, 3)"}, {y->id(), "Tensor[Float32](2, 3)"}, {z->id(), "Tensor[Float32](2, 3)"}};
  PrintOptions opts;
  opts.type_of = [&](const Node* n) {
    auto it = types.find(n->id());
    return it == types.end() ? std::string() : it->second;
  };
  CHECK(print_graph(*f, opts).find(
            "  %0(z) = mul(%para1_x, %para2_y) : (Tensor[Float32](2, 3), Tensor[Float32](2, 3)) -> "
            "Tensor[Float32](2, 3)\n") != std::string::npos);
}
