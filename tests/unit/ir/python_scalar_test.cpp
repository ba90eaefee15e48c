// Python scalar arithmetic (lang/ir/python_scalar.h) against values worked
// out by hand from Python's rules (and checked with CPython 3.11).
#include <doctest/doctest.h>

#include <cmath>

#include "lang/ir/python_scalar.h"

using namespace msl;
using kernels::Prim;
using ir::ConstValue;

namespace {

ConstValue op(Prim p, ConstValue a, ConstValue b) {
  const ConstValue args[2] = {a, b};
  return *ir::python_scalar_op(p, args);
}

// Same type and value (ConstValue has no ==: it also holds tensors).
template <typename T>
bool is(const ConstValue& v, T want) {
  const T* got = std::get_if<T>(&v);
  return got && *got == want;
}

}  // namespace

TEST_CASE("python_scalar_op: ints stay ints, floor division and modulo round towards -inf") {
  CHECK(is<int64_t>(op(Prim::add, int64_t{2}, int64_t{3}), 5));
  CHECK(is<int64_t>(op(Prim::floordiv, int64_t{-7}, int64_t{2}), -4));
  CHECK(is<int64_t>(op(Prim::mod, int64_t{-7}, int64_t{2}), 1));
  CHECK(is<int64_t>(op(Prim::mod, int64_t{7}, int64_t{-2}), -1));
  CHECK(is<double>(op(Prim::div, int64_t{7}, int64_t{2}), 3.5));  // true division is a float
  CHECK(is<int64_t>(op(Prim::add, true, true), 2));       // bools count as ints
  const ConstValue one[1] = {int64_t{4}};
  CHECK(is<int64_t>(*ir::python_scalar_op(Prim::neg, one), -4));
}

TEST_CASE("python_scalar_op: floats, comparisons, zero divisors and what is not scalar arithmetic") {
  CHECK(is<double>(op(Prim::floordiv, 7.5, int64_t{2}), 3.0));
  CHECK(is<double>(op(Prim::mod, -7.5, int64_t{2}), 0.5));
  CHECK(is<bool>(op(Prim::less, int64_t{3}, 2.5), false));
  CHECK(is<bool>(op(Prim::equal, int64_t{1}, true), true));
  CHECK_THROWS_AS(op(Prim::div, int64_t{1}, int64_t{0}), ir::ScalarDivisionError);
  CHECK_THROWS_AS(op(Prim::mod, 1.0, 0.0), ir::ScalarDivisionError);
  const ConstValue args[2] = {int64_t{2}, int64_t{3}};
  CHECK_FALSE(ir::python_scalar_op(Prim::pow, args).has_value());  // a 0-d tensor in the executor
  const ConstValue text[2] = {std::string("a"), int64_t{3}};
  CHECK_FALSE(ir::python_scalar_op(Prim::add, text).has_value());
}

// The executor, the specializer and the lowering compute with the
// interpreter's own arithmetic (lang/python_number.h): these are the cases
// where a separate implementation went wrong.
TEST_CASE("python_scalar_op: the interpreter's rules: exact int comparisons, overflow, float modulo's sign") {
  const int64_t big = int64_t{1} << 53;
  // As doubles both are 2**53; as Python ints they differ.
  CHECK(is<bool>(op(Prim::greater, big + 1, big), true));
  CHECK(is<bool>(op(Prim::equal, big + 1, big), false));
  CHECK_THROWS_AS(op(Prim::add, INT64_MAX, int64_t{1}), ir::ScalarArithmeticError);
  CHECK_THROWS_AS(op(Prim::mul, INT64_MIN, int64_t{-1}), ir::ScalarArithmeticError);
  CHECK_THROWS_AS(op(Prim::floordiv, INT64_MIN, int64_t{-1}), ir::ScalarArithmeticError);
  const ConstValue lowest[1] = {INT64_MIN};
  CHECK_THROWS_AS(ir::python_scalar_op(Prim::neg, lowest), ir::ScalarArithmeticError);
  // Python: 6.0 % -3.0 == -0.0 (the divisor's sign); -7 % 1e300 == 1e300 - 7.
  ConstValue z = *[&] { const ConstValue a[2] = {6.0, -3.0}; return ir::python_scalar_op(Prim::mod, a); }();
  CHECK(std::signbit(std::get<double>(z)));
  CHECK(is<double>(op(Prim::mod, int64_t{-7}, 1e300), 1e300));
  // NaN is unordered: every ordering false, != true.
  const double nan = std::nan("");
  CHECK(is<bool>(op(Prim::less, nan, 1.0), false));
  CHECK(is<bool>(op(Prim::greater_equal, nan, 1.0), false));
  CHECK(is<bool>(op(Prim::not_equal, nan, nan), true));
  // Messages are CPython 3.11's.
  try {
    op(Prim::mod, int64_t{1}, int64_t{0});
    FAIL("no error");
  } catch (const ir::ScalarDivisionError& e) {
    CHECK(std::string(e.what()) == "integer modulo by zero");
  }
}
