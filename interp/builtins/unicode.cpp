// UTF-8 decoding/encoding and the character classes behind str methods and
// repr(). The tables are small range lists chosen to agree with Python's
// unicodedata on the scripts listed in unicode.h; anything outside them is
// treated as an uncased, non-alphabetic, printable character.
#include "interp/builtins/unicode.h"

#include <algorithm>

namespace msl::unicode {

namespace {

inline bool cont(unsigned char c) { return (c & 0xC0) == 0x80; }

struct RangeEntry {
  uint32_t lo, hi;
};

template <size_t N>
bool in_ranges(const RangeEntry (&table)[N], uint32_t c) {
  // Tables are sorted; binary search for the last range starting at or below c.
  size_t lo = 0, hi = N;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (table[mid].lo <= c)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo > 0 && c <= table[lo - 1].hi;
}

const RangeEntry kAlpha[] = {
    {0x41, 0x5A},       {0x61, 0x7A},     {0xAA, 0xAA},     {0xB5, 0xB5},     {0xBA, 0xBA},     {0xC0, 0xD6},
    {0xD8, 0xF6},       {0xF8, 0x2C1},    {0x2C6, 0x2D1},   {0x2E0, 0x2E4},   {0x370, 0x374},   {0x376, 0x377},
    {0x37A, 0x37D},     {0x37F, 0x37F},   {0x386, 0x386},   {0x388, 0x3FF},   {0x400, 0x481},   {0x48A, 0x52F},
    {0x531, 0x556},     {0x560, 0x588},   {0x5D0, 0x5EA},   {0x620, 0x64A},   {0x671, 0x6D3},   {0x904, 0x939},
    {0xE01, 0xE30},     {0x10A0, 0x10FF}, {0x1100, 0x11FF}, {0x1E00, 0x1FBC}, {0x3041, 0x3096}, {0x309D, 0x309F},
    {0x30A1, 0x30FA},   {0x30FC, 0x30FF}, {0x3105, 0x312F}, {0x3131, 0x318E}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF},
    {0xAC00, 0xD7A3},   {0xF900, 0xFAFF}, {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0xFF66, 0xFFBE}, {0x20000, 0x2FA1F},
    {0x30000, 0x3134A},
};

const RangeEntry kDecimal[] = {
    {0x30, 0x39}, {0x660, 0x669}, {0x6F0, 0x6F9}, {0x966, 0x96F}, {0xE50, 0xE59}, {0xFF10, 0xFF19},
};

const RangeEntry kDigitExtra[] = {
    {0xB2, 0xB3},     {0xB9, 0xB9},     {0x2070, 0x2070}, {0x2074, 0x2079}, {0x2080, 0x2089},
    {0x2460, 0x2468}, {0x2474, 0x247C}, {0x2488, 0x2490}, {0x24EA, 0x24EA}, {0x2776, 0x277E},
};

const RangeEntry kNumericExtra[] = {
    {0xBC, 0xBE},     {0x2150, 0x2189}, {0x2469, 0x2473}, {0x247D, 0x2487}, {0x2491, 0x249B}, {0x3007, 0x3007},
    {0x3021, 0x3029}, {0x3038, 0x303A}, {0x3192, 0x3195}, {0x3220, 0x3229}, {0x4E00, 0x4E00}, {0x4E03, 0x4E03},
    {0x4E07, 0x4E07}, {0x4E09, 0x4E09}, {0x4E5D, 0x4E5D}, {0x4E8C, 0x4E8C}, {0x4E94, 0x4E94}, {0x5104, 0x5104},
    {0x5146, 0x5146}, {0x516B, 0x516B}, {0x516D, 0x516D}, {0x5341, 0x5341}, {0x5343, 0x5343}, {0x56DB, 0x56DB},
    {0x58F9, 0x58F9}, {0x767E, 0x767E}, {0x96F6, 0x96F6},
};

// Python's non-printable characters: controls (Cc), format characters (Cf),
// separators other than the ASCII space (Zs, Zl, Zp), surrogates and private use.
const RangeEntry kUnprintable[] = {
    {0x00, 0x1F},       {0x7F, 0xA0},       {0xAD, 0xAD},        {0x600, 0x605},     {0x61C, 0x61C},
    {0x6DD, 0x6DD},     {0x70F, 0x70F},     {0x890, 0x891},      {0x8E2, 0x8E2},     {0x1680, 0x1680},
    {0x180E, 0x180E},   {0x2000, 0x200F},   {0x2028, 0x202F},    {0x205F, 0x2064},   {0x2066, 0x206F},
    {0x3000, 0x3000},   {0xD800, 0xF8FF},   {0xFEFF, 0xFEFF},    {0xFFF9, 0xFFFB},   {0xFFFE, 0xFFFF},
    {0x110BD, 0x110BD}, {0x110CD, 0x110CD}, {0x13430, 0x1343F},  {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
    {0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xF0000, 0x10FFFF},
};

// Ranges where upper- and lower-case letters alternate: even code point
// upper, odd lower (or the reverse when `odd_upper`).
struct PairRange {
  uint32_t lo, hi;
  bool odd_upper;
};
const PairRange kPairs[] = {
    {0x100, 0x12F, false},   {0x132, 0x137, false},   {0x139, 0x148, true},  {0x14A, 0x177, false},
    {0x179, 0x17E, true},    {0x182, 0x185, false},   {0x1A0, 0x1A5, false}, {0x1CD, 0x1DC, true},
    {0x1DE, 0x1EF, false},   {0x1F8, 0x21F, false},   {0x222, 0x233, false}, {0x3D8, 0x3EF, false},
    {0x460, 0x481, false},   {0x48A, 0x4BF, false},   {0x4C1, 0x4CE, true},  {0x4D0, 0x52F, false},
    {0x1E00, 0x1E95, false}, {0x1EA0, 0x1EFF, false},
};

// Ranges mapped by a constant offset: [lo, hi] upper-case ↔ [lo+delta, hi+delta] lower-case.
struct OffsetRange {
  uint32_t lo, hi;
  int32_t delta;
};
const OffsetRange kOffsets[] = {
    {0x41, 0x5A, 32},     {0xC0, 0xD6, 32},       {0xD8, 0xDE, 32},     {0x388, 0x38A, 37},   {0x38C, 0x38C, 64},
    {0x38E, 0x38F, 63},   {0x391, 0x3A1, 32},     {0x3A3, 0x3AB, 32},   {0x400, 0x40F, 80},   {0x410, 0x42F, 32},
    {0x531, 0x556, 48},   {0x10A0, 0x10C5, 7264}, {0x1F08, 0x1F0F, -8}, {0x1F18, 0x1F1D, -8}, {0x1F28, 0x1F2F, -8},
    {0x1F38, 0x1F3F, -8}, {0x1F48, 0x1F4D, -8},   {0x1F68, 0x1F6F, -8}, {0x2160, 0x216F, 16}, {0x24B6, 0x24CF, 26},
    {0xFF21, 0xFF3A, 32},
};

bool pair_upper(uint32_t c, bool& found) {
  for (const PairRange& r : kPairs) {
    if (c >= r.lo && c <= r.hi) {
      found = true;
      return ((c & 1) != 0) == r.odd_upper;
    }
  }
  found = false;
  return false;
}

}  // namespace

uint32_t decode(std::string_view s, size_t& i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  unsigned char c = p[i];
  if (c < 0x80) {
    ++i;
    return c;
  }
  if (c >= 0xC2 && c <= 0xDF && i + 1 < n && cont(p[i + 1])) {
    uint32_t cp = ((c & 0x1Fu) << 6) | (p[i + 1] & 0x3Fu);
    i += 2;
    return cp;
  }
  if (c >= 0xE0 && c <= 0xEF && i + 2 < n && cont(p[i + 1]) && cont(p[i + 2])) {
    uint32_t cp = ((c & 0x0Fu) << 12) | ((p[i + 1] & 0x3Fu) << 6) | (p[i + 2] & 0x3Fu);
    // Overlong forms are invalid; encoded surrogates are accepted so that
    // chr(0xD800) survives a round trip through a str.
    if (cp >= 0x800) {
      i += 3;
      return cp;
    }
  }
  if (c >= 0xF0 && c <= 0xF4 && i + 3 < n && cont(p[i + 1]) && cont(p[i + 2]) && cont(p[i + 3])) {
    uint32_t cp = ((c & 0x07u) << 18) | ((p[i + 1] & 0x3Fu) << 12) | ((p[i + 2] & 0x3Fu) << 6) | (p[i + 3] & 0x3Fu);
    if (cp >= 0x10000 && cp <= 0x10FFFF) {
      i += 4;
      return cp;
    }
  }
  ++i;
  return 0xDC00 + c;  // surrogateescape: c is >= 0x80 here
}

void append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp >= 0xDC80 && cp <= 0xDCFF) {
    out.push_back(static_cast<char>(cp - 0xDC00));  // an escaped raw byte
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string encode(uint32_t cp) {
  std::string s;
  append(s, cp);
  return s;
}

std::vector<uint32_t> decode_all(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) out.push_back(decode(s, i));
  return out;
}

std::string encode_all(const std::vector<uint32_t>& cps) {
  std::string s;
  s.reserve(cps.size());
  for (uint32_t c : cps) append(s, c);
  return s;
}

size_t count(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n) {
    if (static_cast<unsigned char>(s[i]) < 0x80)
      ++i;
    else
      decode(s, i);
  }
  return n;
}

size_t offset_of(std::string_view s, size_t k) {
  size_t i = 0;
  for (size_t n = 0; n < k && i < s.size(); ++n) {
    if (static_cast<unsigned char>(s[i]) < 0x80)
      ++i;
    else
      decode(s, i);
  }
  return i;
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

bool is_space(uint32_t c) {
  if (c < 0x80) return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20);
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_linebreak(uint32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 ||
         c == 0x2029;
}

bool is_alpha(uint32_t c) {
  if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  return in_ranges(kAlpha, c);
}

bool is_decimal(uint32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  return in_ranges(kDecimal, c);
}

bool is_digit(uint32_t c) { return is_decimal(c) || (c >= 0x80 && in_ranges(kDigitExtra, c)); }

bool is_numeric(uint32_t c) { return is_digit(c) || (c >= 0x80 && in_ranges(kNumericExtra, c)); }

bool is_alnum(uint32_t c) { return is_alpha(c) || is_numeric(c); }

bool is_upper(uint32_t c) {
  if (c < 0x80) return c >= 'A' && c <= 'Z';
  return to_lower(c) != c;
}

bool is_lower(uint32_t c) {
  if (c < 0x80) return c >= 'a' && c <= 'z';
  if (c == 0xDF || c == 0xAA || c == 0xBA) return true;  // ß and the ordinal indicators
  return to_upper(c) != c;
}

bool is_cased(uint32_t c) { return is_upper(c) || is_lower(c); }

bool is_printable(uint32_t c) {
  if (c < 0x80) return c >= 0x20 && c < 0x7F;
  return !in_ranges(kUnprintable, c);
}

uint32_t to_upper(uint32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
  switch (c) {
    case 0xB5: return 0x39C;
    case 0xFF: return 0x178;
    case 0x131: return 'I';
    case 0x17F: return 'S';
    case 0x3C2: return 0x3A3;
    case 0x3AC: return 0x386;
    default: break;
  }
  for (const OffsetRange& r : kOffsets) {
    if (c >= r.lo + r.delta && c <= r.hi + r.delta) return c - r.delta;
  }
  bool found;
  bool upper = pair_upper(c, found);
  return found && !upper ? c - 1 : c;  // in both pair layouts the partner precedes the lower-case letter
}

uint32_t to_lower(uint32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  switch (c) {
    case 0x130: return 'i';
    case 0x178: return 0xFF;
    case 0x386: return 0x3AC;
    default: break;
  }
  for (const OffsetRange& r : kOffsets) {
    if (c >= r.lo && c <= r.hi) return c + r.delta;
  }
  bool found;
  bool upper = pair_upper(c, found);
  return found && upper ? c + 1 : c;
}

void append_upper(std::string& out, uint32_t c) {
  if (c == 0xDF) {
    out += "SS";
    return;
  }
  append(out, to_upper(c));
}

void append_lower(std::string& out, uint32_t c) { append(out, to_lower(c)); }

}  // namespace msl::unicode
