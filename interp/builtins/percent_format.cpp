// The `%` operator on strings (printf-style formatting), ported from CPython's
// PyUnicode_Format: the order in which arguments are fetched and checked is
// kept, since it decides which error a malformed format reports (`'%5%' % ()`
// complains about missing arguments, `'%5%' % (1,)` about the '%').
#include <fmt/format.h>

#include <cmath>

#include "interp/builtins/format.h"
#include "interp/builtins/format_internal.h"
#include "interp/core/interp.h"
#include "interp/core/native_args.h"
#include "interp/builtins/unicode.h"

namespace msl {

namespace {

enum Flags : unsigned { kLeft = 1, kSign = 2, kBlank = 4, kAlt = 8, kZero = 16 };

bool is_mapping(Interp& I, const Value& v) {
  if (v.is(Kind::Tuple) || v.is(Kind::Str)) return false;
  if (v.is(Kind::Dict) || v.is(Kind::List) || v.is(Kind::Range)) return true;
  if (v.is(Kind::Instance) || v.is(Kind::NativeData)) return I.cls_of(v)->lookup(I.names().__getitem__) != nullptr;
  return false;
}

struct PercentFormatter {
  Interp& I;
  Value args;
  int64_t arglen, argidx;

  Value next_arg() {
    if (argidx < arglen) {
      int64_t i = argidx++;
      if (arglen < 0) return args;
      return args.as<Tuple>()->items[static_cast<size_t>(i)];
    }
    raise_type_error(I, "not enough arguments for format string");
  }
};

// Pads a formatted number: sign and prefix stay in front of zero padding.
std::string pad_number(Interp& I, const std::string& sign, const std::string& prefix, const std::string& digits,
                       int64_t width, unsigned flags) {
  int64_t len = static_cast<int64_t>(sign.size() + prefix.size() + digits.size());
  if (width <= len) return sign + prefix + digits;
  check_result_size(I, static_cast<uint64_t>(width));
  size_t pad = static_cast<size_t>(width - len);
  if (flags & kLeft) return sign + prefix + digits + std::string(pad, ' ');
  if (flags & kZero) return sign + prefix + std::string(pad, '0') + digits;
  return std::string(pad, ' ') + sign + prefix + digits;
}

}  // namespace

std::string percent_format(Interp& I, std::string_view fmt, const Value& args) {
  PercentFormatter ctx{I, args, -1, -2};
  if (args.is(Kind::Tuple)) {
    ctx.arglen = static_cast<int64_t>(args.as<Tuple>()->items.size());
    ctx.argidx = 0;
  }
  bool has_dict = is_mapping(I, args);
  Value dict = args;
  std::string out;
  out.reserve(fmt.size() + 16);
  size_t n = fmt.size();
  size_t i = 0;
  while (i < n) {
    size_t pct = fmt.find('%', i);
    if (pct == std::string_view::npos) {
      out.append(fmt.substr(i));
      break;
    }
    out.append(fmt.substr(i, pct - i));
    i = pct + 1;
    if (i >= n) raise_value_error(I, "incomplete format");
    if (fmt[i] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    if (fmt[i] == '(') {
      if (!has_dict) raise_type_error(I, "format requires a mapping");
      ++i;
      int depth = 1;
      size_t key_start = i;
      while (depth > 0 && i < n) {
        if (fmt[i] == '(')
          ++depth;
        else if (fmt[i] == ')')
          --depth;
        ++i;
      }
      if (depth > 0) raise_value_error(I, "incomplete format key");
      Value key = str_value(std::string(fmt.substr(key_start, i - 1 - key_start)));
      ctx.args = I.getitem(dict, key);
      ctx.arglen = -1;
      ctx.argidx = -2;
    }
    unsigned flags = 0;
    for (; i < n; ++i) {
      char c = fmt[i];
      if (c == '-')
        flags |= kLeft;
      else if (c == '+')
        flags |= kSign;
      else if (c == ' ')
        flags |= kBlank;
      else if (c == '#')
        flags |= kAlt;
      else if (c == '0')
        flags |= kZero;
      else
        break;
    }
    int64_t width = -1, prec = -1;
    auto star_arg = [&]() -> int64_t {
      Value v = ctx.next_arg();
      if (v.is_int()) return v.as_int();
      if (v.is_bool()) return v.as_bool() ? 1 : 0;
      raise_type_error(I, "* wants int");
    };
    auto digits = [&](const char* too_big) -> int64_t {
      int64_t v = 0;
      while (i < n && fmt[i] >= '0' && fmt[i] <= '9') {
        if (v > (INT32_MAX - 9) / 10) raise_value_error(I, too_big);
        v = v * 10 + (fmt[i] - '0');
        ++i;
      }
      return v;
    };
    if (i < n && fmt[i] == '*') {
      width = star_arg();
      if (width < 0) {
        flags |= kLeft;
        width = -width;
      }
      ++i;
    } else if (i < n && fmt[i] >= '0' && fmt[i] <= '9') {
      width = digits("width too big");
    }
    if (i < n && fmt[i] == '.') {
      ++i;
      prec = 0;
      if (i < n && fmt[i] == '*') {
        prec = star_arg();
        if (prec < 0) prec = 0;
        ++i;
      } else {
        prec = digits("precision too big");
      }
    }
    if (i < n && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
    if (i >= n) raise_value_error(I, "incomplete format");
    size_t type_pos = i;
    uint32_t type = unicode::decode(fmt, i);
    Value v = ctx.next_arg();

    switch (type) {
      case 's':
      case 'r':
      case 'a': {
        std::string s = type == 's' ? I.to_str(v) : type == 'r' ? I.repr(v) : ascii_escape(I.repr(v));
        size_t len = unicode::count(s);
        if (prec >= 0 && static_cast<int64_t>(len) > prec) {
          s.resize(unicode::offset_of(s, static_cast<size_t>(prec)));
          len = static_cast<size_t>(prec);
        }
        out += pad_text(I, s, len, width, (flags & kLeft) ? '<' : '>', ' ');
        break;
      }
      case 'd':
      case 'i':
      case 'u':
      case 'o':
      case 'x':
      case 'X': {
        int64_t value;
        if (v.is_int()) {
          value = v.as_int();
        } else if (v.is_bool()) {
          value = v.as_bool() ? 1 : 0;
        } else if (v.is_float() && type != 'o' && type != 'x' && type != 'X') {
          double d = v.as_float();
          if (std::isnan(d)) raise_value_error(I, "cannot convert float NaN to integer");
          if (std::isinf(d)) raise_exc(I, "OverflowError", "cannot convert float infinity to integer");
          double t = std::trunc(d);
          if (t < -9223372036854775808.0 || t >= 9223372036854775808.0)
            raise_exc(I, "OverflowError", "int too large to convert");
          value = static_cast<int64_t>(t);
        } else if ((v.is(Kind::Instance) || v.is(Kind::NativeData)) && I.cls_of(v)->lookup(I.names().__index__)) {
          value = arg_index(I, v);
        } else if (v.is_float() ||
                   ((v.is(Kind::Instance) || v.is(Kind::NativeData)) &&
                    (I.cls_of(v)->lookup(I.names().__int__) || I.cls_of(v)->lookup(I.names().__float__)))) {
          if (type == 'o' || type == 'x' || type == 'X')
            raise_type_error(
                I, fmt::format("%{} format: an integer is required, not {}", static_cast<char>(type), I.type_name(v)));
          Value r = I.call1(I.cls_int.value(), v);
          value = r.is_int() ? r.as_int() : arg_index(I, r);
        } else {
          if (type == 'o' || type == 'x' || type == 'X')
            raise_type_error(
                I, fmt::format("%{} format: an integer is required, not {}", static_cast<char>(type), I.type_name(v)));
          raise_type_error(
              I, fmt::format("%{} format: a real number is required, not {}", static_cast<char>(type), I.type_name(v)));
        }
        int base = type == 'o' ? 8 : (type == 'x' || type == 'X') ? 16 : 10;
        std::string digits_text = int_digits(value, base, type == 'X');
        if (prec > static_cast<int64_t>(digits_text.size())) {
          check_result_size(I, static_cast<uint64_t>(prec));
          digits_text.insert(0, static_cast<size_t>(prec) - digits_text.size(), '0');
        }
        std::string sign = value < 0 ? "-" : (flags & kSign) ? "+" : (flags & kBlank) ? " " : "";
        std::string prefix;
        if ((flags & kAlt) && base != 10) prefix = type == 'o' ? "0o" : type == 'x' ? "0x" : "0X";
        out += pad_number(I, sign, prefix, digits_text, width, flags);
        break;
      }
      case 'e':
      case 'E':
      case 'f':
      case 'F':
      case 'g':
      case 'G': {
        double d = arg_float(I, v);
        if (prec < 0) prec = 6;
        check_result_size(I, static_cast<uint64_t>(prec) + 400);
        bool negative = std::signbit(d) && !std::isnan(d);
        std::string body = float_body(std::fabs(d), static_cast<char>(type), prec, (flags & kAlt) != 0);
        std::string sign = negative ? "-" : (flags & kSign) ? "+" : (flags & kBlank) ? " " : "";
        out += pad_number(I, sign, "", body, width, flags);
        break;
      }
      case 'c': {
        std::string ch;
        if (v.is_int() || v.is_bool()) {
          int64_t c = v.is_int() ? v.as_int() : (v.as_bool() ? 1 : 0);
          if (c < 0 || c > 0x10FFFF) raise_exc(I, "OverflowError", "%c arg not in range(0x110000)");
          ch = unicode::encode(static_cast<uint32_t>(c));
        } else if (v.is(Kind::Str) && unicode::count(v.as<Str>()->s) == 1) {
          ch = v.as<Str>()->s;
        } else {
          raise_type_error(I, "%c requires int or char");
        }
        out += pad_text(I, ch, 1, width, (flags & kLeft) ? '<' : '>', ' ');
        break;
      }
      default: {
        size_t index = unicode::count(fmt.substr(0, type_pos));
        char shown = (type >= 31 && type <= 126) ? static_cast<char>(type) : '?';
        raise_value_error(I, fmt::format("unsupported format character '{}' (0x{:x}) at index {}", shown, type, index));
      }
    }
  }
  if (ctx.argidx < ctx.arglen && !has_dict) raise_type_error(I, "not all arguments converted during string formatting");
  return out;
}

}  // namespace msl
