// Code-point helpers for str (the host interpreter's strings are UTF-8, but
// Python counts, indexes and classifies characters by code point). Unlike
// lang/utf8.h (strict, for the lexer), decoding here never fails: a byte
// that does not start a valid sequence decodes
// to U+DC80+byte (Python's "surrogateescape"), and encoding such a code point
// writes the original byte back, so arbitrary bytes read from a file survive
// slicing and joining unchanged.
//
// Character classes (space, alpha, digit, case) are exact for ASCII and cover
// the scripts MSL programs meet in practice (Latin-1, Latin Extended-A,
// Greek, Cyrillic, full-width forms; CJK ideographs count as alphabetic).
// They are not a full Unicode database.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace msl::unicode {

// Decodes the code point at s[i] and advances i past it.
uint32_t decode(std::string_view s, size_t& i);
void append(std::string& out, uint32_t cp);
std::string encode(uint32_t cp);
std::vector<uint32_t> decode_all(std::string_view s);
std::string encode_all(const std::vector<uint32_t>& cps);
// Number of code points (decode() steps) in s.
size_t count(std::string_view s);
// Byte offset of the code point with index `k` (s.size() when k >= count).
size_t offset_of(std::string_view s, size_t k);
bool is_ascii(std::string_view s);

// Python's str.isspace() for one code point (also what split() splits on).
bool is_space(uint32_t c);
// Python's line boundaries for splitlines(): \n \r \v \f \x1c-\x1e \x85 \u2028 \u2029.
bool is_linebreak(uint32_t c);
bool is_alpha(uint32_t c);
bool is_decimal(uint32_t c);  // isdecimal: ASCII, Arabic-Indic, Devanagari, full-width digits
bool is_digit(uint32_t c);    // isdigit: decimal plus superscript and circled digits
bool is_numeric(uint32_t c);  // isnumeric: decimal plus CJK numerals and vulgar fractions
bool is_alnum(uint32_t c);
bool is_upper(uint32_t c);
bool is_lower(uint32_t c);
bool is_cased(uint32_t c);
// Python's str.isprintable() for one code point (repr escapes the others).
bool is_printable(uint32_t c);
// Simple (one-to-one) case mappings; append_upper also expands ß to "SS"
// as Python's str.upper() does.
uint32_t to_upper(uint32_t c);
uint32_t to_lower(uint32_t c);
void append_upper(std::string& out, uint32_t c);
void append_lower(std::string& out, uint32_t c);

}  // namespace msl::unicode
