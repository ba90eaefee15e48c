// The builtin functions: print, len, min/max, sum, round, sorted, zip, map,
// isinstance, getattr, ... registered in the builtins module.
//
// enumerate, zip, map, filter, reversed and iter(f, sentinel) return lazy
// native iterators, as in Python: `zip(range(10**9), data)` costs nothing up
// front and user callbacks run in the order Python runs them. Every loop that
// consumes a user-sized iterable goes through tick(), so Ctrl-C and the
// fuzzer's step limit reach into it.
#include "interp/builtins/builtins.h"

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "interp/builtins/conversions.h"
#include "interp/builtins/format.h"
#include "interp/builtins/format_internal.h"
#include "interp/core/name_suggestion.h"
#include "interp/core/native_args.h"
#include "interp/builtins/unicode.h"

namespace msl {

namespace {

using ast::BinOp;
using ast::CmpOp;

bool is_callable(Interp& I, const Value& v) {
  if (!v.is_obj()) return false;
  switch (v.obj()->kind) {
    case Kind::Function:
    case Kind::Native:
    case Kind::BoundMethod:
    case Kind::Class:
    case Kind::StaticMethod: return true;
    case Kind::Instance:
    case Kind::NativeData:
    case Kind::Exception: return I.cls_of(v)->lookup(I.names().__call__) != nullptr;
    default: return false;
  }
}

// ------------------------------------------------------------ lazy iterators

struct EnumerateIter final : Iterator {
  Value it;
  int64_t count;
  EnumerateIter(Value i, int64_t start) : it(std::move(i)), count(start) {}
  bool next(Interp& I, Value& out) override {
    Value x;
    if (!I.next(it, x)) return false;
    int64_t n = count;
    if (__builtin_add_overflow(count, int64_t{1}, &count)) raise_exc(I, "OverflowError", "integer overflow");
    out = new_tuple({Value::integer(n), std::move(x)});
    return true;
  }
  const char* type_name() const override { return "enumerate"; }
};

struct ZipIter final : Iterator {
  std::vector<Value> its;
  bool strict;
  bool done = false;
  ZipIter(std::vector<Value> i, bool s) : its(std::move(i)), strict(s) {}
  bool next(Interp& I, Value& out) override {
    if (done || its.empty()) return false;
    std::vector<Value> items;
    items.reserve(its.size());
    for (size_t k = 0; k < its.size(); ++k) {
      Value x;
      if (!I.next(its[k], x)) {
        done = true;
        if (strict) strict_check(I, k);
        return false;
      }
      items.push_back(std::move(x));
    }
    out = new_tuple(std::move(items));
    return true;
  }
  // Iterator `k` ran out first: the others must be exhausted too.
  void strict_check(Interp& I, size_t k) {
    auto who = [](size_t n) { return n == 1 ? std::string("argument 1") : fmt::format("arguments 1-{}", n); };
    if (k > 0) raise_value_error(I, fmt::format("zip() argument {} is shorter than {}", k + 1, who(k)));
    for (size_t j = 1; j < its.size(); ++j) {
      Value x;
      if (I.next(its[j], x)) raise_value_error(I, fmt::format("zip() argument {} is longer than {}", j + 1, who(j)));
    }
  }
  const char* type_name() const override { return "zip"; }
};

struct MapIter final : Iterator {
  Value fn;
  std::vector<Value> its;
  MapIter(Value f, std::vector<Value> i) : fn(std::move(f)), its(std::move(i)) {}
  bool next(Interp& I, Value& out) override {
    std::vector<Value> args;
    args.reserve(its.size());
    for (Value& it : its) {
      Value x;
      if (!I.next(it, x)) return false;
      args.push_back(std::move(x));
    }
    out = I.call(fn, args);
    return true;
  }
  const char* type_name() const override { return "map"; }
};

struct FilterIter final : Iterator {
  Value fn, it;
  FilterIter(Value f, Value i) : fn(std::move(f)), it(std::move(i)) {}
  bool next(Interp& I, Value& out) override {
    Value x;
    while (I.next(it, x)) {
      tick(I);
      bool keep = fn.is_none() ? I.truthy(x) : I.truthy(I.call1(fn, x));
      if (keep) {
        out = std::move(x);
        return true;
      }
    }
    return false;
  }
  const char* type_name() const override { return "filter"; }
};

// reversed(list): by index over the live list, like CPython's list_reverseiterator.
struct ReversedListIter final : Iterator {
  Value list;
  int64_t index;
  explicit ReversedListIter(Value l)
      : list(std::move(l)), index(static_cast<int64_t>(list.as<List>()->items.size()) - 1) {}
  bool next(Interp&, Value& out) override {
    auto& items = list.as<List>()->items;
    if (index < 0 || index >= static_cast<int64_t>(items.size())) {
      index = -1;
      return false;
    }
    out = items[static_cast<size_t>(index--)];
    return true;
  }
  const char* type_name() const override { return "list_reverseiterator"; }
};

// reversed() over a snapshot (tuples, strings, dict keys).
struct ReversedVectorIter final : Iterator {
  std::vector<Value> items;
  size_t left;
  explicit ReversedVectorIter(std::vector<Value> v) : items(std::move(v)), left(items.size()) {}
  bool next(Interp&, Value& out) override {
    if (left == 0) return false;
    out = std::move(items[--left]);
    return true;
  }
  const char* type_name() const override { return "reversed"; }
};

struct ReversedRangeIter final : Iterator {
  int64_t last, step, left;
  ReversedRangeIter(int64_t l, int64_t s, int64_t n) : last(l), step(s), left(n) {}
  bool next(Interp&, Value& out) override {
    if (left <= 0) return false;
    out = Value::integer(last);
    if (--left > 0) last -= step;
    return true;
  }
  const char* type_name() const override { return "range_iterator"; }
};

// reversed(obj) through __len__ and __getitem__.
struct ReversedGetitemIter final : Iterator {
  Value obj;
  int64_t index;
  ReversedGetitemIter(Value o, int64_t n) : obj(std::move(o)), index(n - 1) {}
  bool next(Interp& I, Value& out) override {
    if (index < 0) return false;
    out = I.getitem(obj, Value::integer(index--));
    return true;
  }
  const char* type_name() const override { return "reversed"; }
};

// iter(callable, sentinel).
struct CallIter final : Iterator {
  Value fn, sentinel;
  bool done = false;
  CallIter(Value f, Value s) : fn(std::move(f)), sentinel(std::move(s)) {}
  bool next(Interp& I, Value& out) override {
    if (done) return false;
    Value r = I.call0(fn);
    if (I.eq(r, sentinel)) {
      done = true;
      return false;
    }
    out = std::move(r);
    return true;
  }
  const char* type_name() const override { return "callable_iterator"; }
};

// ------------------------------------------------------------------- output

Value builtin_print(Interp& I, Args& a, Object*) {
  Value sep, end, file, flush;
  for (auto& [k, v] : a.kw) {
    if (k->s == "sep")
      sep = v;
    else if (k->s == "end")
      end = v;
    else if (k->s == "file")
      file = v;
    else if (k->s == "flush")
      flush = v;
    else
      raise_type_error(I, fmt::format("'{}' is an invalid keyword argument for print()", k->s));
  }
  if (!sep.is_none() && !sep.is(Kind::Str))
    raise_type_error(I, fmt::format("sep must be None or a string, not {}", I.type_name(sep)));
  if (!end.is_none() && !end.is(Kind::Str))
    raise_type_error(I, fmt::format("end must be None or a string, not {}", I.type_name(end)));
  std::string_view sep_text = sep.is_none() ? std::string_view(" ") : std::string_view(sep.as<Str>()->s);
  std::string_view end_text = end.is_none() ? std::string_view("\n") : std::string_view(end.as<Str>()->s);
  std::string out;
  for (size_t i = 0; i < a.pos.size(); ++i) {
    if (i) out += sep_text;
    if (a.pos[i].is(Kind::Str))
      out += a.pos[i].as<Str>()->s;
    else
      out += I.to_str(a.pos[i]);
  }
  out += end_text;
  if (file.is_none()) {
    // A program that replaced sys.stdout (a capture, a log file) gets the
    // text there, as in Python; None swallows it.
    if (Module* sys = I.loaded_module("sys")) {
      Value now = sys->get(I.intern("stdout"));
      Value original = sys->get(I.intern("__stdout__"));
      if (now.is_none()) return Value();
      if (!now.is_undef() && !(now.is_obj() && original.is_obj() && now.obj() == original.obj())) file = now;
    }
  }
  if (file.is_none()) {
    I.write_out(out);
    if (I.truthy(flush)) I.flush_out();
    return Value();
  }
  Value text = str_value(std::move(out));
  I.call_method(file, I.intern("write"), std::span<Value>(&text, 1));
  if (I.truthy(flush)) {
    Value f = I.getattr_or_undef(file, I.intern("flush"));
    if (!f.is_undef()) I.call0(f);
  }
  return Value();
}

Value builtin_input(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "input", a, 0, 1, v);
  if (given(v[0])) I.write_out(I.to_str(v[0]));
  I.flush_out();  // the prompt is seen before the program waits, as in Python
  std::string line;
  if (!read_stdin_line(I, line) && line.empty()) raise_exc(I, "EOFError", "EOF when reading a line");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return str_value(std::move(line));
}

// --------------------------------------------------------------- sequences

Value builtin_len(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "len")};
  return Value::integer(I.len(v[0]));
}

Value builtin_enumerate(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_args(I, "enumerate", a, {"iterable", "start"}, 0, v);
  if (v[0].is_undef()) {
    // CPython's quirk: without an iterable, a `start` keyword is reported as invalid.
    if (given(v[1])) raise_type_error(I, "'start' is an invalid keyword argument for enumerate()");
    raise_type_error(I, "enumerate() missing required argument 'iterable'");
  }
  int64_t start = given(v[1]) ? arg_index(I, v[1]) : 0;
  return Value::object(new EnumerateIter(I.iter(v[0]), start));
}

Value builtin_zip(Interp& I, Args& a, Object*) {
  bool strict = false;
  for (auto& [k, v] : a.kw) {
    if (k->s != "strict") raise_type_error(I, fmt::format("zip() got an unexpected keyword argument '{}'", k->s));
    strict = I.truthy(v);
  }
  std::vector<Value> its;
  its.reserve(a.pos.size());
  for (Value& x : a.pos) its.push_back(I.iter(x));
  return Value::object(new ZipIter(std::move(its), strict));
}

Value builtin_map(Interp& I, Args& a, Object*) {
  if (!a.kw.empty()) raise_type_error(I, "map() takes no keyword arguments");
  if (a.pos.size() < 2) raise_type_error(I, "map() must have at least two arguments.");
  std::vector<Value> its;
  for (size_t i = 1; i < a.pos.size(); ++i) its.push_back(I.iter(a.pos[i]));
  return Value::object(new MapIter(a.pos[0], std::move(its)));
}

Value builtin_filter(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "filter", a, 2, 2, v);
  return Value::object(new FilterIter(v[0], I.iter(v[1])));
}

Value builtin_reversed(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "reversed", a, 1, 1, v);
  const Value& x = v[0];
  if (x.is(Kind::List)) return Value::object(new ReversedListIter(x));
  if (x.is(Kind::Tuple)) return Value::object(new ReversedVectorIter(x.as<Tuple>()->items));
  if (x.is(Kind::Str) || x.is(Kind::Dict)) return Value::object(new ReversedVectorIter(I.to_vector(x)));
  if (x.is(Kind::Range)) {
    Range* r = x.as<Range>();
    int64_t n = r->length();
    int64_t last = r->start + (n > 0 ? (n - 1) * r->step : 0);
    return Value::object(new ReversedRangeIter(last, r->step, n));
  }
  if (x.is(Kind::Instance) || x.is(Kind::NativeData)) {
    Class* cls = I.cls_of(x);
    Str* rev = I.intern("__reversed__");
    if (cls->lookup(rev)) return I.call_method(x, rev, {});
    if (cls->lookup(I.names().__len__) && cls->lookup(I.names().__getitem__))
      return Value::object(new ReversedGetitemIter(x, I.len(x)));
  }
  raise_type_error(I, fmt::format("'{}' object is not reversible", I.type_name(x)));
}

Value builtin_sorted(Interp& I, Args& a, Object*) {
  if (a.pos.size() != 1) raise_type_error(I, fmt::format("sorted expected 1 argument, got {}", a.pos.size()));
  // As sorted() = list(iterable) then .sort(**kw): the iterable is consumed first.
  std::vector<Value> items = I.to_vector(a.pos[0]);
  Value key, reverse = Value::boolean(false);
  for (auto& [k, v] : a.kw) {
    if (k->s == "key")
      key = v;
    else if (k->s == "reverse")
      reverse = v;
    else
      raise_type_error(I, fmt::format("'{}' is an invalid keyword argument for sort()", k->s));
  }
  sort_values(I, items, key, I.truthy(reverse));
  return new_list(std::move(items));
}

// min() and max(): one iterable or several arguments, key= and default=.
Value min_max(Interp& I, Args& a, bool is_max) {
  const char* name = is_max ? "max" : "min";
  if (a.pos.empty()) raise_type_error(I, fmt::format("{} expected at least 1 argument, got 0", name));
  Value key, dflt = Value::undef();
  for (auto& [k, v] : a.kw) {
    if (k->s == "key")
      key = v;
    else if (k->s == "default")
      dflt = v;
    else
      raise_type_error(I, fmt::format("'{}' is an invalid keyword argument for {}()", k->s, name));
  }
  if (a.pos.size() > 1 && given(dflt))
    raise_type_error(I, fmt::format("Cannot specify a default for {}() with multiple positional arguments", name));
  Value it = a.pos.size() == 1 ? I.iter(a.pos[0]) : I.iter(new_tuple({a.pos.begin(), a.pos.end()}));
  Value best, best_key, x;
  bool have = false;
  while (I.next(it, x)) {
    tick(I);
    Value k = key.is_none() ? x : I.call1(key, x);
    if (!have) {
      best = std::move(x);
      best_key = std::move(k);
      have = true;
      continue;
    }
    bool better = I.truthy(I.compare(is_max ? CmpOp::Gt : CmpOp::Lt, k, best_key));
    if (better) {
      best = std::move(x);
      best_key = std::move(k);
    }
  }
  if (!have) {
    if (given(dflt)) return dflt;
    raise_value_error(I, fmt::format("{}() arg is an empty sequence", name));
  }
  return best;
}

Value builtin_min(Interp& I, Args& a, Object*) { return min_max(I, a, false); }
Value builtin_max(Interp& I, Args& a, Object*) { return min_max(I, a, true); }

Value builtin_sum(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_args(I, "sum", a, {"iterable", "start"}, 1, v, 2, 1);
  Value acc = given(v[1]) ? v[1] : Value::integer(0);
  if (acc.is(Kind::Str)) raise_type_error(I, "sum() can't sum strings [use ''.join(seq) instead]");
  Value it = I.iter(v[0]);
  Value x;
  while (I.next(it, x)) {
    tick(I);
    // Fast paths for int and float accumulation; anything else (and int
    // overflow, which must raise) goes through the generic `+`.
    if (acc.is_int() && x.is_int()) {
      int64_t r;
      if (!__builtin_add_overflow(acc.as_int(), x.as_int(), &r)) {
        acc = Value::integer(r);
        continue;
      }
    } else if (acc.is_float() && x.is_float()) {
      acc = Value::number(acc.as_float() + x.as_float());
      continue;
    }
    acc = I.binary(BinOp::Add, acc, x);
  }
  return acc;
}

Value builtin_any(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "any")};
  Value it = I.iter(v[0]);
  Value x;
  while (I.next(it, x)) {
    tick(I);
    if (I.truthy(x)) return Value::boolean(true);
  }
  return Value::boolean(false);
}

Value builtin_all(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "all")};
  Value it = I.iter(v[0]);
  Value x;
  while (I.next(it, x)) {
    tick(I);
    if (!I.truthy(x)) return Value::boolean(false);
  }
  return Value::boolean(true);
}

Value builtin_iter(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "iter", a, 1, 2, v);
  if (v[1].is_undef()) return I.iter(v[0]);
  if (!is_callable(I, v[0])) raise_type_error(I, "iter(v, w): v must be callable");
  return Value::object(new CallIter(v[0], v[1]));
}

Value builtin_next(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "next", a, 1, 2, v);
  Value out;
  if (I.next(v[0], out)) return out;
  if (given(v[1])) return v[1];
  raise_exc(I, "StopIteration", "");
}

// -------------------------------------------------------------- arithmetic

Value builtin_abs(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "abs")};
  const Value& x = v[0];
  if (x.is_int()) {
    if (x.as_int() == INT64_MIN) raise_exc(I, "OverflowError", "integer overflow");
    return Value::integer(x.as_int() < 0 ? -x.as_int() : x.as_int());
  }
  if (x.is_bool()) return Value::integer(x.as_bool() ? 1 : 0);
  if (x.is_float()) return Value::number(std::fabs(x.as_float()));
  if ((x.is(Kind::Instance) || x.is(Kind::NativeData)) && I.cls_of(x)->lookup(I.names().__abs__))
    return I.call_method(x, I.names().__abs__, {});
  raise_type_error(I, fmt::format("bad operand type for abs(): '{}'", I.type_name(x)));
}

// round(x, n) for floats, as CPython's double_round: round to n decimal
// places with correctly rounded half-to-even on the exact binary value, then
// convert back. printf's %e/%f are exact in glibc, so they stand in for dtoa.
double round_float_digits(Interp& I, double x, int64_t ndigits) {
  if (!std::isfinite(x) || x == 0.0) return x;
  if (ndigits > 323) return x;
  if (ndigits < -308) return 0.0 * x;
  std::string text;
  char buf[1024];  // 309 integer digits + 323 decimals at most
  if (ndigits >= 0) {
    std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(ndigits), x);
    text = buf;
  } else {
    int64_t k = -ndigits;
    std::snprintf(buf, sizeof buf, "%.25e", std::fabs(x));
    int exp10 = std::atoi(std::strchr(buf, 'e') + 1);
    int64_t prec = exp10 - k;
    if (prec >= 0) {
      std::snprintf(buf, sizeof buf, "%.*e", static_cast<int>(prec), x);
      text = buf;
    } else if (prec == -1) {
      // |x| / 10^k is in [0.1, 1): the result is 0 or 10^k, ties to 0 (even).
      bool above_half = buf[0] > '5';
      if (buf[0] == '5')
        for (const char* p = buf + 2; *p && *p != 'e'; ++p)
          if (*p != '0') above_half = true;
      if (!above_half) return 0.0 * x;
      text = fmt::format("{}1e{}", x < 0 ? "-" : "", k);
    } else {
      return 0.0 * x;
    }
  }
  double r = std::strtod(text.c_str(), nullptr);
  if (std::isinf(r)) raise_exc(I, "OverflowError", "rounded value too large to represent");
  if (r == 0.0) return 0.0 * x;
  return r;
}

int64_t round_int_digits(Interp& I, int64_t x, int64_t ndigits) {
  if (ndigits >= 0) return x;
  if (ndigits < -38) return 0;
  __int128 p = 1;
  for (int64_t i = 0; i < -ndigits; ++i) p *= 10;
  __int128 v = x;
  __int128 q = v / p, r = v % p;
  if (r < 0) {  // floor division
    q -= 1;
    r += p;
  }
  if (2 * r > p || (2 * r == p && (q & 1) != 0)) q += 1;
  __int128 result = q * p;
  if (result > INT64_MAX || result < INT64_MIN) raise_exc(I, "OverflowError", "integer overflow");
  return static_cast<int64_t>(result);
}

Value builtin_round(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_args(I, "round", a, {"number", "ndigits"}, 1, v);
  const Value& x = v[0];
  bool has_digits = given_not_none(v[1]);
  if (x.is_int() || x.is_bool()) {
    int64_t n = x.is_int() ? x.as_int() : (x.as_bool() ? 1 : 0);
    if (!has_digits) return Value::integer(n);
    return Value::integer(round_int_digits(I, n, arg_index(I, v[1])));
  }
  if (x.is_float()) {
    if (!has_digits) return Value::integer(float_to_int(I, std::nearbyint(x.as_float())));
    return Value::number(round_float_digits(I, x.as_float(), arg_index(I, v[1])));
  }
  Str* rname = I.intern("__round__");
  if ((x.is(Kind::Instance) || x.is(Kind::NativeData)) && I.cls_of(x)->lookup(rname)) {
    if (!has_digits) return I.call_method(x, rname, {});
    Value nd = v[1];
    return I.call_method(x, rname, std::span<Value>(&nd, 1));
  }
  raise_type_error(I, fmt::format("type {} doesn't define __round__ method", I.type_name(x)));
}

Value builtin_divmod(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "divmod", a, 2, 2, v);
  auto is_num = [](const Value& x) { return x.is_int() || x.is_bool() || x.is_float(); };
  if (is_num(v[0]) && is_num(v[1])) {
    if ((v[0].is_float() || v[1].is_float()) && I.to_float(v[1], "divmod") == 0.0)
      raise_exc(I, "ZeroDivisionError", "float divmod()");
    if (!v[0].is_float() && !v[1].is_float() && arg_index(I, v[1]) == 0)
      raise_exc(I, "ZeroDivisionError", "integer division or modulo by zero");
    return new_tuple({I.binary(BinOp::FloorDiv, v[0], v[1]), I.binary(BinOp::Mod, v[0], v[1])});
  }
  for (int side = 0; side < 2; ++side) {
    const Value& self = v[side];
    if (!(self.is(Kind::Instance) || self.is(Kind::NativeData))) continue;
    Str* name = I.intern(side == 0 ? "__divmod__" : "__rdivmod__");
    if (!I.cls_of(self)->lookup(name)) continue;
    Value other = v[1 - side];
    Value r = I.call_method(self, name, std::span<Value>(&other, 1));
    if (!r.identical(I.not_implemented)) return r;
  }
  raise_type_error(
      I, fmt::format("unsupported operand type(s) for divmod(): '{}' and '{}'", I.type_name(v[0]), I.type_name(v[1])));
}

uint64_t mulmod(uint64_t a, uint64_t b, uint64_t m) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) % m);
}

Value builtin_pow(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_args(I, "pow", a, {"base", "exp", "mod"}, 2, v);
  if (!given_not_none(v[2])) return I.binary(BinOp::Pow, v[0], v[1]);
  auto is_intlike = [](const Value& x) { return x.is_int() || x.is_bool(); };
  if (!is_intlike(v[0]) || !is_intlike(v[1]) || !is_intlike(v[2])) {
    // CPython reaches float's pow (and its message) whenever a float is involved.
    if (v[0].is_float() || v[1].is_float() || v[2].is_float())
      raise_type_error(I, "pow() 3rd argument not allowed unless all arguments are integers");
    raise_type_error(I, fmt::format("unsupported operand type(s) for ** or pow(): '{}', '{}', '{}'", I.type_name(v[0]),
                                    I.type_name(v[1]), I.type_name(v[2])));
  }
  int64_t base = arg_index(I, v[0]), exp = arg_index(I, v[1]), mod = arg_index(I, v[2]);
  if (mod == 0) raise_value_error(I, "pow() 3rd argument cannot be 0");
  uint64_t m = mod < 0 ? 0 - static_cast<uint64_t>(mod) : static_cast<uint64_t>(mod);
  if (m == 1) return Value::integer(0);
  // base mod m in [0, m)
  int64_t bm = static_cast<int64_t>(static_cast<__int128>(base) % static_cast<__int128>(m));
  uint64_t b = bm < 0 ? static_cast<uint64_t>(bm + static_cast<__int128>(m)) : static_cast<uint64_t>(bm);
  if (exp < 0) {
    // Modular inverse by the extended Euclidean algorithm.
    __int128 r0 = m, r1 = b, t0 = 0, t1 = 1;
    while (r1 != 0) {
      __int128 q = r0 / r1;
      __int128 tmp = r0 - q * r1;
      r0 = r1;
      r1 = tmp;
      tmp = t0 - q * t1;
      t0 = t1;
      t1 = tmp;
    }
    if (r0 != 1) raise_value_error(I, "base is not invertible for the given modulus");
    if (t0 < 0) t0 += m;
    b = static_cast<uint64_t>(t0);
  }
  uint64_t e = exp < 0 ? 0 - static_cast<uint64_t>(exp) : static_cast<uint64_t>(exp);
  uint64_t r = 1 % m;
  while (e) {
    if (e & 1) r = mulmod(r, b, m);
    b = mulmod(b, b, m);
    e >>= 1;
  }
  int64_t result = static_cast<int64_t>(r);
  if (mod < 0 && r != 0) result = static_cast<int64_t>(static_cast<__int128>(r) - m);
  return Value::integer(result);
}

std::string int_text_with_prefix(Interp& I, const Value& x, int base, const char* prefix) {
  int64_t n = arg_index(I, x);
  std::string s = n < 0 ? "-" : "";
  return s + prefix + int_digits(n, base);
}

Value builtin_hex(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "hex")};
  return str_value(int_text_with_prefix(I, v[0], 16, "0x"));
}

Value builtin_oct(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "oct")};
  return str_value(int_text_with_prefix(I, v[0], 8, "0o"));
}

Value builtin_bin(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "bin")};
  return str_value(int_text_with_prefix(I, v[0], 2, "0b"));
}

Value builtin_chr(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "chr")};
  int64_t c = arg_index(I, v[0]);
  if (c < 0 || c > 0x10FFFF) raise_value_error(I, "chr() arg not in range(0x110000)");
  return str_value(unicode::encode(static_cast<uint32_t>(c)));
}

Value builtin_ord(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "ord")};
  if (!v[0].is(Kind::Str))
    raise_type_error(I, fmt::format("ord() expected string of length 1, but {} found", I.type_name(v[0])));
  const std::string& s = v[0].as<Str>()->s;
  size_t n = unicode::count(s);
  if (n != 1) raise_type_error(I, fmt::format("ord() expected a character, but string of length {} found", n));
  size_t i = 0;
  return Value::integer(unicode::decode(s, i));
}

// ------------------------------------------------------------ introspection

// True when `v` is an instance of `spec` (a class or a nested tuple of classes).
bool instance_check(Interp& I, const Value& v, const Value& spec, const char* fname, int depth = 0) {
  if (spec.is(Kind::Class)) return I.isinstance(v, spec.as<Class>());
  if (spec.is(Kind::Tuple) && depth < 100) {
    for (const Value& c : spec.as<Tuple>()->items)
      if (instance_check(I, v, c, fname, depth + 1)) return true;
    // Python validates lazily: an earlier match returns before a bad entry.
    return false;
  }
  raise_type_error(I, fmt::format("{}() arg 2 must be a type, a tuple of types, or a union", fname));
}

bool subclass_check(Interp& I, Class* c, const Value& spec, int depth = 0) {
  if (spec.is(Kind::Class)) return c->is_subclass_of(spec.as<Class>());
  if (spec.is(Kind::Tuple) && depth < 100) {
    for (const Value& s : spec.as<Tuple>()->items)
      if (subclass_check(I, c, s, depth + 1)) return true;
    return false;
  }
  raise_type_error(I, "issubclass() arg 2 must be a class, a tuple of classes, or a union");
}

Value builtin_isinstance(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "isinstance", a, 2, 2, v);
  return Value::boolean(instance_check(I, v[0], v[1], "isinstance"));
}

Value builtin_issubclass(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "issubclass", a, 2, 2, v);
  if (!v[0].is(Kind::Class)) raise_type_error(I, "issubclass() arg 1 must be a class");
  return Value::boolean(subclass_check(I, v[0].as<Class>(), v[1]));
}

Str* attr_name(Interp& I, const Value& v) {
  if (!v.is(Kind::Str)) raise_type_error(I, fmt::format("attribute name must be string, not '{}'", I.type_name(v)));
  return I.intern(v.as<Str>()->s);
}

Value builtin_getattr(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_positional(I, "getattr", a, 2, 3, v);
  Str* name = attr_name(I, v[1]);
  if (v[2].is_undef()) return I.getattr(v[0], name);
  try {
    return I.getattr(v[0], name);
  } catch (MslError& e) {
    if (!exception_matches(I, e, "AttributeError")) throw;
    return v[2];
  }
}

Value builtin_setattr(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_positional(I, "setattr", a, 3, 3, v);
  I.setattr(v[0], attr_name(I, v[1]), v[2]);
  return Value();
}

Value builtin_hasattr(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "hasattr", a, 2, 2, v);
  Str* name = attr_name(I, v[1]);
  try {
    I.getattr(v[0], name);
    return Value::boolean(true);
  } catch (MslError& e) {
    if (!exception_matches(I, e, "AttributeError")) throw;
    return Value::boolean(false);
  }
}

Value builtin_delattr(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "delattr", a, 2, 2, v);
  I.delattr(v[0], attr_name(I, v[1]));
  return Value();
}

Value builtin_repr(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "repr")};
  return str_value(I.repr(v[0]));
}

Value builtin_ascii(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "ascii")};
  return str_value(ascii_escape(I.repr(v[0])));
}

Value builtin_format(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "format", a, 1, 2, v);
  if (given(v[1]) && !v[1].is(Kind::Str))
    raise_type_error(
        I, fmt::format("format() argument 2 must be str, not {}", v[1].is_none() ? "None" : I.type_name(v[1])));
  return str_value(format_value(I, v[0], given(v[1]) ? std::string_view(v[1].as<Str>()->s) : std::string_view()));
}

Value builtin_id(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "id")};
  const Value& x = v[0];
  if (x.is_obj()) return Value::integer(static_cast<int64_t>(reinterpret_cast<uintptr_t>(x.obj())));
  // Inline values have no address; equal values get equal ids (Python caches
  // small ints and the singletons the same way). Odd, so never an address.
  uint64_t bits = 0;
  switch (x.tag()) {
    case Tag::Bool: bits = x.as_bool() ? 0x21 : 0x11; break;
    case Tag::Int: bits = static_cast<uint64_t>(x.as_int()) * 0x9E3779B97F4A7C15ull; break;
    case Tag::Float: {
      double d = x.as_float();
      std::memcpy(&bits, &d, sizeof bits);
      bits = bits * 0xC2B2AE3D27D4EB4Full + 0x7;
      break;
    }
    default: bits = 0x31; break;
  }
  return Value::integer(static_cast<int64_t>((bits | 1) & 0x7FFFFFFFFFFFFFFFull));
}

// hash() gives CPython's values for numbers and tuples of them (hash(1) == 1,
// hash(-1) == -2, hash(1.5) == 1152921504606846977), so scripts that print or
// bucket by hash agree with Python; other objects use the interpreter's hash
// (Python's str and None hashes are randomized per process anyway).
int64_t py_hash(Interp& I, const Value& v, int depth = 0) {
  constexpr uint64_t kModulus = (uint64_t{1} << 61) - 1;
  auto fix = [](int64_t h) { return h == -1 ? -2 : h; };
  if (v.is_int() || v.is_bool()) {
    int64_t x = v.is_int() ? v.as_int() : (v.as_bool() ? 1 : 0);
    uint64_t m = x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
    auto r = static_cast<int64_t>(m % kModulus);
    return fix(x < 0 ? -r : r);
  }
  if (v.is_float()) {
    double d = v.as_float();
    if (std::isnan(d)) return static_cast<int64_t>(I.hash(v));
    return fix(static_cast<int64_t>(py_hash_double(d)));
  }
  if (v.is(Kind::Tuple) && depth < 64) {
    // CPython's tuplehash (xxHash-based).
    constexpr uint64_t kPrime1 = 11400714785074694791ull, kPrime2 = 14029467366897019727ull,
                       kPrime5 = 2870177450012600261ull;
    auto& items = v.as<Tuple>()->items;
    uint64_t acc = kPrime5;
    for (const Value& x : items) {
      auto lane = static_cast<uint64_t>(py_hash(I, x, depth + 1));
      acc += lane * kPrime2;
      acc = (acc << 31) | (acc >> 33);
      acc *= kPrime1;
    }
    acc += items.size() ^ (kPrime5 ^ 3527539ull);
    if (acc == static_cast<uint64_t>(-1)) return 1546275796;
    return static_cast<int64_t>(acc);
  }
  return static_cast<int64_t>(I.hash(v));
}

Value builtin_hash(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "hash")};
  return Value::integer(py_hash(I, v[0]));
}

Value builtin_callable(Interp& I, Args& a, Object*) {
  Value v[1] = {builtin_onearg(I, a, "callable")};
  return Value::boolean(is_callable(I, v[0]));
}

Value builtin_dir(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "dir", a, 0, 1, v);
  // No frame introspection: dir() lists the names of the main program.
  std::vector<std::string> names = names_of(I, v[0].is_undef() ? Value::object(I.main_module().get()) : v[0]);
  std::vector<Value> items;
  items.reserve(names.size());
  for (auto& n : names) items.push_back(str_value(n));
  return new_list(std::move(items));
}

Value builtin_vars(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "vars", a, 0, 1, v);
  auto d = make<Dict>();
  if (v[0].is_undef()) {
    for (GlobalSlot* s : I.main_module()->order)
      if (!s->value.is_undef()) d->map.set(I, s->name.value(), s->value);
  } else if (v[0].is(Kind::Module)) {
    for (GlobalSlot* s : v[0].as<Module>()->order)
      if (!s->value.is_undef()) d->map.set(I, s->name.value(), s->value);
  } else if (v[0].is(Kind::Class)) {
    for (auto& [k, val] : v[0].as<Class>()->dict.entries()) d->map.set(I, k.value(), val);
  } else if (v[0].is(Kind::Instance) || v[0].is(Kind::Exception)) {
    for (auto& [k, val] : v[0].as<Instance>()->attrs.entries()) d->map.set(I, k.value(), val);
  } else {
    raise_type_error(I, "vars() argument must have __dict__ attribute");
  }
  return d.value();
}

// exit()/quit(): the REPL conveniences, same as sys.exit().
Value builtin_exit(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "exit", a, 0, 1, v);
  exit_with(I, v[0]);
}

}  // namespace

bool value_is_callable(Interp& I, const Value& v) { return is_callable(I, v); }

bool read_stdin_line(Interp& I, std::string& line) {
  line.clear();
  for (;;) {
    errno = 0;
    int c = std::getc(stdin);
    if (c == '\n') return true;
    if (c != EOF) {
      line.push_back(static_cast<char>(c));
      continue;
    }
    bool interrupted = std::ferror(stdin) && errno == EINTR;
    // Clear the end-of-file mark too: a later read tries again, as Python's
    // does on a terminal.
    std::clearerr(stdin);
    if (!interrupted) return false;
    I.poll();
  }
}

void exit_with(Interp& I, const Value& code) {
  if (!given_not_none(code)) throw MslExit{0};
  // CPython: (int)PyLong_AsLong(code), a truncation, not a clamp.
  if (code.is_int()) throw MslExit{static_cast<int>(code.as_int())};
  if (code.is_bool()) throw MslExit{code.as_bool() ? 1 : 0};
  I.write_err(I.to_str(code) + "\n");
  throw MslExit{1};
}

void init_builtin_functions(Interp& I) {
  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kBuiltins[] = {
      {"print", builtin_print},
      {"input", builtin_input},
      {"len", builtin_len},
      {"enumerate", builtin_enumerate},
      {"zip", builtin_zip},
      {"map", builtin_map},
      {"filter", builtin_filter},
      {"reversed", builtin_reversed},
      {"sorted", builtin_sorted},
      {"min", builtin_min},
      {"max", builtin_max},
      {"sum", builtin_sum},
      {"any", builtin_any},
      {"all", builtin_all},
      {"iter", builtin_iter},
      {"next", builtin_next},
      {"abs", builtin_abs},
      {"round", builtin_round},
      {"divmod", builtin_divmod},
      {"pow", builtin_pow},
      {"hex", builtin_hex},
      {"oct", builtin_oct},
      {"bin", builtin_bin},
      {"chr", builtin_chr},
      {"ord", builtin_ord},
      {"isinstance", builtin_isinstance},
      {"issubclass", builtin_issubclass},
      {"getattr", builtin_getattr},
      {"setattr", builtin_setattr},
      {"hasattr", builtin_hasattr},
      {"delattr", builtin_delattr},
      {"repr", builtin_repr},
      {"ascii", builtin_ascii},
      {"format", builtin_format},
      {"id", builtin_id},
      {"hash", builtin_hash},
      {"callable", builtin_callable},
      {"dir", builtin_dir},
      {"vars", builtin_vars},
      {"exit", builtin_exit},
      {"quit", builtin_exit},
  };
  for (const Entry& e : kBuiltins) I.def_native(nullptr, e.name, e.fn);
  // open() is registered by init_file_object, which owns the file class.
}

}  // namespace msl
