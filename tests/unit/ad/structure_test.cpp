// The shape of what the J transform builds (nesting, names, flags, caching,
// source locations) and its errors on graphs it cannot differentiate.
#include <set>
#include <string>
#include <vector>

#include "ad_test_util.h"

using namespace ad_test;
using msl::ir::FuncGraph;
using msl::ir::Node;

namespace {
const char* kLocated =
    "# IR of: f (t.msl:1:1)\n"
    "subgraph @f(%para1_x, %para2_y) {\n"
    "  %0 = mul(%para1_x, %para2_y)\n"
    "      # In file t.msl:2\n"
    "  %1 = less(%para1_x, 1.0)\n"
    "      # In file t.msl:3\n"
    "  %2 = switch(%1, @then, @else)\n"
    "      # In file t.msl:4\n"
    "  %3 = %2()\n"
    "      # In file t.msl:5\n"
    "  %4 = partial(mul, %3)\n"
    "      # In file t.msl:6\n"
    "  %5 = %4(%0)\n"
    "      # In file t.msl:7\n"
    "  %6 = make_tuple(%5, %0)\n"
    "      # In file t.msl:8\n"
    "  %7 = tuple_getitem(%6, 0)\n"
    "      # In file t.msl:9\n"
    "  return(%7)\n"
    "}\n"
    "# IR of: then (t.msl:10:1)\n"
    "subgraph @then() parent=@f {\n"
    "  %0 = sin(@f.%0)\n"
    "      # In file t.msl:11\n"
    "  return(%0)\n"
    "}\n"
    "# IR of: else (t.msl:12:1)\n"
    "subgraph @else() parent=@f {\n"
    "  %0 = mul(@f.%para2_y, @f.%0)\n"
    "      # In file t.msl:13\n"
    "  return(%0)\n"
    "}\n";
}  // namespace

TEST_CASE("J graphs nest like their primals; bprops are nested, named and flagged") {
  Fixture fx(kLocated);
  FuncGraph* jf = fx.j("f");
  FuncGraph* jthen = fx.ad->j_graph(fx.graph("then"));
  CHECK(jf->name() == "J_f");
  CHECK(jf->parent() == nullptr);
  CHECK(jthen->parent() == jf);
  CHECK(jf->params().size() == 2);
  std::vector<FuncGraph*> kids = msl::ir::children(*jf);
  bool found_bprop = false;
  for (FuncGraph* k : kids)
    if (k->name() == "B_f") {
      found_bprop = true;
      CHECK(k->flags().get_bool("is_bprop"));
      CHECK(k->params().size() == 1);
    }
  CHECK(found_bprop);
  // Cached: transforming again gives the same graphs; J_p once per primitive.
  CHECK(fx.j("f") == jf);
  CHECK(fx.ad->j_prim({msl::kernels::Prim::mul, {}}) == fx.ad->j_prim({msl::kernels::Prim::mul, {}}));
  fx.verify();
}

TEST_CASE("every node built for J and bprop graphs carries a forward source location") {
  Fixture fx(kLocated);
  FuncGraph* jf = fx.j("f");
  size_t checked = 0;
  std::set<uint32_t> lines;
  for (FuncGraph* g : msl::ir::nested_graphs(*jf))
    for (Node* n : msl::ir::topo_order(*g)) {
      if (n->is_parameter()) continue;
      INFO("@" << g->name() << " node " << n->id());
      CHECK(n->loc().valid());
      if (n->loc().valid()) lines.insert(n->loc().line);
      ++checked;
    }
  CHECK(checked > 40);
  // Only lines of the primal program appear, and the bprop of each line is
  // built with it.
  CHECK(*lines.begin() >= 1);
  CHECK(*lines.rbegin() <= 13);
  for (uint32_t line : {2u, 5u, 7u, 11u, 13u}) CHECK(lines.count(line) == 1);
  RtValue y = f64(0.5);
  check_against_fd(fx, "f", {f64(0.25), y}, f64(1.0));
  check_against_fd(fx, "f", {f64(2.5), y}, f64(1.0));
}

namespace {
std::string grad_error(Fixture& fx, const std::string& name) {
  try {
    fx.j(name);
  } catch (const msl::ad::GradError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("a primitive without a gradient rule is an error naming the forward line") {
  Fixture fx(
      "subgraph @f(%para1_x) {\n"
      "  %0 = tanh(%para1_x)\n"
      "      # In file net.msl:7\n"
      "  return(%0)\n"
      "}\n"
      "subgraph @g(%para1_x) {\n"
      "  %0 = sin(%para1_x)\n"
      "  return(%0)\n"
      "}\n");
  std::string e = grad_error(fx, "f");
  CHECK_MESSAGE(e.find("net.msl:7") != std::string::npos, e);
  CHECK_MESSAGE(e.find("no gradient rule for primitive 'tanh'") != std::string::npos, e);
  // A failure leaves no half-built graph behind: the same error again, and
  // other graphs still transform.
  CHECK(grad_error(fx, "f") == e);
  CHECK(grad_error(fx, "g").empty());
}

TEST_CASE("unsupported graphs are clear errors") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"subgraph @f(%para1_fn) {\n  %0 = J(%para1_fn)\n  return(%0)\n}\n", "J of J is not supported here"},
      {"subgraph @f(%para1_fn, %para2_x) {\n  %0 = partial(%para1_fn, %para2_x)\n  return(%0)\n}\n",
       "number of arguments is not known"},
      {"subgraph @f(%para1_x) {\n  %0 = partial(mul, %para1_x, %para1_x, %para1_x)\n  return(%0)\n}\n",
       "partial binds 3 arguments but the function takes 2"},
      {"subgraph @f(%para1_x) {\n  %0 = @ap(make_tuple, %para1_x)\n  return(%0)\n}\n"
       "subgraph @ap(%para1_fn, %para2_v) {\n  %0 = %para1_fn(%para2_v)\n  return(%0)\n}\n",
       "the operator 'make_tuple' used as a value cannot be differentiated"},
      {"subgraph @f(%para1_x) {\n  %0 = @ap(concat, %para1_x)\n  return(%0)\n}\n"
       "subgraph @ap(%para1_fn, %para2_v) {\n  %0 = %para1_fn(%para2_v)\n  return(%0)\n}\n",
       "the variadic primitive 'concat' used as a value"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    Fixture fx(c.text);
    std::string e = grad_error(fx, "f");
    CHECK_MESSAGE(e.find(c.message) != std::string::npos, e);
  }
}

TEST_CASE("J of a constant graph inside a primal graph is J of its J graph") {
  // g(x) calls J(@sq)(x) and returns the value part; differentiating g
  // needs J(J(sq)).
  Fixture fx(
      "subgraph @g(%para1_x) {\n"
      "  %0 = J(@sq)\n"
      "  %1 = %0(%para1_x)\n"
      "  %2 = tuple_getitem(%1, 0)\n"
      "  return(%2)\n"
      "}\n"
      "subgraph @sq(%para1_v) {\n"
      "  %0 = mul(%para1_v, %para1_v)\n"
      "  %1 = mul(%0, %para1_v)\n"
      "  return(%1)\n"
      "}\n");
  FuncGraph* jjsq = fx.ad->j_graph(fx.ad->j_graph(fx.graph("sq")));
  JResult r = run_j(fx.j("g"), {f64(1.5)}, f64(1.0));
  CHECK(exec_test::scalar(r.value) == doctest::Approx(3.375));
  CHECK(exec_test::scalar(r.grads[1]) == doctest::Approx(3 * 1.5 * 1.5));
  CHECK(fx.ad->j_graph(fx.ad->j_graph(fx.graph("sq"))) == jjsq);
  fx.verify();
}

TEST_CASE("bad graphs are errors, not crashes") {
  Fixture fx("subgraph @f(%para1_x) {\n  return(%para1_x)\n}\n");
  auto error = [](auto fn) -> std::string {
    try {
      fn();
    } catch (const msl::ad::GradError& e) {
      return e.what();
    }
    return "";
  };
  std::string e = error([&] { fx.ad->j_graph(nullptr); });
  CHECK_MESSAGE(e.find("null graph") != std::string::npos, e);
  FuncGraph* empty = fx.m->new_graph("no_output");
  empty->add_param("x");
  e = error([&] { fx.ad->j_graph(empty); });
  CHECK_MESSAGE(e.find("@no_output has no output") != std::string::npos, e);
  msl::ir::IrModule other;
  FuncGraph* foreign = other.new_graph("foreign");
  e = error([&] { fx.ad->j_graph(foreign); });
  CHECK_MESSAGE(e.find("belongs to another module") != std::string::npos, e);
  // The identity still transforms: d/dx x = dout.
  JResult r = run_j(fx.j("f"), {f64(3.0)}, f64(2.5));
  CHECK(exec_test::scalar(r.grads[1]) == 2.5);
}

TEST_CASE("the transformed module prints and parses back, and the parsed copy computes the same gradients") {
  Fixture fx(kLocated);
  fx.j("f");
  std::string text = msl::ir::print_module(*fx.m);
  msl::ir::IrModule copy;
  msl::ir::IrParseResult parsed = msl::ir::parse_ir(text, copy, "copy.ir");
  REQUIRE_MESSAGE(parsed.ok(), parsed.error);
  CHECK(msl::ir::print_module(copy) == text);
  FuncGraph* jf = copy.find_graph("J_f");
  REQUIRE(jf != nullptr);
  JResult a = run_j(fx.j("f"), {f64(0.25), f64(0.5)}, f64(1.0));
  JResult b = run_j(jf, {f64(0.25), f64(0.5)}, f64(1.0));
  CHECK(exec_test::scalar(a.grads[1]) == exec_test::scalar(b.grads[1]));
  CHECK(exec_test::scalar(a.grads[2]) == exec_test::scalar(b.grads[2]));
}
