// Unsupported constructs and resolution failures: one GraphModeError per
// function, in the project's diagnostic format, with file:line:col and help.
#include <doctest/doctest.h>

#include "lower_test_util.h"

using namespace msl;
using namespace msl::lower_test;

namespace {
std::string first_error(const std::string& src) {
  Lowered r = lower_source(src);
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].error_type == "GraphModeError");
  return format_diagnostic(r.errors[0]);
}
}  // namespace

TEST_CASE("try is rejected with position, excerpt and the fix") {
  CHECK(first_error("def f(x):\n    try:\n        x = x + 1\n    except:\n        pass\n    return x\n") ==
        "t.msl:2:5: error: 'try' statement is not supported in graph mode\n"
        "        try:\n"
        "        ^^^^\n"
        "help: move it out of construct or use PyNative mode\n");
}

TEST_CASE("each unsupported construct names itself and its line:col") {
  auto head = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  CHECK(head(first_error("def f(x):\n    del x\n")) ==
        "t.msl:2:5: error: 'del' statement is not supported in graph mode");
  CHECK(head(first_error("def f(x):\n    global g\n    return x\n")) ==
        "t.msl:2:5: error: 'global' statement is not supported in graph mode");
  CHECK(head(first_error("def f(x):\n    x.a = 1\n")) ==
        "t.msl:2:5: error: attribute assignment is not supported in graph mode");
  CHECK(head(first_error("def f(x):\n    return {y for y in x}\n")) ==
        "t.msl:2:12: error: set comprehension is not supported in graph mode");
  // A list comprehension is unrolled, which needs its sequence's length.
  CHECK(head(first_error("def f(x):\n    return [y for y in x]\n")) ==
        "t.msl:2:24: error: a comprehension over a value whose length is not known at compile time is not supported "
        "in graph mode");
  CHECK(head(first_error("def f(x):\n    return [y for y in range(x)]\n")) ==
        "t.msl:2:30: error: a comprehension over range() of values known only at run time is not supported in graph "
        "mode");
  // A def with *args is lowered per call shape, which a nested def's calls
  // do not give before its body is lowered.
  CHECK(head(first_error("def f(x):\n    def g(*a):\n        return 1\n    return g(x)\n")) ==
        "t.msl:2:12: error: '*args' parameter of a nested function is not supported in graph mode");
  CHECK(head(first_error("def f(x):\n    for i in range(x, step=2):\n        pass\n")) ==
        "t.msl:2:23: error: this argument of range() is not supported in graph mode");
  CHECK(head(first_error("def f(x):\n    for a, b in range(3):\n        pass\n")) ==
        "t.msl:2:9: error: 'for' loop with a tuple target is not supported in graph mode");
  CHECK(head(first_error("def f(x):\n    for a, b in x:\n        pass\n")) ==
        "t.msl:2:17: error: 'for' loop over a value whose length is not known at compile time is not supported in "
        "graph mode");
}

TEST_CASE("unknown names and bad keyword arguments") {
  CHECK(first_error("def f(x):\n    return frobnicate(x)\n") ==
        "t.msl:2:12: error: name 'frobnicate' is not defined in graph mode\n"
        "        return frobnicate(x)\n"
        "               ^^^^^^^^^^\n"
        "help: graph mode resolves names to local variables, primitives, functions and values of the file\n");
  std::string e = first_error("def f(x):\n    return ops.relu(x, axis=1)\n");
  CHECK(e.substr(0, e.find('\n')) ==
        "t.msl:2:24: error: keyword argument 'axis' is not an attribute of primitive 'relu'");
}

TEST_CASE("an error in one function does not stop the others") {
  Lowered r = lower_source("def f(x):\n    del x\ndef g(y):\n    return y\n");
  CHECK(r.errors.size() == 1);
  REQUIRE(r.graphs.size() == 2);
  CHECK(r.graphs[0] == nullptr);
  CHECK(r.graphs[1] != nullptr);
}

TEST_CASE("a failing callee is reported once and fails its callers") {
  Lowered r = lower_source("def f(x):\n    return g(x)\ndef g(y):\n    del y\n");
  REQUIRE(r.errors.size() == 1);
  CHECK(r.errors[0].span.line == 4);
  REQUIRE(r.graphs.size() == 2);
  CHECK(r.graphs[0] == nullptr);
  CHECK(r.graphs[1] == nullptr);
}

TEST_CASE("print takes positional arguments only in graph mode") {
  std::string e = first_error("def f(x):\n    print(x, end='')\n    return x\n");
  CHECK(e.substr(0, e.find('\n')) == "t.msl:2:14: error: keyword or '*' argument of print is not supported in graph mode");
}

TEST_CASE("prints and calls form one state chain; the output waits for it") {
  Lowered r = lower_source("def g(y):\n    return y\ndef f(x):\n    print(x)\n    y = g(x)\n    print(y, 2)\n    return y\n");
  REQUIRE(r.errors.empty());
  std::string t = r.text();
  // The first print starts from the initial state; the call waits for it;
  // the second print takes the state after the call; the output depends on
  // the last state.
  CHECK(t.find("%0 = print(%para1_x, None)") != std::string::npos);
  CHECK(t.find("%1 = update_state(None, %0)") != std::string::npos);
  CHECK(t.find("%2 = depend(%para1_x, %1)") != std::string::npos);
  CHECK(t.find("%3(y) = @g(%2)") != std::string::npos);
  CHECK(t.find("%4 = update_state(%1, %3)") != std::string::npos);
  CHECK(t.find("%5 = print(%3, 2, %4)") != std::string::npos);
  CHECK(t.find("%7 = depend(%3, %6)") != std::string::npos);
  CHECK(t.find("return(%7)") != std::string::npos);
}

TEST_CASE("keyword arguments of a graph call: unknown, repeated and missing ones are errors") {
  std::string e = first_error("def g(a):\n    return a\ndef f(x):\n    return g(b=x)\n");
  CHECK(e.substr(0, e.find('\n')) == "t.msl:4:12: error: @g got an unexpected keyword argument 'b'");
  e = first_error("def g(a):\n    return a\ndef f(x):\n    return g(x, a=x)\n");
  CHECK(e.substr(0, e.find('\n')) == "t.msl:4:12: error: @g got multiple values for argument 'a'");
  e = first_error("def g(a, b):\n    return a\ndef f(x):\n    return g(b=x)\n");
  CHECK(e.substr(0, e.find('\n')) == "t.msl:4:12: error: @g missing required argument 'a'");
}
