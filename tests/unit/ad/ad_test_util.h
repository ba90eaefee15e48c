// Helpers of the J transform tests: a module parsed from IR text whose
// gradient rules are graphs named `rule_<primitive>` in the same text, runs
// of J graphs and their backpropagators on the debug-mode executor, and
// float64 central finite differences of the primal graph.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "../exec/exec_test_util.h"
#include "lang/ad/grad.h"
#include "lang/ir/printer.h"
#include "lang/ir/verifier.h"

namespace ad_test {

using msl::exec::RtValue;
using msl::kernels::DType;
using msl::kernels::Tensor;

// Gradient rules as IR text, for the primitives the tests use. Shapes agree
// in every test, so add/sub/mul need no un-broadcasting; reduce_sum's rule
// is for a full reduction to a 0-d tensor.
inline const char* kRules =
    "subgraph @rule_mul(%para1_x, %para2_y, %para3_out, %para4_dout) {\n"
    "  %0 = mul(%para4_dout, %para2_y)\n"
    "  %1 = mul(%para4_dout, %para1_x)\n"
    "  %2 = make_tuple(%0, %1)\n"
    "  return(%2)\n"
    "}\n"
    "subgraph @rule_add(%para1_x, %para2_y, %para3_out, %para4_dout) {\n"
    "  %0 = make_tuple(%para4_dout, %para4_dout)\n"
    "  return(%0)\n"
    "}\n"
    "subgraph @rule_sub(%para1_x, %para2_y, %para3_out, %para4_dout) {\n"
    "  %0 = neg(%para4_dout)\n"
    "  %1 = make_tuple(%para4_dout, %0)\n"
    "  return(%1)\n"
    "}\n"
    "subgraph @rule_neg(%para1_x, %para2_out, %para3_dout) {\n"
    "  %0 = neg(%para3_dout)\n"
    "  %1 = make_tuple(%0)\n"
    "  return(%1)\n"
    "}\n"
    "subgraph @rule_sin(%para1_x, %para2_out, %para3_dout) {\n"
    "  %0 = cos(%para1_x)\n"
    "  %1 = mul(%para3_dout, %0)\n"
    "  %2 = make_tuple(%1)\n"
    "  return(%2)\n"
    "}\n"
    "subgraph @rule_cos(%para1_x, %para2_out, %para3_dout) {\n"
    "  %0 = sin(%para1_x)\n"
    "  %1 = mul(%para3_dout, %0)\n"
    "  %2 = neg(%1)\n"
    "  %3 = make_tuple(%2)\n"
    "  return(%3)\n"
    "}\n"
    "subgraph @rule_exp(%para1_x, %para2_out, %para3_dout) {\n"
    "  %0 = mul(%para3_dout, %para2_out)\n"
    "  %1 = make_tuple(%0)\n"
    "  return(%1)\n"
    "}\n"
    "subgraph @rule_less(%para1_x, %para2_y, %para3_out, %para4_dout) {\n"
    "  %0 = zeros_like(%para1_x)\n"
    "  %1 = zeros_like(%para2_y)\n"
    "  %2 = make_tuple(%0, %1)\n"
    "  return(%2)\n"
    "}\n"
    "subgraph @rule_reduce_sum(%para1_x, %para2_out, %para3_dout) {\n"
    "  %0 = zeros_like(%para1_x)\n"
    "  %1 = add(%0, %para3_dout)\n"
    "  %2 = make_tuple(%1)\n"
    "  return(%2)\n"
    "}\n";

// A module holding the primal graphs of `text` and the rules above, and a
// transformer whose rule_for finds `rule_<name>`.
struct Fixture {
  std::unique_ptr<msl::ir::IrModule> m;
  std::unique_ptr<msl::ad::GradTransformer> ad;

  explicit Fixture(const std::string& text, const std::string& extra_rules = "") {
    m = exec_test::parse(text + kRules + extra_rules);
    msl::ir::IrModule* mod = m.get();
    ad = std::make_unique<msl::ad::GradTransformer>(*mod, [mod](const msl::ir::PrimRef& p) -> msl::ir::ConstValue {
      if (msl::ir::FuncGraph* r = mod->find_graph(std::string("rule_") + msl::kernels::prim_name(p.prim))) return r;
      return msl::ir::NoneValue{};
    });
  }
  msl::ir::FuncGraph* graph(const std::string& name) const {
    msl::ir::FuncGraph* g = m->find_graph(name);
    REQUIRE_MESSAGE(g != nullptr, name);
    return g;
  }
  msl::ir::FuncGraph* j(const std::string& name) { return ad->j_graph(graph(name)); }
  // Every graph of the module passes the verifier.
  void verify() const {
    for (const std::string& e : msl::ir::verify_module(*m)) FAIL_CHECK(e);
  }
};

inline RtValue f64(const std::vector<double>& v, const msl::kernels::Dims& shape) {
  return RtValue(msl::ir::tensor_from_values(DType::Float64, shape, v));
}
inline RtValue f64(double v) { return RtValue(msl::ir::tensor_from_values(DType::Float64, {}, {v})); }

// Runs J graph `jg` on `args` and its backpropagator on `dout`: the value
// and the bprop's result tuple (env, d_arg1, ...).
struct JResult {
  RtValue value;
  std::vector<RtValue> grads;  // grads[0]: env
};
inline JResult run_j(const msl::ir::FuncGraph* jg, std::vector<RtValue> args, const RtValue& dout) {
  RtValue pair = msl::exec::run_graph(*jg, std::move(args));
  REQUIRE(pair.is<msl::exec::RtTuple>());
  REQUIRE(pair.tuple().size() == 2);
  RtValue r = msl::exec::call_value(pair.tuple()[1], {dout});
  REQUIRE_MESSAGE(r.is<msl::exec::RtTuple>(), msl::exec::type_name(r));
  return {pair.tuple()[0], r.tuple()};
}

// sum(out * w) over every tensor or number of a (nested) tuple value.
inline double weighted_sum(const RtValue& out, const RtValue& w) {
  if (out.is<msl::exec::RtTuple>()) {
    REQUIRE(w.is<msl::exec::RtTuple>());
    double s = 0;
    for (size_t i = 0; i < out.tuple().size(); ++i) s += weighted_sum(out.tuple()[i], w.tuple()[i]);
    return s;
  }
  if (out.is<Tensor>()) {
    std::vector<double> a = exec_test::values(out), b = exec_test::values(w);
    REQUIRE(a.size() == b.size());
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  }
  return exec_test::scalar(out) * exec_test::scalar(w);
}

// Central finite differences d/d args[k] of sum(g(args) * dout), for a
// Float64 tensor argument k, element by element.
inline std::vector<double> finite_diff(const msl::ir::FuncGraph* g, const std::vector<RtValue>& args, size_t k,
                                       const RtValue& dout, double h = 1e-6) {
  const Tensor& x = args[k].tensor();
  std::vector<double> base = exec_test::values(args[k]), out;
  for (size_t i = 0; i < base.size(); ++i) {
    double f[2];
    for (int side = 0; side < 2; ++side) {
      std::vector<double> v = base;
      v[i] += side == 0 ? h : -h;
      std::vector<RtValue> a = args;
      a[k] = RtValue(msl::ir::tensor_from_values(DType::Float64, x.shape(), v));
      f[side] = weighted_sum(msl::exec::run_graph(*g, a), dout);
    }
    out.push_back((f[0] - f[1]) / (2 * h));
  }
  return out;
}

// Checks the gradient `got` (a tensor) against finite differences.
inline void check_grad(const RtValue& got, const std::vector<double>& want, double tol = 1e-6) {
  std::vector<double> g = exec_test::values(got);
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) CHECK_MESSAGE(std::abs(g[i] - want[i]) <= tol * (1 + std::abs(want[i])), i);
}

// J of primal graph `name` at `args`, with sensitivity `dout`: the value
// must equal the primal's, and d/d args[k] for every Float64 tensor
// argument must match finite differences. Returns the J result.
inline JResult check_against_fd(Fixture& fx, const std::string& name, const std::vector<RtValue>& args,
                                const RtValue& dout) {
  msl::ir::FuncGraph* g = fx.graph(name);
  JResult r = run_j(fx.j(name), args, dout);
  CHECK(weighted_sum(r.value, dout) == doctest::Approx(weighted_sum(msl::exec::run_graph(*g, args), dout)));
  REQUIRE(r.grads.size() == args.size() + 1);
  CHECK(r.grads[0].is<msl::exec::RtEnv>());
  for (size_t k = 0; k < args.size(); ++k) {
    auto t = args[k].get_if<Tensor>();
    if (!t || t->dtype() != DType::Float64) continue;
    INFO("argument " << k);
    check_grad(r.grads[k + 1], finite_diff(g, args, k, dout));
  }
  fx.verify();
  return r;
}

// d(x1..xn) = d g / d x_k, with ones as the output sensitivity.
inline msl::ir::FuncGraph* derivative(Fixture& fx, msl::ir::FuncGraph* g, int64_t k) {
  msl::ir::FuncGraph* gg = fx.ad->grad_graph(g, false);
  msl::ir::FuncGraph* d = fx.m->new_graph("d_" + g->name());
  std::vector<msl::ir::Node*> call{d->constant(gg)};
  for (msl::ir::Node* p : g->params()) call.push_back(d->add_param(p->name()));
  msl::ir::Node* r = d->apply(std::move(call));
  msl::ir::Node* grads = d->apply(msl::ir::IrOp::tuple_getitem, {r, d->constant(int64_t{1})});
  d->set_output(d->apply(msl::ir::IrOp::tuple_getitem, {grads, d->constant(k)}));
  return d;
}

}  // namespace ad_test
