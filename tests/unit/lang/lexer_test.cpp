// IndentLexer: NEWLINE/INDENT/DEDENT, implicit and explicit line joining,
// brackets, strings, numbers and lexical errors, through dump_tokens.
#include <doctest/doctest.h>

#include "lang_test_util.h"

using msl::test::errors;
using msl::test::tokens;

TEST_CASE("tokens: the dump format") {
  CHECK(tokens("x = 1\nif x:\n    y\n") ==
        "1:1 NAME 'x'\n"
        "1:3 '=' '='\n"
        "1:5 INTEGER '1'\n"
        "1:6 NEWLINE '\\n'\n"
        "2:1 'if' 'if'\n"
        "2:4 NAME 'x'\n"
        "2:5 ':' ':'\n"
        "2:6 NEWLINE '\\n'\n"
        "3:1 INDENT ''\n"
        "3:5 NAME 'y'\n"
        "3:6 NEWLINE '\\n'\n"
        "4:1 DEDENT ''\n"
        "4:1 EOF ''\n");
}

TEST_CASE("tokens: blank and comment-only lines do not count for indentation") {
  CHECK(tokens("if x:\n    y = 1\n\n  # odd comment\n\t\n    z\nw") ==
        "1:1 'if' 'if'\n"
        "1:4 NAME 'x'\n"
        "1:5 ':' ':'\n"
        "1:6 NEWLINE '\\n'\n"
        "2:1 INDENT ''\n"
        "2:5 NAME 'y'\n"
        "2:7 '=' '='\n"
        "2:9 INTEGER '1'\n"
        "2:10 NEWLINE '\\n'\n"
        "6:5 NAME 'z'\n"
        "6:6 NEWLINE '\\n'\n"
        "7:1 DEDENT ''\n"
        "7:1 NAME 'w'\n"
        "7:2 NEWLINE ''\n"
        "7:2 EOF ''\n");
}

TEST_CASE("tokens: end of file without a newline closes every block") {
  CHECK(tokens("def f():\n\tif x:\n\t\tpass\n\treturn") ==
        "1:1 'def' 'def'\n"
        "1:5 NAME 'f'\n"
        "1:6 '(' '('\n"
        "1:7 ')' ')'\n"
        "1:8 ':' ':'\n"
        "1:9 NEWLINE '\\n'\n"
        "2:1 INDENT ''\n"
        "2:2 'if' 'if'\n"
        "2:5 NAME 'x'\n"
        "2:6 ':' ':'\n"
        "2:7 NEWLINE '\\n'\n"
        "3:1 INDENT ''\n"
        "3:3 'pass' 'pass'\n"
        "3:7 NEWLINE '\\n'\n"
        "4:2 DEDENT ''\n"
        "4:2 'return' 'return'\n"
        "4:8 NEWLINE ''\n"
        "4:8 DEDENT ''\n"
        "4:8 EOF ''\n");
}

TEST_CASE("tokens: a dedent of several levels at once") {
  CHECK(tokens("if a:\n    if b:\n        c\nd\n") ==
        "1:1 'if' 'if'\n"
        "1:4 NAME 'a'\n"
        "1:5 ':' ':'\n"
        "1:6 NEWLINE '\\n'\n"
        "2:1 INDENT ''\n"
        "2:5 'if' 'if'\n"
        "2:8 NAME 'b'\n"
        "2:9 ':' ':'\n"
        "2:10 NEWLINE '\\n'\n"
        "3:1 INDENT ''\n"
        "3:9 NAME 'c'\n"
        "3:10 NEWLINE '\\n'\n"
        "4:1 DEDENT ''\n"
        "4:1 DEDENT ''\n"
        "4:1 NAME 'd'\n"
        "4:2 NEWLINE '\\n'\n"
        "5:1 EOF ''\n");
}

TEST_CASE("tokens: brackets join lines, and so does a backslash") {
  CHECK(tokens("x = [1,\n  2,\n      3]\ny = 1 + \\\n    2\n") ==
        "1:1 NAME 'x'\n"
        "1:3 '=' '='\n"
        "1:5 '[' '['\n"
        "1:6 INTEGER '1'\n"
        "1:7 ',' ','\n"
        "2:3 INTEGER '2'\n"
        "2:4 ',' ','\n"
        "3:7 INTEGER '3'\n"
        "3:8 ']' ']'\n"
        "3:9 NEWLINE '\\n'\n"
        "4:1 NAME 'y'\n"
        "4:3 '=' '='\n"
        "4:5 INTEGER '1'\n"
        "4:7 '+' '+'\n"
        "5:5 INTEGER '2'\n"
        "5:6 NEWLINE '\\n'\n"
        "6:1 EOF ''\n");
}

TEST_CASE("tokens: an indented line inside brackets is not an INDENT") {
  CHECK(tokens("f(a,\n        b)\n") ==
        "1:1 NAME 'f'\n"
        "1:2 '(' '('\n"
        "1:3 NAME 'a'\n"
        "1:4 ',' ','\n"
        "2:9 NAME 'b'\n"
        "2:10 ')' ')'\n"
        "2:11 NEWLINE '\\n'\n"
        "3:1 EOF ''\n");
}

TEST_CASE("tokens: CRLF and lone CR line endings") {
  // Source is read with universal newlines (lang/source.h): the lexer sees "\n".
  const char* want =
      "1:1 'if' 'if'\n"
      "1:4 NAME 'x'\n"
      "1:5 ':' ':'\n"
      "1:6 NEWLINE '\\n'\n"
      "2:1 INDENT ''\n"
      "2:5 NAME 'y'\n"
      "2:6 NEWLINE '\\n'\n"
      "3:1 DEDENT ''\n"
      "3:1 EOF ''\n";
  CHECK(tokens("if x:\r\n    y\r\n") == want);
  CHECK(tokens("if x:\r    y\r") == want);
  CHECK(msl::test::ast("x = 1\r\nif x:\r\n    y = (1 +\r\n         2)\r\n") ==
        "Module\n"
        "  Assign 1:1\n"
        "    Name 'x' 1:1\n"
        "    Constant 1 1:5\n"
        "  If 2:1\n"
        "    Name 'x' 2:4\n"
        "    Body\n"
        "      Assign 3:5\n"
        "        Name 'y' 3:5\n"
        "        Binary '+' 3:10\n"
        "          Constant 1 3:10\n"
        "          Constant 2 4:10\n");
}

TEST_CASE("tokens: tabs count to the next multiple of 8") {
  // A tab and eight spaces are the same level when used consistently within
  // a block's own lines ... but mixing them is refused (see below).
  CHECK(tokens("if x:\n\ty\n\tz\n") ==
        "1:1 'if' 'if'\n"
        "1:4 NAME 'x'\n"
        "1:5 ':' ':'\n"
        "1:6 NEWLINE '\\n'\n"
        "2:1 INDENT ''\n"
        "2:2 NAME 'y'\n"
        "2:3 NEWLINE '\\n'\n"
        "3:2 NAME 'z'\n"
        "3:3 NEWLINE '\\n'\n"
        "4:1 DEDENT ''\n"
        "4:1 EOF ''\n");
  // Tab then spaces, consistently, is fine.
  CHECK(errors("if x:\n\tif y:\n\t    z\n\t    w\n") == "");
}

TEST_CASE("indentation errors") {
  CHECK(errors("if x:\n\ty = 1\n        z = 2\n") ==
        "3:1: IndentationError: Inconsistent use of tabs and spaces in indentation.\n");
  CHECK(errors("if x:\n        y = 1\n\tz = 2\n") ==
        "3:1: IndentationError: Inconsistent use of tabs and spaces in indentation.\n");
  CHECK(errors("x = 1\n    y = 2\n") == "2:5: IndentationError: Unexpected indent.\n");
  CHECK(errors("def f():\n    if x:\n        pass\n  y = 1\n") ==
        "4:3: IndentationError: Unindent does not match any outer indentation level.\n");
  CHECK(errors("x = 1\nif x > 2:\n    pass\nelse:\nprint(x)\n") ==
        "5:1: IndentationError: Expected an indented block after 'else' statement on line 4.\n");
  CHECK(errors("def f():\n    return 1\nclass A:\n") ==
        "3:9: IndentationError: Expected an indented block after class definition on line 3.\n");
  CHECK(errors("def f():\n# nothing\nx = 1\n") ==
        "3:1: IndentationError: Expected an indented block after function definition on line 1.\n");
}

TEST_CASE("indentation errors do not cascade") {
  // The over-indented lines are read as if they were not indented; the
  // dedent back needs no DEDENT; the real error on line 5 is still found.
  CHECK(errors("x = 1\n    y = 2\n    z = 3\nw = 4\nv = 1 +\n") ==
        "2:5: IndentationError: Unexpected indent.\n"
        "5:8: Expected an expression after '+'.\n");
  CHECK(errors("if x:\ny = 1\nz = 3 +\n") ==
        "2:1: IndentationError: Expected an indented block after 'if' statement on line 1.\n"
        "3:8: Expected an expression after '+'.\n");
}

TEST_CASE("brackets") {
  CHECK(errors("x = (1, 2]\n") == "1:10: Closing parenthesis ']' does not match opening parenthesis '('.\n");
  CHECK(errors("x = (1,\n 2]\n") ==
        "2:3: Closing parenthesis ']' does not match opening parenthesis '(' on line 1.\n");
  CHECK(errors("x = 1)\ny = 2 +\n") ==
        "1:6: Unmatched ')'.\n"
        "2:8: Expected an expression after '+'.\n");
  // Everything after an unclosed bracket is one logical line: only the
  // bracket is reported.
  CHECK(errors("x = 1 +\nfoo(a, [1, 2\ndef f():\n    return 1\n") ==
        "1:8: Expected an expression after '+'.\n"
        "2:8: '[' was never closed.\n");
}

TEST_CASE("strings and numbers: lexical errors") {
  CHECK(errors("x = 'abc\ny = 1 +\n") ==
        "1:5: Unterminated string literal.\n"
        "2:8: Expected an expression after '+'.\n");
  CHECK(errors("x = 1\ns = \"\"\"abc\n\ny = 2\n") ==
        "2:5: Unterminated triple-quoted string literal (opened on line 2).\n");
  CHECK(errors("x = $\n") == "1:5: Invalid character '$' (U+0024).\n");
  CHECK(errors("x = a ? b\n") == "1:7: Invalid character '?' (U+003F).\n");
  CHECK(errors("x = \xe2\x80\x9chi\xe2\x80\x9d\n") == "1:5: Invalid character '\xe2\x80\x9c' (U+201C).\n");
  CHECK(errors("x = 1 \\ 2\n") == "1:7: Unexpected character after line continuation character.\n");
  CHECK(errors("x = 012\n") == "1:5: Leading zeros in decimal integer literals are not permitted.\n");
  CHECK(errors("x = 1__0\n") == "1:5: Invalid decimal literal.\n");
  CHECK(errors("x = 0x\n") == "1:5: Invalid hexadecimal literal.\n");
  CHECK(errors("x = 0b12\n") == "1:5: Invalid binary literal.\n");
  CHECK(errors("x = 2j\n") == "1:5: Complex number literals are not supported in MSL.\n");
  CHECK(errors("x = b'abc'\n") == "1:5: Bytes literals are not supported in MSL.\n");
}

TEST_CASE("strings: quotes, prefixes and triple quotes are one token each") {
  CHECK(tokens("s = r'\\'' \"\"\"a\n'b'\"\"\" f'{x}'\n") ==
        "1:1 NAME 's'\n"
        "1:3 '=' '='\n"
        "1:5 STRING \"r'\\\\''\"\n"
        "1:11 STRING '\"\"\"a\\n\\'b\\'\"\"\"'\n"
        "2:8 STRING \"f'{x}'\"\n"
        "2:14 NEWLINE '\\n'\n"
        "3:1 EOF ''\n");
}

TEST_CASE("tokens: identifiers may hold Unicode letters") {
  CHECK(tokens("数据 = café\n") ==
        "1:1 NAME '数据'\n"
        "1:4 '=' '='\n"
        "1:6 NAME 'café'\n"
        "1:10 NEWLINE '\\n'\n"
        "2:1 EOF ''\n");
}

TEST_CASE("encoding: invalid UTF-8 and NUL bytes") {
  CHECK(errors("x = 1\nprint(\"\xff\")\n") == "2:8: Invalid UTF-8 byte 0xff at line 2, column 8.\n");
  CHECK(errors("é = \xc3\n") == "1:5: Invalid UTF-8 byte 0xc3 at line 1, column 5.\n");
  CHECK(errors(std::string("x = 1\ny = 2\0\n", 13)) == "2:6: Source code cannot contain null bytes.\n");
  // A UTF-8 byte order mark is skipped.
  CHECK(errors("\xef\xbb\xbfx = 1\n") == "");
}
