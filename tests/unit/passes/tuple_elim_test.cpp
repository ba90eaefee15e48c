// Tuple simplification: IR text in, IR text out.
#include "jit/passes/tuple_elim.h"

#include "pass_test_util.h"

using namespace msl;
using msl::jit::run_tuple_elim;
using msl::jit::test::canon;
using msl::jit::test::run_on_text;

TEST_CASE("tuple_elim: items of make_tuple are forwarded, also nested and with negative indices") {
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_y) {
  %0 = neg(%para1_x)
  %1 = make_tuple(%0, %para2_y)
  %2 = make_tuple(%1, %para1_x)
  %3 = tuple_getitem(%2, 0)
  %4 = tuple_getitem(%3, -1)
  %5 = tuple_getitem(%3, 0)
  %6 = add(%5, %4)
  return(%6)
}
)", run_tuple_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_y) {
  %0 = neg(%para1_x)
  %1 = add(%0, %para2_y)
  return(%1)
}
)");
}

TEST_CASE("tuple_elim: tuple_setitem is seen through by tuple_getitem") {
  // The same index reads the new value; another index reads the old tuple.
  auto r = run_on_text(R"(subgraph @f(%para1_t, %para2_v) {
  %0 = tuple_setitem(%para1_t, 1, %para2_v)
  %1 = tuple_getitem(%0, 1)
  %2 = tuple_getitem(%0, 0)
  %3 = make_tuple(%1, %2)
  return(%3)
}
)", run_tuple_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_t, %para2_v) {
  %0 = tuple_getitem(%para1_t, 0)
  %1 = make_tuple(%para2_v, %0)
  return(%1)
}
)");
}

TEST_CASE("tuple_elim: AD's sensitivity of one item of a built tuple becomes a tuple") {
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_y, %para3_d) {
  %0 = make_tuple(%para1_x, %para2_y)
  %1 = tuple_setitem(%0, -1, %para3_d)
  %2 = tuple_len(%1)
  %3 = tuple_getitem(%1, 1)
  %4 = make_tuple(%1, %2, %3)
  return(%4)
}
)", run_tuple_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_y, %para3_d) {
  %0 = make_tuple(%para1_x, %para3_d)
  %1 = make_tuple(%0, 2, %para3_d)
  return(%1)
}
)");
}

TEST_CASE("tuple_elim: tuple_len of a tuple_setitem is the length of the original") {
  auto r = run_on_text(R"(subgraph @f(%para1_t, %para2_v) {
  %0 = tuple_setitem(%para1_t, 0, %para2_v)
  %1 = tuple_len(%0)
  return(%1)
}
)", run_tuple_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_t, %para2_v) {
  %0 = tuple_len(%para1_t)
  return(%0)
}
)");
}

TEST_CASE("tuple_elim: no change when the pattern does not apply") {
  // Unknown tuples, non-constant, out-of-range or negative setitem indices,
  // getitem of a graph call (inlining's job) and lists stay.
  std::string text = R"(subgraph @f(%para1_t, %para2_i, %para3_x) {
  %0 = tuple_getitem(%para1_t, 0)
  %1 = make_tuple(%para3_x, %para3_x)
  %2 = tuple_getitem(%1, %para2_i)
  %3 = tuple_getitem(%1, 2)
  %4 = tuple_getitem(%1, -3)
  %5 = tuple_setitem(%para1_t, -1, %para3_x)
  %6 = tuple_getitem(%5, 0)
  %7 = @g(%para3_x)
  %8 = tuple_getitem(%7, 0)
  %9 = make_list(%para3_x)
  %10 = list_getitem(%9, 0)
  %11 = tuple_setitem(%1, 5, %para3_x)
  %12 = make_tuple(%0, %2, %3, %4, %6, %8, %10, %11)
  return(%12)
}

subgraph @g(%para1_a) {
  %0 = make_tuple(%para1_a)
  return(%0)
}
)";
  auto r = run_on_text(text, run_tuple_elim);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}

TEST_CASE("tuple_elim: effects are never dropped") {
  // Forwarding the value out of (value, state) would lose the print, and
  // so would computing the length of a tuple holding the state.
  std::string text = R"(subgraph @f(%para1_x, %para2_u) {
  %0 = print(%para1_x, %para2_u)
  %1 = update_state(%para2_u, %0)
  %2 = make_tuple(%para1_x, %1)
  %3 = tuple_getitem(%2, 0)
  %4 = tuple_len(%2)
  %5 = tuple_setitem(%2, 1, %para1_x)
  %6 = make_tuple(%3, %4, %5)
  return(%6)
}
)";
  auto r = run_on_text(text, run_tuple_elim);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));

  // Taking the state out is fine: the chain stays whole and in order.
  auto s = run_on_text(R"(subgraph @f(%para1_x, %para2_u) {
  %0 = neg(%para1_x)
  %1 = print(%0, %para2_u)
  %2 = update_state(%para2_u, %1)
  %3 = print(%para1_x, %2)
  %4 = update_state(%2, %3)
  %5 = make_tuple(%0, %4)
  %6 = tuple_getitem(%5, 1)
  return(%6)
}
)", run_tuple_elim);
  CHECK(s.changed);
  CHECK(s.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_u) {
  %0 = neg(%para1_x)
  %1 = print(%0, %para2_u)
  %2 = update_state(%para2_u, %1)
  %3 = print(%para1_x, %2)
  %4 = update_state(%2, %3)
  return(%4)
}
)");
}

TEST_CASE("tuple_elim: a closure reading its parent's tuple follows the rewrite") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = make_tuple(%para1_x, 2.0)
  %1 = partial(@g, %0)
  return(%1)
}

subgraph @g(%para1_t, %para2_y) parent=@f {
  %0 = tuple_getitem(@f.%0, 1)
  %1 = tuple_getitem(%para1_t, 0)
  %2 = mul(%0, %1)
  %3 = add(%2, %para2_y)
  return(%3)
}
)", run_tuple_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = make_tuple(%para1_x, 2.0)
  %1 = partial(@g, %0)
  return(%1)
}

# IR of: g
subgraph @g(%para1_t, %para2_y) parent=@f {
  %0 = tuple_getitem(%para1_t, 0)
  %1 = mul(2.0, %0)
  %2 = add(%1, %para2_y)
  return(%2)
}
)");
}

TEST_CASE("tuple_elim: an item whose effect the output keeps by another path may be dropped") {
  // AD pairs a Cell's output (here %2, which carries the print's state) with
  // its backpropagator (%3, built from it): taking the backpropagator out
  // drops nothing, since the output reaches %2 through %5.
  std::string text =
      "subgraph @f(%para1_x, %para2_u) {\n"
      "  %0 = print(%para1_x, %para2_u)\n"
      "  %1 = update_state(%para2_u, %0)\n"
      "  %2 = depend(%para1_x, %1)\n"
      "  %3 = partial(@g, %2)\n"
      "  %4 = make_tuple(%2, %3)\n"
      "  %5 = mul(%2, 2.0)\n"
      "  %6 = tuple_getitem(%4, 1)\n"
      "  %7 = %6(%5)\n"
      "  return(%7)\n"
      "}\n"
      "subgraph @g(%para1_a, %para2_b) {\n"
      "  %0 = add(%para1_a, %para2_b)\n"
      "  return(%0)\n"
      "}\n";
  msl::jit::test::PassResult r = run_on_text(text, run_tuple_elim);
  CHECK(r.changed);
  CHECK(r.text.find("tuple_getitem") == std::string::npos);
  CHECK(r.text.find("print(%para1_x, %para2_u)") != std::string::npos);

  // Without %5 the pair is the only path to the print: kept.
  std::string only =
      "subgraph @f(%para1_x, %para2_u) {\n"
      "  %0 = print(%para1_x, %para2_u)\n"
      "  %1 = update_state(%para2_u, %0)\n"
      "  %2 = depend(%para1_x, %1)\n"
      "  %3 = partial(@g, %2)\n"
      "  %4 = make_tuple(%2, %3)\n"
      "  %5 = tuple_getitem(%4, 1)\n"
      "  %6 = %5(%para1_x)\n"
      "  return(%6)\n"
      "}\n"
      "subgraph @g(%para1_a, %para2_b) {\n"
      "  %0 = add(%para1_a, %para2_b)\n"
      "  return(%0)\n"
      "}\n";
  msl::jit::test::PassResult kept = run_on_text(only, run_tuple_elim);
  CHECK(kept.text.find("tuple_getitem") == std::string::npos);  // %3 holds %2: nothing is dropped by taking it
  CHECK(kept.text.find("print(") != std::string::npos);
}

TEST_CASE("tuple_elim: an item of a tuple ordered after an effect is the item, ordered after it") {
  // A sequenced call's first argument (the gradients passed to an optimizer
  // updater after another's update): each item keeps the order, the tuple
  // goes.
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_y, %para3_u) {
  %0 = neg(%para1_x)
  %1 = make_tuple(%0, %para2_y)
  %2 = depend(%1, %para3_u)
  %3 = tuple_getitem(%2, 1)
  %4 = tuple_getitem(%2, 0)
  %5 = add(%3, %4)
  return(%5)
}
)", run_tuple_elim);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_y, %para3_u) {
  %0 = depend(%para2_y, %para3_u)
  %1 = neg(%para1_x)
  %2 = depend(%1, %para3_u)
  %3 = add(%0, %2)
  return(%3)
}
)");
}
