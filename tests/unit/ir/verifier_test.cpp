// The verifier: a valid module passes; each broken invariant is reported.
#include "lang/ir/verifier.h"

#include <doctest/doctest.h>

#include <string>

#include "lang/ir/ir_module.h"
#include "lang/ir/ir_parser.h"

using namespace msl;
using namespace msl::ir;
using kernels::Prim;

namespace {
bool mentions(const std::vector<std::string>& errs, const std::string& what) {
  for (auto& e : errs)
    if (e.find(what) != std::string::npos) return true;
  return false;
}
std::string joined(const std::vector<std::string>& errs) {
  std::string s;
  for (auto& e : errs) s += e + "\n";
  return s;
}
}  // namespace

TEST_CASE("a valid module with closures, effects and variadic ops verifies") {
  IrModule m;
  IrParseResult r = parse_ir(
      "subgraph @f(%para1_x, %para2_u) {\n"
      "  %0 = assign(%para1_x, 1.0, %para2_u)\n"
      "  %1 = update_state(%para2_u, %0)\n"
      "  %2 = print(\"x\", %para1_x, %1)\n"
      "  %3 = update_state(%1, %2)\n"
      "  %4 = concat[axis=0](%para1_x, %para1_x, %para1_x)\n"
      "  %5 = partial(@g, %4)\n"
      "  %6 = %5(2.0)\n"
      "  %7 = make_tuple(%6, %3)\n"
      "  return(%7)\n"
      "}\n"
      "subgraph @g(%para1_a, %para2_b) parent=@f {\n"
      "  %0 = add(%para1_a, @f.%para1_x)\n"
      "  %1 = J(@f)\n"
      "  %2 = depend(%0, %1)\n"
      "  return(%2)\n"
      "}\n",
      m);
  REQUIRE_MESSAGE(r.ok(), r.error);
  auto errs = verify_module(m);
  CHECK_MESSAGE(errs.empty(), joined(errs));
}

TEST_CASE("missing output and wrong arity are reported") {
  IrModule m;
  FuncGraph* g = m.new_graph("g");
  Node* x = g->add_param("x");
  CHECK(mentions(verify_graph(*g), "has no output"));
  Node* bad = g->apply(Prim::add, {x}, "bad");
  Node* badop = g->apply(IrOp::tuple_getitem, {bad});
  Node* assign_no_state = g->apply(Prim::assign, {x, x});
  g->set_output(g->apply(IrOp::make_tuple, {badop, assign_no_state}));
  auto errs = verify_graph(*g);
  CHECK(mentions(errs, "primitive add takes 2 argument(s), got 1"));
  CHECK(mentions(errs, "operator tuple_getitem takes 2 argument(s), got 1"));
  CHECK(mentions(errs, "primitive assign takes 3 argument(s), got 2"));
  CHECK(errs.size() == 3);
}

TEST_CASE("a node of an unrelated graph is not a legal free variable") {
  IrModule m;
  FuncGraph* a = m.new_graph("a");
  Node* ax = a->add_param("x");
  a->set_output(ax);
  FuncGraph* b = m.new_graph("b");  // not nested in a
  b->set_output(b->apply(Prim::neg, {ax}));
  auto errs = verify_graph(*b);
  CHECK(mentions(errs, "which does not enclose @b"));
  // Nested in a, the same use is a free variable and fine.
  b->set_parent(a);
  CHECK(verify_graph(*b).empty());
  // A parent cannot use its child's nodes.
  FuncGraph* c = m.new_graph("c", a);
  Node* cx = c->add_param("y");
  c->set_output(cx);
  a->set_output(a->apply(Prim::neg, {cx}));
  CHECK(mentions(verify_graph(*a), "which does not enclose @a"));
}

TEST_CASE("graph references across modules, parent cycles and bad callees") {
  IrModule m, other;
  FuncGraph* foreign = other.new_graph("foreign");
  foreign->set_output(foreign->constant(int64_t{1}));
  FuncGraph* g = m.new_graph("g");
  g->set_output(g->apply({g->constant(foreign)}));
  CHECK(mentions(verify_graph(*g), "of another module"));

  FuncGraph* p = m.new_graph("p");
  FuncGraph* q = m.new_graph("q", p);
  p->set_parent(q);
  p->set_output(p->constant(NoneValue{}));
  CHECK(mentions(verify_graph(*p), "parent chain is cyclic"));

  FuncGraph* h = m.new_graph("h");
  h->set_output(h->apply({h->constant(int64_t{3}), h->constant(int64_t{4})}));
  CHECK(mentions(verify_graph(*h), "not callable: 3"));
}

TEST_CASE("parameters must belong to their graph") {
  IrModule m;
  FuncGraph* a = m.new_graph("a");
  FuncGraph* b = m.new_graph("b");
  Node* x = b->add_param("x");
  b->set_output(x);
  // A node of b used as a's output, and a parameter owned by b that a's
  // parent chain does not reach.
  a->set_output(x);
  auto errs = verify_graph(*a);
  CHECK(mentions(errs, "does not enclose @a"));
  CHECK(verify_graph(*b).empty());
}
