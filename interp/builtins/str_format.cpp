// str.format: replacement fields `{name.attr[key]!conv:spec}` with automatic
// or manual numbering and nested fields inside the spec. The parser follows
// CPython's MarkupIterator/parse_field (Objects/stringlib/unicode_format.h)
// step by step, because which malformed string gives which message depends on
// the exact scanning order.
#include <fmt/format.h>

#include "interp/builtins/format.h"
#include "interp/builtins/format_internal.h"
#include "interp/core/interp.h"
#include "interp/core/native_args.h"

namespace msl {

namespace {

struct Formatter {
  Interp& I;
  std::span<Value> args;
  std::span<std::pair<Ref<Str>, Value>> kwargs;
  int auto_index = 0;
  enum { Unknown, Auto, Manual } numbering = Unknown;

  // Parses a decimal field index; -1 when `s` is not all digits.
  static int64_t parse_index(std::string_view s) {
    if (s.empty()) return -1;
    int64_t v = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return -1;
      if (v > (INT64_MAX - 9) / 10) return -1;
      v = v * 10 + (c - '0');
    }
    return v;
  }

  Value positional(int64_t index) {
    if (index < 0 || static_cast<size_t>(index) >= args.size())
      raise_exc(I, "IndexError", fmt::format("Replacement index {} out of range for positional args tuple", index));
    return args[static_cast<size_t>(index)];
  }

  Value keyword(std::string_view name) {
    for (auto& [k, v] : kwargs)
      if (k->s == name) return v;
    raise_key_error(I, str_value(std::string(name)));
  }

  Value lookup_field(std::string_view name) {
    size_t i = 0;
    while (i < name.size() && name[i] != '.' && name[i] != '[') ++i;
    std::string_view first = name.substr(0, i);
    Value obj;
    int64_t index = parse_index(first);
    if (first.empty()) {
      if (numbering == Manual)
        raise_value_error(I, "cannot switch from manual field specification to automatic field numbering");
      numbering = Auto;
      obj = positional(auto_index++);
    } else if (index >= 0) {
      if (numbering == Auto)
        raise_value_error(I, "cannot switch from automatic field numbering to manual field specification");
      numbering = Manual;
      obj = positional(index);
    } else {
      obj = keyword(first);
    }
    while (i < name.size()) {
      char c = name[i++];
      if (c == '.') {
        size_t start = i;
        while (i < name.size() && name[i] != '.' && name[i] != '[') ++i;
        std::string_view attr = name.substr(start, i - start);
        if (attr.empty()) raise_value_error(I, "Empty attribute in format string");
        obj = I.getattr(obj, I.intern(attr));
      } else if (c == '[') {
        size_t start = i;
        while (i < name.size() && name[i] != ']') ++i;
        if (i >= name.size()) raise_value_error(I, "Missing ']' in format string");
        std::string_view key = name.substr(start, i - start);
        ++i;
        if (key.empty()) raise_value_error(I, "Empty attribute in format string");
        int64_t k = parse_index(key);
        obj = I.getitem(obj, k >= 0 ? Value::integer(k) : str_value(std::string(key)));
        if (i < name.size() && name[i] != '.' && name[i] != '[')
          raise_value_error(I, "Only '.' or '[' may follow ']' in format field specifier");
      } else {
        raise_value_error(I, "Only '.' or '[' may follow ']' in format field specifier");
      }
    }
    return obj;
  }

  void render(std::string_view s, int depth, std::string& out) {
    if (depth <= 0) raise_value_error(I, "Max string recursion exceeded");
    size_t pos = 0, end = s.size();
    while (pos < end) {
      // Literal text up to the next brace.
      size_t start = pos;
      char c = 0;
      bool markup = false;
      while (pos < end) {
        c = s[pos++];
        if (c == '{' || c == '}') {
          markup = true;
          break;
        }
      }
      bool at_end = pos >= end;
      size_t len = pos - start;
      if (markup && c == '}' && (at_end || s[pos] != '}'))
        raise_value_error(I, "Single '}' encountered in format string");
      if (markup && at_end && c == '{') raise_value_error(I, "Single '{' encountered in format string");
      if (markup && !at_end) {
        if (s[pos] == c) {
          ++pos;  // "{{" or "}}": a literal brace
          markup = false;
        } else {
          --len;
        }
      }
      out.append(s.substr(start, len));
      if (!markup) continue;
      render_field(s, pos, depth, out);
    }
  }

  // Parses one field starting just after its '{' (CPython's parse_field).
  void render_field(std::string_view s, size_t& pos, int depth, std::string& out) {
    size_t end = s.size();
    size_t name_start = pos;
    char c = 0;
    while (pos < end) {
      c = s[pos++];
      if (c == '{') raise_value_error(I, "unexpected '{' in field name");
      if (c == '[') {
        while (pos < end && s[pos] != ']') ++pos;
        continue;
      }
      if (c == '}' || c == ':' || c == '!') break;
    }
    bool terminated = c == '}' || c == ':' || c == '!';
    std::string_view name = s.substr(name_start, (terminated ? pos - 1 : pos) - name_start);
    char conversion = 0;
    std::string_view spec;
    bool spec_needs_expanding = false;
    if (terminated && (c == '!' || c == ':')) {
      if (c == '!') {
        if (pos >= end) raise_value_error(I, "end of string while looking for conversion specifier");
        conversion = s[pos++];
        if (pos < end) {
          char d = s[pos++];
          if (d == '}') {
            emit(name, conversion, spec, false, depth, out);
            return;
          }
          if (d != ':') raise_value_error(I, "expected ':' after conversion specifier");
        }
      }
      size_t spec_start = pos;
      int count = 1;
      while (pos < end) {
        char d = s[pos++];
        if (d == '{') {
          spec_needs_expanding = true;
          ++count;
        } else if (d == '}') {
          if (--count == 0) {
            spec = s.substr(spec_start, pos - 1 - spec_start);
            emit(name, conversion, spec, spec_needs_expanding, depth, out);
            return;
          }
        }
      }
      raise_value_error(I, "unmatched '{' in format spec");
    }
    if (!terminated || c != '}') raise_value_error(I, "expected '}' before end of string");
    emit(name, conversion, spec, false, depth, out);
  }

  void emit(std::string_view name, char conversion, std::string_view spec, bool expand, int depth, std::string& out) {
    Value obj = lookup_field(name);
    switch (conversion) {
      case 0: break;
      case 'r': obj = str_value(I.repr(obj)); break;
      case 's': obj = str_value(I.to_str(obj)); break;
      case 'a': obj = str_value(ascii_escape(I.repr(obj))); break;
      default: {
        unsigned char u = static_cast<unsigned char>(conversion);
        if (u > 32 && u < 128) raise_value_error(I, fmt::format("Unknown conversion specifier {}", conversion));
        raise_value_error(I, fmt::format("Unknown conversion specifier \\x{:x}", u));
      }
    }
    if (expand) {
      std::string expanded;
      render(spec, depth - 1, expanded);
      out += format_value(I, obj, expanded);
    } else {
      out += format_value(I, obj, spec);
    }
  }
};

}  // namespace

std::string str_format(Interp& I, std::string_view fmt, std::span<Value> args,
                       std::span<std::pair<Ref<Str>, Value>> kwargs) {
  Formatter f{I, args, kwargs};
  std::string out;
  out.reserve(fmt.size() + 16);
  f.render(fmt, 2, out);
  return out;
}

}  // namespace msl
