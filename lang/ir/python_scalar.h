// Python's arithmetic and comparisons on numbers (bools, ints, floats) for
// the primitives that operators lower to: one implementation for the graph
// executor (Python scalars stay Python scalars: a loop counter stays an
// int) and for the specializer, which folds them at compile time.
#pragma once

#include <optional>
#include <span>
#include <stdexcept>

#include "kernels/primitives.h"
#include "lang/ir/node.h"

namespace msl::ir {

// A zero divisor: "division by zero" or "integer division or modulo by
// zero", as Python says it.
struct ScalarDivisionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Whether primitive `p` with `n` operands is Python scalar arithmetic when
// its operands are numbers: neg, add, sub, mul, div, floordiv, mod and the
// six comparisons.
bool is_scalar_arithmetic(kernels::Prim p, size_t n);

// `p` on numbers (each bool, int64_t or double) with Python's rules: bools
// count as ints, int op int is an int except true division, floor
// division and modulo round towards -inf, comparisons are bools. nullopt
// when `p` is no scalar arithmetic or an operand is no number. Throws
// ScalarDivisionError for a zero divisor.
std::optional<ConstValue> python_scalar_op(kernels::Prim p, std::span<const ConstValue> args);

}  // namespace msl::ir
