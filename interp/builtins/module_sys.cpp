// The sys module: argv, exit, the standard streams, the recursion limit and
// a few constants. sys.stdout and sys.stderr write through the Interp's
// output sinks (never to the process's streams directly), so an embedding
// host sees everything a script prints, whichever way it prints it.
// sys.stdin reads the process's standard input, as input() does.
//
// isatty() answers for the file descriptor behind each stream
// (Interp::Options::stdin_fd/stdout_fd/stderr_fd: 0, 1 and 2 for the `msl`
// command), as Python's does: True on a terminal, False for a file or a
// pipe. A stream with no descriptor (-1: an embedding host's output
// callback, or no standard input at all) is never a terminal, and such a
// sys.stdin reads as empty.
//
// sys.exit unwinds to the driver with MslExit rather than raising an MSL
// exception; like Python it prints a non-integer argument to stderr and
// exits with status 1.
#include <fmt/format.h>
#include <unistd.h>

#include <cfloat>
#include <climits>
#include <cstdint>

#include "interp/builtins/builtins.h"
#include "interp/core/native_args.h"
#include "interp/builtins/unicode.h"

namespace msl {

namespace {

// sys.stdin, sys.stdout or sys.stderr. sys.stdin reads lines of the
// process's standard input (C's stdin, shared with input()), or nothing when
// there is no descriptor behind it.
struct StdStream final : NativeData {
  enum class Which { In, Out, Err };
  StdStream(Ref<Class> c, Which w) : NativeData(std::move(c)), which(w) {}
  Which which;
  bool is_stderr() const { return which == Which::Err; }
  const char* label() const { return which == Which::In ? "stdin" : is_stderr() ? "stderr" : "stdout"; }
  int fd(const Interp::Options& o) const {
    return which == Which::In ? o.stdin_fd : is_stderr() ? o.stderr_fd : o.stdout_fd;
  }
};

// isatty(3) of a stream's descriptor; -1 (no descriptor) is not a terminal.
bool fd_is_terminal(int fd) { return fd >= 0 && isatty(fd) == 1; }

StdStream* self_stream(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::NativeData) || !dynamic_cast<StdStream*>(a.pos[0].obj()))
    raise_type_error(I, fmt::format("descriptor '{}' requires a standard stream", method));
  return static_cast<StdStream*>(a.pos[0].obj());
}

Value stream_write(Interp& I, Args& a, Object*) {
  StdStream* s = self_stream(I, a, "write");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "write", rest, 1, 1, v);
  if (!v[0].is(Kind::Str)) raise_type_error(I, fmt::format("write() argument must be str, not {}", I.type_name(v[0])));
  const std::string& text = v[0].as<Str>()->s;
  if (s->is_stderr())
    I.write_err(text);
  else
    I.write_out(text);
  return Value::integer(static_cast<int64_t>(v[0].as<Str>()->length()));
}

Value stream_writelines(Interp& I, Args& a, Object*) {
  StdStream* s = self_stream(I, a, "writelines");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "writelines", rest, 1, 1, v);
  Value it = I.iter(v[0]);
  Value line;
  while (I.next(it, line)) {
    if (!line.is(Kind::Str))
      raise_type_error(I, fmt::format("write() argument must be str, not {}", I.type_name(line)));
    if (s->is_stderr())
      I.write_err(line.as<Str>()->s);
    else
      I.write_out(line.as<Str>()->s);
  }
  return Value();
}

Value stream_flush(Interp& I, Args& a, Object*) {
  // stderr is unbuffered (the host's write_stderr writes at once).
  if (!self_stream(I, a, "flush")->is_stderr()) I.flush_out();
  return Value();
}

Value stream_isatty(Interp& I, Args& a, Object*) {
  return Value::boolean(fd_is_terminal(self_stream(I, a, "isatty")->fd(I.options())));
}

Value stream_repr(Interp& I, Args& a, Object*) {
  StdStream* s = self_stream(I, a, "__repr__");
  return str_value(fmt::format("<_io.TextIOWrapper name='<{}>' mode='{}' encoding='utf-8'>", s->label(),
                               s->which == StdStream::Which::In ? 'r' : 'w'));
}

Value stream_name(Interp& I, Args& a, Object*) {
  return str_value(fmt::format("<{}>", self_stream(I, a, "name")->label()));
}

Value stream_encoding(Interp& I, Args& a, Object*) {
  self_stream(I, a, "encoding");
  return str_value("utf-8");
}

Value stream_closed(Interp& I, Args& a, Object*) {
  self_stream(I, a, "closed");
  return Value::boolean(false);
}

// ------------------------------------------------------------- sys.stdin

StdStream* self_stdin(Interp& I, Args& a, const char* method) {
  auto* s = a.pos.empty() || !a.pos[0].is(Kind::NativeData) ? nullptr : dynamic_cast<StdStream*>(a.pos[0].obj());
  if (!s || s->which != StdStream::Which::In)
    raise_type_error(I, fmt::format("descriptor '{}' requires the standard input stream", method));
  return s;
}

// One line with its "\n" (none on a last line that lacks it); "" at the end.
std::string stdin_line(Interp& I) {
  std::string line;
  if (I.options().stdin_fd < 0) return line;
  if (read_stdin_line(I, line)) line += '\n';
  return line;
}

// The methods take no size argument: they read whole lines or everything.
Value stdin_readline(Interp& I, Args& a, Object*) {
  self_stdin(I, a, "readline");
  Args rest = method_args(a);
  bind_positional(I, "readline", rest, 0, 0, nullptr);
  return str_value(stdin_line(I));
}

Value stdin_read(Interp& I, Args& a, Object*) {
  self_stdin(I, a, "read");
  Args rest = method_args(a);
  bind_positional(I, "read", rest, 0, 0, nullptr);
  std::string all, line;
  while (!(line = stdin_line(I)).empty()) all += line;
  return str_value(std::move(all));
}

Value stdin_readlines(Interp& I, Args& a, Object*) {
  self_stdin(I, a, "readlines");
  Args rest = method_args(a);
  bind_positional(I, "readlines", rest, 0, 0, nullptr);
  std::vector<Value> lines;
  for (std::string line; !(line = stdin_line(I)).empty();) lines.push_back(str_value(std::move(line)));
  return new_list(std::move(lines));
}

Value stdin_iter(Interp& I, Args& a, Object*) {
  self_stdin(I, a, "__iter__");
  return a.pos[0];
}

Value stdin_next(Interp& I, Args& a, Object*) {
  self_stdin(I, a, "__next__");
  std::string line = stdin_line(I);
  if (line.empty()) raise_exc(I, "StopIteration", "");
  return str_value(std::move(line));
}

Value sys_exit(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "exit", a, 0, 1, v);
  exit_with(I, v[0]);
}

Value sys_getrecursionlimit(Interp& I, Args& a, Object*) {
  bind_positional(I, "getrecursionlimit", a, 0, 0, nullptr);
  return Value::integer(I.options().recursion_limit);
}

Value sys_setrecursionlimit(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "setrecursionlimit", a, 1, 1, v);
  if (v[0].is_float()) raise_type_error(I, "'float' object cannot be interpreted as an integer");
  int64_t n = arg_index(I, v[0]);
  if (n < 1) raise_value_error(I, "recursion limit must be greater or equal than 1");
  I.options().recursion_limit = static_cast<int>(n > INT_MAX ? INT_MAX : n);
  return Value();
}

Value sys_getsizeof(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "getsizeof", a, 1, 2, v);
  // An estimate in the spirit of CPython's: object header plus payload.
  const Value& x = v[0];
  int64_t n = 16;
  if (x.is(Kind::Str))
    n = 49 + static_cast<int64_t>(x.as<Str>()->s.size());
  else if (x.is(Kind::List))
    n = 56 + 8 * static_cast<int64_t>(x.as<List>()->items.capacity());
  else if (x.is(Kind::Tuple))
    n = 40 + 8 * static_cast<int64_t>(x.as<Tuple>()->items.size());
  else if (x.is(Kind::Dict))
    n = 64 + 24 * static_cast<int64_t>(x.as<Dict>()->map.entries().capacity());
  else if (x.is(Kind::Set))
    n = 216 + 24 * static_cast<int64_t>(x.as<Set>()->map.entries().capacity());
  else if (x.is_int() || x.is_float() || x.is_bool())
    n = 24 + (x.is_int() ? 4 : 0);
  else if (x.is_obj())
    n = 48;
  return Value::integer(n);
}

// A read-only record with attributes (float_info, version_info's fields).
Value make_record(Interp& I, const char* cls_name, std::initializer_list<std::pair<const char*, Value>> fields) {
  Ref<Class> cls = I.new_class(cls_name, I.cls_object.get(), "sys", true);
  auto inst = make<Instance>(cls);
  for (auto& [k, v] : fields) inst->attrs.set(I.intern(k), v);
  return inst.value();
}

}  // namespace

void init_module_sys(Interp& I, Module& m) {
  Ref<Class> stream_cls = I.new_class("TextIOWrapper", I.cls_object.get(), "_io", true);
  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kStreamMethods[] = {
      {"write", stream_write},
      {"writelines", stream_writelines},
      {"flush", stream_flush},
  };
  // What the three streams share: isatty, repr and the properties.
  auto def_common = [&](Class* cls) {
    I.def_method(cls, "isatty", stream_isatty);
    I.def_method(cls, "__repr__", stream_repr);
    static const Entry kProps[] = {{"name", stream_name}, {"encoding", stream_encoding}, {"closed", stream_closed}};
    for (const Entry& e : kProps) {
      auto p = make<Property>();
      p->fget = make<Native>(e.name, e.fn).value();
      cls->dict.set(I.intern(e.name), p.value());
    }
  };
  for (const Entry& e : kStreamMethods) I.def_method(stream_cls.get(), e.name, e.fn);
  def_common(stream_cls.get());
  Value out = Value::object(new StdStream(stream_cls, StdStream::Which::Out));
  Value err = Value::object(new StdStream(stream_cls, StdStream::Which::Err));
  m.set(I.intern("stdout"), out);
  m.set(I.intern("stderr"), err);
  m.set(I.intern("__stdout__"), out);
  m.set(I.intern("__stderr__"), err);

  Ref<Class> stdin_cls = I.new_class("TextIOWrapper", I.cls_object.get(), "_io", true);
  static const Entry kStdinMethods[] = {
      {"read", stdin_read},         {"readline", stdin_readline}, {"readlines", stdin_readlines},
      {"__iter__", stdin_iter},     {"__next__", stdin_next},
  };
  for (const Entry& e : kStdinMethods) I.def_method(stdin_cls.get(), e.name, e.fn);
  def_common(stdin_cls.get());
  Value in = Value::object(new StdStream(stdin_cls, StdStream::Which::In));
  m.set(I.intern("stdin"), in);
  m.set(I.intern("__stdin__"), in);

  static const Entry kFunctions[] = {
      {"exit", sys_exit},
      {"getrecursionlimit", sys_getrecursionlimit},
      {"setrecursionlimit", sys_setrecursionlimit},
      {"getsizeof", sys_getsizeof},
  };
  for (const Entry& e : kFunctions) I.def_native(&m, e.name, e.fn);

  std::vector<Value> argv;
  for (const std::string& s : I.options().argv) argv.push_back(str_value(s));
  if (argv.empty()) argv.push_back(str_value(""));
  m.set(I.intern("argv"), new_list(std::move(argv)));
  std::vector<Value> path;
  for (const std::string& s : I.options().module_path) path.push_back(str_value(s));
  if (!I.options().stdlib_dir.empty()) path.push_back(str_value(I.options().stdlib_dir));
  m.set(I.intern("path"), new_list(std::move(path)));

  m.set(I.intern("maxsize"), Value::integer(INT64_MAX));
  m.set(I.intern("byteorder"), str_value("little"));
#if defined(__APPLE__)
  m.set(I.intern("platform"), str_value("darwin"));
#else
  m.set(I.intern("platform"), str_value("linux"));
#endif
  m.set(I.intern("version"), str_value("3.11.0 (MSL 0.1.0)"));
  m.set(I.intern("version_info"),
        new_tuple({Value::integer(3), Value::integer(11), Value::integer(0), str_value("final"), Value::integer(0)}));
  m.set(I.intern("implementation"), make_record(I, "implementation", {{"name", str_value("msl")}}));
  m.set(I.intern("float_info"), make_record(I, "float_info",
                                            {{"max", Value::number(DBL_MAX)},
                                             {"max_exp", Value::integer(DBL_MAX_EXP)},
                                             {"max_10_exp", Value::integer(DBL_MAX_10_EXP)},
                                             {"min", Value::number(DBL_MIN)},
                                             {"min_exp", Value::integer(DBL_MIN_EXP)},
                                             {"min_10_exp", Value::integer(DBL_MIN_10_EXP)},
                                             {"dig", Value::integer(DBL_DIG)},
                                             {"mant_dig", Value::integer(DBL_MANT_DIG)},
                                             {"epsilon", Value::number(DBL_EPSILON)},
                                             {"radix", Value::integer(FLT_RADIX)},
                                             {"rounds", Value::integer(1)}}));
}

}  // namespace msl
