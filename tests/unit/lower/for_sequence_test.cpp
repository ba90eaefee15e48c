// `for x in SEQ` over sequences of known length is unrolled: tuple and list
// displays, local tuples, tuple targets, and globals the resolver reports as
// a Sequence (a Python list such as `self.layers`). Results are checked by
// running the lowered graphs; errors name the construct.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "jit/exec/executor.h"
#include "lower_test_util.h"

using namespace msl;
using namespace msl::lower_test;
using exec::RtValue;

namespace {
double num(const RtValue& v) {
  if (auto i = v.get_if<int64_t>()) return static_cast<double>(*i);
  REQUIRE_MESSAGE(v.is<double>(), exec::type_name(v));
  return v.as<double>();
}

RtValue run_ok(const Lowered& r, const std::string& name, std::vector<RtValue> args) {
  REQUIRE_MESSAGE(r.errors.empty(), r.error_text());
  CHECK(ir::verify_module(*r.module).empty());
  const ir::FuncGraph* g = r.graph(name);
  REQUIRE(g != nullptr);
  return exec::run_graph(*g, std::move(args));
}

std::string first_error(const Lowered& r) {
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].error_type == "GraphModeError");
  std::string s = format_diagnostic(r.errors[0]);
  return s.substr(0, s.find('\n'));
}
}  // namespace

TEST_CASE("for over a tuple display: unrolled, one copy of the body per item") {
  Lowered r = lower_source(
      "def f(x):\n"
      "    s = 0.0\n"
      "    for w in (1.5, 2.0, -4.0):\n"
      "        s = s + w * x\n"
      "    return s\n");
  CHECK(num(run_ok(r, "f", {2.0})) == doctest::Approx((1.5 + 2.0 - 4.0) * 2.0));
  CHECK(r.module->graphs().size() == 1);  // no loop graph
  CHECK(count_calls(*r.graph("f"), kernels::Prim::mul) == 3);
}

TEST_CASE("for over a local tuple and a list display with a tuple target; nested range loop inside") {
  Lowered r = lower_source(
      "def f(x, n):\n"
      "    ws = (x, x * 2, x * 3)\n"
      "    acc = 0\n"
      "    for w in ws:\n"
      "        for i in range(n):\n"
      "            if i == 2:\n"
      "                break\n"
      "            acc = acc + w\n"
      "    for a, b in [(1, 10), (2, 20)]:\n"
      "        acc = acc + a * b\n"
      "    return acc\n");
  // x + 2x + 3x, each added min(n, 2) times, then 1*10 + 2*20.
  for (int64_t n : {0, 1, 5}) {
    int64_t reps = n < 2 ? n : 2;
    CHECK(num(run_ok(r, "f", {int64_t{7}, n})) == static_cast<double>(6 * 7 * reps + 50));
  }
  // Three copies of the inner loop, each its own graph.
  CHECK(r.graph("f_for") != nullptr);
  CHECK(count_calls(*r.graph("f"), ir::IrOp::tuple_getitem) >= 3);
}

TEST_CASE("for over a global Sequence: each item is what the resolver says it is") {
  // self.layers = [double, inc, double] (functions), self.scales = [2, -3] (constants).
  auto with_lists = [](ir::Resolver base) {
    return [base](const std::string& name) {
      if (name != "self.layers" && name != "self.scales") return base(name);
      ir::ResolvedName seq;
      seq.kind = ir::ResolvedName::Kind::Sequence;
      if (name == "self.layers") {
        for (const char* fn : {"double", "inc", "double"}) seq.items.push_back(base(fn));
        return seq;
      }
      for (int64_t v : {2, -3}) {
        ir::ResolvedName c;
        c.kind = ir::ResolvedName::Kind::Constant;
        c.value = v;
        seq.items.push_back(c);
      }
      return seq;
    };
  };
  Lowered r = lower_source(
      "def double(x):\n"
      "    return x * 2\n"
      "def inc(x):\n"
      "    return x + 1\n"
      "def net(x):\n"
      "    for layer in self.layers:\n"
      "        x = layer(x)\n"
      "    for c in self.scales:\n"
      "        x = x * c + 1\n"
      "    return x\n",
      with_lists);
  CHECK(num(run_ok(r, "net", {int64_t{5}})) == (((5 * 2 + 1) * 2) * 2 + 1) * -3 + 1);
  ir::FuncGraph* net = r.graph("net");
  // Three calls of the function graphs, in the list's order: no loop graph.
  std::vector<std::string> callees;
  for (ir::Node* n : ir::topo_order(*net))
    if (n->is_apply() && n->callee()->as_graph()) callees.push_back(n->callee()->as_graph()->name());
  CHECK(callees == std::vector<std::string>{"double", "inc", "double"});

  Lowered bad = lower_source("def f(x):\n    y = self.layers\n    return y\n", with_lists);
  CHECK(first_error(bad) ==
        "t.msl:2:9: error: name 'self.layers' is a list or tuple of the host, usable in graph mode only as the "
        "sequence of a 'for' loop");
}

TEST_CASE("sequences of unknown length are errors naming the construct") {
  CHECK(first_error(lower_source("def f(x):\n    for a in f(x):\n        pass\n")) ==
        "t.msl:2:14: error: 'for' loop over a value whose length is not known at compile time is not supported in "
        "graph mode");
  CHECK(first_error(lower_source("def f(x):\n    for a in x:\n        pass\n")) ==
        "t.msl:2:14: error: 'for' loop over a value whose length is not known at compile time is not supported in "
        "graph mode");
}

TEST_CASE("unrolled loop with break and continue: one graph per item, chained by tail calls") {
  Lowered r = lower_source(
      "def f(x, stop):\n"
      "    s = 0\n"
      "    for w in (1, 2, 3, 4, 5):\n"
      "        if w == 2:\n"
      "            continue\n"
      "        if w == stop:\n"
      "            break\n"
      "        s = s + w * x\n"
      "    return s + 1000\n");
  auto ref = [](int64_t x, int64_t stop) {
    int64_t s = 0;
    for (int64_t w : {1, 2, 3, 4, 5}) {
      if (w == 2) continue;
      if (w == stop) break;
      s += w * x;
    }
    return s + 1000;
  };
  for (int64_t stop : {1, 2, 3, 5, 9}) CHECK(num(run_ok(r, "f", {int64_t{7}, stop})) == ref(7, stop));
  // Five item graphs and the exit.
  for (int k = 0; k < 5; ++k) CHECK(r.graph("f_for_iter" + std::to_string(k)) != nullptr);
  REQUIRE(r.graph("f_for_exit") != nullptr);
  CHECK(r.graph("f_for_exit")->output()->is_call_of(ir::IrOp::make_tuple));
  // continue in the second item (w == 2) calls the third item's graph.
  REQUIRE(r.graph("f_for_iter1_true") != nullptr);
  CHECK(r.graph("f_for_iter1_true")->output()->callee()->as_graph() == r.graph("f_for_iter2"));
}

TEST_CASE("unrolled loop with return, also over a global Sequence of functions") {
  auto with_layers = [](ir::Resolver base) {
    return [base](const std::string& name) {
      if (name != "self.layers") return base(name);
      ir::ResolvedName seq;
      seq.kind = ir::ResolvedName::Kind::Sequence;
      for (const char* fn : {"double", "inc", "double", "inc"}) seq.items.push_back(base(fn));
      return seq;
    };
  };
  Lowered r = lower_source(
      "def double(x):\n"
      "    return x * 2\n"
      "def inc(x):\n"
      "    return x + 1\n"
      "def net(x, limit):\n"
      "    for layer in self.layers:\n"
      "        x = layer(x)\n"
      "        if x > limit:\n"
      "            return -x\n"
      "    x = x * 10\n"
      "    return x\n",
      with_layers);
  auto ref = [](int64_t x, int64_t limit) {
    for (int k = 0; k < 4; ++k) {
      x = k % 2 == 0 ? x * 2 : x + 1;
      if (x > limit) return -x;
    }
    return x * 10;
  };
  for (int64_t limit : {0, 5, 10, 11, 100}) CHECK(num(run_ok(r, "net", {int64_t{2}, limit})) == ref(2, limit));
  CHECK(ref(2, 100) == 110);
  CHECK(ref(2, 10) == -11);
  // The statements after the loop are the continuation the last item calls.
  ir::FuncGraph* after = r.graph("net_for_after");
  REQUIRE(after != nullptr);
  CHECK(r.graph("net_for_iter3")->output()->is_apply());
}

TEST_CASE("an unrolled loop's break is its own inside a range loop; its return leaves the function") {
  Lowered r = lower_source(
      "def f(n, stop):\n"
      "    s = 0\n"
      "    for i in range(n):\n"
      "        for w in [10, 20, 30]:\n"
      "            if w + i == stop:\n"
      "                return -s\n"
      "            if w > i * 10:\n"
      "                break\n"
      "            s = s + w\n"
      "        s = s + 1\n"
      "    return s\n");
  auto ref = [](int64_t n, int64_t stop) {
    int64_t s = 0;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t w : {10, 20, 30}) {
        if (w + i == stop) return -s;
        if (w > i * 10) break;
        s += w;
      }
      s += 1;
    }
    return s;
  };
  for (auto [n, stop] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {5, 0}, {5, 23}, {5, 12}, {6, 35}})
    CHECK(num(run_ok(r, "f", {n, stop})) == ref(n, stop));
  CHECK(ref(5, 0) != ref(5, 23));
}
