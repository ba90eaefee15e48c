// Python's arithmetic on numbers (bool, int, float), once: the interpreter's
// operators (interp/core/ops.cpp), and through lang/ir/python_scalar.h the
// graph executor, the specializer's constant folding and the lowering's
// static conditions all compute with these functions, so `7 // -2`, `-7 % 3`,
// `2 ** -1` or an int64 overflow give the same value or error in every mode.
//
// Rules: bools count as ints (except that &, | and ^ of two bools are bools);
// int op int is an int (true division and a negative power excepted) and
// overflowing int64 is an error (MSL's int is 64-bit; Python's would grow);
// floor division and modulo round towards -inf; a float modulo takes the
// divisor's sign. Errors carry CPython's message.
#pragma once

#include <cstdint>
#include <variant>

#include "lang/ast.h"

namespace msl::py {

using Number = std::variant<bool, int64_t, double>;

enum class ArithError : uint8_t {
  None,
  ZeroDivision,  // ZeroDivisionError
  Overflow,      // OverflowError
  Domain,        // ValueError (negative shift count, fractional power of a negative)
  Unsupported,   // no such operation on numbers (@)
};

struct ArithResult {
  Number value;
  ArithError error = ArithError::None;
  const char* message = "";  // CPython's, when error != None
  bool ok() const { return error == ArithError::None; }
};

ArithResult binary(ast::BinOp op, Number a, Number b);
// -a (an int stays an int; -INT64_MIN overflows).
ArithResult negate(Number a);
// Three-way comparison: -1, 0 or 1; `ordered` is false when either is a
// NaN (every ordering comparison is then false, != true).
int compare(Number a, Number b, bool& ordered);

inline bool is_float(const Number& n) { return std::holds_alternative<double>(n); }
inline double as_double(const Number& n) {
  if (auto d = std::get_if<double>(&n)) return *d;
  if (auto i = std::get_if<int64_t>(&n)) return static_cast<double>(*i);
  return std::get<bool>(n) ? 1.0 : 0.0;
}
inline int64_t as_int(const Number& n) {
  if (auto i = std::get_if<int64_t>(&n)) return *i;
  return std::get<bool>(n) ? 1 : 0;
}

}  // namespace msl::py
