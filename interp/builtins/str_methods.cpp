// Methods of str. Strings are stored as UTF-8 but every index a method takes
// or returns counts code points, as in Python; ASCII strings (the common case)
// skip the conversion because their byte and code-point indices coincide.
// Substring search works on bytes directly: a valid UTF-8 needle can only
// match at code-point boundaries.
#include <fmt/format.h>

#include <algorithm>

#include "interp/builtins/builtins.h"
#include "interp/builtins/format.h"
#include "interp/core/native_args.h"
#include "interp/builtins/unicode.h"

namespace msl {

namespace {

// Code-point view of a Str: maps code-point indices to byte offsets.
struct Text {
  const std::string& s;
  bool ascii;
  std::vector<size_t> offs;  // non-ASCII only: byte offset of each code point, plus s.size()

  explicit Text(Str* str) : s(str->s), ascii(str->is_ascii()) {
    if (!ascii) {
      offs.reserve(s.size() + 1);
      for (size_t i = 0; i < s.size();) {
        offs.push_back(i);
        unicode::decode(s, i);
      }
      offs.push_back(s.size());
    }
  }
  int64_t length() const { return ascii ? static_cast<int64_t>(s.size()) : static_cast<int64_t>(offs.size() - 1); }
  size_t off(int64_t k) const { return ascii ? static_cast<size_t>(k) : offs[static_cast<size_t>(k)]; }
  // Code-point index of byte offset b (which is on a boundary).
  int64_t index_of(size_t b) const {
    if (ascii) return static_cast<int64_t>(b);
    return static_cast<int64_t>(std::lower_bound(offs.begin(), offs.end(), b) - offs.begin());
  }
};

// A start/end argument of the search methods.
int64_t slice_index(Interp& I, const Value& v) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool() ? 1 : 0;
  if ((v.is(Kind::Instance) || v.is(Kind::NativeData)) && I.cls_of(v)->lookup(I.names().__index__))
    return arg_index(I, v);
  raise_type_error(I, "slice indices must be integers or None or have an __index__ method");
}

// Python's ADJUST_INDICES for optional start/end arguments (None = default).
void adjust_indices(Interp& I, const Value& start_v, const Value& end_v, int64_t len, int64_t& start, int64_t& end) {
  start = given_not_none(start_v) ? slice_index(I, start_v) : 0;
  end = given_not_none(end_v) ? slice_index(I, end_v) : len;
  if (end > len) {
    end = len;
  } else if (end < 0) {
    end += len;
    if (end < 0) end = 0;
  }
  if (start < 0) {
    start += len;
    if (start < 0) start = 0;
  }
}

Str* sub_arg(Interp& I, const Value& v) {
  if (!v.is(Kind::Str)) raise_type_error(I, fmt::format("must be str, not {}", I.type_name(v)));
  return v.as<Str>();
}

Value make_str_list(std::vector<std::string> parts) {
  std::vector<Value> items;
  items.reserve(parts.size());
  for (auto& p : parts) items.push_back(str_value(std::move(p)));
  return new_list(std::move(items));
}

Value piece(std::string_view s) { return Value::object(new Str(std::string(s))); }

// Python's whitespace for ASCII bytes: \t \n \v \f \r, \x1c-\x1f and space.
inline bool ascii_space(unsigned char c) { return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20); }

// ------------------------------------------------------------ searching

// find/rfind/index/rindex/count share argument handling.
struct SearchArgs {
  Str* self;
  Str* sub;
  int64_t start, end;
};

SearchArgs search_args(Interp& I, Args& a, const char* name, const Text& t) {
  Value v[3];
  Args rest = method_args(a);
  bind_positional_legacy(I, name, rest, 1, 3, v, "str");
  SearchArgs r;
  r.self = a.pos[0].as<Str>();
  // CPython converts start/end while parsing, before it checks sub.
  adjust_indices(I, v[1], v[2], t.length(), r.start, r.end);
  r.sub = sub_arg(I, v[0]);
  return r;
}

int64_t find_impl(Interp& I, Args& a, const char* name, bool reverse) {
  Str* self = self_str(I, a, name);
  Text t(self);
  SearchArgs r = search_args(I, a, name, t);
  const std::string& sub = r.sub->s;
  if (r.end - r.start < 0 || (sub.empty() && r.start > t.length())) return -1;
  if (sub.empty()) return reverse ? r.end : r.start;
  size_t b0 = t.off(r.start), b1 = t.off(r.end);
  std::string_view window = std::string_view(t.s).substr(b0, b1 - b0);
  size_t pos = reverse ? window.rfind(sub) : window.find(sub);
  if (pos == std::string_view::npos) return -1;
  return t.index_of(b0 + pos);
}

Value str_find(Interp& I, Args& a, Object*) { return Value::integer(find_impl(I, a, "find", false)); }
Value str_rfind(Interp& I, Args& a, Object*) { return Value::integer(find_impl(I, a, "rfind", true)); }

Value str_index(Interp& I, Args& a, Object*) {
  int64_t i = find_impl(I, a, "index", false);
  if (i < 0) raise_value_error(I, "substring not found");
  return Value::integer(i);
}

Value str_rindex(Interp& I, Args& a, Object*) {
  int64_t i = find_impl(I, a, "rindex", true);
  if (i < 0) raise_value_error(I, "substring not found");
  return Value::integer(i);
}

Value str_count(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "count");
  Text t(self);
  SearchArgs r = search_args(I, a, "count", t);
  const std::string& sub = r.sub->s;
  if (r.end - r.start < 0 || r.start > t.length()) return Value::integer(0);
  if (sub.empty()) return Value::integer(r.end - r.start + 1);
  size_t b0 = t.off(r.start), b1 = t.off(r.end);
  std::string_view window = std::string_view(t.s).substr(b0, b1 - b0);
  int64_t n = 0;
  for (size_t pos = window.find(sub); pos != std::string_view::npos; pos = window.find(sub, pos + sub.size())) ++n;
  return Value::integer(n);
}

// startswith/endswith: prefix may be a tuple of str.
bool tail_match(const Text& t, const std::string& sub, int64_t start, int64_t end, bool at_end) {
  int64_t sub_len = static_cast<int64_t>(unicode::count(sub));
  if (end - sub_len < start) return false;
  if (sub.empty()) return true;
  size_t b0 = t.off(start), b1 = t.off(end);
  std::string_view window = std::string_view(t.s).substr(b0, b1 - b0);
  if (window.size() < sub.size()) return false;
  return at_end ? window.substr(window.size() - sub.size()) == sub : window.substr(0, sub.size()) == sub;
}

Value starts_ends(Interp& I, Args& a, const char* name, bool at_end) {
  Str* self = self_str(I, a, name);
  Value v[3];
  Args rest = method_args(a);
  bind_positional_legacy(I, name, rest, 1, 3, v, "str");
  Text t(self);
  int64_t start, end;
  adjust_indices(I, v[1], v[2], t.length(), start, end);
  if (v[0].is(Kind::Str)) return Value::boolean(tail_match(t, v[0].as<Str>()->s, start, end, at_end));
  if (v[0].is(Kind::Tuple)) {
    for (const Value& p : v[0].as<Tuple>()->items) {
      if (!p.is(Kind::Str))
        raise_type_error(I, fmt::format("tuple for {} must only contain str, not {}", name, I.type_name(p)));
      if (tail_match(t, p.as<Str>()->s, start, end, at_end)) return Value::boolean(true);
    }
    return Value::boolean(false);
  }
  raise_type_error(I, fmt::format("{} first arg must be str or a tuple of str, not {}", name, I.type_name(v[0])));
}

Value str_startswith(Interp& I, Args& a, Object*) { return starts_ends(I, a, "startswith", false); }
Value str_endswith(Interp& I, Args& a, Object*) { return starts_ends(I, a, "endswith", true); }

// ------------------------------------------------------------- splitting

// Python whitespace at byte offset i (advancing past it), or false.
bool space_at(const std::string& s, size_t& i) {
  unsigned char c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    if (!unicode::is_space(c)) return false;
    ++i;
    return true;
  }
  size_t j = i;
  if (!unicode::is_space(unicode::decode(s, j))) return false;
  i = j;
  return true;
}

void skip_char(const std::string& s, size_t& i) {
  if (static_cast<unsigned char>(s[i]) < 0x80)
    ++i;
  else
    unicode::decode(s, i);
}

std::vector<std::string> split_whitespace(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t i = 0, n = s.size();
  while (i < n) {
    while (i < n && space_at(s, i)) {
    }
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      // The rest, leading whitespace dropped, trailing whitespace kept.
      out.push_back(s.substr(i));
      break;
    }
    size_t start = i;
    size_t j = i;
    while (j < n) {
      size_t k = j;
      if (space_at(s, k)) break;
      skip_char(s, j);
    }
    out.push_back(s.substr(start, j - start));
    i = j;
  }
  return out;
}

// Byte offset of the code point before offset i.
size_t prev_char(const std::string& s, size_t i) {
  size_t j = i - 1;
  while (j > 0 && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80 && i - j < 4) --j;
  size_t k = j;
  unicode::decode(s, k);
  return k == i ? j : i - 1;
}

bool space_before(const std::string& s, size_t i) {
  size_t j = prev_char(s, i);
  size_t k = j;
  return unicode::is_space(unicode::decode(s, k));
}

std::vector<std::string> rsplit_whitespace(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> out;
  size_t i = s.size();
  while (i > 0) {
    while (i > 0 && space_before(s, i)) i = prev_char(s, i);
    if (i == 0) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      out.push_back(s.substr(0, i));
      break;
    }
    size_t end = i;
    while (i > 0 && !space_before(s, i)) i = prev_char(s, i);
    out.push_back(s.substr(i, end - i));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

struct SplitArgs {
  Str* self;
  Str* sep;  // null for whitespace
  int64_t maxsplit;
};

SplitArgs split_args(Interp& I, Args& a, const char* name) {
  SplitArgs r;
  r.self = self_str(I, a, name);
  Value v[2];
  Args rest = method_args(a);
  bind_args(I, name, rest, {"sep", "maxsplit"}, 0, v);
  // As in CPython, maxsplit is converted while parsing, before sep is checked.
  r.maxsplit = given(v[1]) ? arg_index(I, v[1]) : -1;
  r.sep = nullptr;
  if (given_not_none(v[0])) {
    if (!v[0].is(Kind::Str)) raise_type_error(I, fmt::format("must be str or None, not {}", I.type_name(v[0])));
    r.sep = v[0].as<Str>();
    if (r.sep->s.empty()) raise_value_error(I, "empty separator");
  }
  return r;
}

// split() on an ASCII string: a byte loop, the common case for data files.
Value split_ascii_whitespace(std::string_view s, int64_t maxsplit) {
  std::vector<Value> out;
  size_t i = 0, n = s.size();
  while (i < n) {
    while (i < n && ascii_space(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      out.push_back(piece(s.substr(i)));
      break;
    }
    size_t start = i;
    while (i < n && !ascii_space(static_cast<unsigned char>(s[i]))) ++i;
    out.push_back(piece(s.substr(start, i - start)));
  }
  return new_list(std::move(out));
}

Value str_split(Interp& I, Args& a, Object*) {
  SplitArgs r = split_args(I, a, "split");
  const std::string& s = r.self->s;
  if (!r.sep) {
    if (r.self->is_ascii()) return split_ascii_whitespace(s, r.maxsplit);
    return make_str_list(split_whitespace(s, r.maxsplit));
  }
  std::string_view sv = s;
  const std::string& sep = r.sep->s;
  std::vector<Value> out;
  size_t start = 0;
  while (r.maxsplit < 0 || static_cast<int64_t>(out.size()) < r.maxsplit) {
    size_t pos = sv.find(sep, start);
    if (pos == std::string::npos) break;
    out.push_back(piece(sv.substr(start, pos - start)));
    start = pos + sep.size();
  }
  out.push_back(piece(sv.substr(start)));
  return new_list(std::move(out));
}

Value str_rsplit(Interp& I, Args& a, Object*) {
  SplitArgs r = split_args(I, a, "rsplit");
  const std::string& s = r.self->s;
  if (!r.sep) return make_str_list(rsplit_whitespace(s, r.maxsplit));
  const std::string& sep = r.sep->s;
  std::vector<std::string> out;
  size_t end = s.size();
  while (r.maxsplit < 0 || static_cast<int64_t>(out.size()) < r.maxsplit) {
    if (end < sep.size()) break;
    size_t pos = s.rfind(sep, end - sep.size());
    if (pos == std::string::npos) break;
    out.push_back(s.substr(pos + sep.size(), end - pos - sep.size()));
    end = pos;
  }
  out.push_back(s.substr(0, end));
  std::reverse(out.begin(), out.end());
  return make_str_list(std::move(out));
}

Value str_splitlines(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "splitlines");
  Value v[1];
  Args rest = method_args(a);
  bind_args(I, "splitlines", rest, {"keepends"}, 0, v);
  bool keepends = given(v[0]) && arg_index(I, v[0]) != 0;
  const std::string& s = self->s;
  std::vector<std::string> out;
  size_t i = 0, start = 0, n = s.size();
  while (i < n) {
    size_t at = i;
    uint32_t c = static_cast<unsigned char>(s[i]) < 0x80 ? static_cast<unsigned char>(s[i++]) : unicode::decode(s, i);
    if (!unicode::is_linebreak(c)) continue;
    if (c == '\r' && i < n && s[i] == '\n') ++i;
    out.push_back(s.substr(start, (keepends ? i : at) - start));
    start = i;
  }
  if (start < n) out.push_back(s.substr(start));
  return make_str_list(std::move(out));
}

Value partition_impl(Interp& I, Args& a, const char* name, bool reverse) {
  Str* self = self_str(I, a, name);
  Value v[1] = {method_onearg(I, a, "str", name)};
  Str* sep = sub_arg(I, v[0]);
  if (sep->s.empty()) raise_value_error(I, "empty separator");
  const std::string& s = self->s;
  size_t pos = reverse ? s.rfind(sep->s) : s.find(sep->s);
  if (pos == std::string::npos) {
    if (reverse) return new_tuple({str_value(""), str_value(""), a.pos[0]});
    return new_tuple({a.pos[0], str_value(""), str_value("")});
  }
  return new_tuple({str_value(s.substr(0, pos)), v[0], str_value(s.substr(pos + sep->s.size()))});
}

Value str_partition(Interp& I, Args& a, Object*) { return partition_impl(I, a, "partition", false); }
Value str_rpartition(Interp& I, Args& a, Object*) { return partition_impl(I, a, "rpartition", true); }

// --------------------------------------------------------------- joining

Value str_join(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "join");
  if (a.pos.size() != 2 || !a.kw.empty())
    raise_type_error(I, fmt::format("str.join() takes exactly one argument ({} given)", a.pos.size() - 1));
  const Value& arg = a.pos[1];
  std::vector<Value> owned;
  const std::vector<Value>* items;
  // No user code runs while joining (items must be str), so a list can be
  // read in place without a protective copy.
  if (arg.is(Kind::List)) {
    items = &arg.as<List>()->items;
  } else if (arg.is(Kind::Tuple)) {
    items = &arg.as<Tuple>()->items;
  } else {
    Value it;
    try {
      it = I.iter(arg);
    } catch (MslError& e) {
      if (exception_matches(I, e, "TypeError")) raise_type_error(I, "can only join an iterable");
      throw;
    }
    owned = I.to_vector(it);
    items = &owned;
  }
  uint64_t total = 0;
  for (size_t i = 0; i < items->size(); ++i) {
    const Value& x = (*items)[i];
    if (!x.is(Kind::Str))
      raise_type_error(I, fmt::format("sequence item {}: expected str instance, {} found", i, I.type_name(x)));
    total += x.as<Str>()->s.size() + (i ? self->s.size() : 0);
  }
  check_result_size(I, total);
  if (items->size() == 1) return (*items)[0];
  std::string out;
  out.reserve(static_cast<size_t>(total));
  for (size_t i = 0; i < items->size(); ++i) {
    if (i) out += self->s;
    out += (*items)[i].as<Str>()->s;
  }
  return str_value(std::move(out));
}

Value str_replace(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "replace");
  Value v[3];
  Args rest = method_args(a);
  bind_positional(I, "replace", rest, 2, 3, v, "str");
  Str* old_s = arg_str(I, v[0], "replace() argument 1");
  Str* new_s = arg_str(I, v[1], "replace() argument 2");
  int64_t count = given(v[2]) ? arg_index(I, v[2]) : -1;
  const std::string& s = self->s;
  const std::string& from = old_s->s;
  const std::string& to = new_s->s;
  std::string out;
  if (from.empty()) {
    // Insert `to` before every code point and at the end, up to count times.
    int64_t len = static_cast<int64_t>(unicode::count(s));
    int64_t n = count < 0 ? len + 1 : std::min(count, len + 1);
    check_result_size(I, s.size() + static_cast<uint64_t>(n) * to.size());
    int64_t done = 0;
    for (size_t i = 0; i < s.size();) {
      if (done < n) {
        out += to;
        ++done;
      }
      size_t j = i;
      skip_char(s, j);
      out.append(s, i, j - i);
      i = j;
    }
    if (done < n) out += to;
    return str_value(std::move(out));
  }
  // Count first, so the size check happens before any allocation.
  int64_t matches = 0;
  for (size_t pos = s.find(from); pos != std::string::npos && (count < 0 || matches < count);
       pos = s.find(from, pos + from.size()))
    ++matches;
  if (matches == 0) return a.pos[0];
  check_result_size(I, s.size() + static_cast<uint64_t>(matches) * to.size());
  out.reserve(s.size() + static_cast<size_t>(matches) * to.size());
  size_t start = 0;
  for (int64_t k = 0; k < matches; ++k) {
    size_t pos = s.find(from, start);
    out.append(s, start, pos - start);
    out += to;
    start = pos + from.size();
  }
  out.append(s, start, std::string::npos);
  return str_value(std::move(out));
}

// --------------------------------------------------------------- stripping

Value strip_impl(Interp& I, Args& a, const char* name, bool left, bool right) {
  Str* self = self_str(I, a, name);
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, name, rest, 0, 1, v, "str");
  std::vector<uint32_t> chars;
  bool whitespace = true;
  if (given_not_none(v[0])) {
    if (!v[0].is(Kind::Str)) raise_type_error(I, fmt::format("{} arg must be None or str", name));
    chars = unicode::decode_all(v[0].as<Str>()->s);
    whitespace = false;
  }
  auto strip_it = [&](uint32_t c) {
    return whitespace ? unicode::is_space(c) : std::find(chars.begin(), chars.end(), c) != chars.end();
  };
  const std::string& s = self->s;
  size_t b = 0, e = s.size();
  if (left) {
    while (b < e) {
      size_t j = b;
      if (!strip_it(unicode::decode(s, j))) break;
      b = j;
    }
  }
  if (right) {
    while (e > b) {
      size_t j = prev_char(s, e);
      size_t k = j;
      if (!strip_it(unicode::decode(s, k))) break;
      e = j;
    }
  }
  if (b == 0 && e == s.size()) return a.pos[0];
  return str_value(s.substr(b, e - b));
}

Value str_strip(Interp& I, Args& a, Object*) { return strip_impl(I, a, "strip", true, true); }
Value str_lstrip(Interp& I, Args& a, Object*) { return strip_impl(I, a, "lstrip", true, false); }
Value str_rstrip(Interp& I, Args& a, Object*) { return strip_impl(I, a, "rstrip", false, true); }

Value str_removeprefix(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "removeprefix");
  Value v[1] = {method_onearg(I, a, "str", "removeprefix")};
  const std::string& p = arg_str(I, v[0], "removeprefix() argument")->s;
  if (!p.empty() && self->s.compare(0, p.size(), p) == 0) return str_value(self->s.substr(p.size()));
  return a.pos[0];
}

Value str_removesuffix(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "removesuffix");
  Value v[1] = {method_onearg(I, a, "str", "removesuffix")};
  const std::string& p = arg_str(I, v[0], "removesuffix() argument")->s;
  const std::string& s = self->s;
  if (!p.empty() && s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0)
    return str_value(s.substr(0, s.size() - p.size()));
  return a.pos[0];
}

// --------------------------------------------------------------- padding

uint32_t fill_char(Interp& I, const Value& v) {
  if (!given(v)) return ' ';
  if (!v.is(Kind::Str))
    raise_type_error(I, fmt::format("The fill character must be a unicode character, not {}", I.type_name(v)));
  const std::string& f = v.as<Str>()->s;
  if (unicode::count(f) != 1) raise_type_error(I, "The fill character must be exactly one character long");
  size_t i = 0;
  return unicode::decode(f, i);
}

Value pad_impl(Interp& I, Args& a, const char* name, char align) {
  Str* self = self_str(I, a, name);
  Value v[2];
  Args rest = method_args(a);
  bind_positional(I, name, rest, 1, 2, v, "str");
  int64_t width = arg_index(I, v[0]);
  uint32_t fill = fill_char(I, v[1]);
  int64_t len = static_cast<int64_t>(self->length());
  if (width <= len) return a.pos[0];
  std::string f = unicode::encode(fill);
  check_result_size(I, static_cast<uint64_t>(width - len));  // first alone, so the product cannot wrap
  check_result_size(I, static_cast<uint64_t>(width - len) * f.size() + self->s.size());
  int64_t marg = width - len;
  int64_t left = align == '<' ? 0 : align == '>' ? marg : marg / 2 + (marg & width & 1);
  std::string out;
  out.reserve(static_cast<size_t>(marg) * f.size() + self->s.size());
  for (int64_t i = 0; i < left; ++i) out += f;
  out += self->s;
  for (int64_t i = left; i < marg; ++i) out += f;
  return str_value(std::move(out));
}

Value str_center(Interp& I, Args& a, Object*) { return pad_impl(I, a, "center", '^'); }
Value str_ljust(Interp& I, Args& a, Object*) { return pad_impl(I, a, "ljust", '<'); }
Value str_rjust(Interp& I, Args& a, Object*) { return pad_impl(I, a, "rjust", '>'); }

Value str_zfill(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "zfill");
  Value v[1] = {method_onearg(I, a, "str", "zfill")};
  int64_t width = arg_index(I, v[0]);
  int64_t len = static_cast<int64_t>(self->length());
  if (width <= len) return a.pos[0];
  check_result_size(I, static_cast<uint64_t>(width - len) + self->s.size());
  const std::string& s = self->s;
  std::string out(static_cast<size_t>(width - len), '0');
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    out.insert(out.begin(), s[0]);
    out.append(s, 1, std::string::npos);
  } else {
    out += s;
  }
  return str_value(std::move(out));
}

Value str_expandtabs(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "expandtabs");
  Value v[1];
  Args rest = method_args(a);
  bind_args(I, "expandtabs", rest, {"tabsize"}, 0, v);
  int64_t tabsize = given(v[0]) ? arg_index(I, v[0]) : 8;
  const std::string& s = self->s;
  std::string out;
  int64_t col = 0;
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (c == '\t') {
      ++i;
      if (tabsize > 0) {
        int64_t spaces = tabsize - col % tabsize;
        check_result_size(I, out.size() + static_cast<uint64_t>(spaces));
        out.append(static_cast<size_t>(spaces), ' ');
        col += spaces;
      }
      continue;
    }
    size_t j = i;
    skip_char(s, j);
    out.append(s, i, j - i);
    i = j;
    col = (c == '\n' || c == '\r') ? 0 : col + 1;
  }
  return str_value(std::move(out));
}

// ------------------------------------------------------------------- case

template <class F>
Value map_chars(Interp& I, Args& a, const char* name, F f) {
  Str* self = self_str(I, a, name);
  method_noargs(I, a, "str", name);
  const std::string& s = self->s;
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) f(out, unicode::decode(s, i));
  return str_value(std::move(out));
}

// upper()/lower() of an ASCII string, byte by byte.
Value ascii_case(Interp& I, Args& a, const char* name, bool upper) {
  Str* self = self_str(I, a, name);
  method_noargs(I, a, "str", name);
  std::string out = self->s;
  for (char& c : out) {
    if (upper ? (c >= 'a' && c <= 'z') : (c >= 'A' && c <= 'Z')) c = static_cast<char>(c ^ 0x20);
  }
  return str_value(std::move(out));
}

Value str_upper(Interp& I, Args& a, Object*) {
  if (!a.pos.empty() && a.pos[0].is(Kind::Str) && a.pos[0].as<Str>()->is_ascii())
    return ascii_case(I, a, "upper", true);
  return map_chars(I, a, "upper", [](std::string& o, uint32_t c) { unicode::append_upper(o, c); });
}
Value str_lower(Interp& I, Args& a, Object*) {
  if (!a.pos.empty() && a.pos[0].is(Kind::Str) && a.pos[0].as<Str>()->is_ascii())
    return ascii_case(I, a, "lower", false);
  return map_chars(I, a, "lower", [](std::string& o, uint32_t c) { unicode::append_lower(o, c); });
}
Value str_casefold(Interp& I, Args& a, Object*) {
  return map_chars(I, a, "casefold", [](std::string& o, uint32_t c) {
    if (c == 0xDF)
      o += "ss";
    else
      unicode::append_lower(o, c);
  });
}
Value str_swapcase(Interp& I, Args& a, Object*) {
  return map_chars(I, a, "swapcase", [](std::string& o, uint32_t c) {
    if (unicode::is_upper(c))
      unicode::append_lower(o, c);
    else if (unicode::is_lower(c))
      unicode::append_upper(o, c);
    else
      unicode::append(o, c);
  });
}

Value str_title(Interp& I, Args& a, Object*) {
  bool prev_cased = false;
  return map_chars(I, a, "title", [&](std::string& o, uint32_t c) {
    uint32_t m = prev_cased ? unicode::to_lower(c) : unicode::to_upper(c);
    unicode::append(o, m);
    prev_cased = unicode::is_cased(m);
  });
}

Value str_capitalize(Interp& I, Args& a, Object*) {
  bool first = true;
  return map_chars(I, a, "capitalize", [&](std::string& o, uint32_t c) {
    if (first)
      unicode::append(o, unicode::to_upper(c));
    else
      unicode::append_lower(o, c);
    first = false;
  });
}

// ------------------------------------------------------------- predicates

template <class P>
Value all_chars(Interp& I, Args& a, const char* name, P pred) {
  Str* self = self_str(I, a, name);
  method_noargs(I, a, "str", name);
  const std::string& s = self->s;
  if (s.empty()) return Value::boolean(false);
  for (size_t i = 0; i < s.size();)
    if (!pred(unicode::decode(s, i))) return Value::boolean(false);
  return Value::boolean(true);
}

Value str_isdigit(Interp& I, Args& a, Object*) { return all_chars(I, a, "isdigit", unicode::is_digit); }
Value str_isdecimal(Interp& I, Args& a, Object*) { return all_chars(I, a, "isdecimal", unicode::is_decimal); }
Value str_isnumeric(Interp& I, Args& a, Object*) { return all_chars(I, a, "isnumeric", unicode::is_numeric); }
Value str_isalpha(Interp& I, Args& a, Object*) { return all_chars(I, a, "isalpha", unicode::is_alpha); }
Value str_isalnum(Interp& I, Args& a, Object*) { return all_chars(I, a, "isalnum", unicode::is_alnum); }
Value str_isspace(Interp& I, Args& a, Object*) { return all_chars(I, a, "isspace", unicode::is_space); }

Value str_isascii(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "isascii");
  method_noargs(I, a, "str", "isascii");
  return Value::boolean(self->is_ascii());
}

Value str_isprintable(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "isprintable");
  method_noargs(I, a, "str", "isprintable");
  const std::string& s = self->s;
  for (size_t i = 0; i < s.size();)
    if (!unicode::is_printable(unicode::decode(s, i))) return Value::boolean(false);
  return Value::boolean(true);
}

// isupper/islower: at least one cased character, none of the other case.
Value case_pred(Interp& I, Args& a, const char* name, bool upper) {
  Str* self = self_str(I, a, name);
  method_noargs(I, a, "str", name);
  const std::string& s = self->s;
  bool cased = false;
  for (size_t i = 0; i < s.size();) {
    uint32_t c = unicode::decode(s, i);
    if (upper ? unicode::is_lower(c) : unicode::is_upper(c)) return Value::boolean(false);
    if (upper ? unicode::is_upper(c) : unicode::is_lower(c)) cased = true;
  }
  return Value::boolean(cased);
}

Value str_isupper(Interp& I, Args& a, Object*) { return case_pred(I, a, "isupper", true); }
Value str_islower(Interp& I, Args& a, Object*) { return case_pred(I, a, "islower", false); }

Value str_istitle(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "istitle");
  method_noargs(I, a, "str", "istitle");
  const std::string& s = self->s;
  bool cased = false, prev_cased = false;
  for (size_t i = 0; i < s.size();) {
    uint32_t c = unicode::decode(s, i);
    if (unicode::is_upper(c)) {
      if (prev_cased) return Value::boolean(false);
      prev_cased = cased = true;
    } else if (unicode::is_lower(c)) {
      if (!prev_cased) return Value::boolean(false);
      prev_cased = cased = true;
    } else {
      prev_cased = false;
    }
  }
  return Value::boolean(cased);
}

Value str_isidentifier(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "isidentifier");
  method_noargs(I, a, "str", "isidentifier");
  const std::string& s = self->s;
  if (s.empty()) return Value::boolean(false);
  size_t i = 0;
  uint32_t c = unicode::decode(s, i);
  if (c != '_' && !unicode::is_alpha(c)) return Value::boolean(false);
  while (i < s.size()) {
    c = unicode::decode(s, i);
    if (c != '_' && !unicode::is_alnum(c)) return Value::boolean(false);
  }
  return Value::boolean(true);
}

// ------------------------------------------------------------ formatting

Value str_format_method(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "format");
  return str_value(str_format(I, self->s, a.pos.subspan(1), a.kw));
}

Value str_format_map(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "format_map");
  Value v[1] = {method_onearg(I, a, "str", "format_map")};
  if (!v[0].is(Kind::Dict)) raise_type_error(I, "format_map() argument must be a dict in MSL");
  std::vector<std::pair<Ref<Str>, Value>> kw;
  for (auto& e : v[0].as<Dict>()->map.entries())
    if (!e.value.is_undef() && e.key.is(Kind::Str)) kw.emplace_back(e.key.as<Str>(), e.value);
  return str_value(str_format(I, self->s, {}, kw));
}

// ------------------------------------------------------------ translation

Value str_translate(Interp& I, Args& a, Object*) {
  Str* self = self_str(I, a, "translate");
  Value v[1] = {method_onearg(I, a, "str", "translate")};
  const std::string& s = self->s;
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t start = i;
    uint32_t c = unicode::decode(s, i);
    Value r;
    try {
      r = I.getitem(v[0], Value::integer(c));
    } catch (MslError& e) {
      if (!exception_matches(I, e, "LookupError")) throw;
      out.append(s, start, i - start);
      continue;
    }
    if (r.is_none()) continue;
    if (r.is(Kind::Str)) {
      out += r.as<Str>()->s;
    } else if (r.is_int()) {
      if (r.as_int() < 0 || r.as_int() > 0x10FFFF) raise_value_error(I, "character mapping must be in range(0x110000)");
      unicode::append(out, static_cast<uint32_t>(r.as_int()));
    } else {
      raise_type_error(I, "character mapping must return integer, None or str");
    }
    check_result_size(I, out.size());
  }
  return str_value(std::move(out));
}

// str.maketrans(x[, y[, z]]): a static method.
Value str_maketrans(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_positional(I, "maketrans", a, 1, 3, v, "str");
  auto d = make<Dict>();
  if (v[1].is_undef()) {
    if (!v[0].is(Kind::Dict)) raise_type_error(I, "if you give only one argument to maketrans it must be a dict");
    for (auto& e : v[0].as<Dict>()->map.entries()) {
      if (e.value.is_undef()) continue;
      if (e.key.is(Kind::Str)) {
        const std::string& k = e.key.as<Str>()->s;
        if (unicode::count(k) != 1) raise_value_error(I, "string keys in translate table must be of length 1");
        size_t i = 0;
        d->map.set(I, Value::integer(unicode::decode(k, i)), e.value);
      } else if (e.key.is_int()) {
        d->map.set(I, e.key, e.value);
      } else {
        raise_type_error(I, "keys in translate table must be strings or integers");
      }
    }
    return d.value();
  }
  Str* x = arg_str(I, v[0], "maketrans() argument 1");
  Str* y = arg_str(I, v[1], "maketrans() argument 2");
  std::vector<uint32_t> xs = unicode::decode_all(x->s), ys = unicode::decode_all(y->s);
  if (xs.size() != ys.size()) raise_value_error(I, "the first two maketrans arguments must have equal length");
  for (size_t i = 0; i < xs.size(); ++i) d->map.set(I, Value::integer(xs[i]), Value::integer(ys[i]));
  if (given(v[2])) {
    Str* z = arg_str(I, v[2], "maketrans() argument 3");
    for (uint32_t c : unicode::decode_all(z->s)) d->map.set(I, Value::integer(c), Value());
  }
  return d.value();
}

}  // namespace

void init_str_methods(Interp& I) {
  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kMethods[] = {
      {"format", str_format_method},
      {"format_map", str_format_map},
      {"join", str_join},
      {"split", str_split},
      {"rsplit", str_rsplit},
      {"splitlines", str_splitlines},
      {"partition", str_partition},
      {"rpartition", str_rpartition},
      {"strip", str_strip},
      {"lstrip", str_lstrip},
      {"rstrip", str_rstrip},
      {"removeprefix", str_removeprefix},
      {"removesuffix", str_removesuffix},
      {"startswith", str_startswith},
      {"endswith", str_endswith},
      {"replace", str_replace},
      {"upper", str_upper},
      {"lower", str_lower},
      {"casefold", str_casefold},
      {"title", str_title},
      {"capitalize", str_capitalize},
      {"swapcase", str_swapcase},
      {"find", str_find},
      {"rfind", str_rfind},
      {"index", str_index},
      {"rindex", str_rindex},
      {"count", str_count},
      {"isdigit", str_isdigit},
      {"isdecimal", str_isdecimal},
      {"isnumeric", str_isnumeric},
      {"isalpha", str_isalpha},
      {"isalnum", str_isalnum},
      {"isspace", str_isspace},
      {"isupper", str_isupper},
      {"islower", str_islower},
      {"istitle", str_istitle},
      {"isidentifier", str_isidentifier},
      {"isascii", str_isascii},
      {"isprintable", str_isprintable},
      {"center", str_center},
      {"ljust", str_ljust},
      {"rjust", str_rjust},
      {"zfill", str_zfill},
      {"expandtabs", str_expandtabs},
      {"translate", str_translate},
  };
  Class* cls = I.cls_str.get();
  for (const Entry& e : kMethods) I.def_method(cls, e.name, e.fn);
  cls->dict.set(I.intern("maketrans"), make<StaticMethod>(make<Native>("maketrans", str_maketrans).value()).value());
}

}  // namespace msl
