// interactive_input_status: when the REPL asks for another line ("...").
#include <doctest/doctest.h>

#include "lang/parser.h"

using msl::InputStatus;
using msl::interactive_input_status;

namespace {
bool complete(const char* text) { return interactive_input_status(text) == InputStatus::Complete; }
}  // namespace

TEST_CASE("interactive: simple statements are complete") {
  CHECK(complete("x = 1"));
  CHECK(complete("x = 1\n"));
  CHECK(complete("print(x)"));
  CHECK(complete("x = [1,\n 2]"));
  CHECK(complete("x = \"\"\"abc\ndef\"\"\""));
  CHECK(complete(""));
  CHECK(complete("\n"));
  CHECK(complete("# just a comment"));
}

TEST_CASE("interactive: open brackets, strings and continuations need more") {
  CHECK_FALSE(complete("x = (1,"));
  CHECK_FALSE(complete("x = (1,\n\n"));  // an empty line does not close a bracket
  CHECK_FALSE(complete("f(a, [1,\n2"));
  CHECK_FALSE(complete("s = \"\"\"abc"));
  CHECK_FALSE(complete("s = '''abc\n\n"));
  CHECK_FALSE(complete("x = 1 + \\"));
  CHECK_FALSE(complete("x = 1 + \\\n"));
}

TEST_CASE("interactive: a compound statement waits for an empty line") {
  CHECK_FALSE(complete("if x:"));
  CHECK_FALSE(complete("if x:\n"));
  CHECK_FALSE(complete("if x:\n  y = 1"));
  CHECK_FALSE(complete("if x:\n  y = 1\n"));
  CHECK(complete("if x:\n  y = 1\n\n"));
  CHECK(complete("if x:\n  y = 1\n   \n"));
  CHECK_FALSE(complete("def f(): pass"));
  CHECK(complete("def f(): pass\n\n"));
  CHECK_FALSE(complete("class A:\n  def f(self):\n    pass\n"));
  CHECK(complete("class A:\n  def f(self):\n    pass\n\n"));
  CHECK_FALSE(complete("for i in range(3):\n  print(i)\nelse:"));
  CHECK_FALSE(complete("try:\n  x\n"));  // except/finally may follow
  CHECK_FALSE(complete("@dec"));
  CHECK_FALSE(complete("@dec\ndef f():\n  pass\n"));
  CHECK(complete("@dec\ndef f():\n  pass\n\n"));
}

TEST_CASE("interactive: a real syntax error completes the entry, to be reported") {
  CHECK(complete("x = )"));
  CHECK(complete("x = 1 +"));
  CHECK(complete("if x = 1:"));
  CHECK(complete("if x:\n  y = )\n"));
  CHECK(complete("else:"));
  CHECK(complete("if x:\n\n"));        // the empty line ends it: "Expected an indented block"
  CHECK(complete("try:\n  x\n\n"));    // now the missing except is an error
  CHECK(complete("x = $"));
  CHECK(complete("x = (1,\ny = ]"));   // an error before the open end
  CHECK(complete("\xff"));
}
