// Environment elimination: IR text in, IR text out.
#include "jit/passes/env_elim.h"

#include "pass_test_util.h"

using namespace msl;
using msl::jit::run_env_elim;
using msl::jit::test::canon;
using msl::jit::test::run_on_text;

TEST_CASE("env_elim: reads of a setitem chain resolve by key, a missing key reads the default") {
  auto r = run_on_text(R"(subgraph @f(%para1_a, %para2_b, %para3_d) {
  %0 = env_new()
  %1 = env_setitem(%0, 7, %para1_a)
  %2 = env_setitem(%1, 9, %para2_b)
  %3 = env_getitem(%2, 7, %para3_d)
  %4 = env_getitem(%2, 9, %para3_d)
  %5 = env_getitem(%2, 8, %para3_d)
  %6 = make_tuple(%3, %4, %5)
  return(%6)
}
)", run_env_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_a, %para2_b, %para3_d) {
  %0 = make_tuple(%para1_a, %para2_b, %para3_d)
  return(%0)
}
)");
}

TEST_CASE("env_elim: env_add with an empty environment is the other one") {
  auto r = run_on_text(R"(subgraph @f(%para1_e, %para2_v) {
  %0 = env_new()
  %1 = env_add(%0, %para1_e)
  %2 = env_setitem(%1, 1, %para2_v)
  %3 = env_add(%2, %0)
  return(%3)
}
)", run_env_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_e, %para2_v) {
  %0 = env_setitem(%para1_e, 1, %para2_v)
  return(%0)
}
)");
}

TEST_CASE("env_elim: a read of a sum of environments with a zero default is the sum of the reads") {
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_a, %para3_b) {
  %0 = env_new()
  %1 = env_setitem(%0, 3, %para2_a)
  %2 = env_new()
  %3 = env_setitem(%2, 3, %para3_b)
  %4 = env_add(%1, %3)
  %5 = zeros_like(%para1_x)
  %6 = env_getitem(%4, 3, %5)
  return(%6)
}
)", run_env_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_a, %para3_b) {
  %0 = grad_add(%para2_a, %para3_b)
  return(%0)
}
)");
}

TEST_CASE("env_elim: no change when the pattern does not apply") {
  // Unknown environments, non-constant keys, a sum read with a default that
  // is not zero (a key absent from both would read 2 * default) stay.
  std::string text = R"(subgraph @f(%para1_e, %para2_k, %para3_v, %para4_d) {
  %0 = env_getitem(%para1_e, 1, %para4_d)
  %1 = env_setitem(%para1_e, %para2_k, %para3_v)
  %2 = env_getitem(%1, 1, %para4_d)
  %3 = env_setitem(%para1_e, 1, %para3_v)
  %4 = env_getitem(%3, %para2_k, %para4_d)
  %5 = env_add(%para1_e, %3)
  %6 = env_getitem(%5, 1, %para4_d)
  %7 = make_tuple(%0, %2, %4, %6)
  return(%7)
}
)";
  auto r = run_on_text(text, run_env_elim);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}

TEST_CASE("env_elim: effects are never dropped") {
  // The stored value depends on a print: reading another key through it
  // would drop the effect.
  std::string text = R"(subgraph @f(%para1_x, %para2_u, %para3_d) {
  %0 = print(%para1_x, %para2_u)
  %1 = update_state(%para2_u, %0)
  %2 = depend(%para1_x, %1)
  %3 = env_new()
  %4 = env_setitem(%3, 1, %2)
  %5 = env_getitem(%4, 2, %para3_d)
  return(%5)
}
)";
  auto r = run_on_text(text, run_env_elim);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}

TEST_CASE("env_elim: a value whose effect the output keeps by another path may be read past") {
  // A weight's gradient computed from an activation that waited for an
  // effect (a BatchNorm's statistics update), the activation also being
  // the forward output: reading another key goes past the gradient, and
  // the effect stays anchored by the output.
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_u, %para3_d, %para4_w) {
  %0 = print(%para1_x, %para2_u)
  %1 = update_state(%para2_u, %0)
  %2 = depend(%para1_x, %1)
  %3 = mul(%2, %para4_w)
  %4 = env_new()
  %5 = env_setitem(%4, 1, %3)
  %6 = env_setitem(%5, 2, %para4_w)
  %7 = env_getitem(%6, 2, %para3_d)
  %8 = env_getitem(%6, 3, %para3_d)
  %9 = make_tuple(%7, %8, %2)
  return(%9)
}
)", run_env_elim);
  CHECK(r.changed);
  CHECK(r.text.find("make_tuple(%para4_w, %para3_d, ") != std::string::npos);
  CHECK(r.text.find("print(") != std::string::npos);
}
