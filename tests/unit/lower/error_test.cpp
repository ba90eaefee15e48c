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
  CHECK(head(first_error("def f(x):\n    return [y for y in x]\n")) ==
        "t.msl:2:12: error: list comprehension is not supported in graph mode");
  CHECK(head(first_error("def f(*args):\n    return 1\n")) ==
        "t.msl:1:8: error: '*args' parameter is not supported in graph mode");
  CHECK(head(first_error("def f(x):\n    while x:\n        break\n")) ==
        "t.msl:3:9: error: 'break' statement is not supported in graph mode");
  CHECK(head(first_error("def f(x):\n    for a, b in x:\n        pass\n")) ==
        "t.msl:2:9: error: 'for' loop with a tuple target is not supported in graph mode");
}

TEST_CASE("unknown names and bad keyword arguments") {
  CHECK(first_error("def f(x):\n    return frobnicate(x)\n") ==
        "t.msl:2:12: error: name 'frobnicate' is not defined in graph mode\n"
        "        return frobnicate(x)\n"
        "               ^^^^^^^^^^\n"
        "help: graph mode resolves names to local variables, primitives and functions of the file\n");
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

TEST_CASE("print is reported as not lowered yet") {
  std::string e = first_error("def f(x):\n    print(x)\n    return x\n");
  CHECK(e.substr(0, e.find('\n')) ==
        "t.msl:2:5: error: print is not lowered to graph mode yet (effects are not threaded through graphs)");
}

TEST_CASE("keyword arguments in a call of a graph are rejected") {
  std::string e = first_error("def g(a):\n    return a\ndef f(x):\n    return g(a=x)\n");
  CHECK(e.substr(0, e.find('\n')) ==
        "t.msl:4:14: error: keyword argument 'a' is not supported in a call of a graph");
}
