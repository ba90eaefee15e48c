// Dead-code elimination: IR text in, IR text out.
#include "jit/passes/dce.h"

#include "pass_test_util.h"

using namespace msl;
using msl::jit::run_dce;
using msl::jit::test::canon;
using msl::jit::test::run_on_text;

TEST_CASE("dce: nodes unreachable from the output are not part of the graph") {
  // %1 is dead in the text: the body is what the output reaches, so it is
  // gone already and the pass has nothing to do.
  std::string text = R"(subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = exp(%para1_x)
  %2 = abs(%0)
  return(%2)
}
)";
  auto r = run_on_text(text, run_dce);
  CHECK_FALSE(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = abs(%0)
  return(%1)
}
)");
}

TEST_CASE("dce: an element taken out of a tuple makes the tuple and the other elements dead") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = exp(%para1_x)
  %2 = make_tuple(%0, %1)
  %3 = tuple_getitem(%2, 0)
  %4 = abs(%3)
  return(%4)
}
)", run_dce);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = abs(%0)
  return(%1)
}
)");
}

TEST_CASE("dce: an out-of-range or non-constant index is left alone") {
  std::string text = R"(subgraph @f(%para1_x, %para2_i) {
  %0 = make_tuple(%para1_x, %para1_x)
  %1 = tuple_getitem(%0, 2)
  %2 = tuple_getitem(%0, %para2_i)
  %3 = make_tuple(%1, %2)
  return(%3)
}
)";
  auto r = run_on_text(text, run_dce);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}

TEST_CASE("dce: effects are kept, in order") {
  // Taking the value out of (value, state) would drop the effect chain:
  // not forwarded. The state element itself is forwarded (the value is pure).
  std::string text = R"(subgraph @f(%para1_x, %para2_u) {
  %0 = print(%para1_x, %para2_u)
  %1 = update_state(%para2_u, %0)
  %2 = assign(%para1_x, 1.0, %1)
  %3 = update_state(%1, %2)
  %4 = make_tuple(%para1_x, %3)
  %5 = tuple_getitem(%4, 0)
  return(%5)
}
)";
  auto kept = run_on_text(text, run_dce);
  CHECK_FALSE(kept.changed);
  CHECK(kept.text == canon(text));

  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_u) {
  %0 = neg(%para1_x)
  %1 = print(%para1_x, %para2_u)
  %2 = update_state(%para2_u, %1)
  %3 = print(%0, %2)
  %4 = update_state(%2, %3)
  %5 = make_tuple(%0, %4)
  %6 = tuple_getitem(%5, 1)
  %7 = make_tuple(%0, %6)
  return(%7)
}
)", run_dce);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_u) {
  %0 = neg(%para1_x)
  %1 = print(%para1_x, %para2_u)
  %2 = update_state(%para2_u, %1)
  %3 = print(%0, %2)
  %4 = update_state(%2, %3)
  %5 = make_tuple(%0, %4)
  return(%5)
}
)");
}

TEST_CASE("dce: closures are rewritten, captured values follow; unused graphs stay in the module") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = make_tuple(%0, @unused)
  %2 = tuple_getitem(%1, 0)
  %3 = partial(@g, %2)
  return(%3)
}

subgraph @g(%para1_y) parent=@f {
  %0 = make_tuple(%para1_y, @f.%0)
  %1 = tuple_getitem(%0, 1)
  %2 = add(%1, @f.%2)
  return(%2)
}

subgraph @unused(%para1_z) parent=@f {
  return(%para1_z)
}
)", run_dce);
  CHECK(r.changed);
  // IrModule cannot remove a graph: @unused is unreferenced but still printed.
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = neg(%para1_x)
  %1 = partial(@g, %0)
  return(%1)
}

# IR of: g
subgraph @g(%para1_y) parent=@f {
  %0 = add(@f.%0, @f.%0)
  return(%0)
}

# IR of: unused
subgraph @unused(%para1_z) parent=@f {
  return(%para1_z)
}
)");
}
