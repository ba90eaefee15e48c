// Python's arithmetic and comparisons on numbers (bools, ints, floats) for
// the primitives that operators lower to, computed by lang/python_number.h
// as the interpreter computes them: for the graph executor (Python scalars
// stay Python scalars: a loop counter stays an int), the specializer, which
// folds them at compile time, and the lowering's static conditions.
#pragma once

#include <optional>
#include <span>
#include <stdexcept>

#include "kernels/primitives.h"
#include "lang/ir/node.h"

namespace msl::ir {

// An arithmetic error with Python's message (lang/python_number.h): an
// int64 overflow, a negative shift count...
struct ScalarArithmeticError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// A zero divisor: "division by zero", "integer modulo by zero", "float
// modulo"..., as Python says it.
struct ScalarDivisionError : ScalarArithmeticError {
  using ScalarArithmeticError::ScalarArithmeticError;
};

// Whether primitive `p` with `n` operands is Python scalar arithmetic when
// its operands are numbers: neg, add, sub, mul, div, floordiv, mod and the
// six comparisons.
bool is_scalar_arithmetic(kernels::Prim p, size_t n);

// `p` on numbers (each bool, int64_t or double) with Python's rules
// (python_number.h); comparisons are bools. Strings too: + of two strings,
// * of a string and an int, comparisons of two strings, == and != of a
// string and a number. nullopt when `p` is no scalar arithmetic or an
// operand is neither. Throws ScalarDivisionError for a
// zero divisor, ScalarArithmeticError for an int64 overflow.
std::optional<ConstValue> python_scalar_op(kernels::Prim p, std::span<const ConstValue> args);

}  // namespace msl::ir
