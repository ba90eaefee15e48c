// Liveness (lang/ir/liveness.h): where each value dies, and the values that
// must live to the end (the output's operands, what closures capture and
// what those are computed from).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>

#include "lang/ir/ir_module.h"
#include "lang/ir/ir_parser.h"
#include "lang/ir/liveness.h"

using namespace msl::ir;

namespace {

std::unique_ptr<IrModule> parse(const std::string& text) {
  auto m = std::make_unique<IrModule>();
  IrParseResult r = parse_ir(text, *m, "t.ir");
  REQUIRE_MESSAGE(r.ok(), r.error);
  return m;
}

// Where each value dies: "node text -> index of the node in the order whose
// last use it is", by the value's IR name (%N or %paraN_x).
std::map<std::string, std::string> deaths(const FuncGraph& g) {
  Liveness lv = liveness(g);
  REQUIRE(lv.order.size() == lv.release.size());
  auto name = [&](const Node* n) {
    for (size_t i = 0; i < g.params().size(); ++i)
      if (g.params()[i] == n) return "p" + std::to_string(i);
    auto it = std::find(lv.order.begin(), lv.order.end(), n);
    return "n" + std::to_string(it - lv.order.begin());
  };
  std::map<std::string, std::string> out;
  for (size_t k = 0; k < lv.order.size(); ++k)
    for (const Node* d : lv.release[k]) {
      CHECK_MESSAGE(out.count(name(d)) == 0, "released twice");
      out[name(d)] = name(lv.order[k]);
    }
  return out;
}

}  // namespace

TEST_CASE("a chain releases each value at its last user, the output included") {
  auto m = parse(
      "subgraph @f(%para1_x, %para2_y) {\n"
      "  %0 = mul(%para1_x, %para2_y)\n"
      "  %1 = add(%0, %para1_x)\n"
      "  %2 = exp(%1)\n"
      "  %3 = sub(%2, %0)\n"
      "  %4 = neg(%3)\n"
      "  %5 = make_tuple(%4, %1)\n"
      "  return(%5)\n"
      "}\n");
  const FuncGraph& g = *m->find_graph("f");
  Liveness lv = liveness(g);
  // order: params p0 p1, then %0..%5 (constants owned by no graph are not listed).
  auto pos = [&](const Node* n) { return std::find(lv.order.begin(), lv.order.end(), n) - lv.order.begin(); };
  const Node* out = g.output();
  const Node* n4 = out->arg(0);  // neg
  const Node* n1 = out->arg(1);  // add
  const Node* n3 = n4->arg(0);   // sub
  const Node* n2 = n3->arg(0);   // exp
  const Node* n0 = n3->arg(1);   // mul
  auto dies_at = [&](const Node* v) -> const Node* {
    for (size_t k = 0; k < lv.order.size(); ++k)
      if (std::find(lv.release[k].begin(), lv.release[k].end(), v) != lv.release[k].end()) return lv.order[k];
    return nullptr;
  };
  CHECK(dies_at(g.params()[1]) == n0);  // y: only the mul
  CHECK(dies_at(g.params()[0]) == n1);  // x: mul, then add
  CHECK(dies_at(n0) == n3);             // the mul is used again by sub
  CHECK(dies_at(n2) == n3);
  CHECK(dies_at(n3) == n4);
  CHECK(dies_at(n1) == out);  // operands of the output die there
  CHECK(dies_at(n4) == out);
  CHECK(dies_at(out) == nullptr);  // the result
  CHECK(pos(n0) < pos(n3));
  CHECK(deaths(g).size() == 7);
}

TEST_CASE("values a closure captures, and what they are computed from, are never released") {
  auto m = parse(
      "subgraph @main(%para1_x, %para2_y) {\n"
      "  %0 = mul(%para1_x, 2.0)\n"
      "  %1 = add(%0, 1.0)\n"
      "  %2 = neg(%para2_y)\n"
      "  %3 = exp(%2)\n"
      "  %4 = @inner(%3)\n"
      "  return(%4)\n"
      "}\n"
      "subgraph @inner(%para1_z) parent=@main {\n"
      "  %0 = add(@main.%1, %para1_z)\n"
      "  return(%0)\n"
      "}\n");
  const FuncGraph& g = *m->find_graph("main");
  std::map<std::string, std::string> d = deaths(g);
  // %1 is inner's free variable; %0 and x compute it (an executor that
  // computes %1 on demand when the closure is made needs them): pinned.
  // y dies at neg, neg's value at exp, exp's at the output call.
  CHECK(d.size() == 3);
  CHECK(d.count("p1") == 1);
  CHECK(d.count("p0") == 0);
}

TEST_CASE("a value used twice by one node dies at that node once") {
  auto m = parse(
      "subgraph @f(%para1_x) {\n"
      "  %0 = exp(%para1_x)\n"
      "  %1 = mul(%0, %0)\n"
      "  %2 = neg(%1)\n"
      "  return(%2)\n"
      "}\n");
  const FuncGraph& g = *m->find_graph("f");
  std::map<std::string, std::string> d = deaths(g);
  // x dies at exp, exp's value at mul, mul's at neg (the output).
  Liveness lv = liveness(g);
  auto idx = [&](const Node* n) {
    return "n" + std::to_string(std::find(lv.order.begin(), lv.order.end(), n) - lv.order.begin());
  };
  const Node* mul = g.output()->arg(0);
  const Node* ex = mul->arg(0);
  CHECK(d.size() == 3);
  CHECK(d["p0"] == idx(ex));
  CHECK(d[idx(ex)] == idx(mul));
  CHECK(d[idx(mul)] == idx(g.output()));
}

TEST_CASE("an in-place write waits until the reads that do not depend on it have run") {
  // %1 writes w; %2 reads w without depending on the write (a weight read
  // in the backward pass, the write its optimizer update); %4 reads the
  // write's result. topo_order would run the write first (it is the first
  // operand of the output tuple).
  auto m = parse(
      "subgraph @f(%para1_w, %para2_x) {\n"
      "  %0 = mul(%para2_x, 2.0)\n"
      "  %1 = assign(%para1_w, %0)\n"
      "  %2 = mul(%para1_w, %para2_x)\n"
      "  %3 = exp(%2)\n"
      "  %4 = add(%1, 1.0)\n"
      "  %5 = make_tuple(%1, %3, %4)\n"
      "  return(%5)\n"
      "}\n");
  const FuncGraph& g = *m->find_graph("f");
  std::vector<Node*> topo = topo_order(g);
  Liveness lv = liveness(g);
  REQUIRE(lv.order.size() == topo.size());
  const Node* out = g.output();
  const Node* write = out->arg(0);
  const Node* read = out->arg(1)->arg(0);
  const Node* after = out->arg(2);
  auto pos = [](const std::vector<Node*>& o, const Node* n) { return std::find(o.begin(), o.end(), n) - o.begin(); };
  CHECK(pos(topo, write) < pos(topo, read));
  CHECK(pos(lv.order, read) < pos(lv.order, write));
  CHECK(pos(lv.order, out->arg(1)) < pos(lv.order, write));  // exp too: everything ready goes first
  CHECK(pos(lv.order, write) < pos(lv.order, after));
  CHECK(lv.order.back() == out);
}
