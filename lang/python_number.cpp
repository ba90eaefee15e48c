// Python's arithmetic on numbers (python_number.h).
#include "lang/python_number.h"

#include <cmath>

namespace msl::py {

using ast::BinOp;

namespace {

ArithResult fail(ArithError e, const char* message) { return {int64_t{0}, e, message}; }
ArithResult overflow() { return fail(ArithError::Overflow, "integer overflow"); }

ArithResult int_pow(int64_t base, int64_t exp) {
  int64_t result = 1;
  while (exp > 0) {
    if ((exp & 1) && __builtin_mul_overflow(result, base, &result)) return overflow();
    exp >>= 1;
    if (exp && __builtin_mul_overflow(base, base, &base)) return overflow();
  }
  return {result};
}

ArithResult integers(BinOp op, const Number& a, const Number& b) {
  int64_t x = as_int(a), y = as_int(b), z;
  bool bools = std::holds_alternative<bool>(a) && std::holds_alternative<bool>(b);
  switch (op) {
    case BinOp::Add: return __builtin_add_overflow(x, y, &z) ? overflow() : ArithResult{z};
    case BinOp::Sub: return __builtin_sub_overflow(x, y, &z) ? overflow() : ArithResult{z};
    case BinOp::Mul: return __builtin_mul_overflow(x, y, &z) ? overflow() : ArithResult{z};
    case BinOp::Div:
      if (y == 0) return fail(ArithError::ZeroDivision, "division by zero");
      return {static_cast<double>(x) / static_cast<double>(y)};
    case BinOp::FloorDiv: {
      if (y == 0) return fail(ArithError::ZeroDivision, "integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) return overflow();
      int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      return {q};
    }
    case BinOp::Mod: {
      if (y == 0) return fail(ArithError::ZeroDivision, "integer modulo by zero");
      if (y == -1) return {int64_t{0}};
      int64_t r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return {r};
    }
    case BinOp::Pow:
      if (y < 0) {
        if (x == 0) return fail(ArithError::ZeroDivision, "0.0 cannot be raised to a negative power");
        return {std::pow(static_cast<double>(x), static_cast<double>(y))};
      }
      return int_pow(x, y);
    case BinOp::LShift:
      if (y < 0) return fail(ArithError::Domain, "negative shift count");
      if (x == 0) return {int64_t{0}};
      if (y >= 63 || (x > 0 ? x > (INT64_MAX >> y) : x < (INT64_MIN >> y))) return overflow();
      return {static_cast<int64_t>(static_cast<uint64_t>(x) << y)};
    case BinOp::RShift:
      if (y < 0) return fail(ArithError::Domain, "negative shift count");
      return {y >= 63 ? (x < 0 ? int64_t{-1} : int64_t{0}) : x >> y};
    case BinOp::BitAnd: return bools ? ArithResult{static_cast<bool>(x & y)} : ArithResult{x & y};
    case BinOp::BitOr: return bools ? ArithResult{static_cast<bool>(x | y)} : ArithResult{x | y};
    case BinOp::BitXor: return bools ? ArithResult{static_cast<bool>(x ^ y)} : ArithResult{x ^ y};
    case BinOp::MatMul: break;
  }
  return fail(ArithError::Unsupported, "unsupported operand types");
}

ArithResult floats(BinOp op, double x, double y) {
  switch (op) {
    case BinOp::Add: return {x + y};
    case BinOp::Sub: return {x - y};
    case BinOp::Mul: return {x * y};
    case BinOp::Div:
      if (y == 0) return fail(ArithError::ZeroDivision, "float division by zero");
      return {x / y};
    case BinOp::FloorDiv:
      if (y == 0) return fail(ArithError::ZeroDivision, "float floor division by zero");
      return {std::floor(x / y)};
    case BinOp::Mod: {
      if (y == 0) return fail(ArithError::ZeroDivision, "float modulo");
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0)))
        r += y;
      else if (r == 0)
        r = std::copysign(0.0, y);
      return {r};
    }
    case BinOp::Pow: {
      if (x == 0 && y < 0) return fail(ArithError::ZeroDivision, "0.0 cannot be raised to a negative power");
      if (x < 0 && y != std::floor(y))
        return fail(ArithError::Domain, "math domain error (negative number raised to a fractional power)");
      double r = std::pow(x, y);
      if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
        return fail(ArithError::Overflow, "(34, 'Numerical result out of range')");
      return {r};
    }
    default: break;
  }
  return fail(ArithError::Unsupported, "unsupported operand types");
}

}  // namespace

ArithResult binary(BinOp op, Number a, Number b) {
  if (!is_float(a) && !is_float(b)) return integers(op, a, b);
  return floats(op, as_double(a), as_double(b));
}

ArithResult negate(Number a) {
  if (is_float(a)) return {-std::get<double>(a)};
  int64_t x = as_int(a);
  if (x == INT64_MIN) return overflow();
  return {-x};
}

int compare(Number a, Number b, bool& ordered) {
  ordered = true;
  if (is_float(a) || is_float(b)) {
    double x = as_double(a), y = as_double(b);
    if (std::isnan(x) || std::isnan(y)) {
      ordered = false;
      return 0;
    }
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  int64_t x = as_int(a), y = as_int(b);
  return x < y ? -1 : (x > y ? 1 : 0);
}

}  // namespace msl::py
