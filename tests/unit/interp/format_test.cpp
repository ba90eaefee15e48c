// Tests of interp/builtins/format.h: repr of floats and strings, format specs,
// str.format and `%` formatting. Every expected string was produced by
// CPython 3.11 (python3 -c 'print(repr(format(x, spec)))' and the like) and
// pasted here as the independent reference.
#include "interp/builtins/format.h"

#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>

#include "interp/core/interp.h"

using namespace msl;

namespace {

Interp& interp() {
  static Interp I{Interp::Options{}};
  return I;
}

std::string fmt_float(double d, std::string_view spec) { return format_value(interp(), Value::number(d), spec); }
std::string fmt_int(int64_t i, std::string_view spec) { return format_value(interp(), Value::integer(i), spec); }
std::string fmt_str(std::string s, std::string_view spec) {
  return format_value(interp(), Value::object(new Str(std::move(s))), spec);
}

// The `Type: message` of the error `f` raises, or "no error".
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (MslError& e) {
    return interp().exception_summary(e.exc);
  }
  return "no error";
}

Value eval(const std::string& expr) {
  return interp().eval_expression(std::make_shared<SourceFile>("<test>", expr), nullptr);
}

std::string eval_str(const std::string& expr) {
  Value v = eval(expr);
  return v.is(Kind::Str) ? v.as<Str>()->s : interp().repr(v);
}

}  // namespace

TEST_CASE("float_repr is the shortest round-trip text, laid out as Python's repr") {
  CHECK(float_repr(0.1) == "0.1");
  CHECK(float_repr(1e+16) == "1e+16");
  CHECK(float_repr(1e-05) == "1e-05");
  CHECK(float_repr(0.0001) == "0.0001");
  CHECK(float_repr(1.2345678901234568e+17) == "1.2345678901234568e+17");
  CHECK(float_repr(123456789012345678.0) == "1.2345678901234568e+17");
  CHECK(float_repr(-0.0) == "-0.0");
  CHECK(float_repr(0.0) == "0.0");
  CHECK(float_repr(INFINITY) == "inf");
  CHECK(float_repr(-INFINITY) == "-inf");
  CHECK(float_repr(NAN) == "nan");
  CHECK(float_repr(-NAN) == "nan");
  CHECK(float_repr(1.0 / 3) == "0.3333333333333333");
  CHECK(float_repr(2.0 / 3) == "0.6666666666666666");
  CHECK(float_repr(1e+22) == "1e+22");
  CHECK(float_repr(5e-324) == "5e-324");
  CHECK(float_repr(1.7976931348623157e+308) == "1.7976931348623157e+308");
  CHECK(float_repr(100.0) == "100.0");
  CHECK(float_repr(1000000000000000.0) == "1000000000000000.0");
  CHECK(float_repr(2.5) == "2.5");
  CHECK(float_repr(0.1 + 0.2) == "0.30000000000000004");
}

TEST_CASE("str_repr picks quotes and escapes as Python does") {
  CHECK(str_repr("it's") == "\"it's\"");
  CHECK(str_repr("say \"hi\"") == "'say \"hi\"'");
  CHECK(str_repr("both ' \"") == "'both \\' \"'");
  CHECK(str_repr(std::string("\n\t\x00\x7f", 4)) == "'\\n\\t\\x00\\x7f'");
  CHECK(str_repr("\xe2\x80\x8b \xc3\xa9\xe3\x80\x80") == "'\\u200b \xc3\xa9\\u3000'");  // ZWSP, é, ideographic space
  CHECK(str_repr("日本") == "'日本'");
  CHECK(str_repr("\\") == "'\\\\'");
  CHECK(str_repr("\r") == "'\\r'");
}

TEST_CASE("format specs for floats") {
  CHECK(fmt_float(3.14159, ".2f") == "3.14");
  CHECK(fmt_float(1234567.891, ",.2f") == "1,234,567.89");
  CHECK(fmt_float(0.000123, "e") == "1.230000e-04");
  CHECK(fmt_float(1e+16, "") == "1e+16");
  CHECK(fmt_float(100.0, ".3") == "1e+02");
  CHECK(fmt_float(123456.0, ".3") == "1.23e+05");
  CHECK(fmt_float(1234567.0, ".20") == "1234567.0");
  CHECK(fmt_float(-0.0, "z.1f") == "0.0");
  CHECK(fmt_float(0.25, "%") == "25.000000%");
  CHECK(fmt_float(INFINITY, "010") == "0000000inf");
  CHECK(fmt_float(2.5, ".0f") == "2");
  CHECK(fmt_float(1.0, "#g") == "1.00000");
  CHECK(fmt_float(12.0, "*^12.3e") == "*1.200e+01**");
  CHECK(fmt_float(-1.5, "+08.2f") == "-0001.50");
  CHECK(fmt_float(1e-07, "g") == "1e-07");
  CHECK(fmt_float(1234.5, "_") == "1_234.5");
  CHECK(fmt_float(5e-324, ".3") == "4.94e-324");
}

TEST_CASE("format specs for ints, bools and strs") {
  CHECK(fmt_int(255, "x") == "ff");
  CHECK(fmt_int(255, "#X") == "0XFF");
  CHECK(fmt_int(5, "08b") == "00000101");
  CHECK(fmt_int(1234567, ",") == "1,234,567");
  CHECK(fmt_int(1234, "010,") == "00,001,234");
  CHECK(fmt_int(1234, "08,") == "0,001,234");
  CHECK(fmt_int(-42, "+06d") == "-00042");
  CHECK(fmt_int(65, "c") == "A");
  CHECK(fmt_int(1000000000000000000, "_") == "1_000_000_000_000_000_000");
  CHECK(fmt_int(3, ".2f") == "3.00");
  CHECK(fmt_int(INT64_MIN, "x") == "-8000000000000000");
  CHECK(fmt_int(42, "^9") == "   42    ");
  CHECK(fmt_int(42, "=+8") == "+     42");
  CHECK(fmt_int(0, "#o") == "0o0");
  CHECK(format_value(interp(), Value::boolean(true), "") == "True");
  CHECK(format_value(interp(), Value::boolean(true), ">6") == "     1");
  CHECK(fmt_str("ab", ">5") == "   ab");
  CHECK(fmt_str("ab", "05") == "ab000");
  CHECK(fmt_str("日本語", "^9") == "   日本語   ");
  CHECK(fmt_str("abcdef", ".3") == "abc");
  CHECK(fmt_str("é", "*<4") == "é***");
  CHECK(fmt_str("ab", "中>5") == "中中中ab");
}

TEST_CASE("format spec errors carry Python's messages") {
  CHECK(error_of([] { fmt_int(1, ".2"); }) == "ValueError: Precision not allowed in integer format specifier");
  CHECK(error_of([] { fmt_str("a", "d"); }) == "ValueError: Unknown format code 'd' for object of type 'str'");
  CHECK(error_of([] { fmt_str("a", "+"); }) == "ValueError: Sign not allowed in string format specifier");
  CHECK(error_of([] { fmt_float(1.5, "x"); }) == "ValueError: Unknown format code 'x' for object of type 'float'");
  CHECK(error_of([] { fmt_int(1, ",x"); }) == "ValueError: Cannot specify ',' with 'x'.");
  CHECK(error_of([] { fmt_int(1, ",_"); }) == "ValueError: Cannot specify both ',' and '_'.");
  CHECK(error_of([] { fmt_int(1, "."); }) == "ValueError: Format specifier missing precision");
  CHECK(error_of([] { eval("format([1], '>5')"); }) ==
        "TypeError: unsupported format string passed to list.__format__");
  CHECK(error_of([] { fmt_str("x", "99999999999999999999"); }) ==
        "ValueError: Too many decimal digits in format string");
  CHECK(error_of([] { fmt_str("x", "9999999999999"); }) == "MemoryError");
}

TEST_CASE("str.format fields, conversions and nested specs") {
  CHECK(eval_str("'{} {}'.format(1, 2)") == "1 2");
  CHECK(eval_str("'{x:>{w}}|'.format(x='a', w=5)") == "    a|");
  CHECK(eval_str("'{0[1]} {1.real}'.format([1, 2], 3)") == "2 3");
  CHECK(eval_str("'{0[a]}'.format({'a': 5})") == "5");
  CHECK(eval_str("'{!r:^9}'.format('é')") == "   'é'   ");
  CHECK(eval_str("'{!a}'.format('é')") == "'\\xe9'");
  CHECK(eval_str("'x{{y}}z'.format()") == "x{y}z");
  CHECK(eval_str("'{0:{1}}'.format(3.14159, '.2f')") == "3.14");
  CHECK(error_of([] { eval("'{0}{}'.format(1, 2)"); }) ==
        "ValueError: cannot switch from manual field specification to automatic field numbering");
  CHECK(error_of([] { eval("'{}{0}'.format(1, 2)"); }) ==
        "ValueError: cannot switch from automatic field numbering to manual field specification");
  CHECK(error_of([] { eval("'{2}'.format(1)"); }) ==
        "IndexError: Replacement index 2 out of range for positional args tuple");
  CHECK(error_of([] { eval("'{x}'.format()"); }) == "KeyError: 'x'");
  CHECK(error_of([] { eval("'{'.format()"); }) == "ValueError: Single '{' encountered in format string");
  CHECK(error_of([] { eval("'}'.format()"); }) == "ValueError: Single '}' encountered in format string");
  CHECK(error_of([] { eval("'{0!x}'.format(1)"); }) == "ValueError: Unknown conversion specifier x");
  CHECK(error_of([] { eval("'{0!}'.format(1)"); }) == "ValueError: unmatched '{' in format spec");
  CHECK(error_of([] { eval("'{0[}'.format(1)"); }) == "ValueError: expected '}' before end of string");
  CHECK(error_of([] { eval("'{0[0]x}'.format([1])"); }) ==
        "ValueError: Only '.' or '[' may follow ']' in format field specifier");
  CHECK(error_of([] { eval("'{0:{1:{2}}}'.format(1, 2, 3)"); }) == "ValueError: Max string recursion exceeded");
}

TEST_CASE("percent formatting") {
  CHECK(eval_str("'%5.2f|%-4d|%s' % (3.14159, 42, 'x')") == " 3.14|42  |x");
  CHECK(eval_str("'%05d' % (-42,)") == "-0042");
  CHECK(eval_str("'%#x %#o %X' % (255, 8, 255)") == "0xff 0o10 FF");
  CHECK(eval_str("'%.3s' % ('abcdef',)") == "abc");
  CHECK(eval_str("'%c%c' % (65, 'é')") == "Aé");
  CHECK(eval_str("'%e %g %G' % (12345.678, 1e-05, 1e+20)") == "1.234568e+04 1e-05 1E+20");
  CHECK(eval_str("'%+.1f%%' % (99.5,)") == "+99.5%");
  CHECK(eval_str("'%r' % (\"it's\",)") == "\"it's\"");
  CHECK(eval_str("'%(a)s-%(b)03d' % {'a': 'x', 'b': 7}") == "x-007");
  CHECK(eval_str("'%s' % {'a': 1}") == "{'a': 1}");
  CHECK(eval_str("'%d %i' % (3.9, True)") == "3 1");
  CHECK(eval_str("'%*d|%-*d|' % (4, 1, 3, 2)") == "   1|2  |");
  CHECK(eval_str("'%05f' % float('inf')") == "00inf");
  CHECK(error_of([] { eval("'%d' % 'x'"); }) == "TypeError: %d format: a real number is required, not str");
  CHECK(error_of([] { eval("'%x' % 3.0"); }) == "TypeError: %x format: an integer is required, not float");
  CHECK(error_of([] { eval("'%s %s' % (1,)"); }) == "TypeError: not enough arguments for format string");
  CHECK(error_of([] { eval("'%s' % (1, 2)"); }) == "TypeError: not all arguments converted during string formatting");
  CHECK(error_of([] { eval("'%z' % 1"); }) == "ValueError: unsupported format character 'z' (0x7a) at index 1");
  CHECK(error_of([] { eval("'abc%' % 1"); }) == "ValueError: incomplete format");
  CHECK(error_of([] { eval("'%(a' % {}"); }) == "ValueError: incomplete format key");
  CHECK(error_of([] { eval("'%c' % 'ab'"); }) == "TypeError: %c requires int or char");
  CHECK(error_of([] { eval("'%5%' % ()"); }) == "TypeError: not enough arguments for format string");
}
