// Partial-application elimination: IR text in, IR text out.
#include "jit/passes/partial_elim.h"

#include "pass_test_util.h"

using namespace msl;
using msl::jit::run_partial_elim;
using msl::jit::test::canon;
using msl::jit::test::run_on_text;

TEST_CASE("partial_elim: a call of a partial becomes a direct call with the bound arguments first") {
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_y) {
  %0 = partial(@g, %para1_x)
  %1 = %0(%para2_y)
  %2 = partial(sub, %para2_y)
  %3 = %2(%para1_x)
  %4 = make_tuple(%1, %3)
  return(%4)
}

subgraph @g(%para1_a, %para2_b) {
  %0 = sub(%para1_a, %para2_b)
  return(%0)
}
)", run_partial_elim);
  CHECK(r.changed);
  CHECK(r.text.find(R"(subgraph @f(%para1_x, %para2_y) {
  %0 = @g(%para1_x, %para2_y)
  %1 = sub(%para2_y, %para1_x)
  %2 = make_tuple(%0, %1)
  return(%2)
})") != std::string::npos);
}

TEST_CASE("partial_elim: partial chains collapse, and partial(f) is f") {
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_y, %para3_z) {
  %0 = partial(@g, %para1_x)
  %1 = partial(%0, %para2_y)
  %2 = %1(%para3_z)
  %3 = partial(%1)
  %4 = partial(@g)
  %5 = %4(%para1_x, %para2_y, %para3_z)
  %6 = make_tuple(%2, %3, %5)
  return(%6)
}

subgraph @g(%para1_a, %para2_b, %para3_c) {
  %0 = sub(%para1_a, %para2_b)
  %1 = mul(%0, %para3_c)
  return(%1)
}
)", run_partial_elim);
  CHECK(r.changed);
  // The two calls stay two: merging them is CSE's job.
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_y, %para3_z) {
  %0 = @g(%para1_x, %para2_y, %para3_z)
  %1 = partial(@g, %para1_x, %para2_y)
  %2 = @g(%para1_x, %para2_y, %para3_z)
  %3 = make_tuple(%0, %1, %2)
  return(%3)
}

# IR of: g
subgraph @g(%para1_a, %para2_b, %para3_c) {
  %0 = sub(%para1_a, %para2_b)
  %1 = mul(%0, %para3_c)
  return(%1)
}
)");
}

TEST_CASE("partial_elim: a closure calling its parent's partial (AD's bprop) calls the function directly") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = partial(@b_neg, %para1_x, %0)
  %2 = make_tuple(%0, @bprop)
  return(%2)
}

subgraph @bprop(%para1_dout) parent=@f {
  %0 = @f.%1(%para1_dout)
  return(%0)
}

subgraph @b_neg(%para1_x, %para2_out, %para3_dout) {
  %0 = neg(%para3_dout)
  %1 = env_new()
  %2 = make_tuple(%1, %0)
  return(%2)
}
)", run_partial_elim);
  CHECK(r.changed);
  CHECK(r.text.find(R"(subgraph @bprop(%para1_dout) parent=@f {
  %0 = @b_neg(@f.%para1_x, @f.%0, %para1_dout)
  return(%0)
})") != std::string::npos);
}

TEST_CASE("partial_elim: no change when the pattern does not apply") {
  // A computed callee that is not a partial, partial of a non-callable
  // constant (its run-time error is kept) and a partial that is only a value.
  std::string text = R"(subgraph @f(%para1_c, %para2_x) {
  %0 = %para1_c(%para2_x)
  %1 = partial(1.0)
  %2 = partial(%para1_c)
  %3 = partial(@g, %para2_x)
  %4 = make_tuple(%0, %1, %2, %3)
  return(%4)
}

subgraph @g(%para1_a) {
  return(%para1_a)
}
)";
  auto r = run_on_text(text, run_partial_elim);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}

TEST_CASE("partial_elim: effects keep their order through a partial call") {
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_u) {
  %0 = partial(print, %para1_x)
  %1 = %0(%para2_u)
  %2 = update_state(%para2_u, %1)
  %3 = print(%para1_x, %2)
  %4 = update_state(%2, %3)
  return(%4)
}
)", run_partial_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_u) {
  %0 = print(%para1_x, %para2_u)
  %1 = update_state(%para2_u, %0)
  %2 = print(%para1_x, %1)
  %3 = update_state(%1, %2)
  return(%3)
}
)");
}
