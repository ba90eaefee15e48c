// Pieces of the formatting code shared between format.cpp, str_format.cpp,
// percent_format.cpp and the builtins (ascii(), hex(), str.format's `!a`).
// Not part of the interpreter's public surface: format.h is.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace msl {

class Interp;

// ascii(): repr text with every non-ASCII code point escaped (\xe9, \u4e2d, \U0001f600).
std::string ascii_escape(std::string_view repr_text);

// Digits of |v| in base 2, 8, 10 or 16 (lower-case letters), no sign or prefix.
std::string int_digits(int64_t v, int base, bool upper = false);

// The float text of Python's format types without sign handling: `type` is one
// of e E f F g G %, or 'r' for repr and 'R' for "no type, precision given"
// (repr-like 'g' that keeps a ".0"). `x` must be non-negative or nan.
std::string float_body(double x, char type, int64_t precision, bool alt);

// Pads `s` (already formatted, `len` code points long) to `width` code points.
std::string pad_text(Interp& I, std::string_view s, size_t len, int64_t width, char align, uint32_t fill);

}  // namespace msl
