// Callees other than graphs and single-output primitives: host objects (left
// as J(h) for the runtime to resolve), multi-output primitives (out and dout
// are tuples), in-place primitives with the effect state as an extra input,
// and grad_graph's argument checks.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ad_test_util.h"

using namespace ad_test;
using msl::ir::FuncGraph;
using msl::ir::IrOp;
using msl::ir::Node;

namespace {
// A host function standing for an interpreter function: the tests resolve
// calls to it by running the IR graph it names, and J of it by J of that
// graph (what the runtime does by tracing the host function).
class GraphHost : public msl::ir::HostObject {
 public:
  explicit GraphHost(FuncGraph* g) : g_(g) {}
  std::string name() const override { return "host_" + g_->name(); }
  FuncGraph* graph() const { return g_; }

 private:
  FuncGraph* g_;
};
}  // namespace

TEST_CASE("a host object callee becomes J(h), resolved by the runtime") {
  Fixture fx(
      "subgraph @cube(%para1_v) {\n"
      "  %0 = mul(%para1_v, %para1_v)\n"
      "  %1 = mul(%0, %para1_v)\n"
      "  return(%1)\n"
      "}\n");
  auto host = std::make_shared<GraphHost>(fx.graph("cube"));
  // f(x) = $host_cube(x) * x, built directly (the IR text has no host syntax).
  FuncGraph* f = fx.m->new_graph("f", nullptr, fx.m->loc("h.msl", 1));
  Node* x = f->add_param("x");
  Node* call = f->apply({f->constant(msl::ir::HostRef(host)), x}, "", fx.m->loc("h.msl", 2));
  f->set_output(f->apply(msl::kernels::Prim::mul, {call, x}, "", fx.m->loc("h.msl", 3)));
  FuncGraph* jf = fx.ad->j_graph(f);
  // JG holds J($host_cube) applied to the host constant.
  bool found = false;
  for (Node* n : msl::ir::topo_order(*jf))
    if (n->is_call_of(IrOp::J) && n->arg(0)->as_host() == host.get()) found = true;
  CHECK(found);

  msl::exec::ExecOptions opts;
  opts.runtime_j = [&](const RtValue& v) -> RtValue {
    auto h = v.get_if<msl::ir::HostRef>();
    REQUIRE(h);
    auto gh = std::dynamic_pointer_cast<const GraphHost>(*h);
    REQUIRE(gh);
    return msl::exec::RtClosure{fx.ad->j_graph(gh->graph()), nullptr};
  };
  RtValue pair = msl::exec::run_graph(*jf, {f64(1.5)}, opts);
  RtValue r = msl::exec::call_value(pair.tuple()[1], {f64(1.0)}, opts);
  CHECK(exec_test::scalar(pair.tuple()[0]) == doctest::Approx(std::pow(1.5, 4)));
  CHECK(exec_test::scalar(r.tuple()[1]) == doctest::Approx(4 * std::pow(1.5, 3)));
  // (The primal's host callee is not for the verifier; the J graphs are.)
  for (FuncGraph* g : msl::ir::nested_graphs(*jf))
    for (const std::string& e : msl::ir::verify_graph(*g)) FAIL_CHECK(e);
}

TEST_CASE("a multi-output primitive: out and dout are tuples") {
  Fixture fx(
      "subgraph @f(%para1_x) {\n"
      "  %0 = dropout[keep_prob=0.5, seed=11, offset=0](%para1_x)\n"
      "  %1 = tuple_getitem(%0, 0)\n"
      "  %2 = sin(%1)\n"
      "  %3 = mul(%2, %para1_x)\n"
      "  return(%3)\n"
      "}\n",
      "subgraph @rule_dropout(%para1_x, %para2_out, %para3_dout) {\n"
      "  %0 = tuple_getitem(%para3_dout, 0)\n"
      "  %1 = tuple_getitem(%para2_out, 1)\n"
      "  %2 = mul(%0, %1)\n"
      "  %3 = div(%2, 0.5)\n"
      "  %4 = make_tuple(%3)\n"
      "  return(%4)\n"
      "}\n");
  std::vector<double> xs;
  for (int i = 0; i < 16; ++i) xs.push_back(0.1 * i - 0.7);
  JResult r = check_against_fd(fx, "f", {f64(xs, {16})}, f64(std::vector<double>(16, 1.0), {16}));
  // Both kept and dropped elements occur, so the mask really matters.
  RtValue masked = msl::exec::run_graph(*fx.graph("f"), {f64(xs, {16})});
  int zeros = 0;
  for (double v : exec_test::values(masked)) zeros += v == 0.0;
  CHECK(zeros > 0);
  CHECK(zeros < 16);
}

TEST_CASE("an in-place primitive with the state input: the rule sees the tensors, the state gets zeros") {
  Fixture fx("",
             "subgraph @rule_assign(%para1_x, %para2_v, %para3_out, %para4_dout) {\n"
             "  %0 = zeros_like(%para1_x)\n"
             "  %1 = make_tuple(%0, %para4_dout)\n"
             "  return(%1)\n"
             "}\n");
  FuncGraph* ja = fx.ad->j_prim({msl::kernels::Prim::assign, {}}, 3);
  CHECK(ja->params().size() == 3);
  RtValue p = f64({1, 2}, {2}), v = f64({5, 6}, {2});
  JResult r = run_j(ja, {p, v, RtValue(msl::exec::StateToken{})}, f64({0.5, -1}, {2}));
  REQUIRE(r.grads.size() == 4);
  CHECK(exec_test::values(r.grads[1]) == std::vector<double>{0, 0});
  CHECK(exec_test::values(r.grads[2]) == std::vector<double>{0.5, -1});
  CHECK(r.grads[3].is_none());                               // zeros_like of the state
  CHECK(exec_test::values(p) == std::vector<double>{5, 6});  // it did assign
}

TEST_CASE("j_prim and grad_graph reject what they cannot build") {
  Fixture fx(
      "subgraph @f(%para1_x) {\n"
      "  %0 = neg(%para1_x)\n"
      "  return(@inner)\n"
      "}\n"
      "subgraph @inner() parent=@f {\n"
      "  return(@f.%0)\n"
      "}\n");
  auto error = [](auto fn) -> std::string {
    try {
      fn();
    } catch (const msl::ad::GradError& e) {
      return e.what();
    }
    return "";
  };
  std::string e = error([&] { fx.ad->j_prim({msl::kernels::Prim::mul, {}}, 3); });
  CHECK_MESSAGE(e.find("primitive 'mul' takes 2 inputs, got 3") != std::string::npos, e);
  e = error([&] { fx.ad->grad_graph(fx.graph("inner"), false); });
  CHECK_MESSAGE(e.find("grad_graph needs a top-level graph") != std::string::npos, e);
  // A graph returning a closure: its bprop takes the closure's env.
  FuncGraph* jf = fx.j("f");
  RtValue pair = msl::exec::run_graph(*jf, {f64(2.0)});
  msl::ir::FuncGraph* inner = fx.graph("inner");
  Node* captured = msl::ir::free_variables(*inner).at(0);
  auto env = std::make_shared<msl::exec::RtEnvMap>();
  env->items[captured->id()] = f64(3.0);
  RtValue r = msl::exec::call_value(pair.tuple()[1], {RtValue(msl::exec::RtEnv(env))});
  CHECK(exec_test::scalar(r.tuple()[1]) == -3.0);
}
