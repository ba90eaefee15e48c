// Interpreter internals: the dict hash table, attribute maps, value identity
// and numeric equality, scope resolution (cells, free variables, hidden
// comprehension slots), traceback locations, and the safety limits
// (recursion, step limit, interrupts from another thread, huge sequences).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <memory>
#include <string>
#include <thread>

#include "interp/core/interp.h"

using namespace msl;

namespace {

struct Run {
  std::string out, err;
  Value exc;  // the uncaught exception, if any
};

Interp::Options quiet_options(std::string* out) {
  Interp::Options opts;
  opts.write_stdout = [out](std::string_view s) { *out += s; };
  return opts;
}

Run run(const std::string& source, Interp::Options opts = {}) {
  Run r;
  opts.write_stdout = [&r](std::string_view s) { r.out += s; };
  Interp I(std::move(opts));
  try {
    I.run_source(std::make_shared<SourceFile>("t.msl", source));
  } catch (MslError& e) {
    r.err = I.format_exception(e.exc);
    r.exc = e.exc;
  }
  return r;
}

std::string last_line(const std::string& text) {
  std::string s = text;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace

TEST_CASE("ValueMap keeps insertion order through deletes and growth") {
  std::string out;
  Interp I(quiet_options(&out));
  ValueMap m;
  for (int64_t i = 0; i < 1000; ++i) CHECK(m.set(I, Value::integer(i * 7919 % 1000), Value::integer(i)));
  CHECK(m.size() == 1000);
  for (int64_t k = 0; k < 1000; k += 2) CHECK(m.erase(I, Value::integer(k)));
  CHECK_FALSE(m.erase(I, Value::integer(0)));
  CHECK(m.size() == 500);
  // Re-inserting after deletions appends at the end, as Python's dict does.
  CHECK(m.set(I, Value::integer(0), Value::integer(-1)));
  std::vector<int64_t> order;
  for (auto& e : m.entries())
    if (!e.value.is_undef()) order.push_back(e.key.as_int());
  REQUIRE(order.size() == 501);
  CHECK(order.back() == 0);
  // Every remaining key maps to the value inserted for it.
  for (int64_t i = 0; i < 1000; ++i) {
    int64_t k = i * 7919 % 1000;
    Value* v = m.find(I, Value::integer(k));
    if (k == 0) {
      REQUIRE(v);
      CHECK(v->as_int() == -1);
    } else if (k % 2 == 0) {
      CHECK(v == nullptr);
    } else {
      REQUIRE(v);
      CHECK(v->as_int() == i);
    }
  }
}

TEST_CASE("numbers that compare equal are the same dict key") {
  std::string out;
  Interp I(quiet_options(&out));
  ValueMap m;
  m.set(I, Value::integer(1), Value::integer(10));
  CHECK_FALSE(m.set(I, Value::number(1.0), Value::integer(20)));
  CHECK_FALSE(m.set(I, Value::boolean(true), Value::integer(30)));
  CHECK(m.size() == 1);
  CHECK(m.find(I, Value::integer(1))->as_int() == 30);
  CHECK(I.hash(Value::integer(5)) == I.hash(Value::number(5.0)));
  CHECK(I.eq(I.str("abc"), I.str("abc")));
  CHECK_FALSE(I.eq(I.str("abc"), Value::integer(1)));
}

TEST_CASE("AttrMap switches to a hash index and stays consistent") {
  std::string out;
  Interp I(quiet_options(&out));
  AttrMap m;
  for (int i = 0; i < 40; ++i) m.set(I.intern("a" + std::to_string(i)), Value::integer(i));
  for (int i = 0; i < 40; i += 3) CHECK(m.erase(I.intern("a" + std::to_string(i))));
  for (int i = 0; i < 40; ++i) {
    Value* v = m.find(I.intern("a" + std::to_string(i)));
    if (i % 3 == 0) {
      CHECK(v == nullptr);
    } else {
      REQUIRE(v);
      CHECK(v->as_int() == i);
    }
  }
  CHECK(m.entries().front().first->s == "a1");
}

TEST_CASE("closures share cells; comprehension variables do not leak") {
  Run r = run(R"(
def counters():
    n = 0
    def inc():
        nonlocal n
        n += 1
        return n
    def get():
        return n
    return inc, get
inc, get = counters()
inc(); inc()
print(get())
fs = [lambda: i for i in range(3)]
print([f() for f in fs])
i = "outer"
squares = [i * i for i in range(4)]
print(i, squares)
class K:
    base = 10
    vals = [x + 1 for x in range(3)]
    def m(self):
        return [self.base + x for x in self.vals]
print(K().m())
)");
  CHECK(r.err == "");
  CHECK(r.out == "2\n[2, 2, 2]\nouter [0, 1, 4, 9]\n[11, 12, 13]\n");
}

TEST_CASE("tracebacks record the failing expression of every frame") {
  Run r = run("def inner(x):\n    return x[5]\n\ndef outer():\n    return 1 + inner([1, 2])\n\nouter()\n");
  REQUIRE(r.exc.is(Kind::Exception));
  ExceptionObj* x = r.exc.as<ExceptionObj>();
  REQUIRE(x->traceback.size() == 3);  // innermost first: inner, outer, <module>
  CHECK(x->traceback[0].function == "inner");
  CHECK(x->traceback[0].span.line == 2);
  CHECK(x->traceback[0].span.col == 12);
  CHECK(x->traceback[0].span.end_col == 16);
  CHECK(x->traceback[1].function == "outer");
  CHECK(x->traceback[1].span.line == 5);
  CHECK(x->traceback[1].span.col == 16);
  CHECK(x->traceback[2].function == "<module>");
  CHECK(x->traceback[2].span.line == 7);
  CHECK(last_line(r.err) == "IndexError: list index out of range");
  CHECK(r.err.find("t.msl:2:12 in inner\n    return x[5]\n           ^^^^\n") != std::string::npos);
}

TEST_CASE("recursion limit and C stack exhaustion are RecursionError") {
  Interp::Options opts;
  opts.recursion_limit = 50;
  Run r = run("def f(n):\n    return f(n + 1)\nf(0)\n", opts);
  CHECK(last_line(r.err) == "RecursionError: maximum recursion depth exceeded");
  CHECK(r.err.find("[Previous line repeated") != std::string::npos);

  // Deeply nested data is handled by the C-stack check, not a crash.
  Run deep = run("a = []\nfor i in range(300000):\n    a = [a]\nb = []\nfor i in range(300000):\n    b = [b]\nprint(a == b)\n");
  CHECK((deep.out == "True\n" || last_line(deep.err).rfind("RecursionError", 0) == 0));
}

TEST_CASE("an exception raised in __del__ is printed as ignored, and the program goes on") {
  std::string err;
  Interp::Options opts;
  opts.write_stderr = [&err](std::string_view s) { err += s; };
  Run r = run(
      "class A:\n"
      "    def __del__(self):\n"
      "        print('del')\n"
      "        raise ValueError('boom')\n"
      "a = A()\n"
      "del a\n"
      "print('after')\n",
      opts);
  CHECK(r.out == "del\nafter\n");
  CHECK(r.exc.is_none());
  // CPython: "Exception ignored in: <function A.__del__ at 0x7f...>", then the traceback.
  CHECK_MESSAGE(err.rfind("Exception ignored in: <function A.__del__ at 0x", 0) == 0, err);
  CHECK_MESSAGE(err.find(">\nTraceback (most recent call last):\n  t.msl:4:9 in A.__del__\n") != std::string::npos, err);
  CHECK(last_line(err) == "ValueError: boom");
}

TEST_CASE("step limit stops runaway loops") {
  Interp::Options opts;
  opts.step_limit = 1000;
  Run r = run("while True:\n    pass\n", opts);
  CHECK(last_line(r.err) == "RuntimeError: step limit exceeded");
}

TEST_CASE("interrupt from another thread raises KeyboardInterrupt, and the interpreter stays usable") {
  std::string out;
  Interp I(quiet_options(&out));
  std::atomic<bool> started{false};
  I.def_native(nullptr, "mark_started", [](Interp&, Args&, Object*) { return Value(); });
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    I.request_interrupt();
    started = true;
  });
  std::string type;
  try {
    I.run_source(std::make_shared<SourceFile>("t.msl", "mark_started()\nwhile True:\n    pass\n"));
  } catch (MslError& e) {
    type = I.cls_of(e.exc)->name->s;
  }
  stopper.join();
  CHECK(started);
  CHECK(type == "KeyboardInterrupt");
  I.run_source(std::make_shared<SourceFile>("t.msl", "print(6 * 7)\n"));
  CHECK(out == "42\n");
}

TEST_CASE("huge sequences raise MemoryError instead of allocating") {
  Interp::Options opts;
  opts.max_sequence = 1 << 16;
  Run r = run("x = [0] * 1000000\n", opts);
  CHECK(last_line(r.err).rfind("MemoryError", 0) == 0);
  Run s = run("x = list(range(10 ** 9))\n", opts);
  CHECK(last_line(s.err).rfind("MemoryError", 0) == 0);
}

TEST_CASE("64-bit integer overflow is OverflowError, never wraps") {
  Run r = run("x = 9223372036854775807\ntry:\n    x + 1\nexcept OverflowError as e:\n    print('add', e)\n"
              "try:\n    (-9223372036854775807 - 1) // -1\nexcept OverflowError:\n    print('floordiv')\n"
              "try:\n    2 ** 63\nexcept OverflowError:\n    print('pow')\nprint(2 ** 62)\n");
  CHECK(r.err == "");
  CHECK(r.out == "add integer overflow\nfloordiv\npow\n4611686018427387904\n");
}

TEST_CASE("tracebacks hide standard-library frames") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("msl_stdlib_test_" + std::to_string(::getpid()));
  fs::create_directories(dir / "lib");
  {
    std::ofstream(dir / "lib" / "libmod.msl") << "def check(x):\n    raise ValueError('bad ' + str(x))\n";
  }
  Interp::Options opts;
  opts.stdlib_dir = (dir / "lib").string();
  std::string main = (dir / "main.msl").string();
  Run r;
  opts.write_stdout = [&r](std::string_view s) { r.out += s; };
  Interp I(std::move(opts));
  try {
    I.run_source(std::make_shared<SourceFile>(main, "import libmod\ndef run():\n    libmod.check(1)\nrun()\n"));
  } catch (MslError& e) {
    r.err = I.format_exception(e.exc);
    REQUIRE(e.obj()->traceback.size() == 3);  // the library frame is recorded...
  }
  fs::remove_all(dir);
  CHECK(r.err.find("libmod.msl") == std::string::npos);  // ...but not shown
  CHECK(r.err.find("main.msl:3:5 in run") != std::string::npos);
  CHECK(last_line(r.err) == "ValueError: bad 1");
}

TEST_CASE("exception chains: cause, context, and `from None`") {
  Run context = run("try:\n    [][1]\nexcept IndexError:\n    x = undefined_name\n");
  CHECK(context.err ==
        "Traceback (most recent call last):\n"
        "  t.msl:2:5 in <module>\n    [][1]\n    ^^^^^\n"
        "IndexError: list index out of range\n"
        "\nDuring handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        "  t.msl:4:9 in <module>\n    x = undefined_name\n        ^^^^^^^^^^^^^^\n"
        "NameError: name 'undefined_name' is not defined\n");

  Run cause = run("def f():\n    return 1 / 0\ntry:\n    f()\nexcept ZeroDivisionError as e:\n    raise ValueError('wrapped') from e\n");
  size_t first = cause.err.find("ZeroDivisionError: division by zero");
  size_t middle = cause.err.find("The above exception was the direct cause of the following exception:");
  size_t last = cause.err.find("ValueError: wrapped");
  CHECK(first != std::string::npos);
  CHECK(middle > first);
  CHECK(last > middle);
  CHECK(cause.err.find("t.msl:2:12 in f") < middle);

  Run none = run("try:\n    {}['a']\nexcept KeyError:\n    raise ValueError('clean') from None\n");
  CHECK(none.err.find("KeyError") == std::string::npos);
  CHECK(last_line(none.err) == "ValueError: clean");
}

TEST_CASE("the cycle collector frees garbage cycles and nothing alive") {
  std::string out;
  Interp I(quiet_options(&out));
  auto run_src = [&](const char* src) { I.run_source(std::make_shared<SourceFile>("t.msl", src)); };
  run_src(
      "import gc\n"
      "gc.collect()\n"
      "class Node:\n"
      "    def __init__(self, v):\n"
      "        self.v = v\n"
      "        self.me = self\n"
      "        self.items = [self, {'back': self}]\n"
      "def make_closure():\n"
      "    def rec(n):\n"
      "        return 0 if n == 0 else rec(n - 1)\n"
      "    return rec(2)\n"
      "keep = Node('kept')\n"
      "for i in range(100):\n"
      "    Node(i)\n"
      "    make_closure()\n");
  // 100 × (instance, list, dict) + 100 × (function, cell) are garbage.
  CHECK(I.collect_garbage() == 500);
  CHECK(I.collect_garbage() == 0);
  run_src("print(keep.v, keep.me is keep, keep.items[1]['back'].v)\n");
  CHECK(out == "kept True kept\n");
}

TEST_CASE("the cycle collector frees cycles through msl.jit and gradient function objects") {
  // A Cell keeps msl.jit(self) (its compiled construct): the native object
  // holds the bound method, which holds the Cell. Uncompiled here, so
  // nothing else refers to them.
  std::string out;
  Interp::Options opts = quiet_options(&out);
  opts.stdlib_dir = std::string(MSL_STDLIB_DIR);
  Interp I(opts);
  I.run_source(std::make_shared<SourceFile>("t.msl",
                                            "import gc\n"
                                            "import msl\n"
                                            "gc.collect()\n"
                                            "class Holder:\n"
                                            "    def f(self, x):\n"
                                            "        return x\n"
                                            "for i in range(100):\n"
                                            "    h = Holder()\n"
                                            "    h.jitted = msl.jit(h.f)\n"
                                            "    h.grad = msl.grad(h.f)\n"
                                            "h = None\n"));
  // 100 × (instance, its two bound methods, the two function objects).
  CHECK(I.collect_garbage() == 500);
}

TEST_CASE("automatic collection keeps cyclic garbage bounded") {
  std::string out;
  Interp I(quiet_options(&out));
  I.run_source(std::make_shared<SourceFile>("t.msl",
                                            "class C:\n"
                                            "    def __init__(self):\n"
                                            "        self.me = self\n"
                                            "for i in range(200000):\n"
                                            "    C()\n"));
  // Without automatic collection all 200000 instances would still be alive.
  CHECK(I.collect_garbage() < 50000);
}
