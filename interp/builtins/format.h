// Text formatting shared by repr(), str(), f-strings, format(), str.format
// and `%` formatting. All of it follows Python 3.11 exactly, so that MSL
// output matches what the same program prints under CPython.
#pragma once

#include <string>
#include <string_view>

#include <span>

#include "interp/core/object.h"

namespace msl {

class Interp;

// repr(float): the shortest text that round-trips ("0.1", "1e+16", "inf", "nan", "-0.0").
std::string float_repr(double d);
// repr(str): quotes and escapes as Python does ('it\'s' → "it's").
std::string str_repr(std::string_view s);
// format(value, spec): the format-spec mini-language
// ([[fill]align][sign][z][#][0][width][grouping][.precision][type]) for
// int, bool, float and str; other values use __format__ if defined, else
// str(value) with the spec applied as for strings (an empty spec is str()).
std::string format_value(Interp& I, const Value& v, std::string_view spec);
// "fmt".format(*args, **kwargs): positional `{}`/`{0}`, named `{name}`,
// attribute/index fields `{0.x}` `{a[1]}`, conversions `!r !s`, specs.
std::string str_format(Interp& I, std::string_view fmt, std::span<Value> args,
                       std::span<std::pair<Ref<Str>, Value>> kwargs);
// "fmt" % args: %s %r %d %i %f %e %g %x %o %c %%, with flags, width, precision, `*`,
// and %(name)s with a dict.
std::string percent_format(Interp& I, std::string_view fmt, const Value& args);

}  // namespace msl
