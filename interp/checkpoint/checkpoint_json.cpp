// A minimal JSON reader and string quoter for safetensors headers.
//
// The safetensors header is small, machine-written JSON; a full JSON library
// would be a new dependency for one object of strings, int arrays and a
// string map. The reader is a strict recursive-descent parser of RFC 8259:
// every error is a JsonError carrying the byte offset where parsing stopped,
// nesting is bounded (so hostile input cannot exhaust the stack), and
// strings are checked to be valid UTF-8 after unescaping.
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

#include "interp/checkpoint/checkpoint.h"
#include "lang/utf8.h"

namespace msl::checkpoint {

namespace {

constexpr int kMaxDepth = 64;

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : s_(text) {}

  Json parse_document() {
    Json v = value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected data after the JSON value");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw JsonError(pos_, what); }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }

  bool at_end() const { return pos_ >= s_.size(); }

  void expect_literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) fail(fmt::format("invalid literal (expected '{}')", word));
    pos_ += word.size();
  }

  Json value(int depth) {
    if (depth >= kMaxDepth) fail("JSON nested too deeply");
    skip_ws();
    if (at_end()) fail("unexpected end of JSON");
    Json v;
    v.offset = pos_;
    char c = s_[pos_];
    if (c == '{') {
      v.type = Json::Type::Object;
      object_members(v, depth);
    } else if (c == '[') {
      v.type = Json::Type::Array;
      array_items(v, depth);
    } else if (c == '"') {
      v.type = Json::Type::String;
      v.str = string_literal();
    } else if (c == 't') {
      expect_literal("true");
      v.type = Json::Type::Bool;
      v.boolean = true;
    } else if (c == 'f') {
      expect_literal("false");
      v.type = Json::Type::Bool;
    } else if (c == 'n') {
      expect_literal("null");
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number(v);
    } else {
      auto u = static_cast<unsigned char>(c);
      fail(u >= 0x20 && u < 0x7f ? fmt::format("unexpected character '{}'", c)
                                 : fmt::format("unexpected byte 0x{:02x}", u));
    }
    return v;
  }

  void object_members(Json& v, int depth) {
    ++pos_;  // {
    skip_ws();
    if (!at_end() && s_[pos_] == '}') {
      ++pos_;
      return;
    }
    for (;;) {
      skip_ws();
      if (at_end() || s_[pos_] != '"') fail("expected a string key in JSON object");
      size_t key_at = pos_;
      std::string key = string_literal();
      for (auto& m : v.members)
        if (m.first == key) throw JsonError(key_at, fmt::format("duplicate key {} in JSON object", json_quote(key)));
      skip_ws();
      if (at_end() || s_[pos_] != ':') fail("expected ':' after key in JSON object");
      ++pos_;
      v.members.push_back({std::move(key), value(depth + 1)});
      skip_ws();
      if (at_end()) fail("unexpected end of JSON inside an object");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == '}') {
        ++pos_;
        return;
      }
      fail("expected ',' or '}' in JSON object");
    }
  }

  void array_items(Json& v, int depth) {
    ++pos_;  // [
    skip_ws();
    if (!at_end() && s_[pos_] == ']') {
      ++pos_;
      return;
    }
    for (;;) {
      v.items.push_back(value(depth + 1));
      skip_ws();
      if (at_end()) fail("unexpected end of JSON inside an array");
      if (s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (s_[pos_] == ']') {
        ++pos_;
        return;
      }
      fail("expected ',' or ']' in JSON array");
    }
  }

  unsigned hex4() {
    if (s_.size() - pos_ < 4) fail("truncated \\u escape");
    unsigned u = 0;
    for (int i = 0; i < 4; ++i) {
      char c = s_[pos_++];
      u <<= 4;
      if (c >= '0' && c <= '9')
        u |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        u |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        u |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("invalid hex digit in \\u escape");
    }
    return u;
  }

  std::string string_literal() {
    size_t start = pos_;
    ++pos_;  // "
    std::string out;
    for (;;) {
      if (at_end()) throw JsonError(start, "unterminated JSON string");
      unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        break;
      }
      if (c < 0x20) fail("control character in JSON string");
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) throw JsonError(start, "unterminated JSON string");
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {
            if (s_.substr(pos_, 2) != "\\u") fail("unpaired surrogate in \\u escape");
            pos_ += 2;
            unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("unpaired surrogate in \\u escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            fail("unpaired surrogate in \\u escape");
          }
          utf8::append(out, static_cast<char32_t>(cp));
          break;
        }
        default: fail(fmt::format("invalid escape '\\{}' in JSON string", e));
      }
    }
    if (!valid_utf8(out)) throw JsonError(start, "JSON string is not valid UTF-8");
    return out;
  }

  void number(Json& v) {
    size_t start = pos_;
    auto digits = [&] {
      size_t d = pos_;
      while (!at_end() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
      return pos_ - d;
    };
    if (s_[pos_] == '-') ++pos_;
    if (at_end() || s_[pos_] < '0' || s_[pos_] > '9') fail("invalid number");
    if (s_[pos_] == '0')
      ++pos_;
    else
      digits();
    bool integral = true;
    if (!at_end() && s_[pos_] == '.') {
      ++pos_;
      integral = false;
      if (digits() == 0) fail("invalid number: no digits after '.'");
    }
    if (!at_end() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      integral = false;
      if (!at_end() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (digits() == 0) fail("invalid number: no digits in exponent");
    }
    std::string text(s_.substr(start, pos_ - start));
    v.type = Json::Type::Number;
    v.number = std::strtod(text.c_str(), nullptr);
    if (integral) {
      errno = 0;
      long long i = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == 0) {
        v.is_int = true;
        v.integer = i;
      }
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Json parse_json(std::string_view text) { return JsonParser(text).parse_document(); }

bool valid_utf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    int extra;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= static_cast<size_t>(extra)) return false;
    for (int k = 1; k <= extra; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid.
    static constexpr uint32_t kMin[] = {0, 0x80, 0x800, 0x10000};
    if (cp < kMin[extra] || (cp >= 0xD800 && cp < 0xE000) || cp > 0x10FFFF) return false;
    i += static_cast<size_t>(extra) + 1;
  }
  return true;
}

}  // namespace msl::checkpoint
