// The parser and AST builder on every statement and expression form: the
// exact `msl --emit=ast` dump (format documented in lang/ast_dump.cpp).
#include <doctest/doctest.h>

#include "lang_test_util.h"

using msl::test::ast;
using msl::test::expr;

TEST_CASE("parser: operator precedence") {
  // precedence: unary minus and power
  CHECK(ast("x = -2**2\n") ==
        "Module\n"
        "  Assign 1:1\n"
        "    Name 'x' 1:1\n"
        "    Unary '-' 1:5\n"
        "      Binary '**' 1:6\n"
        "        Constant 2 1:6\n"
        "        Constant 2 1:9\n");
  // power is right-associative, unary on its right
  CHECK(ast("x = 2**-1**2\n") ==
        "Module\n"
        "  Assign 1:1\n"
        "    Name 'x' 1:1\n"
        "    Binary '**' 1:5\n"
        "      Constant 2 1:5\n"
        "      Unary '-' 1:8\n"
        "        Binary '**' 1:9\n"
        "          Constant 1 1:9\n"
        "          Constant 2 1:12\n");
  // chained comparison
  CHECK(ast("a < b < c\n") ==
        "Module\n"
        "  Expr 1:1\n"
        "    Compare '<' '<' 1:1\n"
        "      Name 'a' 1:1\n"
        "      Name 'b' 1:5\n"
        "      Name 'c' 1:9\n");
  // not binds looser than ==
  CHECK(ast("not a == b\n") ==
        "Module\n"
        "  Expr 1:1\n"
        "    Unary 'not' 1:1\n"
        "      Compare '==' 1:5\n"
        "        Name 'a' 1:5\n"
        "        Name 'b' 1:10\n");
  // not in / is not
  CHECK(ast("a not in b is not c\n") ==
        "Module\n"
        "  Expr 1:1\n"
        "    Compare 'not in' 'is not' 1:1\n"
        "      Name 'a' 1:1\n"
        "      Name 'b' 1:10\n"
        "      Name 'c' 1:19\n");
  // bitwise levels
  CHECK(ast("a | b ^ c & d << e + f * g\n") ==
        "Module\n"
        "  Expr 1:1\n"
        "    Binary '|' 1:1\n"
        "      Name 'a' 1:1\n"
        "      Binary '^' 1:5\n"
        "        Name 'b' 1:5\n"
        "        Binary '&' 1:9\n"
        "          Name 'c' 1:9\n"
        "          Binary '<<' 1:13\n"
        "            Name 'd' 1:13\n"
        "            Binary '+' 1:18\n"
        "              Name 'e' 1:18\n"
        "              Binary '*' 1:22\n"
        "                Name 'f' 1:22\n"
        "                Name 'g' 1:26\n");
  // arith levels
  CHECK(ast("a + b * c - d / e // f % g @ h\n") ==
        "Module\n"
        "  Expr 1:1\n"
        "    Binary '-' 1:1\n"
        "      Binary '+' 1:1\n"
        "        Name 'a' 1:1\n"
        "        Binary '*' 1:5\n"
        "          Name 'b' 1:5\n"
        "          Name 'c' 1:9\n"
        "      Binary '@' 1:13\n"
        "        Binary '%' 1:13\n"
        "          Binary '//' 1:13\n"
        "            Binary '/' 1:13\n"
        "              Name 'd' 1:13\n"
        "              Name 'e' 1:17\n"
        "            Name 'f' 1:22\n"
        "          Name 'g' 1:26\n"
        "        Name 'h' 1:30\n");
  // boolean
  CHECK(ast("a or b and not c or d\n") ==
        "Module\n"
        "  Expr 1:1\n"
        "    BoolOp 'or' 1:1\n"
        "      Name 'a' 1:1\n"
        "      BoolOp 'and' 1:6\n"
        "        Name 'b' 1:6\n"
        "        Unary 'not' 1:12\n"
        "          Name 'c' 1:16\n"
        "      Name 'd' 1:21\n");
  // ternary and lambda
  CHECK(ast("f = lambda x, *, k=1: x if k else -x\n") ==
        "Module\n"
        "  Assign 1:1\n"
        "    Name 'f' 1:1\n"
        "    Lambda 1:5\n"
        "      Param 'x' 1:12\n"
        "      KwOnlyParam 'k' 1:18\n"
        "        Default\n"
        "          Constant 1 1:20\n"
        "      IfExp 1:23\n"
        "        Name 'k' 1:28\n"
        "        Name 'x' 1:23\n"
        "        Unary '-' 1:35\n"
        "          Name 'x' 1:36\n");
  // nested ternary
  CHECK(ast("a if b else c if d else e\n") ==
        "Module\n"
        "  Expr 1:1\n"
        "    IfExp 1:1\n"
        "      Name 'b' 1:6\n"
        "      Name 'a' 1:1\n"
        "      IfExp 1:13\n"
        "        Name 'd' 1:18\n"
        "        Name 'c' 1:13\n"
        "        Name 'e' 1:25\n");
}

TEST_CASE("parser: statements") {
  // assignment chain with unpacking
  CHECK(ast("a, *b = [c, d] = x.y[0] = 1, 2\n") ==
        "Module\n"
        "  Assign 1:1\n"
        "    Tuple 1:1\n"
        "      Name 'a' 1:1\n"
        "      Starred 1:4\n"
        "        Name 'b' 1:5\n"
        "    List 1:9\n"
        "      Name 'c' 1:10\n"
        "      Name 'd' 1:13\n"
        "    Subscript 1:18\n"
        "      Attribute 'y' 1:18\n"
        "        Name 'x' 1:18\n"
        "      Constant 0 1:22\n"
        "    Tuple 1:27\n"
        "      Constant 1 1:27\n"
        "      Constant 2 1:30\n");
  // augmented assignment, all operators
  CHECK(ast("x += 1; x -= 1; x *= 1; x /= 1; x //= 1; x %= 1; x **= 1; x @= 1; x &= 1; x |= 1; x ^= 1; x <<= 1; x >>= 1\n") ==
        "Module\n"
        "  AugAssign '+=' 1:1\n"
        "    Name 'x' 1:1\n"
        "    Constant 1 1:6\n"
        "  AugAssign '-=' 1:9\n"
        "    Name 'x' 1:9\n"
        "    Constant 1 1:14\n"
        "  AugAssign '*=' 1:17\n"
        "    Name 'x' 1:17\n"
        "    Constant 1 1:22\n"
        "  AugAssign '/=' 1:25\n"
        "    Name 'x' 1:25\n"
        "    Constant 1 1:30\n"
        "  AugAssign '//=' 1:33\n"
        "    Name 'x' 1:33\n"
        "    Constant 1 1:39\n"
        "  AugAssign '%=' 1:42\n"
        "    Name 'x' 1:42\n"
        "    Constant 1 1:47\n"
        "  AugAssign '**=' 1:50\n"
        "    Name 'x' 1:50\n"
        "    Constant 1 1:56\n"
        "  AugAssign '@=' 1:59\n"
        "    Name 'x' 1:59\n"
        "    Constant 1 1:64\n"
        "  AugAssign '&=' 1:67\n"
        "    Name 'x' 1:67\n"
        "    Constant 1 1:72\n"
        "  AugAssign '|=' 1:75\n"
        "    Name 'x' 1:75\n"
        "    Constant 1 1:80\n"
        "  AugAssign '^=' 1:83\n"
        "    Name 'x' 1:83\n"
        "    Constant 1 1:88\n"
        "  AugAssign '<<=' 1:91\n"
        "    Name 'x' 1:91\n"
        "    Constant 1 1:97\n"
        "  AugAssign '>>=' 1:100\n"
        "    Name 'x' 1:100\n"
        "    Constant 1 1:106\n");
  // annotated assignment
  CHECK(ast("x: int = 1\n"
        "y: List[int]\n"
        "self.z: float = 0.5\n") ==
        "Module\n"
        "  AnnAssign 1:1\n"
        "    Name 'x' 1:1\n"
        "    Name 'int' 1:4\n"
        "    Constant 1 1:10\n"
        "  AnnAssign 2:1\n"
        "    Name 'y' 2:1\n"
        "    Subscript 2:4\n"
        "      Name 'List' 2:4\n"
        "      Name 'int' 2:9\n"
        "  AnnAssign 3:1\n"
        "    Attribute 'z' 3:1\n"
        "      Name 'self' 3:1\n"
        "    Name 'float' 3:9\n"
        "    Constant 0.5 3:17\n");
  // simple statements
  CHECK(ast("pass\n"
        "del a, b[0], c.d\n"
        "global g, h\n"
        "assert x, 'msg'\n"
        "assert y\n") ==
        "Module\n"
        "  Pass 1:1\n"
        "  Del 2:1\n"
        "    Name 'a' 2:5\n"
        "    Subscript 2:8\n"
        "      Name 'b' 2:8\n"
        "      Constant 0 2:10\n"
        "    Attribute 'd' 2:14\n"
        "      Name 'c' 2:14\n"
        "  Global 'g' 'h' 3:1\n"
        "  Assert 4:1\n"
        "    Name 'x' 4:8\n"
        "    Constant 'msg' 4:11\n"
        "  Assert 5:1\n"
        "    Name 'y' 5:8\n");
  // raise forms
  CHECK(ast("def f():\n"
        "    raise\n"
        "    raise E\n"
        "    raise E('m') from e\n"
        "    return\n"
        "    return a, *b\n") ==
        "Module\n"
        "  FunctionDef 'f' 1:1\n"
        "    Body\n"
        "      Raise 2:5\n"
        "      Raise 3:5\n"
        "        Name 'E' 3:11\n"
        "      Raise 4:5\n"
        "        Call 4:11\n"
        "          Name 'E' 4:11\n"
        "          Constant 'm' 4:13\n"
        "        Name 'e' 4:23\n"
        "      Return 5:5\n"
        "      Return 6:5\n"
        "        Tuple 6:12\n"
        "          Name 'a' 6:12\n"
        "          Starred 6:15\n"
        "            Name 'b' 6:16\n");
  // loops with else, break, continue
  CHECK(ast("while x:\n"
        "    break\n"
        "else:\n"
        "    pass\n"
        "for i, (j, *k) in items:\n"
        "    continue\n"
        "else:\n"
        "    pass\n") ==
        "Module\n"
        "  While 1:1\n"
        "    Name 'x' 1:7\n"
        "    Body\n"
        "      Break 2:5\n"
        "    OrElse\n"
        "      Pass 4:5\n"
        "  For 5:1\n"
        "    Tuple 5:5\n"
        "      Name 'i' 5:5\n"
        "      Tuple 5:8\n"
        "        Name 'j' 5:9\n"
        "        Starred 5:12\n"
        "          Name 'k' 5:13\n"
        "    Name 'items' 5:19\n"
        "    Body\n"
        "      Continue 6:5\n"
        "    OrElse\n"
        "      Pass 8:5\n");
  // if / elif / else
  CHECK(ast("if a:\n"
        "    x\n"
        "elif b:\n"
        "    y\n"
        "elif c:\n"
        "    z\n"
        "else:\n"
        "    w\n") ==
        "Module\n"
        "  If 1:1\n"
        "    Name 'a' 1:4\n"
        "    Body\n"
        "      Expr 2:5\n"
        "        Name 'x' 2:5\n"
        "    OrElse\n"
        "      If 3:1\n"
        "        Name 'b' 3:6\n"
        "        Body\n"
        "          Expr 4:5\n"
        "            Name 'y' 4:5\n"
        "        OrElse\n"
        "          If 5:1\n"
        "            Name 'c' 5:6\n"
        "            Body\n"
        "              Expr 6:5\n"
        "                Name 'z' 6:5\n"
        "            OrElse\n"
        "              Expr 8:5\n"
        "                Name 'w' 8:5\n");
  // try / except / else / finally
  CHECK(ast("try:\n"
        "    a\n"
        "except (E, F) as e:\n"
        "    b\n"
        "except G:\n"
        "    c\n"
        "except:\n"
        "    d\n"
        "else:\n"
        "    e\n"
        "finally:\n"
        "    f\n"
        "try:\n"
        "    g\n"
        "finally:\n"
        "    h\n") ==
        "Module\n"
        "  Try 1:1\n"
        "    Body\n"
        "      Expr 2:5\n"
        "        Name 'a' 2:5\n"
        "    ExceptHandler 'e' 3:1\n"
        "      Tuple 3:8\n"
        "        Name 'E' 3:9\n"
        "        Name 'F' 3:12\n"
        "      Body\n"
        "        Expr 4:5\n"
        "          Name 'b' 4:5\n"
        "    ExceptHandler 5:1\n"
        "      Name 'G' 5:8\n"
        "      Body\n"
        "        Expr 6:5\n"
        "          Name 'c' 6:5\n"
        "    ExceptHandler 7:1\n"
        "      Body\n"
        "        Expr 8:5\n"
        "          Name 'd' 8:5\n"
        "    OrElse\n"
        "      Expr 10:5\n"
        "        Name 'e' 10:5\n"
        "    Finally\n"
        "      Expr 12:5\n"
        "        Name 'f' 12:5\n"
        "  Try 13:1\n"
        "    Body\n"
        "      Expr 14:5\n"
        "        Name 'g' 14:5\n"
        "    Finally\n"
        "      Expr 16:5\n"
        "        Name 'h' 16:5\n");
  // def with every kind of parameter
  CHECK(ast("@dec\n"
        "@mod.dec(1)\n"
        "def f(a, b: int = 1, *args: str, c, d=2, **kw) -> bool:\n"
        "    nonlocal_ = 1\n") ==
        "Module\n"
        "  FunctionDef 'f' 3:1\n"
        "    Decorator\n"
        "      Name 'dec' 1:2\n"
        "    Decorator\n"
        "      Call 2:2\n"
        "        Attribute 'dec' 2:2\n"
        "          Name 'mod' 2:2\n"
        "        Constant 1 2:10\n"
        "    Param 'a' 3:7\n"
        "    Param 'b' 3:10\n"
        "      Annotation\n"
        "        Name 'int' 3:13\n"
        "      Default\n"
        "        Constant 1 3:19\n"
        "    VarArg 'args' 3:23\n"
        "      Annotation\n"
        "        Name 'str' 3:29\n"
        "    KwOnlyParam 'c' 3:34\n"
        "    KwOnlyParam 'd' 3:37\n"
        "      Default\n"
        "        Constant 2 3:39\n"
        "    KwArg 'kw' 3:44\n"
        "    Returns\n"
        "      Name 'bool' 3:51\n"
        "    Body\n"
        "      Assign 4:5\n"
        "        Name 'nonlocal_' 4:5\n"
        "        Constant 1 4:17\n");
  // def with bare star
  CHECK(ast("def g(a, *, b):\n"
        "    def h():\n"
        "        nonlocal a\n"
        "    return h\n") ==
        "Module\n"
        "  FunctionDef 'g' 1:1\n"
        "    Param 'a' 1:7\n"
        "    KwOnlyParam 'b' 1:13\n"
        "    Body\n"
        "      FunctionDef 'h' 2:5\n"
        "        Body\n"
        "          Nonlocal 'a' 3:9\n"
        "      Return 4:5\n"
        "        Name 'h' 4:12\n");
  // class with and without base
  CHECK(ast("class A:\n"
        "    x = 1\n"
        "class B(A):\n"
        "    def m(self):\n"
        "        super().m()\n"
        "        super(B, self).m()\n") ==
        "Module\n"
        "  ClassDef 'A' 1:1\n"
        "    Body\n"
        "      Assign 2:5\n"
        "        Name 'x' 2:5\n"
        "        Constant 1 2:9\n"
        "  ClassDef 'B' 3:1\n"
        "    Base\n"
        "      Name 'A' 3:9\n"
        "    Body\n"
        "      FunctionDef 'm' 4:5\n"
        "        Param 'self' 4:11\n"
        "        Body\n"
        "          Expr 5:9\n"
        "            Call 5:9\n"
        "              Attribute 'm' 5:9\n"
        "                Call 5:9\n"
        "                  Name 'super' 5:9\n"
        "          Expr 6:9\n"
        "            Call 6:9\n"
        "              Attribute 'm' 6:9\n"
        "                Call 6:9\n"
        "                  Name 'super' 6:9\n"
        "                  Name 'B' 6:15\n"
        "                  Name 'self' 6:18\n");
  // imports
  CHECK(ast("import a.b as c, d\n"
        "from a.b import x, y as z\n"
        "from a import (x,\n"
        "    y,)\n"
        "from m import *\n") ==
        "Module\n"
        "  Import 1:1\n"
        "    Alias 'a.b' as 'c' 1:8\n"
        "    Alias 'd' 1:18\n"
        "  ImportFrom 'a.b' 2:1\n"
        "    Alias 'x' 2:17\n"
        "    Alias 'y' as 'z' 2:20\n"
        "  ImportFrom 'a' 3:1\n"
        "    Alias 'x' 3:16\n"
        "    Alias 'y' 4:5\n"
        "  ImportFrom 'm' 5:1\n"
        "    Alias '*' 5:15\n");
  // one-line suites and semicolons
  CHECK(ast("if x: y = 1; z = 2\n"
        "while y: pass\n"
        "def f(): return 1\n"
        "class C: pass\n") ==
        "Module\n"
        "  If 1:1\n"
        "    Name 'x' 1:4\n"
        "    Body\n"
        "      Assign 1:7\n"
        "        Name 'y' 1:7\n"
        "        Constant 1 1:11\n"
        "      Assign 1:14\n"
        "        Name 'z' 1:14\n"
        "        Constant 2 1:18\n"
        "  While 2:1\n"
        "    Name 'y' 2:7\n"
        "    Body\n"
        "      Pass 2:10\n"
        "  FunctionDef 'f' 3:1\n"
        "    Body\n"
        "      Return 3:10\n"
        "        Constant 1 3:17\n"
        "  ClassDef 'C' 4:1\n"
        "    Body\n"
        "      Pass 4:10\n");
}

TEST_CASE("parser: primaries, displays and literals") {
  // attribute, call, subscript chain
  CHECK(expr("a.b(c, *d, k=e, **f)[g].h") ==
        "Attribute 'h' 1:1\n"
        "  Subscript 1:1\n"
        "    Call 1:1\n"
        "      Attribute 'b' 1:1\n"
        "        Name 'a' 1:1\n"
        "      Name 'c' 1:5\n"
        "      StarArg 1:8\n"
        "        Name 'd' 1:9\n"
        "      Keyword 'k' 1:12\n"
        "        Name 'e' 1:14\n"
        "      DoubleStarArg 1:17\n"
        "        Name 'f' 1:19\n"
        "    Name 'g' 1:22\n");
  // slices
  CHECK(expr("x[:, 0:2, ::-1]") ==
        "Subscript 1:1\n"
        "  Name 'x' 1:1\n"
        "  Tuple 1:3\n"
        "    Slice 1:3\n"
        "      <none>\n"
        "      <none>\n"
        "      <none>\n"
        "    Slice 1:6\n"
        "      Constant 0 1:6\n"
        "      Constant 2 1:8\n"
        "      <none>\n"
        "    Slice 1:11\n"
        "      <none>\n"
        "      <none>\n"
        "      Unary '-' 1:13\n"
        "        Constant 1 1:14\n");
  // ellipsis and None in an index
  CHECK(expr("x[..., None]") ==
        "Subscript 1:1\n"
        "  Name 'x' 1:1\n"
        "  Tuple 1:3\n"
        "    Constant ... 1:3\n"
        "    Constant None 1:8\n");
  // slice and index
  CHECK(expr("x[1:2, 3]") ==
        "Subscript 1:1\n"
        "  Name 'x' 1:1\n"
        "  Tuple 1:3\n"
        "    Slice 1:3\n"
        "      Constant 1 1:3\n"
        "      Constant 2 1:5\n"
        "      <none>\n"
        "    Constant 3 1:8\n");
  // single slice with step
  CHECK(expr("x[a:b:c]") ==
        "Subscript 1:1\n"
        "  Name 'x' 1:1\n"
        "  Slice 1:3\n"
        "    Name 'a' 1:3\n"
        "    Name 'b' 1:5\n"
        "    Name 'c' 1:7\n");
  // tuple index with trailing comma
  CHECK(expr("x[i,]") ==
        "Subscript 1:1\n"
        "  Name 'x' 1:1\n"
        "  Tuple 1:3\n"
        "    Name 'i' 1:3\n");
  // displays
  CHECK(expr("([], [1, *a], (), (1,), {}, {1: 2, **m}, {1, *s})") ==
        "Tuple 1:1\n"
        "  List 1:2\n"
        "  List 1:6\n"
        "    Constant 1 1:7\n"
        "    Starred 1:10\n"
        "      Name 'a' 1:11\n"
        "  Tuple 1:15\n"
        "  Tuple 1:19\n"
        "    Constant 1 1:20\n"
        "  Dict 1:25\n"
        "  Dict 1:29\n"
        "    Constant 1 1:30\n"
        "    Constant 2 1:33\n"
        "    DictUnpack\n"
        "      Name 'm' 1:38\n"
        "  Set 1:42\n"
        "    Constant 1 1:43\n"
        "    Starred 1:46\n"
        "      Name 's' 1:47\n");
  // comprehensions
  CHECK(expr("[x * y for x in xs if x for y in ys if y if y > 1]") ==
        "ListComp 1:1\n"
        "  Binary '*' 1:2\n"
        "    Name 'x' 1:2\n"
        "    Name 'y' 1:6\n"
        "  Comprehension\n"
        "    Name 'x' 1:12\n"
        "    Name 'xs' 1:17\n"
        "    Name 'x' 1:23\n"
        "  Comprehension\n"
        "    Name 'y' 1:29\n"
        "    Name 'ys' 1:34\n"
        "    Name 'y' 1:40\n"
        "    Compare '>' 1:45\n"
        "      Name 'y' 1:45\n"
        "      Constant 1 1:49\n");
  // set and dict comprehensions, generator
  CHECK(expr("({x for x in xs}, {k: v for k, v in d.items()}, (x for x in xs))") ==
        "Tuple 1:1\n"
        "  SetComp 1:2\n"
        "    Name 'x' 1:3\n"
        "    Comprehension\n"
        "      Name 'x' 1:9\n"
        "      Name 'xs' 1:14\n"
        "  DictComp 1:19\n"
        "    Name 'k' 1:20\n"
        "    Name 'v' 1:23\n"
        "    Comprehension\n"
        "      Tuple 1:29\n"
        "        Name 'k' 1:29\n"
        "        Name 'v' 1:32\n"
        "      Call 1:37\n"
        "        Attribute 'items' 1:37\n"
        "          Name 'd' 1:37\n"
        "  GeneratorExp 1:49\n"
        "    Name 'x' 1:50\n"
        "    Comprehension\n"
        "      Name 'x' 1:56\n"
        "      Name 'xs' 1:61\n");
  // generator as the only argument
  CHECK(expr("sum(x for x in xs)") ==
        "Call 1:1\n"
        "  Name 'sum' 1:1\n"
        "  GeneratorExp 1:5\n"
        "    Name 'x' 1:5\n"
        "    Comprehension\n"
        "      Name 'x' 1:11\n"
        "      Name 'xs' 1:16\n");
  // parenthesized expression keeps its own span
  CHECK(expr("(a + b) * c") ==
        "Binary '*' 1:2\n"
        "  Binary '+' 1:2\n"
        "    Name 'a' 1:2\n"
        "    Name 'b' 1:6\n"
        "  Name 'c' 1:11\n");
  // numbers
  CHECK(expr("(0x_ff, 0o17, 0b1_01, 1_000, 1.5, .5, 1., 1e-3, 1_000.5, 1E5, 1e16, 2.5e-7, 9223372036854775807)") ==
        "Tuple 1:1\n"
        "  Constant 255 1:2\n"
        "  Constant 15 1:9\n"
        "  Constant 5 1:15\n"
        "  Constant 1000 1:23\n"
        "  Constant 1.5 1:30\n"
        "  Constant 0.5 1:35\n"
        "  Constant 1.0 1:39\n"
        "  Constant 0.001 1:43\n"
        "  Constant 1000.5 1:49\n"
        "  Constant 100000.0 1:58\n"
        "  Constant 1e+16 1:63\n"
        "  Constant 2.5e-07 1:69\n"
        "  Constant 9223372036854775807 1:77\n");
  // the smallest int
  CHECK(expr("-9223372036854775808") ==
        "Constant -9223372036854775808 1:1\n");
  // constants
  CHECK(expr("(None, True, False, ...)") ==
        "Tuple 1:1\n"
        "  Constant None 1:2\n"
        "  Constant True 1:8\n"
        "  Constant False 1:14\n"
        "  Constant ... 1:21\n");
  // strings: escapes, raw, adjacent literals
  CHECK(expr("'a\\n\\t\\\\\\'\\x41\\u00e9\\U0001F600\\101\\0' r'\\n' \"\"\"x\n"
        "y\"\"\" 'it\\'s'") ==
        "Constant \"a\\n\\t\\\\'Aé😀A\\x00\\\\nx\\nyit's\" 1:1\n");
  // unicode strings and names
  CHECK(expr("数据['标签 é']") ==
        "Subscript 1:1\n"
        "  Name '数据' 1:1\n"
        "  Constant '标签 é' 1:4\n");
  // unknown escapes keep the backslash
  CHECK(expr("'\\d\\w'") ==
        "Constant '\\\\d\\\\w' 1:1\n");
}
