// Constructors of the builtin types (the natives stored as `__new__` in each
// builtin class, called with the class first: `int("3")` runs
// int_new(cls=int, "3")) and the few methods of int and float.
//
// Conversions from text follow CPython's grammar exactly (underscores only
// between digits, surrounding whitespace allowed, "inf"/"nan" spelled any
// case) because scripts parse config files and data with int()/float() and
// must accept and reject the same strings Python does. MSL ints are 64-bit:
// a literal that does not fit raises OverflowError instead of growing.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "interp/builtins/builtins.h"
#include "interp/builtins/conversions.h"
#include "interp/builtins/format.h"
#include "interp/core/native_args.h"
#include "interp/builtins/unicode.h"

namespace msl {

namespace {

[[noreturn]] void int_overflow(Interp& I) { raise_exc(I, "OverflowError", "integer overflow"); }

// Strips Python whitespace (str.strip() with no argument) from both ends.
std::string_view strip_space(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e) {
    size_t i = b;
    if (!unicode::is_space(unicode::decode(s, i))) break;
    b = i;
  }
  while (e > b) {
    // Step back one code point.
    size_t start = e - 1;
    while (start > b && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    size_t i = start;
    if (!unicode::is_space(unicode::decode(s, i)) || i != e) break;
    e = start;
  }
  return s.substr(b, e - b);
}

// Value of a digit character in bases up to 36, or 99.
int digit_value(uint32_t c) {
  if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
  if (c >= 'a' && c <= 'z') return static_cast<int>(c - 'a' + 10);
  if (c >= 'A' && c <= 'Z') return static_cast<int>(c - 'A' + 10);
  if (c >= 0xFF10 && c <= 0xFF19) return static_cast<int>(c - 0xFF10);  // full-width digits
  if (c >= 0x660 && c <= 0x669) return static_cast<int>(c - 0x660);
  if (c >= 0x6F0 && c <= 0x6F9) return static_cast<int>(c - 0x6F0);
  if (c >= 0x966 && c <= 0x96F) return static_cast<int>(c - 0x966);
  return 99;
}

}  // namespace

// Parses `text` as int() does with `base` (0 or 2..36). Returns false on a
// malformed literal; raises OverflowError when it does not fit in 64 bits.
bool parse_int_literal(Interp& I, std::string_view text, int base, int64_t& out) {
  std::vector<uint32_t> s = unicode::decode_all(strip_space(text));
  size_t i = 0, n = s.size();
  bool negative = false;
  if (i < n && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  bool had_prefix = false;
  if (i + 1 < n && s[i] == '0') {
    uint32_t p = s[i + 1] | 0x20;
    int pb = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 0;
    if (pb && (base == 0 || base == pb)) {
      base = pb;
      i += 2;
      had_prefix = true;
    }
  }
  if (base == 0) {
    base = 10;
    // Base 0 forbids leading zeros on a non-zero decimal ("010").
    size_t j = i;
    bool nonzero = false, leading_zero = j < n && s[j] == '0';
    for (; j < n; ++j)
      if (s[j] != '0' && s[j] != '_') nonzero = true;
    if (leading_zero && nonzero) return false;
  }
  if (i >= n) return false;
  // A single underscore may follow the prefix or separate two digits.
  if (s[i] == '_' && !had_prefix) return false;
  uint64_t limit = negative ? (uint64_t{1} << 63) : static_cast<uint64_t>(INT64_MAX);
  uint64_t v = 0;
  bool prev_digit = had_prefix;  // "0x_1" is valid
  bool any = false, overflow = false;
  for (; i < n; ++i) {
    if (s[i] == '_') {
      if (!prev_digit) return false;
      prev_digit = false;
      continue;
    }
    int d = digit_value(s[i]);
    if (d >= base) return false;
    if (!overflow) {
      if (v > (limit - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base))
        overflow = true;
      else
        v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    }
    prev_digit = true;
    any = true;
  }
  if (!any || !prev_digit) return false;
  if (overflow) int_overflow(I);
  out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

// Parses `text` as float() does; false when malformed.
bool parse_float_literal(std::string_view text, double& out) {
  std::string_view s = strip_space(text);
  std::string clean;
  size_t i = 0, n = s.size();
  if (i < n && (s[i] == '+' || s[i] == '-')) clean.push_back(s[i++]);
  std::string rest;
  for (size_t j = i; j < n; ++j) rest.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(s[j]))));
  if (rest == "inf" || rest == "infinity") {
    out = clean == "-" ? -INFINITY : INFINITY;
    return true;
  }
  if (rest == "nan") {
    out = clean == "-" ? -NAN : NAN;
    return true;
  }
  // digitpart: digit (["_"] digit)*
  auto digitpart = [&](size_t& k) {
    size_t start = k;
    if (k >= n || !(s[k] >= '0' && s[k] <= '9')) return false;
    while (k < n) {
      if (s[k] >= '0' && s[k] <= '9') {
        clean.push_back(s[k++]);
      } else if (s[k] == '_' && k + 1 < n && s[k + 1] >= '0' && s[k + 1] <= '9') {
        ++k;
      } else {
        break;
      }
    }
    return k > start;
  };
  bool int_digits = digitpart(i);
  bool frac_digits = false;
  if (i < n && s[i] == '.') {
    clean.push_back('.');
    ++i;
    frac_digits = digitpart(i);
  }
  if (!int_digits && !frac_digits) return false;
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    clean.push_back('e');
    ++i;
    if (i < n && (s[i] == '+' || s[i] == '-')) clean.push_back(s[i++]);
    if (!digitpart(i)) return false;
  }
  if (i != n) return false;
  out = std::strtod(clean.c_str(), nullptr);  // overflow gives ±inf, as in Python
  return true;
}

uint64_t py_hash_double(double v) {
  constexpr int kBits = 61;
  constexpr uint64_t kModulus = (uint64_t{1} << kBits) - 1;
  if (std::isinf(v)) return v > 0 ? 314159 : static_cast<uint64_t>(-314159);
  if (std::isnan(v)) return 0;
  int e;
  double m = std::frexp(v, &e);
  int sign = 1;
  if (m < 0) {
    sign = -1;
    m = -m;
  }
  uint64_t x = 0;
  while (m) {
    x = ((x << 28) & kModulus) | x >> (kBits - 28);
    m *= 268435456.0;
    e -= 28;
    auto y = static_cast<uint64_t>(m);
    m -= static_cast<double>(y);
    x += y;
    if (x >= kModulus) x -= kModulus;
  }
  e = e >= 0 ? e % kBits : kBits - 1 - ((-1 - e) % kBits);
  x = ((x << e) & kModulus) | x >> (kBits - e);
  x = x * static_cast<uint64_t>(static_cast<int64_t>(sign));
  return x;
}

int64_t float_to_int(Interp& I, double d) {
  if (std::isnan(d)) raise_value_error(I, "cannot convert float NaN to integer");
  if (std::isinf(d)) raise_exc(I, "OverflowError", "cannot convert float infinity to integer");
  double t = std::trunc(d);
  if (t < -9223372036854775808.0 || t >= 9223372036854775808.0) int_overflow(I);
  return static_cast<int64_t>(t);
}

namespace {

// ---------------------------------------------------------------------- int

Value int_new(Interp& I, Args& a, Object*) {
  size_t npos = a.pos.size() - 1;  // after cls
  if (npos + a.kw.size() > 2)
    raise_type_error(I, fmt::format("int() takes at most 2 arguments ({} given)", npos + a.kw.size()));
  Value x = npos >= 1 ? a.pos[1] : Value::undef();
  Value base = npos >= 2 ? a.pos[2] : Value::undef();
  for (auto& [k, v] : a.kw) {
    if (k->s != "base") raise_type_error(I, fmt::format("'{}' is an invalid keyword argument for int()", k->s));
    if (given(base)) raise_type_error(I, "argument for int() given by name ('base') and position (2)");
    base = v;
  }
  if (x.is_undef()) {
    if (given(base)) raise_type_error(I, "int() missing string argument");
    return Value::integer(0);
  }
  if (given(base)) {
    int64_t b = arg_index(I, base);
    if (b != 0 && (b < 2 || b > 36)) raise_value_error(I, "int() base must be >= 2 and <= 36, or 0");
    if (!x.is(Kind::Str)) raise_type_error(I, "int() can't convert non-string with explicit base");
    int64_t out;
    if (!parse_int_literal(I, x.as<Str>()->s, static_cast<int>(b), out))
      raise_value_error(I, fmt::format("invalid literal for int() with base {}: {}", b, str_repr(x.as<Str>()->s)));
    return Value::integer(out);
  }
  if (x.is_int()) return x;
  if (x.is_bool()) return Value::integer(x.as_bool() ? 1 : 0);
  if (x.is_float()) return Value::integer(float_to_int(I, x.as_float()));
  if (x.is(Kind::Str)) {
    int64_t out;
    if (!parse_int_literal(I, x.as<Str>()->s, 10, out))
      raise_value_error(I, fmt::format("invalid literal for int() with base 10: {}", str_repr(x.as<Str>()->s)));
    return Value::integer(out);
  }
  if (x.is(Kind::Instance) || x.is(Kind::NativeData) || x.is(Kind::Exception)) {
    Class* cls = I.cls_of(x);
    const Interp::Names& nm = I.names();
    for (Str* name : {nm.__int__, nm.__index__, I.intern("__trunc__")}) {
      if (!cls->lookup(name)) continue;
      Value r = I.call_method(x, name, {});
      if (r.is_int()) return r;
      if (r.is_bool()) return Value::integer(r.as_bool() ? 1 : 0);
      raise_type_error(I, fmt::format("{} returned non-int (type {})", name->s, I.type_name(r)));
    }
  }
  raise_type_error(I, fmt::format("int() argument must be a string, a bytes-like object or a real number, not '{}'",
                                  I.type_name(x)));
}

Value int_bit_length(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "bit_length", a, 1, 1, v);
  int64_t x = arg_index(I, v[0]);
  uint64_t m = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
  return Value::integer(m == 0 ? 0 : 64 - __builtin_clzll(m));
}

Value int_bit_count(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "bit_count", a, 1, 1, v);
  int64_t x = arg_index(I, v[0]);
  uint64_t m = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
  return Value::integer(__builtin_popcountll(m));
}

Value int_conjugate(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "conjugate", a, 1, 1, v);
  return Value::integer(arg_index(I, v[0]));
}

Value int_as_integer_ratio(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "as_integer_ratio", a, 1, 1, v);
  return new_tuple({Value::integer(arg_index(I, v[0])), Value::integer(1)});
}

// -------------------------------------------------------------------- float

Value float_new(Interp& I, Args& a, Object*) {
  if (!a.kw.empty()) raise_type_error(I, "float() takes no keyword arguments");
  size_t npos = a.pos.size() - 1;
  if (npos > 1) raise_type_error(I, fmt::format("float expected at most 1 argument, got {}", npos));
  if (npos == 0) return Value::number(0.0);
  const Value& x = a.pos[1];
  if (x.is_float()) return x;
  if (x.is_int()) return Value::number(static_cast<double>(x.as_int()));
  if (x.is_bool()) return Value::number(x.as_bool() ? 1.0 : 0.0);
  if (x.is(Kind::Str)) {
    double d;
    if (!parse_float_literal(x.as<Str>()->s, d))
      raise_value_error(I, fmt::format("could not convert string to float: {}", str_repr(x.as<Str>()->s)));
    return Value::number(d);
  }
  if (x.is(Kind::Instance) || x.is(Kind::NativeData) || x.is(Kind::Exception)) {
    Class* cls = I.cls_of(x);
    if (cls->lookup(I.names().__float__)) {
      Value r = I.call_method(x, I.names().__float__, {});
      if (r.is_float()) return r;
      raise_type_error(I, fmt::format("{}.__float__ returned non-float (type {})", cls->name->s, I.type_name(r)));
    }
    if (cls->lookup(I.names().__index__)) return Value::number(static_cast<double>(arg_index(I, x)));
  }
  raise_type_error(I, fmt::format("float() argument must be a string or a real number, not '{}'", I.type_name(x)));
}

double self_float(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is_float())
    raise_type_error(I, fmt::format("descriptor '{}' for 'float' objects doesn't apply to a '{}' object", method,
                                    a.pos.empty() ? "NoneType" : I.type_name(a.pos[0])));
  return a.pos[0].as_float();
}

Value float_is_integer(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "is_integer", a, 1, 1, v);
  double d = self_float(I, a, "is_integer");
  return Value::boolean(std::isfinite(d) && d == std::floor(d));
}

Value float_as_integer_ratio(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "as_integer_ratio", a, 1, 1, v);
  double d = self_float(I, a, "as_integer_ratio");
  if (std::isinf(d)) raise_exc(I, "OverflowError", "cannot convert Infinity to integer ratio");
  if (std::isnan(d)) raise_value_error(I, "cannot convert NaN to integer ratio");
  int exp;
  double m = std::frexp(d, &exp);
  // Scale the mantissa to an integer, then reduce by common powers of two.
  for (int k = 0; k < 300 && m != std::floor(m); ++k) {
    m *= 2.0;
    --exp;
  }
  if (std::fabs(m) >= 9223372036854775808.0) int_overflow(I);
  int64_t num = static_cast<int64_t>(m);
  int64_t den = 1;
  if (exp > 0) {
    for (int k = 0; k < exp; ++k)
      if (__builtin_mul_overflow(num, int64_t{2}, &num)) int_overflow(I);
  } else {
    for (int k = 0; k < -exp; ++k) {
      if (num % 2 == 0) {
        num /= 2;
      } else if (__builtin_mul_overflow(den, int64_t{2}, &den)) {
        int_overflow(I);
      }
    }
  }
  return new_tuple({Value::integer(num), Value::integer(den)});
}

Value float_conjugate(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "conjugate", a, 1, 1, v);
  return Value::number(self_float(I, a, "conjugate"));
}

// int/float attributes real, imag, numerator, denominator (read-only properties).
Value num_real(Interp& I, Args& a, Object*) {
  const Value& x = a.pos.empty() ? Value() : a.pos[0];
  if (x.is_bool()) return Value::integer(x.as_bool() ? 1 : 0);
  if (x.is_int() || x.is_float()) return x;
  raise_type_error(I, "descriptor 'real' requires a number");
}

Value num_imag(Interp& I, Args& a, Object*) {
  const Value& x = a.pos.empty() ? Value() : a.pos[0];
  if (x.is_float()) return Value::number(0.0);
  if (x.is_int() || x.is_bool()) return Value::integer(0);
  raise_type_error(I, "descriptor 'imag' requires a number");
}

Value int_denominator(Interp& I, Args& a, Object*) {
  if (a.pos.empty() || !(a.pos[0].is_int() || a.pos[0].is_bool()))
    raise_type_error(I, "descriptor 'denominator' requires an int");
  return Value::integer(1);
}

// ---------------------------------------------------------- str, bool, ...

Value str_new(Interp& I, Args& a, Object*) {
  Value v[3];
  Args rest = method_args(a);
  bind_args(I, "str", rest, {"object", "encoding", "errors"}, 0, v);
  if (given(v[1]) || given(v[2])) {
    for (int i = 1; i <= 2; ++i)
      if (given(v[i]) && !v[i].is(Kind::Str))
        raise_type_error(I, fmt::format("str() argument '{}' must be str, not {}", i == 1 ? "encoding" : "errors",
                                        v[i].is_none() ? "None" : I.type_name(v[i])));
    if (v[0].is(Kind::Str)) raise_type_error(I, "decoding str is not supported");
    raise_type_error(I, fmt::format("decoding to str: need a bytes-like object, {} found",
                                    v[0].is_undef() ? "NoneType" : I.type_name(v[0])));
  }
  if (v[0].is_undef()) return str_value("");
  if (v[0].is(Kind::Str)) return v[0];
  return str_value(I.to_str(v[0]));
}

Value bool_new(Interp& I, Args& a, Object*) {
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "bool", rest, 0, 1, v);
  return Value::boolean(given(v[0]) && I.truthy(v[0]));
}

Value list_new(Interp& I, Args& a, Object*) {
  Value v[1];
  Args rest = method_args(a);
  if (!a.kw.empty()) raise_type_error(I, "list() takes no keyword arguments");
  bind_positional(I, "list", rest, 0, 1, v);
  if (v[0].is_undef()) return new_list({});
  return new_list(I.to_vector(v[0]));
}

Value tuple_new(Interp& I, Args& a, Object*) {
  Value v[1];
  Args rest = method_args(a);
  if (!a.kw.empty()) raise_type_error(I, "tuple() takes no keyword arguments");
  bind_positional(I, "tuple", rest, 0, 1, v);
  if (v[0].is_undef()) return new_tuple({});
  if (v[0].is(Kind::Tuple)) return v[0];
  return new_tuple(I.to_vector(v[0]));
}

}  // namespace

// dict.update's argument handling, shared with dict(): a dict, an object with
// keys(), or an iterable of key/value pairs.
void dict_update_from(Interp& I, Dict* d, const Value& src) {
  if (src.is(Kind::Dict)) {
    Dict* s = src.as<Dict>();
    if (s == d) return;
    std::vector<std::pair<Value, Value>> items;
    items.reserve(s->map.size());
    for (auto& e : s->map.entries())
      if (!e.value.is_undef()) items.emplace_back(e.key, e.value);
    for (auto& [k, v] : items) d->map.set(I, k, v);
    return;
  }
  Value keys_fn = I.getattr_or_undef(src, I.intern("keys"));
  if (!keys_fn.is_undef() && !src.is(Kind::List) && !src.is(Kind::Tuple)) {
    Value keys = I.call0(keys_fn);
    Value it = I.iter(keys);
    Value k;
    while (I.next(it, k)) {
      tick(I);
      d->map.set(I, k, I.getitem(src, k));
    }
    return;
  }
  Value it = I.iter(src);
  Value item;
  for (int64_t index = 0; I.next(it, item); ++index) {
    tick(I);
    Value k, v;
    if (item.is(Kind::Tuple) || item.is(Kind::List)) {
      auto& elems = item.is(Kind::Tuple) ? item.as<Tuple>()->items : item.as<List>()->items;
      if (elems.size() != 2)
        raise_value_error(
            I, fmt::format("dictionary update sequence element #{} has length {}; 2 is required", index, elems.size()));
      k = elems[0];
      v = elems[1];
    } else {
      Value sub;
      try {
        sub = I.iter(item);
      } catch (MslError& e) {
        if (!exception_matches(I, e, "TypeError")) throw;
        raise_type_error(I, fmt::format("cannot convert dictionary update sequence element #{} to a sequence", index));
      }
      std::vector<Value> elems = I.to_vector(sub);
      if (elems.size() != 2)
        raise_value_error(
            I, fmt::format("dictionary update sequence element #{} has length {}; 2 is required", index, elems.size()));
      k = elems[0];
      v = elems[1];
    }
    d->map.set(I, k, v);
  }
}

Value make_set(Interp& I, const Value& iterable, bool frozen) {
  auto s = make<Set>();
  s->frozen = frozen;
  if (iterable.is(Kind::Set) || iterable.is(Kind::Dict)) {
    ValueMap& src = iterable.is(Kind::Set) ? iterable.as<Set>()->map : iterable.as<Dict>()->map;
    for (auto& e : src.entries())
      if (!e.value.is_undef()) s->map.set(I, e.key, Value());
    return s.value();
  }
  Value it = I.iter(iterable);
  Value x;
  while (I.next(it, x)) {
    tick(I);
    s->map.set(I, x, Value());
  }
  return s.value();
}

namespace {

Value dict_new(Interp& I, Args& a, Object*) {
  size_t npos = a.pos.size() - 1;
  if (npos > 1) raise_type_error(I, fmt::format("dict expected at most 1 argument, got {}", npos));
  auto d = make<Dict>();
  if (npos == 1) dict_update_from(I, d.get(), a.pos[1]);
  for (auto& [k, v] : a.kw) d->map.set(I, k.value(), v);
  return d.value();
}

Value set_new(Interp& I, Args& a, Object*) {
  Value v[1];
  Args rest = method_args(a);
  if (!a.kw.empty()) raise_type_error(I, "set() takes no keyword arguments");
  bind_positional(I, "set", rest, 0, 1, v);
  if (v[0].is_undef()) return make<Set>().value();
  return make_set(I, v[0], false);
}

Value frozenset_new(Interp& I, Args& a, Object*) {
  Value v[1];
  Args rest = method_args(a);
  if (!a.kw.empty()) raise_type_error(I, "frozenset() takes no keyword arguments");
  bind_positional(I, "frozenset", rest, 0, 1, v);
  if (v[0].is_undef()) {
    auto s = make<Set>();
    s->frozen = true;
    return s.value();
  }
  if (v[0].is(Kind::Set) && v[0].as<Set>()->frozen) return v[0];
  return make_set(I, v[0], true);
}

Value range_new(Interp& I, Args& a, Object*) {
  Value v[3];
  Args rest = method_args(a);
  if (!a.kw.empty()) raise_type_error(I, "range() takes no keyword arguments");
  bind_positional(I, "range", rest, 1, 3, v);
  int64_t start = 0, stop, step = 1;
  if (v[1].is_undef()) {
    stop = arg_index(I, v[0]);
  } else {
    start = arg_index(I, v[0]);
    stop = arg_index(I, v[1]);
    if (given(v[2])) step = arg_index(I, v[2]);
  }
  if (step == 0) raise_value_error(I, "range() arg 3 must not be zero");
  return make<Range>(start, stop, step).value();
}

Value slice_new(Interp& I, Args& a, Object*) {
  Value v[3];
  Args rest = method_args(a);
  if (!a.kw.empty()) raise_type_error(I, "slice() takes no keyword arguments");
  bind_positional(I, "slice", rest, 1, 3, v);
  Value none;
  if (v[1].is_undef()) return make<Slice>(none, v[0], none).value();
  return make<Slice>(v[0], v[1], given(v[2]) ? v[2] : none).value();
}

Value property_new(Interp& I, Args& a, Object*) {
  Value v[4];
  Args rest = method_args(a);
  bind_args(I, "property", rest, {"fget", "fset", "fdel", "doc"}, 0, v);
  auto p = make<Property>();
  p->fget = or_default(v[0], Value());
  p->fset = or_default(v[1], Value());
  p->fdel = or_default(v[2], Value());
  return p.value();
}

Value staticmethod_new(Interp& I, Args& a, Object*) {
  Value v[1];
  Args rest = method_args(a);
  if (!a.kw.empty()) raise_type_error(I, "staticmethod() takes no keyword arguments");
  bind_positional(I, "staticmethod", rest, 1, 1, v);
  return make<StaticMethod>(v[0]).value();
}

Value classmethod_new(Interp& I, Args& a, Object*) {
  Value v[1];
  Args rest = method_args(a);
  if (!a.kw.empty()) raise_type_error(I, "classmethod() takes no keyword arguments");
  bind_positional(I, "classmethod", rest, 1, 1, v);
  return make<ClassMethod>(v[0]).value();
}

}  // namespace

void init_builtin_constructors(Interp& I) {
  Str* nw = I.names().__new__;
  auto def_new = [&](Class* cls, NativeFn fn) { cls->dict.set(nw, make<Native>(cls->name->s, fn).value()); };
  def_new(I.cls_int.get(), int_new);
  def_new(I.cls_float.get(), float_new);
  def_new(I.cls_str.get(), str_new);
  def_new(I.cls_bool.get(), bool_new);
  def_new(I.cls_list.get(), list_new);
  def_new(I.cls_tuple.get(), tuple_new);
  def_new(I.cls_dict.get(), dict_new);
  def_new(I.cls_set.get(), set_new);
  def_new(I.cls_frozenset.get(), frozenset_new);
  def_new(I.cls_range.get(), range_new);
  def_new(I.cls_slice.get(), slice_new);
  def_new(I.cls_property.get(), property_new);
  def_new(I.cls_staticmethod.get(), staticmethod_new);
  def_new(I.cls_classmethod.get(), classmethod_new);

  I.def_method(I.cls_int.get(), "bit_length", int_bit_length);
  I.def_method(I.cls_int.get(), "bit_count", int_bit_count);
  I.def_method(I.cls_int.get(), "conjugate", int_conjugate);
  I.def_method(I.cls_int.get(), "as_integer_ratio", int_as_integer_ratio);
  auto def_property = [&](Class* cls, const char* name, NativeFn fn) {
    auto p = make<Property>();
    p->fget = make<Native>(name, fn).value();
    cls->dict.set(I.intern(name), p.value());
  };
  def_property(I.cls_int.get(), "real", num_real);
  def_property(I.cls_int.get(), "imag", num_imag);
  def_property(I.cls_int.get(), "numerator", num_real);
  def_property(I.cls_int.get(), "denominator", int_denominator);
  def_property(I.cls_float.get(), "real", num_real);
  def_property(I.cls_float.get(), "imag", num_imag);
  I.def_method(I.cls_float.get(), "is_integer", float_is_integer);
  I.def_method(I.cls_float.get(), "as_integer_ratio", float_as_integer_ratio);
  I.def_method(I.cls_float.get(), "conjugate", float_conjugate);
}

}  // namespace msl
