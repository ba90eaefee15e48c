// Argument binding and error helpers for the builtin library; see
// native_args.h for the two CPython message families they reproduce.
#include "interp/core/native_args.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "interp/builtins/format.h"

namespace msl {

void raise_exc(Interp& I, std::string_view cls, std::string message) {
  I.raise(I.exception_class(cls).get(), std::move(message));
}

void raise_type_error(Interp& I, std::string message) { raise_exc(I, "TypeError", std::move(message)); }

void raise_value_error(Interp& I, std::string message) { raise_exc(I, "ValueError", std::move(message)); }

void raise_memory_error(Interp& I) { raise_exc(I, "MemoryError", ""); }

void raise_key_error(Interp& I, const Value& key) {
  Ref<Class> cls = I.exception_class("KeyError");
  I.raise_value(I.call1(cls.value(), key));
}

void raise_os_error(Interp& I, int err, const std::string& filename, const std::string& filename2) {
  const char* cls = "OSError";
  switch (err) {
    case ENOENT: cls = "FileNotFoundError"; break;
    case EEXIST: cls = "FileExistsError"; break;
    case EISDIR: cls = "IsADirectoryError"; break;
    case ENOTDIR: cls = "NotADirectoryError"; break;
    case EACCES:
    case EPERM: cls = "PermissionError"; break;
    default: break;
  }
  std::string strerr = std::strerror(err);
  std::string msg = filename.empty() ? fmt::format("[Errno {}] {}", err, strerr)
                                     : fmt::format("[Errno {}] {}: {}", err, strerr, str_repr(filename));
  if (!filename2.empty()) msg += " -> " + str_repr(filename2);
  Value exc = I.new_exception(I.exception_class(cls).get(), msg);
  ExceptionObj* x = exc.as<ExceptionObj>();
  x->attrs.set(I.intern("errno"), Value::integer(err));
  x->attrs.set(I.intern("strerror"), str_value(strerr));
  x->attrs.set(I.intern("filename"), filename.empty() ? Value() : str_value(filename));
  I.raise_value(exc);
}

void check_result_size(Interp& I, uint64_t n, size_t limit) {
  if (n > limit) raise_memory_error(I);
}

Args method_args(Args& a) { return Args{a.pos.subspan(1), a.kw}; }

static const char* plural(size_t n) { return n == 1 ? "" : "s"; }

[[noreturn]] static void no_keywords(Interp& I, const char* fname, const char* type) {
  if (type) raise_type_error(I, fmt::format("{}.{}() takes no keyword arguments", type, fname));
  raise_type_error(I, fmt::format("{}() takes no keyword arguments", fname));
}

const Value& builtin_onearg(Interp& I, Args& a, const char* fname) {
  if (!a.kw.empty()) no_keywords(I, fname, nullptr);
  if (a.pos.size() != 1)
    raise_type_error(I, fmt::format("{}() takes exactly one argument ({} given)", fname, a.pos.size()));
  return a.pos[0];
}

void bind_positional(Interp& I, const char* fname, Args& a, size_t min, size_t max, Value* out, const char* type) {
  if (!a.kw.empty()) no_keywords(I, fname, type);
  size_t n = a.pos.size();
  if (n < min || n > max) {
    if (min == max) raise_type_error(I, fmt::format("{} expected {} argument{}, got {}", fname, min, plural(min), n));
    if (n < min)
      raise_type_error(I, fmt::format("{} expected at least {} argument{}, got {}", fname, min, plural(min), n));
    raise_type_error(I, fmt::format("{} expected at most {} argument{}, got {}", fname, max, plural(max), n));
  }
  for (size_t i = 0; i < n; ++i) out[i] = a.pos[i];
  for (size_t i = n; i < max; ++i) out[i] = Value::undef();
}

void method_noargs(Interp& I, Args& a, const char* type, const char* method) {
  if (!a.kw.empty()) raise_type_error(I, fmt::format("{}.{}() takes no keyword arguments", type, method));
  if (a.pos.size() != 1)
    raise_type_error(I, fmt::format("{}.{}() takes no arguments ({} given)", type, method, a.pos.size() - 1));
}

const Value& method_onearg(Interp& I, Args& a, const char* type, const char* method) {
  if (!a.kw.empty()) raise_type_error(I, fmt::format("{}.{}() takes no keyword arguments", type, method));
  if (a.pos.size() != 2)
    raise_type_error(I, fmt::format("{}.{}() takes exactly one argument ({} given)", type, method, a.pos.size() - 1));
  return a.pos[1];
}

void bind_positional_legacy(Interp& I, const char* fname, Args& a, size_t min, size_t max, Value* out,
                            const char* type) {
  if (!a.kw.empty()) no_keywords(I, fname, type);
  size_t n = a.pos.size();
  if (n < min)
    raise_type_error(I, fmt::format("{}() takes at least {} argument{} ({} given)", fname, min, plural(min), n));
  if (n > max)
    raise_type_error(I, fmt::format("{}() takes at most {} argument{} ({} given)", fname, max, plural(max), n));
  for (size_t i = 0; i < n; ++i) out[i] = a.pos[i];
  for (size_t i = n; i < max; ++i) out[i] = Value::undef();
}

void bind_args(Interp& I, const char* fname, Args& a, std::initializer_list<const char*> names, size_t required,
               Value* out, size_t npos, size_t posonly) {
  size_t nparams = names.size();
  if (npos > nparams) npos = nparams;
  for (size_t i = 0; i < nparams; ++i) out[i] = Value::undef();
  size_t n = a.pos.size();
  size_t total = n + a.kw.size();
  // The order of CPython's _PyArg_UnpackKeywords checks.
  if (total > nparams)
    raise_type_error(I, fmt::format("{}() takes at most {} {}argument{} ({} given)", fname, nparams,
                                    n == 0 ? "keyword " : "", plural(nparams), total));
  if (n > npos) {
    if (npos == 0) raise_type_error(I, fmt::format("{}() takes no positional arguments", fname));
    raise_type_error(
        I, fmt::format("{}() takes at most {} positional argument{} ({} given)", fname, npos, plural(npos), n));
  }
  size_t need_pos = std::min(required, posonly);
  if (n < need_pos)
    raise_type_error(I, fmt::format("{}() takes at least {} positional argument{} ({} given)", fname, need_pos,
                                    plural(need_pos), n));
  for (size_t i = 0; i < n; ++i) out[i] = a.pos[i];
  // Keywords fill the remaining parameters; then, in CPython's order: a
  // missing required argument, a duplicate, an unknown keyword.
  bool leftover = false;
  for (auto& [key, value] : a.kw) {
    size_t idx = 0;
    for (const char* name : names) {
      if (key->s == name) break;
      ++idx;
    }
    if (idx < nparams && idx >= posonly && idx >= n)
      out[idx] = value;
    else
      leftover = true;
  }
  size_t idx = 0;
  for (const char* name : names) {
    if (idx >= required) break;
    if (out[idx].is_undef())
      raise_type_error(I, fmt::format("{}() missing required argument '{}' (pos {})", fname, name, idx + 1));
    ++idx;
  }
  if (!leftover) return;
  for (auto& [key, value] : a.kw) {
    size_t k = 0;
    for (const char* name : names) {
      if (key->s == name) break;
      ++k;
    }
    if (k < nparams && k >= posonly && k < n)
      raise_type_error(I,
                       fmt::format("argument for {}() given by name ('{}') and position ({})", fname, key->s, k + 1));
  }
  for (auto& [key, value] : a.kw) {
    size_t k = 0;
    for (const char* name : names) {
      if (key->s == name) break;
      ++k;
    }
    if (k == nparams || k < posonly)
      raise_type_error(I, fmt::format("'{}' is an invalid keyword argument for {}()", key->s, fname));
  }
}

namespace {
[[noreturn]] void bad_self(Interp& I, Args& a, const char* method, const char* type_name) {
  if (a.pos.empty()) raise_type_error(I, fmt::format("unbound method {}.{}() needs an argument", type_name, method));
  raise_type_error(I, fmt::format("descriptor '{}' for '{}' objects doesn't apply to a '{}' object", method, type_name,
                                  I.type_name(a.pos[0])));
}
}  // namespace

Str* self_str(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::Str)) bad_self(I, a, method, "str");
  return a.pos[0].as<Str>();
}

List* self_list(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::List)) bad_self(I, a, method, "list");
  return a.pos[0].as<List>();
}

Tuple* self_tuple(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::Tuple)) bad_self(I, a, method, "tuple");
  return a.pos[0].as<Tuple>();
}

Dict* self_dict(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::Dict)) bad_self(I, a, method, "dict");
  return a.pos[0].as<Dict>();
}

Set* self_set(Interp& I, Args& a, const char* method, const char* type_name) {
  if (a.pos.empty() || !a.pos[0].is(Kind::Set)) bad_self(I, a, method, type_name);
  return a.pos[0].as<Set>();
}

Str* arg_str(Interp& I, const Value& v, std::string_view what) {
  // CPython's _PyArg_BadArgument says "None" rather than "NoneType".
  if (!v.is(Kind::Str))
    raise_type_error(I, fmt::format("{} must be str, not {}", what, v.is_none() ? "None" : I.type_name(v)));
  return v.as<Str>();
}

int64_t arg_index(Interp& I, const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool() ? 1 : 0;
  if (v.is_obj() && (v.is(Kind::Instance) || v.is(Kind::NativeData))) {
    if (I.cls_of(v)->lookup(I.names().__index__)) {
      Value r = I.call_method(v, I.names().__index__, {});
      if (r.is_int()) return r.as_int();
      if (r.is_bool()) return r.as_bool() ? 1 : 0;
      raise_type_error(I, fmt::format("__index__ returned non-int (type {})", I.type_name(r)));
    }
  }
  raise_type_error(I, fmt::format("'{}' object cannot be interpreted as an integer", I.type_name(v)));
}

double arg_float(Interp& I, const Value& v) {
  if (v.is_float()) return v.as_float();
  if (v.is_int()) return static_cast<double>(v.as_int());
  if (v.is_bool()) return v.as_bool() ? 1.0 : 0.0;
  if (v.is_obj() && (v.is(Kind::Instance) || v.is(Kind::NativeData))) {
    Class* cls = I.cls_of(v);
    if (cls->lookup(I.names().__float__)) {
      Value r = I.call_method(v, I.names().__float__, {});
      if (r.is_float()) return r.as_float();
      raise_type_error(I, fmt::format("{}.__float__ returned non-float (type {})", cls->name->s, I.type_name(r)));
    }
    if (cls->lookup(I.names().__index__)) return static_cast<double>(arg_index(I, v));
  }
  raise_type_error(I, fmt::format("must be real number, not {}", I.type_name(v)));
}

Value new_list(std::vector<Value> items) { return Value::object(new List(std::move(items))); }
Value new_tuple(std::vector<Value> items) { return Value::object(new Tuple(std::move(items))); }

bool exception_matches(Interp& I, const MslError& e, std::string_view cls) {
  return I.isinstance(e.exc, I.exception_class(cls).get());
}

}  // namespace msl
