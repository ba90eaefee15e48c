// Conversions shared by the builtin constructors and other natives: text to
// numbers with Python's grammar (int(), float()), float to int with Python's
// errors (int(), round(), math.floor), and filling a dict or set the way
// dict()/dict.update()/set() do.
#pragma once

#include <cstdint>
#include <string_view>

#include "interp/core/interp.h"

namespace msl {

// int(text, base) for base 0 or 2..36: false when the literal is malformed;
// raises OverflowError when it does not fit in 64 bits.
bool parse_int_literal(Interp& I, std::string_view text, int base, int64_t& out);
// float(text): false when malformed (values too large become ±inf, as in Python).
bool parse_float_literal(std::string_view text, double& out);
// int(d): truncates; ValueError for nan, OverflowError for inf or out of range.
int64_t float_to_int(Interp& I, double d);
// Python's hash() of a float (_Py_HashDouble, without the final -1 → -2 fix-up).
uint64_t py_hash_double(double v);
// dict.update(src) for a dict, an object with keys(), or an iterable of pairs.
void dict_update_from(Interp& I, Dict* d, const Value& src);
// set(iterable) / frozenset(iterable).
Value make_set(Interp& I, const Value& iterable, bool frozen);

}  // namespace msl
