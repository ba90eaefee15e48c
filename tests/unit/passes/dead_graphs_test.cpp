// Retiring dead nested graphs: IR text in, IR text out.
#include "jit/passes/dead_graphs.h"

#include "pass_test_util.h"

using namespace msl;
using msl::jit::run_dead_graphs;
using msl::jit::test::canon;
using msl::jit::test::run_on_text;

TEST_CASE("dead_graphs: an unreferenced closure is removed and stops keeping its captures alive") {
  // @dead captures %1 = exp(x): while @dead has a body, %1 is part of @f.
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = exp(%para1_x)
  %2 = partial(@live, %0)
  return(%2)
}

subgraph @live(%para1_a, %para2_b) parent=@f {
  %0 = add(%para1_a, %para2_b)
  return(%0)
}

subgraph @dead(%para1_a) parent=@f {
  %0 = mul(@f.%1, %para1_a)
  return(%0)
}
)", [](ir::IrModule& m, ir::FuncGraph& g) {
    bool first = run_dead_graphs(m, g);
    CHECK_FALSE(run_dead_graphs(m, g));  // retiring twice is no change
    return first;
  });
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = partial(@live, %0)
  return(%1)
}

# IR of: live
subgraph @live(%para1_a, %para2_b) parent=@f {
  %0 = add(%para1_a, %para2_b)
  return(%0)
}
)");
}

TEST_CASE("dead_graphs: closures reached only through a dead closure are dead too") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  return(%0)
}

subgraph @outer(%para1_a) parent=@f {
  %0 = @inner(%para1_a)
  return(%0)
}

subgraph @inner(%para1_b) parent=@outer {
  %0 = mul(%para1_b, @f.%0)
  return(%0)
}
)", run_dead_graphs);
  CHECK(r.changed);
  CHECK(r.text.find("@outer") == std::string::npos);
  CHECK(r.text.find("@inner") == std::string::npos);
}

TEST_CASE("dead_graphs: live closures stay, including those only nested graphs or other graphs refer to") {
  // @used is called by the live @k; @shared is referenced by the top-level
  // graph @other (a graph without free variables may be used anywhere).
  std::string text = R"(subgraph @f(%para1_x) {
  %0 = @k(%para1_x)
  return(%0)
}

subgraph @k(%para1_a) parent=@f {
  %0 = @used(%para1_a)
  return(%0)
}

subgraph @used(%para1_b) parent=@k {
  %0 = neg(%para1_b)
  return(%0)
}

subgraph @shared(%para1_c) parent=@f {
  %0 = exp(%para1_c)
  return(%0)
}

subgraph @other(%para1_y) {
  %0 = @shared(%para1_y)
  return(%0)
}
)";
  auto r = run_on_text(text, run_dead_graphs);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}
