// Unit tests of the embedding API (include/msl/msl.h): every entry point,
// value conversion in both directions, native functions and their error
// mapping, the error callback's content, sys.exit, interrupts from another
// thread, the step limit, independence of two VMs. Only the public header is
// used, as a host would.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <msl/msl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using msl::embed::Config;
using msl::embed::Error;
using msl::embed::ErrorInfo;
using msl::embed::ErrorKind;
using msl::embed::Result;
using msl::embed::Status;
using msl::embed::Value;
using msl::embed::VM;

namespace {

// A VM whose output and errors are captured for inspection.
struct Host {
  std::string out;
  std::vector<ErrorInfo> errors;
  VM vm;

  explicit Host(Config c = {}) : vm(configure(std::move(c))) {}

  Config configure(Config c) {
    c.output = [this](std::string_view s) { out += s; };
    c.on_error = [this](const ErrorInfo& e) { errors.push_back(e); };
    return c;
  }

  // Runs `src` and fails the test (showing the report) when it does not succeed.
  void ok(std::string_view src) {
    Result r = vm.run(src, "<test>");
    INFO("source: " << src);
    INFO("error: " << (errors.empty() ? std::string("(none)") : errors.back().text));
    REQUIRE(r.status == Status::Ok);
  }
  Value eval(std::string_view expr) {
    Result r = vm.eval(expr);
    INFO("expression: " << expr);
    INFO("error: " << (errors.empty() ? std::string("(none)") : errors.back().text));
    REQUIRE(r.status == Status::Ok);
    return r.value;
  }
  const ErrorInfo& last() {
    REQUIRE(!errors.empty());
    return errors.back();
  }
};

}  // namespace

// ------------------------------------------------------------- Value itself

TEST_CASE("Value: construction, accessors and type names") {
  CHECK(Value().is_none());
  CHECK(Value(nullptr).is_none());
  CHECK(Value(true).as_bool());
  CHECK(Value(7).is_int());
  CHECK(Value(7).as_int() == 7);
  CHECK(Value(int64_t{-3}).as_int() == -3);
  CHECK(Value(size_t{12}).as_int() == 12);
  CHECK(Value(2.5).is_float());
  CHECK(Value(3).as_float() == 3.0);
  CHECK(Value("abc").as_str() == "abc");
  CHECK(Value(std::string("x")).is_str());
  CHECK(Value(std::string_view("y")).as_str() == "y");
  Value l = Value::list({1, "two", 3.0, Value::list({})});
  CHECK(l.is_list());
  REQUIRE(l.items().size() == 4);
  CHECK(l.items()[1].as_str() == "two");
  CHECK(Value::tuple({1, 2}).is_tuple());
  // Reading the wrong type gives a neutral value, not a crash.
  CHECK(Value("s").as_int() == 0);
  CHECK(Value(1).as_str().empty());
  CHECK(Value(1).items().empty());

  CHECK(Value().type_name() == "NoneType");
  CHECK(Value(1).type_name() == "int");
  CHECK(Value(true).type_name() == "bool");
  CHECK(l.type_name() == "list");

  CHECK(l.to_string() == "[1, 'two', 3.0, []]");
  CHECK(Value::tuple({1}).to_string() == "(1,)");
  CHECK(Value(false).to_string() == "False");
  CHECK(Value("it's").to_string() == "\"it's\"");

  CHECK(Value::list({1, 2}) == Value::list({1, 2}));
  CHECK_FALSE(Value::list({1, 2}) == Value::tuple({1, 2}));
  CHECK_FALSE(Value(1) == Value(1.0));
  CHECK(std::string(VM::version()) == "0.1.0");
}

// -------------------------------------------------------------- running code

TEST_CASE("run: print output goes to the output callback, never to stdout") {
  Host h;
  h.ok("print('hello', 42)\nprint('a', 'b', sep='-', end='!')\n");
  CHECK(h.out == "hello 42\na-b!");
  CHECK(h.errors.empty());
}

TEST_CASE("run: the standard streams are no terminal in a VM, even where the process's are") {
  // The process's stdin and stderr become a pseudo-terminal for the test: a
  // VM's streams are its callbacks, so isatty() stays False and sys.stdin
  // reads as empty (no wait for terminal input).
  int master = posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(grantpt(master) == 0);
  REQUIRE(unlockpt(master) == 0);
  int tty = open(ptsname(master), O_RDWR | O_NOCTTY);
  REQUIRE(tty >= 0);
  CHECK(isatty(tty) == 1);
  int saved_in = dup(0), saved_err = dup(2);
  dup2(tty, 0);
  dup2(tty, 2);
  Host h;
  Result r = h.vm.run(
      "import sys\nprint(sys.stdout.isatty(), sys.stderr.isatty(), sys.stdin.isatty(),\n"
      "      repr(sys.stdin.read()), open('/dev/null').isatty())\n",
      "<test>");
  dup2(saved_in, 0);
  dup2(saved_err, 2);
  close(saved_in);
  close(saved_err);
  close(tty);
  close(master);
  CHECK(r.status == Status::Ok);
  CHECK(h.out == "False False False '' False\n");
}

TEST_CASE("run keeps globals between calls; eval sees them") {
  Host h;
  h.ok("def square(x):\n    return x * x\ncount = 10\n");
  h.ok("count += 1\n");
  CHECK(h.eval("square(count)").as_int() == 121);
}

TEST_CASE("run_file runs a file; a missing file is a FileNotFoundError report") {
  Host h;
  std::string path = std::string(MSL_TEST_TMPDIR) + "/embed_run_file.msl";
  {
    std::ofstream f(path);
    f << "answer = 6 * 7\nprint('from file')\n";
  }
  Result r = h.vm.run_file(path);
  REQUIRE(r.status == Status::Ok);
  CHECK(h.out == "from file\n");
  CHECK(h.vm.get_global("answer")->as_int() == 42);
  std::remove(path.c_str());

  r = h.vm.run_file(path);
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "FileNotFoundError");
  CHECK(h.last().message.find("embed_run_file.msl") != std::string::npos);
}

TEST_CASE("eval: values of every convertible type") {
  Host h;
  CHECK(h.eval("None").is_none());
  CHECK(h.eval("1 < 2").as_bool() == true);
  CHECK(h.eval("1 + 2").as_int() == 3);
  CHECK(h.eval("-17").as_int() == -17);
  CHECK(h.eval("2 ** 62").as_int() == (int64_t{1} << 62));
  CHECK(h.eval("9223372036854775807").as_int() == INT64_MAX);
  CHECK(h.eval("-9223372036854775807 - 1").as_int() == INT64_MIN);
  CHECK(h.eval("0.1 + 0.2").as_float() == doctest::Approx(0.3));
  CHECK(h.eval("1e300 * 10").as_float() == 1e301);
  CHECK(h.eval("'h\\u00e9llo ' + '世界'").as_str() == "h\xc3\xa9llo \xe4\xb8\x96\xe7\x95\x8c");
  Value nested = h.eval("[1, [2, 'x', [3.5]], (), (4,)]");
  REQUIRE(nested.is_list());
  CHECK(nested == Value::list({1, Value::list({2, "x", Value::list({3.5})}), Value::tuple({}), Value::tuple({4})}));
  Value d = h.eval("{'a': 1}");
  CHECK(d.is_object());
  CHECK(d.type_name() == "dict");
}

TEST_CASE("values round-trip through an MSL function unchanged") {
  Host h;
  h.ok("def ident(x):\n    return x\ndef kind(x):\n    return type(x).__name__\n");
  std::vector<Value> samples = {
      Value(),
      Value(true),
      Value(false),
      Value(0),
      Value(-1),
      Value(INT64_MAX),
      Value(INT64_MIN),
      Value(123456789012345),
      Value(-0.0),
      Value(3.25),
      Value(1e-300),
      Value(""),
      Value("plain ascii"),
      Value("标签 — étiquette ✓ 🙂"),
      Value("quote ' and \" and \\ and \n"),
      Value::list({}),
      Value::list({1, 2.5, "three", Value::list({Value(), Value::list({true})})}),
      Value::tuple({1, "a"}),
  };
  for (const Value& v : samples) {
    INFO("value: " << v.to_string());
    Result r = h.vm.call("ident", {v});
    REQUIRE(r.ok());
    CHECK(r.value == v);
    CHECK(h.vm.call("kind", {v}).value.as_str() == v.type_name());
  }
  // Unicode length is counted in code points on the MSL side.
  CHECK(h.vm.call("len", {Value("标签 ✓")}).value.as_int() == 4);
}

TEST_CASE("a list that contains itself comes back with a handle at the cycle") {
  Host h;
  h.ok("a = [1]\na.append(a)\n");
  std::optional<Value> a = h.vm.get_global("a");
  REQUIRE(a);
  REQUIRE(a->is_list());
  REQUIRE(a->items().size() == 2);
  CHECK(a->items()[0].as_int() == 1);
  CHECK(a->items()[1].is_object());
  CHECK(a->items()[1].type_name() == "list");
}

// ------------------------------------------------------------ handles, calls

TEST_CASE("handles: functions, bound methods, dicts and instances can be passed back") {
  Host h;
  Value twice = h.eval("lambda x: x * 2");
  CHECK(twice.is_object());
  CHECK(twice.type_name() == "function");
  Result r = h.vm.call_value(twice, {21});
  REQUIRE(r.ok());
  CHECK(r.value.as_int() == 42);
  CHECK(h.vm.call_value(twice, {"ab"}).value.as_str() == "abab");

  std::vector<Value> args = {Value(5)};
  CHECK(h.vm.call_value(twice, args).value.as_int() == 10);

  h.ok("class Point:\n"
       "    def __init__(self, x, y):\n"
       "        self.x = x\n"
       "        self.y = y\n"
       "    def norm1(self):\n"
       "        return abs(self.x) + abs(self.y)\n"
       "    def __repr__(self):\n"
       "        return 'Point(' + str(self.x) + ', ' + str(self.y) + ')'\n");
  Result p = h.vm.call("Point", {3, -4});
  REQUIRE(p.ok());
  CHECK(p.value.type_name() == "Point");
  CHECK(h.vm.call_method(p.value, "norm1").value.as_int() == 7);
  CHECK(h.vm.get_attr(p.value, "y").value.as_int() == -4);
  CHECK(h.vm.repr(p.value) == "Point(3, -4)");
  CHECK(h.vm.str(Value("x")) == "x");
  CHECK(h.vm.repr(Value("x")) == "'x'");

  // A handle passed back in as an argument and stored as a global.
  h.ok("def get_x(p):\n    return p.x\n");
  CHECK(h.vm.call("get_x", {p.value}).value.as_int() == 3);
  CHECK(h.vm.set_global("origin", p.value));
  CHECK(h.eval("origin.norm1()").as_int() == 7);

  // Handles compare by identity.
  CHECK(h.vm.get_global("origin").value() == p.value);

  Value d = h.eval("{'a': 1, 'b': 2}");
  CHECK(h.vm.call_method(d, "get", {"b"}).value.as_int() == 2);
  CHECK(h.vm.call("len", {d}).value.as_int() == 2);
  // Methods of converted data work too.
  CHECK(h.vm.call_method(Value("abc"), "upper").value.as_str() == "ABC");
}

TEST_CASE("calling something that is missing or not callable reports a runtime error") {
  Host h;
  Result r = h.vm.call("no_such_function", {1});
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "NameError");
  CHECK(h.last().message == "name 'no_such_function' is not defined");

  r = h.vm.call_value(Value(3), {});
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "TypeError");

  h.ok("def two(a, b):\n    return a + b\n");
  r = h.vm.call("two", {1});
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "TypeError");

  r = h.vm.get_attr(Value(1), "nope");
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "AttributeError");
}

// ------------------------------------------------------------------ globals

TEST_CASE("globals: get, set, has") {
  Host h;
  CHECK_FALSE(h.vm.has_global("n"));
  CHECK_FALSE(h.vm.get_global("n").has_value());
  CHECK(h.vm.set_global("n", 41));
  CHECK(h.vm.has_global("n"));
  h.ok("n += 1\nnames = ['a', 'b']\n");
  CHECK(h.vm.get_global("n")->as_int() == 42);
  CHECK(*h.vm.get_global("names") == Value::list({"a", "b"}));
  // Lists cross by value: changing the C++ copy does not change MSL's list.
  CHECK(h.vm.set_global("data", Value::list({1, 2, 3})));
  CHECK(h.eval("sum(data)").as_int() == 6);
  CHECK(h.vm.set_global("label", "标签"));
  CHECK(h.eval("len(label)").as_int() == 2);
}

// --------------------------------------------------------- native functions

TEST_CASE("native functions: called from MSL with converted arguments") {
  Host h;
  int calls = 0;
  h.vm.define_function("host_sum", [&](std::span<const Value> args) -> Value {
    ++calls;
    if (args.size() != 1 || !args[0].is_list()) throw Error("TypeError", "host_sum() expects one list");
    double total = 0;
    bool all_int = true;
    for (const Value& v : args[0].items()) {
      if (!v.is_number()) throw Error("TypeError", "host_sum() expects numbers, got " + v.type_name());
      all_int = all_int && v.is_int();
      total += v.as_float();
    }
    return all_int ? Value(static_cast<int64_t>(total)) : Value(total);
  });
  h.vm.define_function("greet", [](std::span<const Value> args) -> Value {
    return "hello, " + (args.empty() ? std::string("world") : args[0].as_str());
  });
  h.vm.define_function("nothing", [](std::span<const Value>) -> Value { return {}; });
  h.vm.define_function("pair", [](std::span<const Value> args) -> Value { return Value::tuple({args[0], args[0]}); });

  CHECK(h.eval("host_sum([1, 2, 3])").as_int() == 6);
  CHECK(h.eval("host_sum([1, 2.5])").as_float() == 3.5);
  CHECK(h.eval("greet('世界')").as_str() == "hello, 世界");
  CHECK(h.eval("nothing() is None").as_bool());
  CHECK(h.eval("pair([1])[1][0]").as_int() == 1);
  CHECK(h.eval("type(host_sum).__name__").as_str() == "builtin_function_or_method");
  CHECK(calls == 2);

  // Visible in imported modules too (they are builtins).
  h.ok("def via_closure():\n    f = lambda: greet('x')\n    return f()\nr = via_closure()\n");
  CHECK(h.vm.get_global("r")->as_str() == "hello, x");

  // Keyword arguments are refused with a TypeError.
  Result r = h.vm.run("greet(name='x')\n");
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "TypeError");
  CHECK(h.last().message == "greet() takes no keyword arguments");
}

TEST_CASE("native function errors become MSL exceptions of the given type") {
  Host h;
  h.vm.define_function("check_positive", [](std::span<const Value> args) -> Value {
    if (args.empty() || args[0].as_int() <= 0) throw Error("ValueError", "expected a positive number");
    return args[0];
  });
  h.vm.define_function("lookup", [](std::span<const Value>) -> Value { throw Error("KeyError", "missing"); });
  h.vm.define_function("std_fail", [](std::span<const Value>) -> Value { throw std::runtime_error("disk on fire"); });
  h.vm.define_function("odd_fail", [](std::span<const Value>) -> Value { throw 42; });
  h.vm.define_function("unknown_type", [](std::span<const Value>) -> Value { throw Error("NoSuchError", "what"); });
  h.vm.define_function("user_type", [](std::span<const Value>) -> Value { throw Error("AppError", "custom"); });

  // Catchable in MSL by type, and by base class.
  h.ok("try:\n"
       "    check_positive(-1)\n"
       "    caught = 'no'\n"
       "except ValueError as e:\n"
       "    caught = 'ValueError: ' + str(e)\n"
       "try:\n"
       "    lookup()\n"
       "except LookupError:\n"
       "    base = 'ok'\n"
       "try:\n"
       "    std_fail()\n"
       "except RuntimeError as e:\n"
       "    std = str(e)\n"
       "try:\n"
       "    odd_fail()\n"
       "except RuntimeError as e:\n"
       "    odd = str(e)\n"
       "class AppError(Exception):\n"
       "    pass\n"
       "try:\n"
       "    user_type()\n"
       "except AppError as e:\n"
       "    user = 'AppError: ' + str(e)\n");
  CHECK(h.vm.get_global("caught")->as_str() == "ValueError: expected a positive number");
  CHECK(h.vm.get_global("base")->as_str() == "ok");
  CHECK(h.vm.get_global("std")->as_str() == "disk on fire");
  CHECK(h.vm.get_global("odd")->as_str().find("unknown C++ exception") != std::string::npos);
  CHECK(h.vm.get_global("user")->as_str() == "AppError: custom");
  CHECK(h.eval("check_positive(5)").as_int() == 5);

  // Uncaught: reported with the type and message, at the calling line.
  Result r = h.vm.run("x = 1\ncheck_positive(0)\n", "native.msl");
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().kind == ErrorKind::Runtime);
  CHECK(h.last().type == "ValueError");
  CHECK(h.last().message == "expected a positive number");
  CHECK(h.last().file == "native.msl");
  CHECK(h.last().line == 2);

  // A type name that is not an exception class becomes a RuntimeError that keeps it.
  r = h.vm.run("unknown_type()\n");
  CHECK(h.last().type == "RuntimeError");
  CHECK(h.last().message == "NoSuchError: what");
}

TEST_CASE("native functions may call back into the VM") {
  Host h;
  h.ok("def helper(x):\n    return x + 1\n");
  h.vm.define_function("outer", [&](std::span<const Value> args) -> Value {
    Result r = h.vm.call("helper", {args[0]});
    return r.ok() ? r.value : Value(-1);
  });
  CHECK(h.eval("outer(41)").as_int() == 42);
  CHECK(h.eval("[outer(i) for i in range(3)]") == Value::list({1, 2, 3}));
}

TEST_CASE("native module functions are imported like a module") {
  Host h;
  h.vm.define_module_function("host", "twice", [](std::span<const Value> a) -> Value { return a[0].as_int() * 2; });
  h.vm.define_module_function("host", "name", [](std::span<const Value>) -> Value { return "embedded"; });
  h.ok("import host\nr = host.twice(21)\nn = host.name()\n");
  CHECK(h.vm.get_global("r")->as_int() == 42);
  CHECK(h.vm.get_global("n")->as_str() == "embedded");
  // Defined after the import: lands in the live module.
  h.vm.define_module_function("host", "late", [](std::span<const Value>) -> Value { return true; });
  CHECK(h.eval("host.late()").as_bool());
  h.ok("from host import twice\nr2 = twice(2)\n");
  CHECK(h.vm.get_global("r2")->as_int() == 4);
}

// ------------------------------------------------------------------- errors

TEST_CASE("runtime error callback: kind, type, message, file, line, column, traceback text") {
  Host h;
  Result r = h.vm.run("x = 1\ny = x / 0\n", "calc.msl");
  CHECK(r.status == Status::RuntimeError);
  REQUIRE(h.errors.size() == 1);
  const ErrorInfo& e = h.errors[0];
  CHECK(e.kind == ErrorKind::Runtime);
  CHECK(e.type == "ZeroDivisionError");
  CHECK(e.message == "division by zero");
  CHECK(e.file == "calc.msl");
  CHECK(e.line == 2);
  CHECK(e.col == 5);
  CHECK(e.text.find("Traceback") != std::string::npos);
  CHECK(e.text.find("calc.msl:2:5") != std::string::npos);
  CHECK(e.text.find("ZeroDivisionError: division by zero") != std::string::npos);
  CHECK(h.vm.last_error().has_value());
  CHECK(h.vm.last_error()->type == "ZeroDivisionError");

  // Inside a function: the innermost frame is reported.
  r = h.vm.run("def inner(d):\n    return d['missing']\n\ndef outer():\n    return inner({})\n\nouter()\n", "frames.msl");
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "KeyError");
  CHECK(h.last().file == "frames.msl");
  CHECK(h.last().line == 2);
  CHECK(h.last().col == 12);
  CHECK(h.last().text.find("in outer") != std::string::npos);
  CHECK(h.last().text.find("in inner") != std::string::npos);

  // Errors from eval and call are reported the same way.
  r = h.vm.eval("undefined_name + 1");
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "NameError");
  CHECK(r.value.is_none());

  // raise with a user exception class
  r = h.vm.run("class Oops(Exception):\n    pass\nraise Oops('bad thing')\n", "user.msl");
  CHECK(h.last().type == "Oops");
  CHECK(h.last().message == "bad thing");
  CHECK(h.last().line == 3);
}

TEST_CASE("syntax errors are compile errors and nothing runs") {
  Host h;
  Result r = h.vm.run("print('before')\nx = (1,\n", "bad.msl");
  CHECK(r.status == Status::CompileError);
  CHECK(h.out.empty());
  REQUIRE(h.errors.size() == 1);
  CHECK(h.last().kind == ErrorKind::Compile);
  CHECK(h.last().type == "SyntaxError");
  CHECK(h.last().file == "bad.msl");
  CHECK(h.last().line >= 2);
  CHECK(h.last().col >= 1);
  CHECK(h.last().text.find("bad.msl:") != std::string::npos);
  CHECK(h.last().text.find("error:") != std::string::npos);

  r = h.vm.run("if True:\nprint(1)\n", "indent.msl");
  CHECK(r.status == Status::CompileError);
  CHECK(h.last().type == "IndentationError");
  CHECK(h.last().line == 2);

  r = h.vm.eval("1 +");
  CHECK(r.status == Status::CompileError);
  CHECK(h.last().kind == ErrorKind::Compile);

  // The VM is fine afterwards.
  CHECK(h.eval("2 * 3").as_int() == 6);
}

TEST_CASE("without an error callback the report is still in last_error") {
  VM vm;
  CHECK_FALSE(vm.last_error().has_value());
  CHECK(vm.run("1/0").status == Status::RuntimeError);
  REQUIRE(vm.last_error().has_value());
  CHECK(vm.last_error()->type == "ZeroDivisionError");
  CHECK(vm.eval("40 + 2").value.as_int() == 42);  // output discarded, nothing printed
}

TEST_CASE("sys.exit returns the Exit status instead of exiting") {
  Host h;
  Result r = h.vm.run("import sys\nprint('bye')\nsys.exit(3)\nprint('not reached')\n");
  CHECK(r.status == Status::Exit);
  CHECK(r.exit_code == 3);
  CHECK(h.out == "bye\n");
  CHECK(h.errors.empty());
  r = h.vm.run("import sys\nsys.exit()\n");
  CHECK(r.status == Status::Exit);
  CHECK(r.exit_code == 0);
  // Also from a called function.
  h.ok("def quit_now():\n    sys.exit(7)\n");
  r = h.vm.call("quit_now");
  CHECK(r.status == Status::Exit);
  CHECK(r.exit_code == 7);
  CHECK(h.eval("1").as_int() == 1);
}

// --------------------------------------------------------------- interrupts

TEST_CASE("interrupt() from another thread stops a running loop with KeyboardInterrupt") {
  Config c;
  c.step_limit = int64_t{20'000'000'000};  // backstop: a broken interrupt fails instead of hanging
  Host h(c);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    h.vm.interrupt();
  });
  auto start = std::chrono::steady_clock::now();
  Result r = h.vm.run("i = 0\nwhile True:\n    i += 1\n", "loop.msl");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stopper.join();
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "KeyboardInterrupt");
  CHECK(h.last().file == "loop.msl");
  CHECK(seconds < 10.0);
  CHECK(h.vm.get_global("i")->as_int() > 0);

  // The VM is usable afterwards, and `except Exception` does not swallow it.
  CHECK(h.eval("1 + 1").as_int() == 2);
  std::thread stopper2([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    h.vm.interrupt();
  });
  r = h.vm.run("def spin():\n    while True:\n        try:\n            pass\n        except Exception:\n            pass\nspin()\n");
  stopper2.join();
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "KeyboardInterrupt");

  // An interrupt while nothing runs is dropped.
  h.vm.interrupt();
  CHECK(h.eval("3").as_int() == 3);
  h.ok("for k in range(1000):\n    pass\n");
}

// ------------------------------------------------------------------- limits

TEST_CASE("step_limit: the limited code cannot catch the error or swallow it in finally") {
  Config c;
  c.step_limit = 10'000;
  Host h(c);
  // Each script would end normally if it could stop the error even once:
  // the loops around the handlers are bounded, so a regression fails the
  // test instead of hanging it.
  const char* scripts[] = {
      // except clauses of every breadth, retried as an endless catch loop would
      "n = 0\n"
      "while n < 100:\n"
      "    try:\n"
      "        while True:\n"
      "            pass\n"
      "    except RuntimeError:\n"
      "        n += 1\n",
      "n = 0\n"
      "while n < 100:\n"
      "    try:\n"
      "        while True:\n"
      "            pass\n"
      "    except BaseException:\n"
      "        n += 1\n",
      "n = 0\n"
      "while n < 100:\n"
      "    try:\n"
      "        while True:\n"
      "            pass\n"
      "    except:\n"
      "        n += 1\n",
      // a handler around the handler
      "try:\n"
      "    try:\n"
      "        while True:\n"
      "            pass\n"
      "    except Exception as e:\n"
      "        raise ValueError('x')\n"
      "except ValueError:\n"
      "    pass\n",
      // a handler that tries again, deeper
      "def r(k):\n"
      "    try:\n"
      "        while True:\n"
      "            pass\n"
      "    except BaseException:\n"
      "        if k < 100:\n"
      "            r(k + 1)\n"
      "r(0)\n",
      // finally blocks that return, break or continue
      "def f():\n"
      "    try:\n"
      "        while True:\n"
      "            pass\n"
      "    finally:\n"
      "        return 'swallowed'\n"
      "f()\n",
      "for i in range(100):\n"
      "    try:\n"
      "        while True:\n"
      "            pass\n"
      "    finally:\n"
      "        continue\n",
      "for i in range(100):\n"
      "    try:\n"
      "        while True:\n"
      "            pass\n"
      "    finally:\n"
      "        break\n",
  };
  for (const char* src : scripts) {
    INFO("source: " << std::string(src));
    h.errors.clear();
    auto start = std::chrono::steady_clock::now();
    Result r = h.vm.run(src, "limited.msl");
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CHECK(r.status == Status::RuntimeError);
    REQUIRE(!h.errors.empty());
    CHECK(h.last().type == "RuntimeError");
    CHECK(h.last().message == "step limit exceeded");
    CHECK(seconds < 10.0);
    // The next call starts a new count.
    h.ok("for k in range(5000):\n    pass\n");
  }

  // A finally block starts (a plain assignment is no step), but cannot stop
  // the error.
  Result r = h.vm.run("done = False\ntry:\n    while True:\n        pass\nfinally:\n    done = True\n");
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.vm.get_global("done")->as_bool());

  // A native function whose nested call hit the limit cannot resume the
  // limited code either: its next step fails.
  h.vm.define_function("spin_nested", [&](std::span<const Value>) {
    Result inner = h.vm.run("while True:\n    pass\n");
    return Value(inner.status == Status::RuntimeError);
  });
  r = h.vm.run("stopped = spin_nested()\nafter = 0\nfor i in range(100):\n    after += 1\n");
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().message == "step limit exceeded");
  CHECK(h.vm.get_global("stopped")->as_bool());
  CHECK(h.vm.get_global("after")->as_int() == 0);
  h.ok("for k in range(5000):\n    pass\n");
}

TEST_CASE("a VM may be used from another thread than the one that created it") {
  Host h;
  h.ok("def depth(n):\n    return 0 if n == 0 else 1 + depth(n - 1)\n");
  int64_t got = -1;
  std::thread worker([&] {
    Result r = h.vm.call("depth", {500});
    if (r.ok()) got = r.value.as_int();
  });
  worker.join();
  CHECK(got == 500);
  // Runaway recursion on a small-stack thread is a RecursionError, not a crash.
  Result r;
  std::thread worker2([&] { r = h.vm.call("depth", {100000}); });
  worker2.join();
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "RecursionError");
  CHECK(h.vm.call("depth", {10}).value.as_int() == 10);
}

// ------------------------------------------------------------ configuration

TEST_CASE("two VMs are independent; handles do not cross") {
  Host a, b;
  a.ok("x = 'in a'\nprint('a')\n");
  CHECK_FALSE(b.vm.has_global("x"));
  b.ok("x = 'in b'\nprint('b')\n");
  CHECK(a.vm.get_global("x")->as_str() == "in a");
  CHECK(b.vm.get_global("x")->as_str() == "in b");
  CHECK(a.out == "a\n");
  CHECK(b.out == "b\n");

  a.vm.define_function("only_in_a", [](std::span<const Value>) -> Value { return 1; });
  CHECK(a.eval("only_in_a()").as_int() == 1);
  CHECK(b.vm.eval("only_in_a()").status == Status::RuntimeError);
  CHECK(b.last().type == "NameError");

  Value fa = a.eval("lambda: 1");
  CHECK_FALSE(b.vm.set_global("f", fa));
  CHECK(b.last().type == "TypeError");
  CHECK(b.vm.call_value(fa).status == Status::RuntimeError);
  CHECK(b.last().type == "TypeError");
  // Plain data crosses freely.
  Value data = a.eval("[1, 'two']");
  CHECK(b.vm.set_global("d", data));
  CHECK(b.eval("d[1]").as_str() == "two");
}

TEST_CASE("config: argv, recursion limit, module path, error_output") {
  std::string dir = std::string(MSL_TEST_TMPDIR) + "/embed_modpath";
  std::string mkdir = "mkdir -p '" + dir + "'";
  REQUIRE(std::system(mkdir.c_str()) == 0);
  {
    std::ofstream f(dir + "/embedhelper.msl");
    f << "def triple(x):\n    return 3 * x\n";
  }
  Config c;
  c.argv = {"host-program", "--flag", "é"};
  c.recursion_limit = 60;
  c.module_path = {dir};
  Host h(c);
  h.ok("import sys\nargs = sys.argv\n");
  CHECK(*h.vm.get_global("args") == Value::list({"host-program", "--flag", "é"}));
  h.ok("import embedhelper\nt = embedhelper.triple(5)\n");
  CHECK(h.vm.get_global("t")->as_int() == 15);
  h.ok("def down(n):\n    return down(n + 1)\n");
  Result r = h.vm.call("down", {0});
  CHECK(r.status == Status::RuntimeError);
  CHECK(h.last().type == "RecursionError");

  std::string err_text;
  Config c2;
  c2.error_output = [&](std::string_view s) { err_text += s; };
  Host h2(c2);
  h2.ok("import sys\nsys.stderr.write('to stderr\\n')\nprint('to stdout')\n");
  CHECK(err_text == "to stderr\n");
  CHECK(h2.out == "to stdout\n");
}

TEST_CASE("a moved VM keeps working") {
  VM a;
  a.set_global("k", 5);
  VM b = std::move(a);
  CHECK(b.eval("k * 2").value.as_int() == 10);
}
