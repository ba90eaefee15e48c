// The time module: clocks, an interruptible sleep, and the calendar
// functions training logs use (localtime/gmtime/strftime/mktime).
//
// sleep() waits in slices of at most 20 ms and polls the interpreter between
// them, so Ctrl-C (or an embedder's interrupt) stops a long sleep promptly.
// struct_time is a small native type: indexable like a 9-tuple and with the
// tm_* attributes, as in Python.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <thread>

#include "interp/builtins/builtins.h"
#include "interp/builtins/format.h"
#include "interp/core/native_args.h"

namespace msl {

namespace {

double seconds_since(std::chrono::nanoseconds ns) { return static_cast<double>(ns.count()) * 1e-9; }

Value time_time(Interp& I, Args& a, Object*) {
  bind_positional(I, "time", a, 0, 0, nullptr);
  return Value::number(seconds_since(std::chrono::system_clock::now().time_since_epoch()));
}

Value time_time_ns(Interp& I, Args& a, Object*) {
  bind_positional(I, "time_ns", a, 0, 0, nullptr);
  return Value::integer(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count());
}

Value time_monotonic(Interp& I, Args& a, Object*) {
  bind_positional(I, "monotonic", a, 0, 0, nullptr);
  return Value::number(seconds_since(std::chrono::steady_clock::now().time_since_epoch()));
}

Value time_monotonic_ns(Interp& I, Args& a, Object*) {
  bind_positional(I, "monotonic_ns", a, 0, 0, nullptr);
  return Value::integer(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

Value time_process_time(Interp& I, Args& a, Object*) {
  bind_positional(I, "process_time", a, 0, 0, nullptr);
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return Value::number(static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9);
}

Value time_sleep(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "sleep", a, 1, 1, v);
  double secs = arg_float(I, v[0]);
  if (std::isnan(secs)) raise_value_error(I, "Invalid value NaN (not a number)");
  if (secs < 0) raise_value_error(I, "sleep length must be non-negative");
  if (secs > 1e9) raise_exc(I, "OverflowError", "sleep length is too large");
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
  for (;;) {
    I.poll();
    Clock::time_point now = Clock::now();
    if (now >= deadline) break;
    Clock::duration left = deadline - now;
    Clock::duration slice = std::chrono::milliseconds(20);
    std::this_thread::sleep_for(left < slice ? left : slice);
  }
  return Value();
}

// ------------------------------------------------------------ struct_time

struct StructTime final : NativeData {
  StructTime(Ref<Class> c, const std::tm& t) : NativeData(std::move(c)), tm(t) {}
  std::tm tm;
  int64_t field(int i) const {
    switch (i) {
      case 0: return tm.tm_year + 1900;
      case 1: return tm.tm_mon + 1;
      case 2: return tm.tm_mday;
      case 3: return tm.tm_hour;
      case 4: return tm.tm_min;
      case 5: return tm.tm_sec;
      case 6: return (tm.tm_wday + 6) % 7;  // Python: Monday is 0
      case 7: return tm.tm_yday + 1;
      default: return tm.tm_isdst;
    }
  }
};

const char* const kFieldNames[9] = {"tm_year", "tm_mon",  "tm_mday", "tm_hour", "tm_min",
                                    "tm_sec",  "tm_wday", "tm_yday", "tm_isdst"};

StructTime* self_struct_time(Interp& I, Args& a) {
  if (a.pos.empty() || !a.pos[0].is(Kind::NativeData) || !dynamic_cast<StructTime*>(a.pos[0].obj()))
    raise_type_error(I, "descriptor requires a 'time.struct_time' object");
  return static_cast<StructTime*>(a.pos[0].obj());
}

Value st_getitem(Interp& I, Args& a, Object*) {
  StructTime* t = self_struct_time(I, a);
  if (a.pos.size() != 2) raise_type_error(I, "__getitem__ expected 1 argument");
  std::vector<Value> items;
  for (int i = 0; i < 9; ++i) items.push_back(Value::integer(t->field(i)));
  return I.getitem(new_tuple(std::move(items)), a.pos[1]);
}

Value st_len(Interp& I, Args& a, Object*) {
  self_struct_time(I, a);
  return Value::integer(9);
}

Value st_iter(Interp& I, Args& a, Object*) {
  StructTime* t = self_struct_time(I, a);
  std::vector<Value> items;
  for (int i = 0; i < 9; ++i) items.push_back(Value::integer(t->field(i)));
  return I.iter(new_tuple(std::move(items)));
}

Value st_repr(Interp& I, Args& a, Object*) {
  StructTime* t = self_struct_time(I, a);
  std::string s = "time.struct_time(";
  for (int i = 0; i < 9; ++i) s += fmt::format("{}{}={}", i ? ", " : "", kFieldNames[i], t->field(i));
  return str_value(s + ")");
}

template <int kIndex>
Value st_field(Interp& I, Args& a, Object*) {
  return Value::integer(self_struct_time(I, a)->field(kIndex));
}

// A struct_time or 9-sequence argument as std::tm.
std::tm tm_from(Interp& I, const Value& v, const char* fname) {
  if (v.is(Kind::NativeData) && dynamic_cast<StructTime*>(v.obj())) return static_cast<StructTime*>(v.obj())->tm;
  std::vector<Value> f = I.to_vector(v);
  if (f.size() != 9) raise_type_error(I, fmt::format("{}(): illegal time tuple argument", fname));
  std::tm t{};
  t.tm_year = static_cast<int>(arg_index(I, f[0]) - 1900);
  t.tm_mon = static_cast<int>(arg_index(I, f[1]) - 1);
  t.tm_mday = static_cast<int>(arg_index(I, f[2]));
  t.tm_hour = static_cast<int>(arg_index(I, f[3]));
  t.tm_min = static_cast<int>(arg_index(I, f[4]));
  t.tm_sec = static_cast<int>(arg_index(I, f[5]));
  t.tm_wday = static_cast<int>((arg_index(I, f[6]) + 1) % 7);
  t.tm_yday = static_cast<int>(arg_index(I, f[7]) - 1);
  t.tm_isdst = static_cast<int>(arg_index(I, f[8]));
  return t;
}

std::time_t time_arg(Interp& I, const Value& v) {
  if (!given_not_none(v)) return std::time(nullptr);
  double d = arg_float(I, v);
  if (!std::isfinite(d) || std::fabs(d) > 1e15)
    raise_exc(I, "OverflowError", "timestamp out of range for platform time_t");
  return static_cast<std::time_t>(std::floor(d));
}

Value make_struct_time(Object* cls, const std::tm& t) {
  return Value::object(new StructTime(Ref<Class>(static_cast<Class*>(cls)), t));
}

Value time_localtime(Interp& I, Args& a, Object* cls) {
  Value v[1];
  bind_positional(I, "localtime", a, 0, 1, v);
  std::time_t t = time_arg(I, v[0]);
  std::tm out{};
  if (!localtime_r(&t, &out)) raise_exc(I, "OverflowError", "timestamp out of range for platform time_t");
  return make_struct_time(cls, out);
}

Value time_gmtime(Interp& I, Args& a, Object* cls) {
  Value v[1];
  bind_positional(I, "gmtime", a, 0, 1, v);
  std::time_t t = time_arg(I, v[0]);
  std::tm out{};
  if (!gmtime_r(&t, &out)) raise_exc(I, "OverflowError", "timestamp out of range for platform time_t");
  return make_struct_time(cls, out);
}

Value time_mktime(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "mktime", a, 1, 1, v);
  std::tm t = tm_from(I, v[0], "mktime");
  std::time_t r = std::mktime(&t);
  if (r == static_cast<std::time_t>(-1)) raise_exc(I, "OverflowError", "mktime argument out of range");
  return Value::number(static_cast<double>(r));
}

Value time_strftime(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "strftime", a, 1, 2, v);
  Str* fmt_text = arg_str(I, v[0], "strftime() argument 1");
  std::tm t{};
  if (given(v[1])) {
    t = tm_from(I, v[1], "strftime");
  } else {
    std::time_t now = std::time(nullptr);
    localtime_r(&now, &t);
  }
  if (fmt_text->s.empty()) return str_value("");
  // strftime returns 0 both on "buffer too small" and on an empty result;
  // grow the buffer a few times before concluding the result is empty.
  for (size_t size = 256; size <= (size_t{1} << 20); size *= 4) {
    std::string buf(size, '\0');
    size_t n = std::strftime(buf.data(), buf.size(), fmt_text->s.c_str(), &t);
    if (n > 0) {
      buf.resize(n);
      return str_value(std::move(buf));
    }
  }
  return str_value("");
}

Value time_ctime(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "ctime", a, 0, 1, v);
  std::time_t t = time_arg(I, v[0]);
  std::tm out{};
  localtime_r(&t, &out);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a %b %e %H:%M:%S %Y", &out);
  return str_value(buf);
}

}  // namespace

void init_module_time(Interp& I, Module& m) {
  Ref<Class> st = I.new_class("struct_time", I.cls_object.get(), "time", true);
  I.def_method(st.get(), "__getitem__", st_getitem);
  I.def_method(st.get(), "__len__", st_len);
  I.def_method(st.get(), "__iter__", st_iter);
  I.def_method(st.get(), "__repr__", st_repr);
  NativeFn fields[9] = {st_field<0>, st_field<1>, st_field<2>, st_field<3>, st_field<4>,
                        st_field<5>, st_field<6>, st_field<7>, st_field<8>};
  for (int i = 0; i < 9; ++i) {
    auto p = make<Property>();
    p->fget = make<Native>(kFieldNames[i], fields[i]).value();
    st->dict.set(I.intern(kFieldNames[i]), p.value());
  }
  m.set(I.intern("struct_time"), st.value());

  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kFunctions[] = {
      {"time", time_time},
      {"time_ns", time_time_ns},
      {"perf_counter", time_monotonic},
      {"perf_counter_ns", time_monotonic_ns},
      {"monotonic", time_monotonic},
      {"monotonic_ns", time_monotonic_ns},
      {"process_time", time_process_time},
      {"sleep", time_sleep},
      {"mktime", time_mktime},
      {"strftime", time_strftime},
      {"ctime", time_ctime},
  };
  for (const Entry& e : kFunctions) I.def_native(&m, e.name, e.fn);
  I.def_native(&m, "localtime", time_localtime, Ref<Object>(st.get()));
  I.def_native(&m, "gmtime", time_gmtime, Ref<Object>(st.get()));
}

}  // namespace msl
