// Python scalar arithmetic (see python_scalar.h).
#include "lang/ir/python_scalar.h"

#include "lang/python_number.h"

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

namespace {

bool as_number(const ConstValue& v, py::Number& out) {
  if (auto n = std::get_if<int64_t>(&v)) out = *n;
  else if (auto b = std::get_if<bool>(&v)) out = *b;
  else if (auto d = std::get_if<double>(&v)) out = *d;
  else return false;
  return true;
}

ConstValue from_number(const py::Number& n) {
  if (auto i = std::get_if<int64_t>(&n)) return *i;
  if (auto b = std::get_if<bool>(&n)) return *b;
  return std::get<double>(n);
}

ConstValue checked(const py::ArithResult& r) {
  if (r.error == py::ArithError::ZeroDivision) throw ScalarDivisionError(r.message);
  if (!r.ok()) throw ScalarArithmeticError(r.message);
  return from_number(r.value);
}

// Python's + (two strings), * (a string and an int) and comparisons (two
// strings; == and != also against a number) on strings; nullopt otherwise.
std::optional<ConstValue> string_op(Prim p, const ConstValue& a, const ConstValue& b) {
  auto sa = std::get_if<std::string>(&a), sb = std::get_if<std::string>(&b);
  if (p == Prim::add) return sa && sb ? std::optional<ConstValue>(*sa + *sb) : std::nullopt;
  if (p == Prim::mul) {
    auto n = std::get_if<int64_t>(sa ? &b : &a);
    const std::string* text = sa ? sa : sb;
    if (!n || !text || (*n > 0 && text->size() * static_cast<uint64_t>(*n) > (1u << 26))) return std::nullopt;
    std::string out;
    for (int64_t k = 0; k < *n; ++k) out += *text;
    return ConstValue(out);
  }
  if (!sa || !sb) {
    py::Number n;
    bool number = as_number(sa ? b : a, n);
    if (p == Prim::equal && number) return ConstValue(false);
    if (p == Prim::not_equal && number) return ConstValue(true);
    return std::nullopt;
  }
  int c = sa->compare(*sb);  // bytewise: UTF-8 keeps Python's code point order
  switch (p) {
    case Prim::less: return ConstValue(c < 0);
    case Prim::less_equal: return ConstValue(c <= 0);
    case Prim::greater: return ConstValue(c > 0);
    case Prim::greater_equal: return ConstValue(c >= 0);
    case Prim::equal: return ConstValue(c == 0);
    case Prim::not_equal: return ConstValue(c != 0);
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<ConstValue> python_scalar_op(Prim p, std::span<const ConstValue> args) {
  if (!is_scalar_arithmetic(p, args.size())) return std::nullopt;
  if (args.size() == 2 && (std::holds_alternative<std::string>(args[0]) || std::holds_alternative<std::string>(args[1])))
    return string_op(p, args[0], args[1]);
  py::Number x, y;
  if (!as_number(args[0], x)) return std::nullopt;
  if (args.size() == 1) return checked(py::negate(x));
  if (!as_number(args[1], y)) return std::nullopt;
  using ast::BinOp;
  switch (p) {
    case Prim::add: return checked(py::binary(BinOp::Add, x, y));
    case Prim::sub: return checked(py::binary(BinOp::Sub, x, y));
    case Prim::mul: return checked(py::binary(BinOp::Mul, x, y));
    case Prim::div: return checked(py::binary(BinOp::Div, x, y));
    case Prim::floordiv: return checked(py::binary(BinOp::FloorDiv, x, y));
    case Prim::mod: return checked(py::binary(BinOp::Mod, x, y));
    default: break;
  }
  bool ordered;
  int c = py::compare(x, y, ordered);
  switch (p) {
    case Prim::less: return ConstValue(ordered && c < 0);
    case Prim::less_equal: return ConstValue(ordered && c <= 0);
    case Prim::greater: return ConstValue(ordered && c > 0);
    case Prim::greater_equal: return ConstValue(ordered && c >= 0);
    case Prim::equal: return ConstValue(ordered && c == 0);
    default: return ConstValue(!ordered || c != 0);  // not_equal
  }
}

}  // namespace msl::ir
