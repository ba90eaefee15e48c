// The clean-up pipeline end to end: a hand-written J-style gradient reduced
// to plain primitive applications and checked numerically, plus the
// pipeline's verification and dump options.
#include "jit/passes/pipeline.h"

#include <cmath>
#include <string>
#include <vector>

#include "jit/exec/executor.h"
#include "jit/passes/ad_residue.h"
#include "pass_test_util.h"

using namespace msl;
using kernels::DType;
using kernels::Tensor;

namespace {

// The gradient of f(x, y) = x * y + sin(x) as the J transform builds it
// (lang/ad/grad.h): @jf returns (value, bprop closure); each primitive p is
// called through @j_p, which returns (p(...), partial(@b_p, inputs..., out));
// the bprop closure calls those partials in reverse order, sums the
// sensitivities with grad_add starting from zeros_like, and merges the
// (empty) free-variable environments with env_add. @grad_f seeds the bprop
// with `sens` and returns (value, dx, dy).
const char* kGradF = R"(subgraph @grad_f(%para1_x, %para2_y, %para3_sens) {
  %0 = @jf(%para1_x, %para2_y)
  %1 = tuple_getitem(%0, 0)
  %2 = tuple_getitem(%0, 1)
  %3 = %2(%para3_sens)
  %4 = tuple_getitem(%3, 1)
  %5 = tuple_getitem(%3, 2)
  %6 = make_tuple(%1, %4, %5)
  return(%6)
}

subgraph @jf(%para1_x, %para2_y) {
  %0 = @j_mul(%para1_x, %para2_y)
  %1 = tuple_getitem(%0, 0)
  %2 = tuple_getitem(%0, 1)
  %3 = @j_sin(%para1_x)
  %4 = tuple_getitem(%3, 0)
  %5 = tuple_getitem(%3, 1)
  %6 = @j_add(%1, %4)
  %7 = tuple_getitem(%6, 0)
  %8 = tuple_getitem(%6, 1)
  %9 = make_tuple(%7, @bprop_f)
  return(%9)
}

subgraph @bprop_f(%para1_dout) parent=@jf flags[is_bprop=True] {
  %0 = @jf.%8(%para1_dout)
  %1 = tuple_getitem(%0, 1)
  %2 = tuple_getitem(%0, 2)
  %3 = @jf.%5(%2)
  %4 = tuple_getitem(%3, 1)
  %5 = @jf.%2(%1)
  %6 = tuple_getitem(%5, 1)
  %7 = tuple_getitem(%5, 2)
  %8 = zeros_like(@jf.%para1_x)
  %9 = grad_add(%8, %6)
  %10 = grad_add(%9, %4)
  %11 = zeros_like(@jf.%para2_y)
  %12 = grad_add(%11, %7)
  %13 = tuple_getitem(%0, 0)
  %14 = tuple_getitem(%3, 0)
  %15 = tuple_getitem(%5, 0)
  %16 = env_add(%13, %14)
  %17 = env_add(%16, %15)
  %18 = make_tuple(%17, %10, %12)
  return(%18)
}

subgraph @j_mul(%para1_x, %para2_y) {
  %0 = mul(%para1_x, %para2_y)
  %1 = partial(@b_mul, %para1_x, %para2_y, %0)
  %2 = make_tuple(%0, %1)
  return(%2)
}

subgraph @b_mul(%para1_x, %para2_y, %para3_out, %para4_dout) flags[is_bprop=True] {
  %0 = env_new()
  %1 = mul(%para4_dout, %para2_y)
  %2 = mul(%para4_dout, %para1_x)
  %3 = make_tuple(%0, %1, %2)
  return(%3)
}

subgraph @j_sin(%para1_x) {
  %0 = sin(%para1_x)
  %1 = partial(@b_sin, %para1_x, %0)
  %2 = make_tuple(%0, %1)
  return(%2)
}

subgraph @b_sin(%para1_x, %para2_out, %para3_dout) flags[is_bprop=True] {
  %0 = env_new()
  %1 = cos(%para1_x)
  %2 = mul(%para3_dout, %1)
  %3 = make_tuple(%0, %2)
  return(%3)
}

subgraph @j_add(%para1_x, %para2_y) {
  %0 = add(%para1_x, %para2_y)
  %1 = partial(@b_add, %para1_x, %para2_y, %0)
  %2 = make_tuple(%0, %1)
  return(%2)
}

subgraph @b_add(%para1_x, %para2_y, %para3_out, %para4_dout) flags[is_bprop=True] {
  %0 = env_new()
  %1 = make_tuple(%0, %para4_dout, %para4_dout)
  return(%1)
}
)";

Tensor vec(const std::vector<double>& v) {
  return ir::tensor_from_values(DType::Float64, kernels::Dims{static_cast<int64_t>(v.size())}, v);
}

std::vector<double> values(const exec::RtValue& v) {
  const Tensor& t = v.tensor();
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.item_at(i));
  return out;
}

// (value, dx, dy) of grad_f at the fixed inputs, as float64 lists.
std::vector<std::vector<double>> run_grad_f(const ir::FuncGraph& g, const std::vector<double>& x,
                                            const std::vector<double>& y, const std::vector<double>& sens) {
  exec::RtValue r = exec::run_graph(g, {vec(x), vec(y), vec(sens)});
  REQUIRE(r.is<exec::RtTuple>());
  REQUIRE(r.tuple().size() == 3);
  return {values(r.tuple()[0]), values(r.tuple()[1]), values(r.tuple()[2])};
}

}  // namespace

TEST_CASE("pipeline: a J-style gradient of x * y + sin(x) reduces to plain primitives and keeps its numbers") {
  ir::IrModule m;
  ir::IrParseResult p = ir::parse_ir(kGradF, m, "grad_f.ir");
  REQUIRE_MESSAGE(p.ok(), p.error);
  ir::FuncGraph& g = *p.graphs.front();
  REQUIRE(!jit::ad_residue(g).empty());  // the input is full of AD machinery

  const std::vector<double> x{0.5, -1.0, 2.0}, y{1.5, 0.25, -3.0}, sens{1.0, 2.0, -0.5};
  auto before = run_grad_f(g, x, y, sens);
  jit::optimize(m, g);
  auto after = run_grad_f(g, x, y, sens);

  // (a) No J, env_*, partial or closure survives.
  std::vector<const ir::Node*> residue = jit::ad_residue(g);
  CHECK_MESSAGE(residue.empty(), ir::print_graph(g));
  // (b) Forward mul, sin, add; backward mul(dout, y), mul(dout, x),
  // cos(x), mul(dout, cos(x)) and the add summing x's two sensitivities.
  CHECK(jit::count_primitive_applies(g) == 8);
  // (c) The same numbers before and after, and both equal to the
  // independently computed value and derivatives:
  // f = x*y + sin x, df/dx = y + cos x, df/dy = x (times sens).
  for (size_t i = 0; i < x.size(); ++i) {
    double f = x[i] * y[i] + std::sin(x[i]);
    double dx = sens[i] * (y[i] + std::cos(x[i]));
    double dy = sens[i] * x[i];
    for (const auto& r : {before, after}) {
      CHECK(r[0][i] == doctest::Approx(f).epsilon(1e-12));
      CHECK(r[1][i] == doctest::Approx(dx).epsilon(1e-12));
      CHECK(r[2][i] == doctest::Approx(dy).epsilon(1e-12));
    }
    CHECK(before[1][i] == after[1][i]);
  }
  // The graph itself: what a hand-written backward pass would be.
  std::string text = ir::print_graph(g);
  CHECK(text.find(R"(subgraph @grad_f(%para1_x, %para2_y, %para3_sens) {
  %0 = mul(%para1_x, %para2_y)
  %1 = sin(%para1_x)
  %2 = add(%0, %1)
  %3 = mul(%para3_sens, %para2_y)
  %4 = cos(%para1_x)
  %5 = mul(%para3_sens, %4)
  %6 = add(%3, %5)
  %7 = mul(%para3_sens, %para1_x)
  %8 = make_tuple(%2, %6, %7)
  return(%8)
})") != std::string::npos);
  CHECK(verify_module(m).empty());
}

TEST_CASE("pipeline: runs to a fixed point through several levels of calls") {
  // Each round inlines one level; the tuples the callees build and the
  // x * 1 the middle level adds go away once they are visible.
  ir::IrModule m;
  ir::IrParseResult p = ir::parse_ir(R"(subgraph @f(%para1_x) {
  %0 = @a(%para1_x)
  %1 = tuple_getitem(%0, 1)
  return(%1)
}

subgraph @a(%para1_x) {
  %0 = @b(%para1_x)
  %1 = mul(%0, 1)
  %2 = make_tuple(%para1_x, %1)
  return(%2)
}

subgraph @b(%para1_x) {
  %0 = @c(%para1_x)
  %1 = exp(%0)
  return(%1)
}

subgraph @c(%para1_x) {
  %0 = neg(%para1_x)
  return(%0)
}
)", m, "t.ir");
  REQUIRE_MESSAGE(p.ok(), p.error);
  ir::FuncGraph& g = *p.graphs.front();
  jit::optimize(m, g);
  CHECK(ir::print_graph(g) == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = exp(%0)
  return(%1)
}
)");
  // A second run finds nothing to do.
  std::vector<std::string> dumped;
  jit::optimize(m, g, {true, "all", [&](const std::string& pass, const std::string&) { dumped.push_back(pass); }});
  CHECK(dumped == jit::pass_names());  // one round, every pass once, in order
}

TEST_CASE("pipeline: print_after dumps the named pass's result; unknown names are rejected") {
  ir::IrModule m;
  ir::IrParseResult p = ir::parse_ir(R"(subgraph @f(%para1_x) {
  %0 = make_tuple(%para1_x, 2.0)
  %1 = tuple_getitem(%0, 0)
  %2 = zeros_like(%1)
  %3 = grad_add(%2, %1)
  return(%3)
}
)", m, "t.ir");
  REQUIRE(p.ok());
  std::vector<std::pair<std::string, std::string>> dumps;
  jit::PassOptions opts;
  opts.print_after = "tuple_elim";
  opts.dump = [&](const std::string& pass, const std::string& text) { dumps.push_back({pass, text}); };
  jit::optimize(m, *p.graphs.front(), opts);
  // Round 1 changes the graph, round 2 confirms the fixed point.
  REQUIRE(dumps.size() == 2);
  CHECK(dumps[0].first == "tuple_elim");
  // After tuple_elim, before simplify: the tuple is gone, the zero sum not yet.
  CHECK(dumps[0].second == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = zeros_like(%para1_x)
  %1 = grad_add(%0, %para1_x)
  return(%1)
}
)");
  CHECK(dumps[1].second == "# IR of: f\nsubgraph @f(%para1_x) {\n  return(%para1_x)\n}\n");

  opts.print_after = "inlining";
  CHECK_THROWS_WITH_AS(jit::optimize(m, *p.graphs.front(), opts),
                       doctest::Contains("unknown pass 'inlining' in print-after"), jit::PassError);
}

TEST_CASE("pipeline: invalid IR is reported with where it was found; verify=false skips the checks") {
  ir::IrModule m;
  ir::IrParseResult p = ir::parse_ir(R"(subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  return(%0)
}

subgraph @other(%para1_y) {
  return(%para1_y)
}
)", m, "t.ir");
  REQUIRE(p.ok());
  ir::FuncGraph& g = *p.graphs.front();
  // A node of an unrelated graph as f's output: not visible in f.
  g.set_output(p.graphs[1]->params()[0]);
  CHECK_THROWS_WITH_AS(jit::optimize(m, g), doctest::Contains("invalid IR before the clean-up passes"),
                       jit::PassError);
  CHECK_NOTHROW(jit::optimize(m, g, {false, "", nullptr}));
  // Checking only around the pipeline still checks.
  jit::PassOptions ends_only;
  ends_only.verify_each_pass = false;
  CHECK_THROWS_WITH_AS(jit::optimize(m, g, ends_only), doctest::Contains("invalid IR before the clean-up passes"),
                       jit::PassError);
}
