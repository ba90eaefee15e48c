// f-strings: splitting `f"a{b!r:>{w}}c"` into FStringParts.
//
// The lexer hands over the whole literal as one STRING token (as Python < 3.12
// does, a replacement field cannot contain the literal's own quote). Here the
// body is scanned once, left to right:
//  1. literal text, with escapes decoded (unless raw) and `{{`/`}}` halved;
//  2. `{` opens a field: its expression runs to the first `!`, `:`, `=` (the
//     `{x=}` debugging form) or `}` outside brackets and nested strings;
//  3. the expression text is parsed by a recursive call of the parser
//     (parse_embedded_expression) whose lexer starts at the field's real line
//     and column, so spans and error positions point into the file;
//  4. `!r`/`!s`/`!a`, then a format spec after `:`, itself literal text and
//     nested fields (`{x:>{width}}`), at most two levels deep as in Python.
#include <string>

#include "lang/ast_builder.h"

namespace msl {

using antlr4::Token;
using ast::FStringPart;

namespace {

constexpr int kMaxFStringNesting = 4;  // f-strings inside fields inside f-strings

class FStringScanner {
 public:
  FStringScanner(AstBuilder& b, Token* token, std::string text, size_t end, bool raw)
      : b_(b), token_(token), text_(std::move(text)), end_(end), raw_(raw) {}

  // Scans parts from i up to the end of the body or, in a format spec, up to
  // its closing '}' (left unconsumed).
  void parts(size_t& i, std::vector<FStringPart>& out, bool in_spec, int nest) {
    std::string lit;
    auto flush = [&] {
      if (lit.empty()) return;
      if (!out.empty() && !out.back().is_field) {
        out.back().literal += lit;
      } else {
        FStringPart p;
        p.literal = std::move(lit);
        out.push_back(std::move(p));
      }
      lit.clear();
    };
    while (i < end_) {
      char c = text_[i];
      if (c == '{') {
        if (!in_spec && i + 1 < end_ && text_[i + 1] == '{') {
          lit += '{';
          i += 2;
          continue;
        }
        flush();
        field(i, out, nest);
      } else if (c == '}') {
        if (in_spec) break;
        if (i + 1 < end_ && text_[i + 1] == '}') {
          lit += '}';
          i += 2;
          continue;
        }
        fail(i, 1, "Single '}' is not allowed in an f-string.", "write '}}' for a literal '}'");
      } else if (c == '\\' && !raw_) {
        size_t at = i;
        std::string err = decode_escape(std::string_view(text_).substr(0, end_), i, lit);
        if (!err.empty()) fail(at, i - at, err);
      } else {
        lit += c;
        ++i;
      }
    }
    flush();
  }

 private:
  [[noreturn]] void fail(size_t offset, size_t len, std::string message, std::string help = {}) {
    Span s;
    position_in_token(token_, offset, s.line, s.col);
    s.end_line = s.line;
    s.end_col = s.col + static_cast<uint32_t>(len ? len : 1);
    b_.fail(s, std::move(message), std::move(help));
  }

  // i is at the '{' of a replacement field; leaves i after its '}'.
  void field(size_t& i, std::vector<FStringPart>& out, int nest) {
    size_t open = i;
    if (nest >= 2) fail(open, 1, "F-string expressions nested too deeply.");
    size_t j = i + 1;
    int depth = 0;
    bool debug = false;
    while (j < end_) {
      char c = text_[j];
      if (c == '\'' || c == '"') {
        bool triple = text_.compare(j, 3, std::string(3, c)) == 0;
        j += triple ? 3 : 1;
        while (j < end_) {
          if (text_[j] == '\\') {
            j += 2;
          } else if (triple ? text_.compare(j, 3, std::string(3, c)) == 0 : text_[j] == c) {
            j += triple ? 3 : 1;
            break;
          } else {
            ++j;
          }
        }
        continue;
      }
      if (c == '(' || c == '[' || c == '{') {
        ++depth;
      } else if (c == ')' || c == ']') {
        if (depth > 0) --depth;
      } else if (c == '}') {
        if (depth == 0) break;
        --depth;
      } else if (depth == 0) {
        char next = j + 1 < end_ ? text_[j + 1] : 0;
        if (c == '!' && next != '=') break;
        if (c == ':') break;
        if (c == '=') {
          char prev = text_[j - 1];
          if (next == '=') {
            j += 2;
            continue;
          }
          if (prev != '=' && prev != '!' && prev != '<' && prev != '>') {
            size_t k = j + 1;
            while (k < end_ && text_[k] == ' ') ++k;
            if (k < end_ && (text_[k] == '}' || text_[k] == '!' || text_[k] == ':')) {
              debug = true;
              break;
            }
          }
        }
      }
      ++j;
    }
    if (j >= end_) fail(open, 1, "Expecting '}' in f-string.", "close the replacement field with '}'");
    std::string expr_text = text_.substr(open + 1, j - open - 1);
    if (expr_text.find_first_not_of(" \t\r\n\f") == std::string::npos)
      fail(open, j - open + 1, "Empty expression not allowed in f-string.", "write '{{' for a literal '{'");
    FStringPart part;
    part.is_field = true;
    part.expr_text = expr_text;
    std::string label;  // for {x=}: the text up to and including '=' and the spaces after it
    if (debug) {
      ++j;
      while (j < end_ && text_[j] == ' ') ++j;
      label = text_.substr(open + 1, j - open - 1);
    }
    if (j < end_ && text_[j] == '!') {
      char conv = j + 1 < end_ ? text_[j + 1] : 0;
      if (conv != 'r' && conv != 's' && conv != 'a')
        fail(j, 2, "Invalid conversion character in f-string: expected 'r', 's' or 'a'.");
      part.conversion = conv;
      j += 2;
    }
    if (j < end_ && text_[j] == ':') {
      ++j;
      parts(j, part.spec, true, nest + 1);
    }
    if (j >= end_ || text_[j] != '}') fail(open, 1, "Expecting '}' in f-string.", "close the replacement field with '}'");
    ++j;
    // The expression, parsed where it stands in the file.
    if (b_.fstring_depth() + 1 > kMaxFStringNesting) fail(open, 1, "F-strings nested too deeply.");
    uint32_t line, col;
    position_in_token(token_, open + 1, line, col);
    part.expr = parse_embedded_expression(b_.source(), expr_text, line, col, b_.fstring_depth() + 1, b_.errors());
    if (!part.expr) b_.fail_silently();  // reported by the nested parse
    part.expr = b_.finish(std::move(part.expr));
    if (debug) {
      if (!out.empty() && !out.back().is_field) {
        out.back().literal += label;
      } else {
        FStringPart p;
        p.literal = label;
        out.push_back(std::move(p));
      }
      if (part.conversion == 0 && part.spec.empty()) part.conversion = 'r';
    }
    out.push_back(std::move(part));
    i = j;
  }

  AstBuilder& b_;
  Token* token_;
  std::string text_;
  size_t end_;
  bool raw_;
};

}  // namespace

void append_fstring_parts(AstBuilder& b, Token* token, std::vector<FStringPart>& parts) {
  std::string text = token->getText();
  size_t q = text.find_first_of("'\"");
  if (q == std::string::npos) b.fail_silently();
  bool raw = false;
  for (size_t k = 0; k < q; ++k) raw = raw || text[k] == 'r' || text[k] == 'R';
  char quote = text[q];
  size_t qlen = text.size() >= q + 6 && text.compare(q, 3, std::string(3, quote)) == 0 ? 3 : 1;
  size_t begin = q + qlen;
  if (text.size() < begin + qlen) b.fail_silently();
  size_t end = text.size() - qlen;
  FStringScanner scanner(b, token, std::move(text), end, raw);
  size_t i = begin;
  std::vector<FStringPart> out;
  scanner.parts(i, out, false, 0);
  for (FStringPart& p : out) {
    if (!p.is_field && !parts.empty() && !parts.back().is_field) {
      parts.back().literal += p.literal;
    } else {
      parts.push_back(std::move(p));
    }
  }
}

}  // namespace msl
