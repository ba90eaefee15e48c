// Common-subexpression elimination: IR text in, IR text out.
#include "jit/passes/cse.h"

#include "pass_test_util.h"

using namespace msl;
using msl::jit::run_cse;
using msl::jit::test::canon;
using msl::jit::test::run_on_text;

TEST_CASE("cse: equal applies and equal constants are merged, users point to the first") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = mul(%para1_x, 2)
  %1 = mul(%para1_x, 2)
  %2 = add(%0, %1)
  %3 = add(%1, %0)
  %4 = sub(%2, %3)
  return(%4)
}
)", run_cse);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = mul(%para1_x, 2)
  %1 = add(%0, %0)
  %2 = sub(%1, %1)
  return(%2)
}
)");
}

TEST_CASE("cse: nothing to merge returns false and keeps the text; a second run is a no-op") {
  // Each constant appears once: the parser makes one constant node per use,
  // and merging two equal ones is a change even when the text is the same.
  std::string text = R"(subgraph @f(%para1_x, %para2_y) {
  %0 = mul(%para1_x, 2)
  %1 = add(%para1_x, %para2_y)
  %2 = sub(%para2_y, 2.0)
  %3 = make_tuple(%0, %1, %2)
  return(%3)
}
)";
  auto r = run_on_text(text, run_cse);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));

  // Constants of different kinds or values are not equal (2 vs 2.0 vs True).
  auto once = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = mul(%para1_x, 2)
  %1 = mul(%para1_x, 2.0)
  %2 = mul(%para1_x, True)
  %3 = mul(%para1_x, 2)
  %4 = make_tuple(%0, %1, %2, %3)
  return(%4)
}
)", [](ir::IrModule& m, ir::FuncGraph& g) {
    bool first = run_cse(m, g);
    CHECK_FALSE(run_cse(m, g));
    return first;
  });
  CHECK(once.changed);
  CHECK(once.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = mul(%para1_x, 2)
  %1 = mul(%para1_x, 2.0)
  %2 = mul(%para1_x, True)
  %3 = make_tuple(%0, %1, %2, %0)
  return(%3)
}
)");
}

TEST_CASE("cse: primitives merge only with equal attributes") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = reduce_sum[axes=(0,), keep_dims=False](%para1_x)
  %1 = reduce_sum[axes=(1,), keep_dims=False](%para1_x)
  %2 = reduce_sum[axes=(0,), keep_dims=False](%para1_x)
  %3 = reduce_sum[axes=(0,), keep_dims=True](%para1_x)
  %4 = make_tuple(%0, %1, %2, %3)
  return(%4)
}
)", run_cse);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = reduce_sum[axes=(0,), keep_dims=False](%para1_x)
  %1 = reduce_sum[axes=(1,), keep_dims=False](%para1_x)
  %2 = reduce_sum[axes=(0,), keep_dims=True](%para1_x)
  %3 = make_tuple(%0, %1, %0, %2)
  return(%3)
}
)");
}

TEST_CASE("cse: effects stay two, in order; their pure inputs still merge") {
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_u) {
  %0 = neg(%para1_x)
  %1 = print(%0, %para2_u)
  %2 = update_state(%para2_u, %1)
  %3 = neg(%para1_x)
  %4 = print(%3, %2)
  %5 = update_state(%2, %4)
  %6 = make_tuple(%0, %5)
  return(%6)
}
)", run_cse);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_u) {
  %0 = neg(%para1_x)
  %1 = print(%0, %para2_u)
  %2 = update_state(%para2_u, %1)
  %3 = print(%0, %2)
  %4 = update_state(%2, %3)
  %5 = make_tuple(%0, %4)
  return(%5)
}
)");
}

TEST_CASE("cse: assign and random primitives are never merged") {
  std::string text = R"(subgraph @f(%para1_x, %para2_u) {
  %0 = random_uniform[shape=(2,), dtype=Float32, seed=1, offset=0]()
  %1 = random_uniform[shape=(2,), dtype=Float32, seed=1, offset=0]()
  %2 = random_normal[shape=(2,), dtype=Float32, seed=1, offset=0]()
  %3 = random_normal[shape=(2,), dtype=Float32, seed=1, offset=0]()
  %4 = dropout[keep_prob=0.5, seed=1, offset=0](%para1_x)
  %5 = dropout[keep_prob=0.5, seed=1, offset=0](%para1_x)
  %6 = assign(%para1_x, %0, %para2_u)
  %7 = update_state(%para2_u, %6)
  %8 = assign(%para1_x, %0, %7)
  %9 = update_state(%7, %8)
  %10 = make_tuple(%0, %1, %2, %3, %4, %5, %9)
  return(%10)
}
)";
  auto r = run_on_text(text, run_cse);
  CHECK(r.text == canon(text));
}

TEST_CASE("cse: nodes of different graphs are never merged; a closure follows its parent's merges") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = mul(%para1_x, 2)
  %1 = mul(%para1_x, 2)
  %2 = partial(@g, %1)
  %3 = make_tuple(%0, %2)
  return(%3)
}

subgraph @g(%para1_y) parent=@f {
  %0 = mul(@f.%para1_x, 2)
  %1 = add(%0, @f.%1)
  %2 = mul(@f.%para1_x, 2)
  %3 = add(%1, %2)
  %4 = add(%3, %para1_y)
  return(%4)
}

subgraph @h(%para1_x) {
  %0 = mul(%para1_x, 2)
  return(%0)
}
)", run_cse);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = mul(%para1_x, 2)
  %1 = partial(@g, %0)
  %2 = make_tuple(%0, %1)
  return(%2)
}

# IR of: g
subgraph @g(%para1_y) parent=@f {
  %0 = mul(@f.%para1_x, 2)
  %1 = add(%0, @f.%0)
  %2 = add(%1, %0)
  %3 = add(%2, %para1_y)
  return(%3)
}

# IR of: h
subgraph @h(%para1_x) {
  %0 = mul(%para1_x, 2)
  return(%0)
}
)");
}

TEST_CASE("cse: calls of the same graph constant with the same arguments merge") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = @k(%para1_x)
  %1 = @k(%para1_x)
  %2 = @j(%para1_x)
  %3 = make_tuple(%0, %1, %2)
  return(%3)
}

subgraph @k(%para1_a) {
  return(%para1_a)
}

subgraph @j(%para1_a) {
  return(%para1_a)
}
)", run_cse);
  CHECK(r.changed);
  CHECK(r.text.find("%2 = make_tuple(%0, %0, %1)") != std::string::npos);
}

TEST_CASE("cse: calls of impure graphs and of computed callees are not merged") {
  std::string text = R"(subgraph @f(%para1_x, %para2_c) {
  %0 = @noisy(%para1_x)
  %1 = @noisy(%para1_x)
  %2 = @calls_noisy(%para1_x)
  %3 = @calls_noisy(%para1_x)
  %4 = %para2_c(%para1_x)
  %5 = %para2_c(%para1_x)
  %6 = make_tuple(%0, %1, %2, %3, %4, %5)
  return(%6)
}

subgraph @noisy(%para1_a) {
  %0 = dropout[keep_prob=0.5, seed=1, offset=0](%para1_a)
  return(%0)
}

subgraph @calls_noisy(%para1_a) {
  %0 = @noisy(%para1_a)
  return(%0)
}
)";
  auto r = run_on_text(text, run_cse);
  CHECK(r.text == canon(text));
}
