// f-strings: literal parts, replacement fields parsed by a nested parse at
// their real position, conversions, format specs with nested fields.
#include <doctest/doctest.h>

#include "lang_test_util.h"

using msl::test::ast;
using msl::test::errors;
using msl::test::expr;

TEST_CASE("f-strings") {
  // f-string: field, conversion, spec
  CHECK(expr("f'a{b!r:>10}c{d:.4f}'") ==
        "FString 1:1\n"
        "  Literal 'a'\n"
        "  Field !r\n"
        "    Name 'b' 1:5\n"
        "    Spec\n"
        "      Literal '>10'\n"
        "  Literal 'c'\n"
        "  Field\n"
        "    Name 'd' 1:15\n"
        "    Spec\n"
        "      Literal '.4f'\n");
  // f-string: nested spec field
  CHECK(expr("f'{x:>{w}}'") ==
        "FString 1:1\n"
        "  Field\n"
        "    Name 'x' 1:4\n"
        "    Spec\n"
        "      Literal '>'\n"
        "      Field\n"
        "        Name 'w' 1:8\n");
  // f-string: escaped braces and escapes
  CHECK(expr("f'{{a}}\\n{b}}}'") ==
        "FString 1:1\n"
        "  Literal '{a}\\n'\n"
        "  Field\n"
        "    Name 'b' 1:11\n"
        "  Literal '}'\n");
  // f-string: self-documenting field
  CHECK(expr("f'{x = }{y=!s}'") ==
        "FString 1:1\n"
        "  Literal 'x = '\n"
        "  Field !r\n"
        "    Name 'x' 1:4\n"
        "  Literal 'y='\n"
        "  Field !s\n"
        "    Name 'y' 1:10\n");
  // f-string: expressions with brackets, strings and comparisons
  CHECK(expr("f'{d[\"k\"]}{f(a, b)!a}{a != b}{[i for i in x]}'") ==
        "FString 1:1\n"
        "  Field\n"
        "    Subscript 1:4\n"
        "      Name 'd' 1:4\n"
        "      Constant 'k' 1:6\n"
        "  Field !a\n"
        "    Call 1:12\n"
        "      Name 'f' 1:12\n"
        "      Name 'a' 1:14\n"
        "      Name 'b' 1:17\n"
        "  Field\n"
        "    Compare '!=' 1:23\n"
        "      Name 'a' 1:23\n"
        "      Name 'b' 1:28\n"
        "  Field\n"
        "    ListComp 1:31\n"
        "      Name 'i' 1:32\n"
        "      Comprehension\n"
        "        Name 'i' 1:38\n"
        "        Name 'x' 1:43\n");
  // f-string: concatenated with plain literals
  CHECK(expr("'a' f'{b}' 'c'") ==
        "FString 1:1\n"
        "  Literal 'a'\n"
        "  Field\n"
        "    Name 'b' 1:8\n"
        "  Literal 'c'\n");
  // f-string: raw
  CHECK(expr("rf'\\n{x}'") ==
        "FString 1:1\n"
        "  Literal '\\\\n'\n"
        "  Field\n"
        "    Name 'x' 1:7\n");
  // f-string: triple-quoted, spans on later lines
  CHECK(ast("s = f'''a\n"
        "  {x +\n"
        "   y}'''\n") ==
        "Module\n"
        "  Assign 1:1\n"
        "    Name 's' 1:1\n"
        "    FString 1:5\n"
        "      Literal 'a\\n  '\n"
        "      Field\n"
        "        Binary '+' 2:4\n"
        "          Name 'x' 2:4\n"
        "          Name 'y' 3:4\n");
  // f-string: nested f-string
  CHECK(expr("f\"{f'{x}'}\"") ==
        "FString 1:1\n"
        "  Field\n"
        "    FString 1:4\n"
        "      Field\n"
        "        Name 'x' 1:7\n");
}

TEST_CASE("f-strings: errors point into the literal") {
  CHECK(errors("x = f'{}'\n") == "1:7: Empty expression not allowed in f-string.\n");
  CHECK(errors("x = f'{a'\n") == "1:7: Expecting '}' in f-string.\n");
  CHECK(errors("x = f'{(}'\n") == "1:7: Expecting '}' in f-string.\n");
  CHECK(errors("x = f'a}b'\n") == "1:8: Single '}' is not allowed in an f-string.\n");
  CHECK(errors("x = f'{a!x}'\n") == "1:9: Invalid conversion character in f-string: expected 'r', 's' or 'a'.\n");
  CHECK(errors("x = f'{a:{b:{c}}}'\n") == "1:13: F-string expressions nested too deeply.\n");
  // The field's expression is parsed where it stands.
  CHECK(errors("x = f'{a +}'\n") == "1:11: Expected an expression after '+'.\n");
  CHECK(errors("x = 1\ny = f'''\n  {a b}'''\n") == "3:6: Invalid syntax at 'b'.\n");
  // And errors in it do not hide errors elsewhere.
  CHECK(errors("x = f'{a +}'\ny = 1 +\n") ==
        "1:11: Expected an expression after '+'.\n"
        "2:8: Expected an expression after '+'.\n");
}

TEST_CASE("strings: escape errors") {
  CHECK(errors("x = '\\x4'\n") == "1:6: Invalid escape sequence '\\x': expected 2 hex digits.\n");
  CHECK(errors("x = 'ab\\u12'\n") == "1:8: Invalid escape sequence '\\u': expected 4 hex digits.\n");
  CHECK(errors("x = '\\U00110000'\n") == "1:6: Invalid escape sequence '\\U00110000': not a Unicode code point.\n");
  CHECK(errors("x = '\\ud800'\n") ==
        "1:6: Invalid escape sequence '\\ud800': surrogate code points cannot be encoded.\n");
  CHECK(errors("x = '\\N{DASH}'\n") == "1:6: '\\N{...}' escapes are not supported in MSL.\n");
  CHECK(errors("x = f'{a}\\x'\n") == "1:10: Invalid escape sequence '\\x': expected 2 hex digits.\n");
}
