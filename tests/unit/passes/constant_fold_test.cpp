// Constant folding: IR text in, IR text out.
#include "jit/passes/constant_fold.h"

#include "pass_test_util.h"

using namespace msl;
using msl::jit::run_constant_fold;
using msl::jit::test::canon;
using msl::jit::test::run_on_text;

TEST_CASE("constant_fold: calls on constants become tensor constants, cascading") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = add(Tensor[Float32]()[2.0], 3)
  %1 = mul(%0, Tensor[Float32](2)[1.5, -2.0])
  %2 = add(%para1_x, %1)
  %3 = exp(0.0)
  %4 = reshape[shape=(2, 1)](%1)
  %5 = make_tuple(%2, %3, %4)
  return(%5)
}
)", run_constant_fold);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = add(%para1_x, Tensor[Float32](2)[7.5, -10.0])
  %1 = make_tuple(%0, Tensor[Float32]()[1.0], Tensor[Float32](2, 1)[7.5, -10.0])
  return(%1)
}
)");
}

TEST_CASE("constant_fold: arithmetic on numbers alone stays Python arithmetic") {
  // `-1`, `2 * 3`, `n < 4`: the executor and the specializer compute them
  // as numbers; folded into 0-d tensors they would change what a library
  // call receives (reshape(x, (n, -1)) needs ints).
  std::string text = R"(subgraph @f(%para1_x) {
  %0 = neg(1)
  %1 = mul(2, 3)
  %2 = less(2.5, 4)
  %3 = make_tuple(%0, %1, %2, %para1_x)
  return(%3)
}
)";
  auto r = run_on_text(text, run_constant_fold);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}

TEST_CASE("constant_fold: nothing constant returns false and keeps the text") {
  std::string text = R"(subgraph @f(%para1_x) {
  %0 = add(%para1_x, 3)
  %1 = make_tuple(%0, 1, 2.0)
  %2 = tuple_getitem(%1, 0)
  return(%2)
}
)";
  auto r = run_on_text(text, run_constant_fold);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));
}

TEST_CASE("constant_fold: random, effectful, failing and large calls are not folded") {
  std::string text = R"(subgraph @f(%para1_u) {
  %0 = random_uniform[shape=(2,), dtype=Float32, seed=1, offset=0]()
  %1 = dropout[keep_prob=0.5, seed=1, offset=0](Tensor[Float32](2)[1.0, 2.0])
  %2 = assign(Tensor[Float32](2)[1.0, 2.0], 1.0, %para1_u)
  %3 = update_state(%para1_u, %2)
  %4 = add(Tensor[Float32](2)[1.0, 2.0], Tensor[Float32](3)[1.0, 2.0, 3.0])
  %5 = broadcast_to[shape=(2, 513)](1.0)
  %6 = make_tuple(%0, %1, %4, %5, %3)
  return(%6)
}
)";
  auto r = run_on_text(text, run_constant_fold);
  CHECK_FALSE(r.changed);
  CHECK(r.text == canon(text));

  // The largest result folded: exactly kMaxFoldElements elements.
  auto big = run_on_text(R"(subgraph @f() {
  %0 = broadcast_to[shape=(2, 512)](1.0)
  return(%0)
}
)", run_constant_fold);
  CHECK(big.changed);
  CHECK(big.text.find("return(Tensor[Float32](2, 512)[1.0, 1.0") != std::string::npos);
}

TEST_CASE("constant_fold: closures are folded in place; a folded captured value follows") {
  auto r = run_on_text(R"(subgraph @f(%para1_x) {
  %0 = neg(Tensor[Int64]()[4])
  %1 = partial(@g, %para1_x)
  %2 = make_tuple(%0, %1)
  return(%2)
}

subgraph @g(%para1_y) parent=@f {
  %0 = add(@f.%0, 1)
  %1 = mul(%para1_y, %0)
  return(%1)
}
)", run_constant_fold);
  CHECK(r.changed);
  CHECK(r.text == R"(# IR of: f
subgraph @f(%para1_x) {
  %0 = partial(@g, %para1_x)
  %1 = make_tuple(Tensor[Int64]()[-4], %0)
  return(%1)
}

# IR of: g
subgraph @g(%para1_y) parent=@f {
  %0 = mul(%para1_y, Tensor[Int64]()[-3])
  return(%0)
}
)");
}
