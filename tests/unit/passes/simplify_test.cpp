// Algebraic and zero simplification: IR text in, IR text out.
#include "jit/passes/simplify.h"

#include "pass_test_util.h"

using namespace msl;
using msl::jit::run_simplify;
using msl::jit::test::canon;
using msl::jit::test::run_on_text;

TEST_CASE("simplify: zero sensitivities vanish from grad_add, known tensors sum with add") {
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_y) {
  %0 = zeros_like(%para1_x)
  %1 = grad_add(%0, %para2_y)
  %2 = grad_add(%para2_y, None)
  %3 = sin(%para1_x)
  %4 = cos(%para1_x)
  %5 = grad_add(%3, %4)
  %6 = grad_add(%5, Tensor[Float32](2)[1.0, 2.0])
  %7 = grad_add(%para1_x, %3)
  %8 = make_tuple(%1, %2, %6, %7)
  return(%8)
}
)", run_simplify);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x, %para2_y) {
  %0 = sin(%para1_x)
  %1 = cos(%para1_x)
  %2 = add(%0, %1)
  %3 = add(%2, Tensor[Float32](2)[1.0, 2.0])
  %4 = grad_add(%para1_x, %0)
  %5 = make_tuple(%para2_y, %para2_y, %3, %4)
  return(%5)
}
)");
}

TEST_CASE("simplify: tuple sensitivities are summed and zeroed itemwise") {
  auto r = run_on_text(R"(subgraph @f(%para1_a, %para2_b, %para3_c) {
  %0 = make_tuple(%para1_a, %para2_b)
  %1 = zeros_like(%0)
  %2 = make_tuple(%para3_c, %para3_c)
  %3 = grad_add(%1, %2)
  %4 = grad_add(%0, %2)
  %5 = make_tuple(%3, %4)
  return(%5)
}
)", run_simplify);
  CHECK(r.changed);
  // zeros_like(tuple) is itemwise zeros, which grad_add drops.
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_a, %para2_b, %para3_c) {
  %0 = make_tuple(%para3_c, %para3_c)
  %1 = grad_add(%para1_a, %para3_c)
  %2 = grad_add(%para2_b, %para3_c)
  %3 = make_tuple(%1, %2)
  %4 = make_tuple(%0, %3)
  return(%4)
}
)");
}

TEST_CASE("simplify: x * 1 and x + 0 with a Python scalar and a kernel result are x") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = exp(%para1_x)
  %1 = mul(%0, 1)
  %2 = mul(1.0, %1)
  %3 = add(%2, 0.0)
  %4 = add(0, %3)
  return(%4)
}
)", run_simplify);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = exp(%para1_x)
  return(%0)
}
)");
}

TEST_CASE("simplify: identities that could change a shape, a dtype or a value are kept") {
  // A tensor one may broadcast x to a larger shape; a parameter may be a
  // Python int (mul(x, 1.0) would make it a float tensor); True is not the
  // number 1 here; mul(x, 0) is not 0 for inf/nan; stop_gradient must wait
  // for AD; a multi-output primitive's result is a tuple.
  std::string text = R"(subgraph @f(%para1_x) {
  %0 = exp(%para1_x)
  %1 = mul(%0, Tensor[Float32](2)[1.0, 1.0])
  %2 = mul(%para1_x, 1.0)
  %3 = mul(%0, True)
  %4 = mul(%0, 0)
  %5 = add(%0, 1)
  %6 = stop_gradient(%0)
  %7 = sub(%0, 0)
  %8 = make_tuple(%1, %2, %3, %4, %5, %6, %7)
  return(%8)
}
)";
  auto r = run_on_text(text, run_simplify);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}

TEST_CASE("simplify: switch on a constant condition picks the branch") {
  auto r = run_on_text(R"(subgraph @f(%para1_x, %para2_c) {
  %0 = switch(True, @t, @e)
  %1 = %0(%para1_x)
  %2 = switch(False, @t, @e)
  %3 = %2(%para1_x)
  %4 = switch(%para2_c, @t, @e)
  %5 = switch(1, @t, @e)
  %6 = make_tuple(%1, %3, %4, %5)
  return(%6)
}

subgraph @t(%para1_a) {
  return(%para1_a)
}

subgraph @e(%para1_a) {
  %0 = neg(%para1_a)
  return(%0)
}
)", run_simplify);
  CHECK(r.changed);
  CHECK(r.text.find(R"(subgraph @f(%para1_x, %para2_c) {
  %0 = @t(%para1_x)
  %1 = @e(%para1_x)
  %2 = switch(%para2_c, @t, @e)
  %3 = switch(1, @t, @e)
  %4 = make_tuple(%0, %1, %2, %3)
  return(%4)
})") != std::string::npos);
}

TEST_CASE("simplify: effects are never dropped; depend and update_state chains are untouched") {
  std::string text = R"(subgraph @f(%para1_x, %para2_u) {
  %0 = print(%para1_x, %para2_u)
  %1 = update_state(%para2_u, %0)
  %2 = depend(%para1_x, %1)
  %3 = zeros_like(%2)
  %4 = grad_add(%3, %para1_x)
  %5 = depend(%4, %1)
  %6 = switch(True, %para1_x, %2)
  %7 = make_tuple(%5, %6)
  return(%7)
}
)";
  auto r = run_on_text(text, run_simplify);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}
