// Python scalar arithmetic (see python_scalar.h).
#include "lang/ir/python_scalar.h"

#include <cmath>

namespace msl::ir {

using kernels::Prim;

bool is_scalar_arithmetic(Prim p, size_t n) {
  if (n == 1) return p == Prim::neg;
  if (n != 2) return false;
  switch (p) {
    case Prim::add: case Prim::sub: case Prim::mul: case Prim::div: case Prim::floordiv: case Prim::mod:
    case Prim::less: case Prim::less_equal: case Prim::greater: case Prim::greater_equal: case Prim::equal:
    case Prim::not_equal:
      return true;
    default:
      return false;
  }
}

std::optional<ConstValue> python_scalar_op(Prim p, std::span<const ConstValue> args) {
  if (!is_scalar_arithmetic(p, args.size())) return std::nullopt;
  bool all_int = true;
  double v[2] = {0, 0};
  int64_t iv[2] = {0, 0};
  for (size_t i = 0; i < args.size(); ++i) {
    if (auto n = std::get_if<int64_t>(&args[i])) {
      iv[i] = *n;
      v[i] = static_cast<double>(*n);
    } else if (auto b = std::get_if<bool>(&args[i])) {
      iv[i] = *b;
      v[i] = *b;
    } else if (auto d = std::get_if<double>(&args[i])) {
      all_int = false;
      v[i] = *d;
    } else {
      return std::nullopt;
    }
  }
  auto num = [&](double d, int64_t i) -> ConstValue { return all_int ? ConstValue(i) : ConstValue(d); };
  if (args.size() == 1) return num(-v[0], -iv[0]);
  switch (p) {
    case Prim::add: return num(v[0] + v[1], iv[0] + iv[1]);
    case Prim::sub: return num(v[0] - v[1], iv[0] - iv[1]);
    case Prim::mul: return num(v[0] * v[1], iv[0] * iv[1]);
    case Prim::div:
      if (v[1] == 0) throw ScalarDivisionError("division by zero");
      return ConstValue(v[0] / v[1]);
    case Prim::floordiv:
    case Prim::mod: {
      if (v[1] == 0) throw ScalarDivisionError("integer division or modulo by zero");
      if (all_int) {
        int64_t q = iv[0] / iv[1];
        if ((iv[0] % iv[1] != 0) && ((iv[0] < 0) != (iv[1] < 0))) --q;
        return ConstValue(p == Prim::floordiv ? q : iv[0] - q * iv[1]);
      }
      double q = std::floor(v[0] / v[1]);
      return ConstValue(p == Prim::floordiv ? q : v[0] - q * v[1]);
    }
    case Prim::less: return ConstValue(v[0] < v[1]);
    case Prim::less_equal: return ConstValue(v[0] <= v[1]);
    case Prim::greater: return ConstValue(v[0] > v[1]);
    case Prim::greater_equal: return ConstValue(v[0] >= v[1]);
    case Prim::equal: return ConstValue(v[0] == v[1]);
    default: return ConstValue(v[0] != v[1]);  // not_equal
  }
}

}  // namespace msl::ir
