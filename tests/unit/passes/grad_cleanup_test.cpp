// The pipeline on the J transform's own output (lang/ad/grad.h): gradients
// of straight-line code, with a closure over a free variable (sensitivities
// in env chains) and a partial, reduce to plain primitive applications and
// compute the same numbers, which match derivatives worked out by hand.
#include <cmath>
#include <string>
#include <vector>

#include "jit/exec/executor.h"
#include "jit/passes/ad_residue.h"
#include "jit/passes/pipeline.h"
#include "lang/ad/grad.h"
#include "pass_test_util.h"

using namespace msl;
using kernels::DType;

namespace {

// Gradient rules rule(x..., out, dout) -> (dx...) as graphs, found by name.
const char* kRules = R"(subgraph @rule_mul(%para1_x, %para2_y, %para3_out, %para4_dout) {
  %0 = mul(%para4_dout, %para2_y)
  %1 = mul(%para4_dout, %para1_x)
  %2 = make_tuple(%0, %1)
  return(%2)
}

subgraph @rule_add(%para1_x, %para2_y, %para3_out, %para4_dout) {
  %0 = make_tuple(%para4_dout, %para4_dout)
  return(%0)
}

subgraph @rule_sin(%para1_x, %para2_out, %para3_dout) {
  %0 = cos(%para1_x)
  %1 = mul(%para3_dout, %0)
  %2 = make_tuple(%1)
  return(%2)
}

subgraph @rule_exp(%para1_x, %para2_out, %para3_dout) {
  %0 = mul(%para3_dout, %para2_out)
  %1 = make_tuple(%0)
  return(%1)
}
)";

// f(x, y) = exp(sin(x) * y) * sin(x) + sin(x) * x, with exp(s * y) computed
// by a closure @g over s = sin(x), and s * x by a partial of @h.
const char* kPrimal = R"(subgraph @f(%para1_x, %para2_y) {
  %0 = sin(%para1_x)
  %1 = @g(%para2_y)
  %2 = mul(%1, %0)
  %3 = partial(@h, %0)
  %4 = %3(%para1_x)
  %5 = add(%2, %4)
  return(%5)
}

subgraph @g(%para1_z) parent=@f {
  %0 = mul(@f.%0, %para1_z)
  %1 = exp(%0)
  return(%1)
}

subgraph @h(%para1_a, %para2_b) {
  %0 = mul(%para1_a, %para2_b)
  return(%0)
}

)";

exec::RtValue vec(const std::vector<double>& v) {
  return exec::RtValue(ir::tensor_from_values(DType::Float64, kernels::Dims{static_cast<int64_t>(v.size())}, v));
}

std::vector<double> values(const exec::RtValue& v) {
  std::vector<double> out;
  for (int64_t i = 0; i < v.tensor().numel(); ++i) out.push_back(v.tensor().item_at(i));
  return out;
}

// grad_f's result (out, (dx, dy)) as three float64 lists.
std::vector<std::vector<double>> run(const ir::FuncGraph& g, const std::vector<exec::RtValue>& args) {
  exec::RtValue r = exec::run_graph(g, args);
  REQUIRE(r.is<exec::RtTuple>());
  REQUIRE(r.tuple().size() == 2);
  const exec::RtValue& grads = r.tuple()[1];
  REQUIRE(grads.is<exec::RtTuple>());
  REQUIRE(grads.tuple().size() == 2);
  return {values(r.tuple()[0]), values(grads.tuple()[0]), values(grads.tuple()[1])};
}

}  // namespace

TEST_CASE("pipeline on the J transform's output: a closure, a partial and env chains all vanish") {
  ir::IrModule m;
  ir::IrParseResult p = ir::parse_ir(std::string(kPrimal) + kRules, m, "f.ir");
  REQUIRE_MESSAGE(p.ok(), p.error);
  ad::GradTransformer ad(m, [&m](const ir::PrimRef& pr) -> ir::ConstValue {
    if (ir::FuncGraph* r = m.find_graph(std::string("rule_") + kernels::prim_name(pr.prim))) return r;
    return ir::NoneValue{};
  });
  ir::FuncGraph* grad = ad.grad_graph(m.find_graph("f"), /*sens_param=*/true);
  REQUIRE(grad != nullptr);

  const std::vector<double> x{0.3, -1.2}, y{0.7, 2.0}, sens{1.0, -0.5};
  std::vector<exec::RtValue> args{vec(x), vec(y), vec(sens)};
  auto before = run(*grad, args);
  jit::optimize(m, *grad);
  auto after = run(*grad, args);

  CHECK_MESSAGE(jit::ad_residue(*grad).empty(), ir::print_graph(*grad));
  // Forward: sin, mul, exp, mul, mul, add (6). Backward, as by hand (11):
  // a = sens*s (dE, and dx through @h's b), sens*x, sens*E, their add (ds),
  // b = a*E (d(s y)), b*y, add (ds), cos x, ds*cos x, add (dx), b*s (dy).
  CHECK(jit::count_primitive_applies(*grad) == 17);
  for (size_t i = 0; i < x.size(); ++i) {
    // s = sin x, c = cos x, E = exp(s y): f = E s + s x,
    // df/dx = (E y s + E) c + c x + s, df/dy = E s^2.
    double s = std::sin(x[i]), c = std::cos(x[i]), e = std::exp(s * y[i]);
    double f = e * s + s * x[i];
    double dx = sens[i] * ((e * y[i] * s + e) * c + c * x[i] + s);
    double dy = sens[i] * e * s * s;
    for (const auto& r : {before, after}) {
      CHECK(r[0][i] == doctest::Approx(f).epsilon(1e-12));
      CHECK(r[1][i] == doctest::Approx(dx).epsilon(1e-12));
      CHECK(r[2][i] == doctest::Approx(dy).epsilon(1e-12));
    }
  }
  CHECK(verify_module(m).empty());
}
