// Syntax error messages and positions, several errors per file without
// cascades, and inputs that must give an error instead of a crash (deep
// nesting, huge chains).
#include <doctest/doctest.h>

#include <string>

#include "lang_test_util.h"

using msl::test::errors;

TEST_CASE("errors: missing ':' after each kind of header") {
  CHECK(errors("if x > 1\n    y = 2\n") == "1:9: Expected ':'.\n");
  CHECK(errors("if x:\n    pass\nelif y\n    pass\n") == "3:7: Expected ':'.\n");
  CHECK(errors("if x:\n    pass\nelse\n    pass\n") == "3:5: Expected ':'.\n");
  CHECK(errors("while x\n    y = 2\n") == "1:8: Expected ':'.\n");
  CHECK(errors("for x in y\n  pass\n") == "1:11: Expected ':'.\n");
  CHECK(errors("def f(x)\n    return 1\n") == "1:9: Expected ':'.\n");
  CHECK(errors("def f(x) -> int\n    return 1\n") == "1:16: Expected ':'.\n");
  CHECK(errors("class A\n    pass\n") == "1:8: Expected ':'.\n");
  CHECK(errors("class A(B)\n    pass\n") == "1:11: Expected ':'.\n");
  CHECK(errors("try\n  pass\nexcept E as e\n  pass\nfinally\n  pass\n") ==
        "1:4: Expected ':'.\n"
        "3:14: Expected ':'.\n"
        "5:8: Expected ':'.\n");
  // The block after the header is still parsed: its errors are reported.
  CHECK(errors("class A\n    def f(self):\n        return 1 +\n") ==
        "1:8: Expected ':'.\n"
        "3:19: Expected an expression after '+'.\n");
}

TEST_CASE("errors: the full diagnostic text") {
  auto r = msl::parse_module(msl::test::source("x = 1\n\nif x > 1\n    y = 2\n", "file.msl"));
  REQUIRE(r.errors.size() == 1);
  CHECK(msl::format_diagnostic(r.errors[0]) ==
        "file.msl:3:9: error: Expected ':'.\n"
        "    if x > 1\n"
        "            ^\n"
        "help: add ':' at the end of the 'if' line\n");
  CHECK(r.errors[0].error_type == "SyntaxError");
  CHECK(r.module == nullptr);
}

TEST_CASE("errors: expressions") {
  CHECK(errors("x = 1 +\n") == "1:8: Expected an expression after '+'.\n");
  CHECK(errors("x = \n") == "1:4: Expected an expression after '='.\n");
  CHECK(errors("a + = 1\n") == "1:5: Expected an expression after '+'.\n");
  CHECK(errors("if x and:\n  pass\n") == "1:9: Expected an expression after 'and'.\n");
  CHECK(errors("if:\n  pass\n") == "1:3: Expected an expression after 'if'.\n");
  CHECK(errors("def f(x) -> :\n  pass\n") == "1:13: Expected an expression after '->'.\n");
  CHECK(errors("x = 1 if y\n") == "1:11: Expected 'else' after 'if' expression.\n");
  CHECK(errors("x = 1 2\n") == "1:7: Invalid syntax at '2'.\n");
  CHECK(errors("f(a b)\n") == "1:5: Invalid syntax. Perhaps you forgot a comma?\n");
  CHECK(errors("x = [1 2]\n") == "1:8: Invalid syntax. Perhaps you forgot a comma?\n");
  CHECK(errors("if x = 1:\n  pass\n") == "1:6: Invalid syntax. Maybe you meant '==' instead of '='?\n");
  CHECK(errors("while (x = 1):\n  pass\n") == "1:10: Invalid syntax. Maybe you meant '==' instead of '='?\n");
  CHECK(errors("print \"x\"\n") == "1:7: Missing parentheses in call to 'print'.\n");
  CHECK(errors("def class(): pass\n") == "1:5: 'class' is a keyword and cannot be used as a name.\n");
  CHECK(errors("for x y in z: pass\n") == "1:7: Expected 'in'.\n");
  CHECK(errors("from a b\n") == "1:8: Expected 'import'.\n");
  CHECK(errors("else:\n  pass\n") ==
        "1:1: 'else' does not follow an 'if', 'for', 'while' or 'try' block at the same indentation.\n");
  CHECK(errors("except E:\n  pass\n") == "1:1: 'except' does not follow a 'try' block at the same indentation.\n");
}

TEST_CASE("errors: assignment targets") {
  CHECK(errors("f() = 1\n") == "1:1: Cannot assign to function call.\n");
  CHECK(errors("1 = x\n") == "1:1: Cannot assign to literal.\n");
  CHECK(errors("x = 'a' = y\n") == "1:5: Cannot assign to literal.\n");
  CHECK(errors("None = 1\n") == "1:1: Cannot assign to None.\n");
  CHECK(errors("x + 1 = 2\n") == "1:1: Cannot assign to expression.\n");
  CHECK(errors("a if b else c = 1\n") == "1:1: Cannot assign to conditional expression.\n");
  CHECK(errors("a, f() = 1, 2\n") == "1:4: Cannot assign to function call.\n");
  CHECK(errors("for f() in x: pass\n") == "1:5: Cannot assign to function call.\n");
  CHECK(errors("[x for 1 in y]\n") == "1:8: Cannot assign to literal.\n");
  CHECK(errors("del f()\n") == "1:5: Cannot delete function call.\n");
  CHECK(errors("del *a, b\n") == "1:5: Cannot delete starred.\n");
  CHECK(errors("(a, b) += 1\n") == "1:1: 'tuple' is an illegal expression for augmented assignment.\n");
  CHECK(errors("f() += 1\n") == "1:1: 'function call' is an illegal expression for augmented assignment.\n");
  CHECK(errors("x, y: int = 1, 2\n") == "1:1: Only single target (not tuple) can be annotated.\n");
  CHECK(errors("*a = 1\n") == "1:1: Starred assignment target must be in a list or tuple.\n");
  CHECK(errors("a, *b, *c = d\n") == "1:8: Multiple starred expressions in assignment.\n");
  CHECK(errors("x = *a\n") == "1:5: Can't use starred expression here.\n");
  CHECK(errors("*a\n") == "1:1: Can't use starred expression here.\n");
}

TEST_CASE("errors: calls and definitions") {
  CHECK(errors("f(a=1, a=2)\n") == "1:8: Keyword argument repeated: 'a'.\n");
  CHECK(errors("f(a=1, 2)\n") == "1:8: Positional argument follows keyword argument.\n");
  CHECK(errors("f(**a, b)\n") == "1:8: Positional argument follows keyword argument unpacking.\n");
  CHECK(errors("f(**a, *b)\n") == "1:8: Iterable argument unpacking follows keyword argument unpacking.\n");
  CHECK(errors("f(a.b=1)\n") == "1:3: Expression cannot contain assignment, perhaps you meant '=='?\n");
  CHECK(errors("f(True=1)\n") == "1:3: Cannot assign to True.\n");
  CHECK(errors("f(x for x in y, 1)\n") == "1:3: Generator expression must be parenthesized.\n");
  CHECK(errors("def f(a=1, b):\n  pass\n") == "1:12: Non-default argument follows default argument.\n");
  CHECK(errors("def f(a, b, a):\n  pass\n") == "1:13: Duplicate argument 'a' in function definition.\n");
  CHECK(errors("def f(a, *, **a): pass\n") == "1:15: Duplicate argument 'a' in function definition.\n");
  CHECK(errors("lambda a, a: 1\n") == "1:11: Duplicate argument 'a' in function definition.\n");
  CHECK(errors("def f(*, **k): pass\n") == "1:7: Named arguments must follow bare *.\n");
  CHECK(errors("def f(*a, *b): pass\n") == "1:11: * argument may appear only once.\n");
  CHECK(errors("def f(**a, b): pass\n") == "1:12: Arguments cannot follow var-keyword argument.\n");
  CHECK(errors("try:\n    pass\nexcept:\n    pass\nexcept E:\n    pass\n") == "3:1: Default 'except:' must be last.\n");
}

TEST_CASE("errors: statements in the wrong place") {
  CHECK(errors("return 1\n") == "1:1: 'return' outside function.\n");
  CHECK(errors("class A:\n  return 1\n") == "2:3: 'return' outside function.\n");
  CHECK(errors("def f(x):\n  return\nreturn\n") == "3:1: 'return' outside function.\n");
  CHECK(errors("break\n") == "1:1: 'break' outside loop.\n");
  CHECK(errors("while x:\n  def f():\n    break\n") == "3:5: 'break' outside loop.\n");
  CHECK(errors("while x:\n  pass\nelse:\n  break\n") == "4:3: 'break' outside loop.\n");
  CHECK(errors("continue\n") == "1:1: 'continue' not properly in loop.\n");
  CHECK(errors("for x in y:\n  class A:\n    continue\n") == "3:5: 'continue' not properly in loop.\n");
  CHECK(errors("nonlocal x\n") == "1:1: 'nonlocal' declaration not allowed at module level.\n");
  CHECK(errors("def f():\n    def g():\n        nonlocal y\n        y = 1\n") ==
        "3:9: No binding for nonlocal 'y' found.\n");
  CHECK(errors("def f():\n    global y\n    def g():\n        nonlocal y\n") ==
        "4:9: No binding for nonlocal 'y' found.\n");
  CHECK(errors("def f(a):\n    for b, *c in d:\n        pass\n    class C:\n        def m(self):\n"
               "            nonlocal a, b, c\n    def g():\n        nonlocal a\n        def h():\n"
               "            nonlocal a\n") == "");
  CHECK(errors("def f():\n    from m import *\n") == "2:19: 'import *' only allowed at module level.\n");
  CHECK(errors("for x in y:\n  if x:\n    break\n  continue\n") == "");
}

TEST_CASE("errors: what MSL leaves out of Python is named") {
  CHECK(errors("with open(f) as g:\n  pass\n") == "1:1: 'with' statements are not supported in MSL.\n");
  CHECK(errors("def f():\n  yield 1\n") == "2:3: 'yield' is not supported in MSL.\n");
  CHECK(errors("def f():\n  x = yield\n") == "2:7: 'yield' is not supported in MSL.\n");
  CHECK(errors("async def f():\n  pass\n") == "1:1: 'async' is not supported in MSL.\n");
  CHECK(errors("x = await y\n") == "1:5: 'await' is not supported in MSL.\n");
  CHECK(errors("class A(B, C):\n  pass\n") == "1:12: Multiple inheritance is not supported in MSL.\n");
  CHECK(errors("class A(metaclass=M):\n  pass\n") ==
        "1:9: Class keyword arguments (such as 'metaclass=') are not supported in MSL.\n");
  CHECK(errors("if (n := 10) > 5:\n  pass\n") == "1:7: Assignment expressions (':=') are not supported in MSL.\n");
  CHECK(errors("match x:\n  case 1:\n    pass\n  case _:\n    y = 1\n") ==
        "1:1: 'match' statements are not supported in MSL.\n");
  CHECK(errors("from . import x\n") == "1:1: Relative imports are not supported in MSL.\n");
  // `match` is still an ordinary name.
  CHECK(errors("match = re.match(p, s)\nmatch.group(0)\n") == "");
  // The help line says what to do instead.
  auto r = msl::parse_module(msl::test::source("with a:\n  pass\n"));
  REQUIRE(r.errors.size() == 1);
  CHECK(msl::format_diagnostic(r.errors[0]) ==
        "test.msl:1:1: error: 'with' statements are not supported in MSL.\n"
        "    with a:\n"
        "    ^^^^^^^\n"
        "help: open and close the resource explicitly (try/finally)\n");
}

TEST_CASE("errors: literals") {
  CHECK(errors("x = 9223372036854775807\n") == "");
  CHECK(errors("x = -9223372036854775808\n") == "");
  CHECK(errors("x = 9223372036854775808\n") == "1:5: Integer literal too large.\n");
  CHECK(errors("x = 0xffffffffffffffffff\n") == "1:5: Integer literal too large.\n");
  CHECK(errors("x = --9223372036854775808\n") == "");  // -(-9223372036854775808): overflow is a runtime matter
}

TEST_CASE("errors: several independent errors, each reported once") {
  std::string text =
      "import os\n"
      "x = (1 +)\n"         // 2
      "def f(a):\n"
      "    y = a\n"
      "    return y +\n"     // 5
      "\n"
      "for i in range(3):\n"
      "    print(i)\n"
      "z = f(1 2)\n";       // 9
  CHECK(errors(text) ==
        "2:9: Expected an expression after '+'.\n"
        "5:15: Expected an expression after '+'.\n"
        "9:9: Invalid syntax. Perhaps you forgot a comma?\n");
}

TEST_CASE("errors: no cascades") {
  // An error in a header: the block is still parsed, nothing else reported.
  CHECK(errors("def f(x y):\n    return x\nz = 1\n") == "1:9: Invalid syntax. Perhaps you forgot a comma?\n");
  // A line that opens a block but is not a statement: the block is skipped.
  CHECK(errors("fi x:\n    q = = 1\nw = 1 +\n") ==
        "1:4: Invalid syntax at 'x'.\n"
        "3:8: Expected an expression after '+'.\n");
  CHECK(errors("x = 1\nelse:\n  y = 2\n  z = 3\nw = (\n") ==
        "2:1: 'else' does not follow an 'if', 'for', 'while' or 'try' block at the same indentation.\n"
        "5:5: '(' was never closed.\n");
  // Errors in nested blocks, and statements after them, all found.
  CHECK(errors("def f():\n    x = 1 +\n    y = 2\n    z = 3 3\nw = 1\nv = )\n") ==
        "2:12: Expected an expression after '+'.\n"
        "4:11: Invalid syntax at '3'.\n"
        "6:5: Unmatched ')'.\n");
  // At most one per line, the lexer's first.
  CHECK(errors("x = $ + + )\n") == "1:5: Invalid character '$' (U+0024).\n");
}

TEST_CASE("errors: the module is null and errors are in source order") {
  auto r = msl::parse_module(msl::test::source("a = (\nb = 1 +\n"));
  CHECK(r.module == nullptr);
  CHECK(msl::test::describe(r.errors) == "1:5: '(' was never closed.\n");
  auto ok = msl::parse_module(msl::test::source("a = 1\n"));
  CHECK(ok.errors.empty());
  REQUIRE(ok.module != nullptr);
  CHECK(ok.module->body.size() == 1);
}

namespace {
std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}
}  // namespace

TEST_CASE("deep nesting gives an error, never a crash") {
  const int n = 100000;
  const std::string deep = "1:5: Expression too deeply nested.\n";
  CHECK(errors("x = " + repeat("(", n) + "1" + repeat(")", n) + "\n") == "1:205: Too many nested parentheses.\n");
  CHECK(errors("x = " + repeat("[", n) + repeat("]", n) + "\n") == "1:205: Too many nested parentheses.\n");
  CHECK(errors("x = " + repeat("f(", n) + repeat(")", n) + "\n") == "1:406: Too many nested parentheses.\n");
  CHECK(errors("x = a" + repeat(".b", n) + "\n") == deep);
  CHECK(errors("x = f" + repeat("()", n) + "\n") == deep);
  CHECK(errors("x = a" + repeat("[0]", n) + "\n") == deep);
  CHECK(errors("x = a" + repeat(" + a", n) + "\n") == deep);
  CHECK(errors("x = a" + repeat(" and a", n) + "\n") == "");  // n-ary: one BoolOp node
  CHECK(errors("x = a" + repeat(" < a", n) + "\n") == "");    // one Compare node
  CHECK(errors("x = [" + repeat("1, ", n) + "]\n") == "");
  // Recursive forms are stopped by the parser's rule-depth limit.
  for (std::string chain : {"- ", "not ", "~", "a if b else ", "lambda: ", "x**"}) {
    std::string e = errors("x = " + repeat(chain, n) + "1\n");
    CHECK_MESSAGE(e.find("Expression too deeply nested.") != std::string::npos, chain);
  }
  // Nested blocks.
  std::string blocks;
  for (int i = 0; i < 300; ++i) blocks += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  blocks += std::string(300, ' ') + "pass\n";
  CHECK(errors(blocks) == "202:202: IndentationError: Too many levels of indentation.\n");
}

TEST_CASE("nesting within the limits parses") {
  CHECK(errors("x = " + repeat("(", 199) + "1" + repeat(")", 199) + "\n") == "");
  CHECK(errors("x = " + repeat("[", 199) + repeat("]", 199) + "\n") == "");
  CHECK(errors("x = " + repeat("f(", 199) + repeat(")", 199) + "\n") == "");
  CHECK(errors("x = " + repeat("a[", 199) + "0" + repeat("]", 199) + "\n") == "");
  CHECK(errors("x = " + repeat("-(", 199) + "1" + repeat(")", 199) + "\n") == "");
  CHECK(errors("x = " + repeat("- ", 1500) + "1\n") == "");
  CHECK(errors("x = a" + repeat(" + a", 1500) + "\n") == "");
  std::string blocks;
  for (int i = 0; i < 199; ++i) blocks += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  blocks += std::string(199, ' ') + "pass\n";
  CHECK(errors(blocks) == "");
}

TEST_CASE("garbage input never crashes") {
  const char* inputs[] = {
      "", "\n", "\n\n\n", "   ", "\t", "#", "\\", "\\\n", "'", "\"\"\"", "f'{", "f'{x!", "f'{x:{", "((((", "))))",
      "]]]", "if", "if:", "def", "def f(", "class", "@", "@x\n", "lambda", "x = lambda *: 1", "import", "from",
      "from . import", "\x01\x02\x03", "x = 1\n  \n\t\n    y", "if x:\n\tif y:\n  z", "else", ":", "=", "**", "..",
      "x[::::]", "x[", "a.b.", "f(,)", "(,)", "[,]", "{:}", "{**}", "0x", "1e", "1.e+", "'\\", "u'", "rb", "br'x'",
      "async", "await", "yield from x", "not", "is not", "not in", "a if", "@=", "->", "\r", "\r\n\r\n", "\f",
      "x = (1,\n\n\n", "\xef\xbb\xbf", "def f(*, a, *): pass", "class A(): pass", "print(f'{x=!r:^10}')",
  };
  for (const char* text : inputs) {
    auto r = msl::parse_module(msl::test::source(text));
    CHECK_MESSAGE((r.module != nullptr) == r.errors.empty(), text);
    msl::interactive_input_status(text);
    std::vector<msl::Diagnostic> errs;
    msl::dump_tokens(msl::test::source(text), errs);
    for (const msl::Diagnostic& d : r.errors) {
      CHECK_FALSE(d.message.empty());
      CHECK_FALSE(msl::format_diagnostic(d).empty());
    }
  }
  // Random bytes (a fixed sequence): an error or a module, never a crash.
  uint32_t seed = 12345;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    int len = static_cast<int>(seed % 200);
    for (int i = 0; i < len; ++i) {
      seed = seed * 1103515245 + 12345;
      static const char alphabet[] = "()[]{}:;,.=+-*/%@&|^~<>!'\"\\#\n\n    \tabcxyzif else def class for in 0123f\"{}";
      text += alphabet[(seed >> 16) % (sizeof alphabet - 1)];
    }
    auto r = msl::parse_module(msl::test::source(text));
    CHECK((r.module != nullptr) == r.errors.empty());
  }
}
