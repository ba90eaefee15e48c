// Python scalar arithmetic (lang/ir/python_scalar.h) against values worked
// out by hand from Python's rules (and checked with CPython 3.11).
#include <doctest/doctest.h>

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
