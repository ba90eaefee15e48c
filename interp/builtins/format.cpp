// repr() of floats and strings, and format(value, spec): Python's format-spec
// mini-language for int, bool, float and str.
//
// Float text is produced in two steps, as CPython's format_float_short does:
// first the decimal digits and the position of the decimal point (shortest
// round-trip digits from std::to_chars for repr, correctly rounded digits from
// printf's %e otherwise; both are exact), then a layout step that places the
// point, pads with zeros and appends the exponent. Keeping the layout a port of
// CPython's code is what makes the corner cases (1e16 vs 1e+16, '.3' on 100.0,
// '#g') come out identical.
#include "interp/builtins/format.h"

#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "interp/builtins/format_internal.h"
#include "interp/core/interp.h"
#include "interp/core/native_args.h"
#include "interp/builtins/unicode.h"

namespace msl {

namespace {

std::string c_format(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char small[128];
  va_list ap2;
  va_copy(ap2, ap);
  int n = std::vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) {
    va_end(ap2);
    return {};
  }
  if (static_cast<size_t>(n) < sizeof small) {
    va_end(ap2);
    return std::string(small, static_cast<size_t>(n));
  }
  std::string out(static_cast<size_t>(n), '\0');
  std::vsnprintf(out.data(), out.size() + 1, fmt, ap2);
  va_end(ap2);
  return out;
}

// Splits printf/to_chars scientific text "d.ddde±XX" into digits and the
// decimal-point position (value = 0.DIGITS × 10^decpt), trailing zeros removed.
void split_scientific(std::string_view s, std::string& digits, int& decpt) {
  size_t e = s.find_first_of("eE");
  digits.clear();
  for (size_t i = 0; i < e; ++i)
    if (s[i] != '.') digits.push_back(s[i]);
  int exp = 0;
  std::string_view es = s.substr(e + 1);
  if (!es.empty() && es[0] == '+') es.remove_prefix(1);
  std::from_chars(es.data(), es.data() + es.size(), exp);
  decpt = exp + 1;
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (digits == "0") decpt = 1;
}

// Port of the layout half of CPython's format_float_short (Python/pystrtod.c)
// for the 'g' and 'r' codes; `digits` has no trailing zeros.
std::string layout_digits(const std::string& digits, int decpt, char code, int64_t precision, bool add_dot0, bool alt,
                          bool upper) {
  int64_t digits_len = static_cast<int64_t>(digits.size());
  int64_t vdigits_end = digits_len;
  bool use_exp = false;
  int64_t dp = decpt;
  if (code == 'g') {
    if (dp <= -4 || dp > (add_dot0 ? precision - 1 : precision)) use_exp = true;
    if (alt) vdigits_end = precision;
  } else {  // 'r'
    if (dp <= -4 || dp > 16) use_exp = true;
  }
  int64_t exp = 0;
  if (use_exp) {
    exp = dp - 1;
    dp = 1;
  }
  int64_t vdigits_start = dp <= 0 ? dp - 1 : 0;
  if (!use_exp && add_dot0)
    vdigits_end = vdigits_end > dp ? vdigits_end : dp + 1;
  else
    vdigits_end = vdigits_end > dp ? vdigits_end : dp;

  std::string out;
  if (dp <= 0) {
    out.append(static_cast<size_t>(dp - vdigits_start), '0');
    out.push_back('.');
    out.append(static_cast<size_t>(-dp), '0');
  } else {
    out.append(static_cast<size_t>(-vdigits_start), '0');
  }
  if (0 < dp && dp <= digits_len) {
    out.append(digits, 0, static_cast<size_t>(dp));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(dp), std::string::npos);
  } else {
    out += digits;
  }
  if (digits_len < dp) {
    out.append(static_cast<size_t>(dp - digits_len), '0');
    out.push_back('.');
    out.append(static_cast<size_t>(vdigits_end - dp), '0');
  } else {
    out.append(static_cast<size_t>(vdigits_end - digits_len), '0');
  }
  if (out.back() == '.' && !alt) out.pop_back();
  if (use_exp) {
    out.push_back(upper ? 'E' : 'e');
    out += c_format("%+.02d", static_cast<int>(exp));
  }
  return out;
}

bool is_upper_code(char type) { return type == 'E' || type == 'F' || type == 'G'; }

}  // namespace

std::string float_body(double x, char type, int64_t precision, bool alt) {
  bool upper = is_upper_code(type);
  if (std::isnan(x) || std::isinf(x)) {
    std::string s = std::isnan(x) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
    if (type == '%') s.push_back('%');
    return s;
  }
  int prec = static_cast<int>(precision);
  switch (type) {
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case '%': {
      double v = type == '%' ? x * 100.0 : x;
      std::string s;
      if (alt) {
        // to_chars has no '#' form; printf's is the same text.
        char fmt[8] = {'%', '#', '.', '*', type == '%' ? 'f' : type, 0};
        s = c_format(fmt, prec, v);
      } else {
        // std::to_chars with a precision is exact like printf, and much faster.
        bool fixed = type == 'f' || type == 'F' || type == '%';
        s.resize(static_cast<size_t>(prec) + (fixed ? 320 : 16));
        auto r = std::to_chars(s.data(), s.data() + s.size(), v,
                               fixed ? std::chars_format::fixed : std::chars_format::scientific, prec);
        s.resize(static_cast<size_t>(r.ptr - s.data()));
        if (type == 'E')
          for (char& c : s)
            if (c == 'e') c = 'E';
      }
      if (type == '%') s.push_back('%');
      return s;
    }
    case 'g':
    case 'G':
    case 'R': {
      if (prec == 0) prec = 1;
      std::string digits;
      int decpt;
      char buf[400];
      std::string_view sci;
      if (prec - 1 < 360) {
        auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific, prec - 1);
        sci = std::string_view(buf, static_cast<size_t>(r.ptr - buf));
        split_scientific(sci, digits, decpt);
      } else {
        split_scientific(c_format("%.*e", prec - 1, x), digits, decpt);
      }
      return layout_digits(digits, decpt, 'g', prec, type == 'R', alt, upper);
    }
    default: {  // 'r'
      char buf[64];
      auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
      std::string digits;
      int decpt;
      split_scientific(std::string_view(buf, static_cast<size_t>(r.ptr - buf)), digits, decpt);
      return layout_digits(digits, decpt, 'r', 0, true, alt, false);
    }
  }
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (std::signbit(d)) return "-" + float_body(-d, 'r', 0, false);
  return float_body(d, 'r', 0, false);
}

std::string str_repr(std::string_view s) {
  bool has_single = s.find('\'') != std::string_view::npos;
  bool has_double = s.find('"') != std::string_view::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back(quote);
  for (size_t i = 0; i < s.size();) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      ++i;
      char c = static_cast<char>(b);
      if (c == quote || c == '\\') {
        out.push_back('\\');
        out.push_back(c);
      } else if (c == '\t') {
        out += "\\t";
      } else if (c == '\n') {
        out += "\\n";
      } else if (c == '\r') {
        out += "\\r";
      } else if (b < 0x20 || b == 0x7F) {
        out += fmt::format("\\x{:02x}", b);
      } else {
        out.push_back(c);
      }
      continue;
    }
    size_t start = i;
    uint32_t cp = unicode::decode(s, i);
    if (unicode::is_printable(cp)) {
      out.append(s.substr(start, i - start));
    } else if (cp <= 0xFF) {
      out += fmt::format("\\x{:02x}", cp);
    } else if (cp <= 0xFFFF) {
      out += fmt::format("\\u{:04x}", cp);
    } else {
      out += fmt::format("\\U{:08x}", cp);
    }
  }
  out.push_back(quote);
  return out;
}

std::string ascii_escape(std::string_view text) {
  if (unicode::is_ascii(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      out.push_back(text[i++]);
      continue;
    }
    uint32_t cp = unicode::decode(text, i);
    if (cp <= 0xFF)
      out += fmt::format("\\x{:02x}", cp);
    else if (cp <= 0xFFFF)
      out += fmt::format("\\u{:04x}", cp);
    else
      out += fmt::format("\\U{:08x}", cp);
  }
  return out;
}

std::string int_digits(int64_t v, int base, bool upper) {
  uint64_t m = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const char* alphabet = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  char buf[65];
  size_t k = sizeof buf;
  do {
    buf[--k] = alphabet[m % static_cast<uint64_t>(base)];
    m /= static_cast<uint64_t>(base);
  } while (m != 0);
  return std::string(buf + k, sizeof buf - k);
}

std::string pad_text(Interp& I, std::string_view s, size_t len, int64_t width, char align, uint32_t fill) {
  if (width <= static_cast<int64_t>(len)) return std::string(s);
  size_t pad = static_cast<size_t>(width) - len;
  std::string fill_text = unicode::encode(fill);
  check_result_size(I, pad);  // first on its own, so the product below cannot wrap
  check_result_size(I, static_cast<uint64_t>(pad) * fill_text.size() + s.size());
  size_t left = 0;
  if (align == '>' || align == '=')
    left = pad;
  else if (align == '^')
    left = pad / 2;
  std::string out;
  out.reserve(pad * fill_text.size() + s.size());
  for (size_t i = 0; i < left; ++i) out += fill_text;
  out += s;
  for (size_t i = left; i < pad; ++i) out += fill_text;
  return out;
}

// ------------------------------------------------------------ format specs

namespace {

struct Spec {
  uint32_t fill = ' ';
  char align = 0;  // < > ^ = or 0 for the type's default
  char sign = 0;   // + - space, or 0
  bool no_neg_0 = false;
  bool alt = false;
  int64_t width = -1;
  char grouping = 0;  // ',' or '_'
  int64_t precision = -1;
  uint32_t type = 0;
};

bool is_align(uint32_t c) { return c == '<' || c == '>' || c == '^' || c == '='; }

std::string code_text(uint32_t c) {
  if (c > 32 && c < 128) return std::string(1, static_cast<char>(c));
  return fmt::format("\\x{:x}", c);
}

// Parses Python's format spec (Objects/stringlib/unicode_format.h,
// parse_internal_render_format_spec). `default_align` is '>' for numbers.
Spec parse_spec(Interp& I, std::string_view text, char default_align, const std::string& tname, char default_type) {
  std::vector<uint32_t> s = unicode::decode_all(text);
  Spec sp;
  size_t pos = 0, end = s.size();
  bool fill_given = false, align_given = false;
  if (end - pos >= 2 && is_align(s[pos + 1])) {
    sp.align = static_cast<char>(s[pos + 1]);
    sp.fill = s[pos];
    fill_given = align_given = true;
    pos += 2;
  } else if (end - pos >= 1 && is_align(s[pos])) {
    sp.align = static_cast<char>(s[pos]);
    align_given = true;
    ++pos;
  }
  if (pos < end && (s[pos] == '+' || s[pos] == '-' || s[pos] == ' ')) sp.sign = static_cast<char>(s[pos++]);
  if (pos < end && s[pos] == 'z') {
    sp.no_neg_0 = true;
    ++pos;
  }
  if (pos < end && s[pos] == '#') {
    sp.alt = true;
    ++pos;
  }
  if (!fill_given && pos < end && s[pos] == '0') {
    sp.fill = '0';
    if (!align_given && default_align == '>') sp.align = '=';
    ++pos;
  }
  auto get_integer = [&](int64_t& out) {
    size_t start = pos;
    int64_t v = 0;
    while (pos < end && s[pos] >= '0' && s[pos] <= '9') {
      if (v > (INT64_MAX - 9) / 10) raise_value_error(I, "Too many decimal digits in format string");
      v = v * 10 + (s[pos] - '0');
      ++pos;
    }
    if (pos > start) out = v;
    return pos > start;
  };
  get_integer(sp.width);
  if (pos < end && s[pos] == ',') {
    sp.grouping = ',';
    ++pos;
  }
  if (pos < end && s[pos] == '_') {
    if (sp.grouping) raise_value_error(I, "Cannot specify both ',' and '_'.");
    sp.grouping = '_';
    ++pos;
  }
  if (pos < end && s[pos] == ',' && sp.grouping == '_') raise_value_error(I, "Cannot specify both ',' and '_'.");
  if (pos < end && s[pos] == '.') {
    ++pos;
    if (!get_integer(sp.precision)) raise_value_error(I, "Format specifier missing precision");
  }
  if (end - pos > 1)
    raise_value_error(I, fmt::format("Invalid format specifier '{}' for object of type '{}'", text, tname));
  if (end - pos == 1) sp.type = s[pos];
  if (sp.grouping) {
    // The check sees the type's default when none is given ('s' for str).
    uint32_t type = sp.type ? sp.type : static_cast<uint32_t>(default_type);
    switch (type) {
      case 'd':
      case 'e':
      case 'f':
      case 'g':
      case 'E':
      case 'G':
      case '%':
      case 'F':
      case 0: break;
      case 'b':
      case 'o':
      case 'x':
      case 'X':
        if (sp.grouping == '_') break;
        [[fallthrough]];
      default: raise_value_error(I, fmt::format("Cannot specify '{}' with '{}'.", sp.grouping, code_text(type)));
    }
  }
  if (sp.align == 0) sp.align = default_align;
  return sp;
}

[[noreturn]] void unknown_code(Interp& I, uint32_t type, const std::string& tname) {
  raise_value_error(I, fmt::format("Unknown format code '{}' for object of type '{}'", code_text(type), tname));
}

// Groups `digits` from the right (CPython's _PyUnicode_InsertThousandsGrouping):
// when `min_width` > 0 the number is zero-padded to at least that many
// characters, separators included, and never starts with a separator.
std::string group_digits(const std::string& digits, char sep, size_t group, int64_t min_width) {
  if (!sep) {
    if (static_cast<int64_t>(digits.size()) >= min_width) return digits;
    return std::string(static_cast<size_t>(min_width) - digits.size(), '0') + digits;
  }
  std::string rev;  // built backwards
  int64_t remaining = static_cast<int64_t>(digits.size());
  int64_t mw = min_width > 0 ? min_width : 1;
  bool done = false;
  for (;;) {
    int64_t l = std::min<int64_t>(std::max<int64_t>(std::max<int64_t>(remaining, mw), 1), static_cast<int64_t>(group));
    int64_t n_chars = std::max<int64_t>(0, std::min(remaining, l));
    int64_t n_zeros = std::max<int64_t>(0, l - remaining);
    for (int64_t i = 0; i < n_chars; ++i) rev.push_back(digits[static_cast<size_t>(remaining - 1 - i)]);
    rev.append(static_cast<size_t>(n_zeros), '0');
    remaining -= n_chars;
    mw -= l;
    if (remaining <= 0 && mw <= 0) {
      done = true;
      break;
    }
    mw -= 1;
    rev.push_back(sep);
  }
  (void)done;
  return std::string(rev.rbegin(), rev.rend());
}

// Lays out sign, prefix, grouped integer digits and the rest of a number,
// then pads it to the requested width.
std::string layout_number(Interp& I, const Spec& sp, bool negative, std::string_view prefix, const std::string& intpart,
                          std::string_view rest, size_t group) {
  std::string sign;
  if (negative)
    sign = "-";
  else if (sp.sign == '+')
    sign = "+";
  else if (sp.sign == ' ')
    sign = " ";
  int64_t min_width = 0;
  if (sp.fill == '0' && sp.align == '=' && sp.width > 0) {
    check_result_size(I, static_cast<uint64_t>(sp.width));
    min_width = sp.width - static_cast<int64_t>(sign.size() + prefix.size() + rest.size());
  }
  // inf and nan have no digits to group (CPython pads them with bare zeros).
  std::string digits = group_digits(intpart, intpart.empty() ? 0 : sp.grouping, group, min_width);
  std::string head = sign + std::string(prefix);
  size_t len = head.size() + digits.size() + rest.size();  // all ASCII
  std::string body = digits + std::string(rest);
  if (sp.width <= static_cast<int64_t>(len)) return head + body;
  if (sp.align == '=')
    return head + pad_text(I, body, body.size(), sp.width - static_cast<int64_t>(head.size()), '>', sp.fill);
  return pad_text(I, head + body, len, sp.width, sp.align, sp.fill);
}

std::string format_int(Interp& I, int64_t v, const Spec& sp, const std::string& tname) {
  // CPython dispatches on the type before checking the other fields.
  switch (sp.type) {
    case 'b':
    case 'o':
    case 'x':
    case 'X':
    case 'd':
    case 'n':
    case 'c':
    case 0: break;
    default: unknown_code(I, sp.type, tname);
  }
  if (sp.precision != -1) raise_value_error(I, "Precision not allowed in integer format specifier");
  if (sp.no_neg_0) raise_value_error(I, "Negative zero coercion (z) not allowed in integer format specifier");
  int base = 10;
  const char* prefix = "";
  bool upper = false;
  switch (sp.type) {
    case 'b':
      base = 2;
      prefix = "0b";
      break;
    case 'o':
      base = 8;
      prefix = "0o";
      break;
    case 'x':
      base = 16;
      prefix = "0x";
      break;
    case 'X':
      base = 16;
      prefix = "0X";
      upper = true;
      break;
    case 'd':
    case 'n':
    case 0: break;
    case 'c': {
      if (sp.sign) raise_value_error(I, "Sign not allowed with integer format specifier 'c'");
      if (sp.alt) raise_value_error(I, "Alternate form (#) not allowed with integer format specifier 'c'");
      if (v < 0 || v > 0x10FFFF) raise_exc(I, "OverflowError", "%c arg not in range(0x110000)");
      std::string ch = unicode::encode(static_cast<uint32_t>(v));
      return pad_text(I, ch, 1, sp.width, sp.align == '=' ? '>' : sp.align, sp.fill);
    }
    default: unknown_code(I, sp.type, tname);
  }
  if (!sp.alt) prefix = "";
  return layout_number(I, sp, v < 0, prefix, int_digits(v, base, upper), "", base == 10 ? 3 : 4);
}

std::string format_float(Interp& I, double x, const Spec& sp, const std::string& tname) {
  char type;
  switch (sp.type) {
    case 0: type = sp.precision < 0 ? 'r' : 'R'; break;
    case 'n': type = 'g'; break;
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'g':
    case 'G':
    case '%': type = static_cast<char>(sp.type); break;
    default: unknown_code(I, sp.type, tname);
  }
  if (sp.precision > INT_MAX) raise_value_error(I, "precision too big");
  int64_t precision = sp.precision < 0 ? 6 : sp.precision;
  check_result_size(I, static_cast<uint64_t>(precision) + 400);
  bool negative = std::signbit(x) && !std::isnan(x);
  std::string body = float_body(std::fabs(x), type, precision, sp.alt);
  if (negative && sp.no_neg_0 && std::isfinite(x)) {
    bool all_zero = true;
    for (char c : body) {
      if (c == 'e' || c == 'E') break;
      if (c >= '1' && c <= '9') all_zero = false;
    }
    if (all_zero) negative = false;
  }
  size_t k = 0;
  while (k < body.size() && body[k] >= '0' && body[k] <= '9') ++k;
  return layout_number(I, sp, negative, "", body.substr(0, k), std::string_view(body).substr(k), 3);
}

std::string format_str(Interp& I, std::string_view s, const Spec& sp) {
  if (sp.type != 0 && sp.type != 's') unknown_code(I, sp.type, "str");
  if (sp.sign == ' ') raise_value_error(I, "Space not allowed in string format specifier");
  if (sp.sign) raise_value_error(I, "Sign not allowed in string format specifier");
  if (sp.no_neg_0) raise_value_error(I, "Negative zero coercion (z) not allowed in string format specifier");
  if (sp.alt) raise_value_error(I, "Alternate form (#) not allowed in string format specifier");
  if (sp.align == '=') raise_value_error(I, "'=' alignment not allowed in string format specifier");
  size_t len = unicode::count(s);
  std::string_view text = s;
  if (sp.precision >= 0 && static_cast<int64_t>(len) > sp.precision) {
    len = static_cast<size_t>(sp.precision);
    text = s.substr(0, unicode::offset_of(s, len));
  }
  return pad_text(I, text, len, sp.width, sp.align, sp.fill);
}

}  // namespace

std::string format_value(Interp& I, const Value& v, std::string_view spec) {
  switch (v.tag()) {
    case Tag::Int:
    case Tag::Bool: {
      bool is_bool = v.is_bool();
      if (spec.empty()) return is_bool ? (v.as_bool() ? "True" : "False") : std::to_string(v.as_int());
      int64_t n = is_bool ? (v.as_bool() ? 1 : 0) : v.as_int();
      const char* tname = is_bool ? "bool" : "int";
      Spec sp = parse_spec(I, spec, '>', tname, 'd');
      switch (sp.type) {
        case 'e':
        case 'E':
        case 'f':
        case 'F':
        case 'g':
        case 'G':
        case '%': return format_float(I, static_cast<double>(n), sp, tname);
        default: return format_int(I, n, sp, tname);
      }
    }
    case Tag::Float:
      if (spec.empty()) return float_repr(v.as_float());
      return format_float(I, v.as_float(), parse_spec(I, spec, '>', "float", 0), "float");
    default: break;
  }
  if (v.is(Kind::Str)) {
    if (spec.empty()) return v.as<Str>()->s;
    return format_str(I, v.as<Str>()->s, parse_spec(I, spec, '<', "str", 's'));
  }
  if (v.is_obj()) {
    // A user-defined (or native type's) __format__, but not a generic one on
    // `object` itself, which would only come back here.
    Class* cls = I.cls_of(v);
    for (Class* c = cls; c && c != I.cls_object.get(); c = c->base.get()) {
      if (c->dict.find(I.names().__format__)) {
        Value arg = str_value(std::string(spec));
        Value r = I.call_method(v, I.names().__format__, std::span<Value>(&arg, 1));
        if (!r.is(Kind::Str)) raise_type_error(I, fmt::format("__format__ must return a str, not {}", I.type_name(r)));
        return r.as<Str>()->s;
      }
    }
  }
  if (spec.empty()) return I.to_str(v);
  raise_type_error(I, fmt::format("unsupported format string passed to {}.__format__", I.type_name(v)));
}

}  // namespace msl
