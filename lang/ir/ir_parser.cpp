// The IR text parser (format in printer.h, algorithm in ir_parser.h).
//
// A hand-written cursor over one line at a time: the format is line
// oriented, every construct fits on one line, and errors then point at an
// exact line and column. Errors are thrown as IrSyntaxError inside and
// turned into one diagnostic at the entry point.
#include "lang/ir/ir_parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "lang/diagnostics.h"

namespace msl::ir {

namespace {

struct IrSyntaxError {
  uint32_t line, col;
  std::string message;
};

// Upper bound on the elements of a tensor constant, so garbled dimensions
// cannot make the parser allocate gigabytes; IR tests use tiny tensors.
constexpr int64_t kMaxTensorElements = int64_t{1} << 24;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class LineCursor {
 public:
  LineCursor(std::string_view text, uint32_t line) : s_(text), line_(line) {}

  [[noreturn]] void fail(const std::string& msg) const { fail_at(pos_, msg); }
  [[noreturn]] void fail_at(size_t pos, const std::string& msg) const {
    throw IrSyntaxError{line_, static_cast<uint32_t>(pos + 1), msg};
  }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool at_end() {
    skip_ws();
    return pos_ >= s_.size();
  }
  char peek() {
    skip_ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  // The character right at the cursor, without skipping blanks.
  char raw_peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool accept(std::string_view word) {
    skip_ws();
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  void expect(char c, const char* what) {
    if (!accept(c)) fail(std::string("expected '") + c + "' " + what + describe_here());
  }
  std::string ident(const char* what) {
    skip_ws();
    size_t b = pos_;
    while (pos_ < s_.size() && ident_char(s_[pos_])) ++pos_;
    if (b == pos_) fail(std::string("expected ") + what + describe_here());
    return std::string(s_.substr(b, pos_ - b));
  }
  // A debug name inside `%0(name)`: anything up to ')'.
  std::string until_close_paren() {
    size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != ')') ++pos_;
    if (pos_ >= s_.size()) fail_at(b, "unterminated debug name (missing ')')");
    std::string r(s_.substr(b, pos_ - b));
    ++pos_;
    return r;
  }
  std::string string_lit() {
    size_t b = pos_;
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) fail_at(b, "unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) fail_at(b, "unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case 'x': {
          if (pos_ + 2 > s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_])) ||
              !std::isxdigit(static_cast<unsigned char>(s_[pos_ + 1])))
            fail_at(pos_ - 2, "bad \\x escape (expected two hex digits)");
          out += static_cast<char>(std::stoi(std::string(s_.substr(pos_, 2)), nullptr, 16));
          pos_ += 2;
          break;
        }
        default: fail_at(pos_ - 2, std::string("unknown escape '\\") + e + "'");
      }
    }
  }
  // An int or float literal (also inf, -inf, nan). `is_float` tells which.
  double number(bool& is_float, int64_t& ival) {
    skip_ws();
    size_t b = pos_;
    if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
    if (s_.substr(pos_, 3) == "inf" || s_.substr(pos_, 3) == "nan") {
      bool neg = s_[b] == '-', nan = s_.substr(pos_, 3) == "nan";
      pos_ += 3;
      is_float = true;
      return nan ? NAN : (neg ? -INFINITY : INFINITY);
    }
    size_t digits = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    if (pos_ == digits) fail_at(b, "expected a number" + describe(b));
    is_float = false;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
      size_t ed = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (ed == pos_) fail_at(b, "malformed exponent in number");
    }
    std::string lit(s_.substr(b, pos_ - b));
    if (is_float) return std::strtod(lit.c_str(), nullptr);
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(lit.c_str(), &end, 10);
    if (errno == ERANGE) fail_at(b, "integer literal out of range: " + lit);
    ival = v;
    return static_cast<double>(v);
  }
  bool starts_number() {
    char c = peek();
    if (std::isdigit(static_cast<unsigned char>(c))) return true;
    if (c == '-' || c == '+') return std::isdigit(static_cast<unsigned char>(raw_peek(1))) || raw_peek(1) == 'i';
    return false;
  }
  std::string describe_here() { return describe(pos_); }
  std::string describe(size_t p) const {
    if (p >= s_.size()) return ", found end of line";
    size_t e = p;
    while (e < s_.size() && e - p < 12 && s_[e] != ' ') ++e;
    return ", found '" + std::string(s_.substr(p, e - p)) + "'";
  }
  size_t pos() const { return pos_; }
  std::string_view rest() const { return s_.substr(std::min(pos_, s_.size())); }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  uint32_t line_;
};

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) --e;
  return s.substr(b, e - b);
}

class IrParser {
 public:
  IrParser(std::string_view text, IrModule& m, std::string_view file) : m_(m), file_(file) {
    size_t b = 0;
    while (b <= text.size()) {
      size_t e = text.find('\n', b);
      if (e == std::string_view::npos) e = text.size();
      lines_.push_back(text.substr(b, e - b));
      b = e + 1;
    }
  }

  std::vector<FuncGraph*> run() {
    declare_graphs();
    std::vector<FuncGraph*> out;
    for (size_t i = 0; i < lines_.size(); ++i) {
      std::string_view t = trim(lines_[i]);
      if (t.empty()) continue;
      if (t.starts_with("# In file")) fail_line(i, "a '# In file' line must follow a node line");
      if (t[0] == '#') continue;
      if (t.starts_with("subgraph")) {
        out.push_back(graph_block(i));
        continue;
      }
      fail_line(i, "expected 'subgraph @name(...) {' or a comment, found '" + std::string(t.substr(0, 20)) + "'");
    }
    return out;
  }

 private:
  [[noreturn]] void fail_line(size_t i, const std::string& msg) {
    size_t col = lines_[i].find_first_not_of(" \t");
    throw IrSyntaxError{static_cast<uint32_t>(i + 1),
                        static_cast<uint32_t>(col == std::string_view::npos ? 1 : col + 1), msg};
  }

  // Pass 1: create every graph named by a header so references may come
  // before definitions. A graph's location is fixed at creation, so the
  // "# IR of:" line before a header is read here too.
  void declare_graphs() {
    Loc pending;
    for (size_t i = 0; i < lines_.size(); ++i) {
      std::string_view t = trim(lines_[i]);
      if (t.starts_with("# IR of:")) pending = header_loc(i);
      if (!t.starts_with("subgraph")) continue;
      LineCursor c(lines_[i], static_cast<uint32_t>(i + 1));
      c.accept("subgraph");
      c.expect('@', "before the graph name");
      size_t at = c.pos();
      std::string name = c.ident("a graph name");
      if (graphs_.count(name)) c.fail_at(at, "graph '@" + name + "' is defined twice");
      if (m_.find_graph(name)) c.fail_at(at, "graph '@" + name + "' already exists in the module");
      FuncGraph* g = m_.new_graph(name, nullptr, pending);
      pending = {};
      if (g->name() != name) c.fail_at(at, "graph name '" + name + "' is not valid");
      graphs_[name] = g;
    }
  }

  Loc parse_loc(LineCursor& c, std::string_view text) {
    // FILE:LINE[:COL], FILE may itself contain ':' (take the numeric tail).
    c.skip_ws();  // errors point at the comment, not at the indentation
    std::string_view s = trim(text);
    auto num_tail = [](std::string_view& s, uint32_t& v) {
      size_t p = s.rfind(':');
      if (p == std::string_view::npos || p + 1 >= s.size()) return false;
      std::string_view d = s.substr(p + 1);
      if (d.size() > 9) return false;
      for (char ch : d)
        if (!std::isdigit(static_cast<unsigned char>(ch))) return false;
      v = static_cast<uint32_t>(std::stoul(std::string(d)));
      s = s.substr(0, p);
      return true;
    };
    uint32_t a = 0, b = 0;
    if (!num_tail(s, a)) c.fail("expected a location FILE:LINE[:COL]");
    uint32_t line = a, col = 0;
    std::string_view before = s;
    if (num_tail(s, b) && !s.empty()) {
      line = b;
      col = a;
    } else {
      s = before;
    }
    if (s.empty() || line == 0) c.fail("expected a location FILE:LINE[:COL]");
    return m_.loc(s, line, col);
  }

  Loc header_loc(size_t i) {
    // "# IR of: NAME (LOC)" with the location optional.
    LineCursor c(lines_[i], static_cast<uint32_t>(i + 1));
    std::string_view t = trim(lines_[i]);
    size_t open = t.find('('), close = t.rfind(')');
    if (open == std::string_view::npos) return {};
    if (close == std::string_view::npos || close < open) fail_line(i, "unterminated location in '# IR of:' line");
    return parse_loc(c, t.substr(open + 1, close - open - 1));
  }

  // The location of the node on line i, from a "# In file" line after it.
  Loc node_loc(size_t& i) {
    size_t j = i + 1;
    while (j < lines_.size() && trim(lines_[j]).empty()) ++j;
    if (j >= lines_.size()) return {};
    std::string_view t = trim(lines_[j]);
    if (!t.starts_with("# In file")) return {};
    LineCursor c(lines_[j], static_cast<uint32_t>(j + 1));
    i = j;
    return parse_loc(c, t.substr(std::string_view("# In file").size()));
  }

  FuncGraph* graph_block(size_t& i) {
    LineCursor c(lines_[i], static_cast<uint32_t>(i + 1));
    c.accept("subgraph");
    c.expect('@', "before the graph name");
    FuncGraph* g = graphs_.at(c.ident("a graph name"));
    auto& names = locals_[g];
    c.expect('(', "after the graph name");
    if (!c.accept(')')) {
      do {
        c.expect('%', "before a parameter name");
        size_t at = c.pos();
        std::string n = c.ident("a parameter name");
        std::string expect = "para" + std::to_string(g->params().size() + 1);
        if (!n.starts_with(expect) || (n.size() > expect.size() && n[expect.size()] != '_'))
          c.fail_at(at, "expected parameter '%" + expect + "[_name]', found '%" + n + "'");
        std::string debug = n.size() > expect.size() + 1 ? n.substr(expect.size() + 1) : "";
        names["%" + n] = g->add_param(debug);
      } while (c.accept(','));
      c.expect(')', "after the parameters");
    }
    if (c.accept("parent=")) {
      c.expect('@', "before the parent graph's name");
      size_t at = c.pos();
      std::string p = c.ident("a graph name");
      auto it = graphs_.find(p);
      if (it == graphs_.end()) c.fail_at(at, "unknown graph '@" + p + "'");
      if (it->second == g) c.fail_at(at, "a graph cannot be its own parent");
      g->set_parent(it->second);
    }
    if (c.accept("flags")) {
      c.expect('[', "after 'flags'");
      attrs(c, g->flags());
    }
    c.expect('{', "to open the graph body");
    if (!c.at_end()) c.fail("unexpected text after '{'");
    done_.insert(g);
    for (++i; i < lines_.size(); ++i) {
      std::string_view t = trim(lines_[i]);
      if (t.empty()) continue;
      if (t.starts_with("# In file")) fail_line(i, "a '# In file' line must follow a node line");
      if (t[0] == '#') continue;
      LineCursor lc(lines_[i], static_cast<uint32_t>(i + 1));
      if (lc.accept("return")) {
        lc.expect('(', "after 'return'");
        g->set_output(operand(lc, g));
        lc.expect(')', "to close 'return('");
        if (!lc.at_end()) lc.fail("unexpected text after 'return(...)'");
        size_t j = i + 1;
        while (j < lines_.size() &&
               (trim(lines_[j]).empty() || (trim(lines_[j])[0] == '#' && !trim(lines_[j]).starts_with("# In file") &&
                                            !trim(lines_[j]).starts_with("# IR of:"))))
          ++j;
        if (j >= lines_.size() || trim(lines_[j]) != "}")
          throw IrSyntaxError{static_cast<uint32_t>(std::min(j, lines_.size() - 1) + 1), 1,
                              "expected '}' after the return of @" + g->name()};
        i = j;
        return g;
      }
      if (t == "}") fail_line(i, "graph @" + g->name() + " has no return");
      if (t.starts_with("subgraph")) fail_line(i, "missing '}' before the next subgraph");
      node_line(lc, i, g, names);
    }
    throw IrSyntaxError{static_cast<uint32_t>(lines_.size()), 1, "unexpected end of input inside graph @" + g->name()};
  }

  void node_line(LineCursor& c, size_t& i, FuncGraph* g, std::unordered_map<std::string, Node*>& names) {
    c.expect('%', "at the start of a node line");
    size_t at = c.pos();
    std::string n = "%" + c.ident("a node number");
    for (size_t k = 1; k < n.size(); ++k)
      if (!std::isdigit(static_cast<unsigned char>(n[k])))
        c.fail_at(at, "a node is named %N (N a number), found '" + n + "'");
    if (names.count(n)) c.fail_at(at, "node " + n + " is defined twice");
    std::string debug;
    if (c.raw_peek() == '(') {
      c.accept('(');
      debug = c.until_close_paren();
    }
    c.expect('=', "after the node name");
    std::vector<Node*> ins{operand(c, g)};
    c.expect('(', "to open the argument list");
    if (!c.accept(')')) {
      do ins.push_back(operand(c, g));
      while (c.accept(','));
      c.expect(')', "to close the argument list");
    }
    // ` : (types) -> type`: written by the printer for information only.
    if (!c.accept(':') && !c.at_end()) c.fail("unexpected text after the call");
    Loc loc = node_loc(i);
    names[n] = g->apply(std::move(ins), std::move(debug), loc);
  }

  Node* operand(LineCursor& c, FuncGraph* g) {
    char ch = c.peek();
    size_t at = c.pos();
    if (ch == '%') {
      c.accept('%');
      std::string n = "%" + c.ident("a node name");
      auto& names = locals_[g];
      auto it = names.find(n);
      if (it == names.end()) c.fail_at(at, "undefined node " + n + " in @" + g->name());
      return it->second;
    }
    if (ch == '@') {
      c.accept('@');
      std::string gname = c.ident("a graph name");
      auto it = graphs_.find(gname);
      if (it == graphs_.end()) c.fail_at(at, "unknown graph '@" + gname + "'");
      if (c.raw_peek() == '.' && c.raw_peek(1) == '%') {
        c.accept('.');
        c.accept('%');
        std::string n = "%" + c.ident("a node name");
        if (!done_.count(it->second))
          c.fail_at(at, "free variable @" + gname + "." + n + " refers to a graph defined later");
        auto& names = locals_[it->second];
        auto nt = names.find(n);
        if (nt == names.end()) c.fail_at(at, "undefined node " + n + " in @" + gname);
        return nt->second;
      }
      return g->constant(it->second);
    }
    if (ch == '$') c.fail_at(at, "a host object ($name) has no text form and cannot be parsed");
    if (ch == '"') return g->constant(c.string_lit());
    if (c.starts_number()) {
      bool fl;
      int64_t iv = 0;
      double v = c.number(fl, iv);
      return fl ? g->constant(v) : g->constant(iv);
    }
    std::string word = c.ident("an operand");
    if (word == "None") return g->constant(NoneValue{});
    if (word == "True" || word == "False") return g->constant(word == "True");
    if (word == "inf" || word == "nan") return g->constant(word == "inf" ? INFINITY : NAN);
    if (word == "Tensor") return g->constant(tensor(c));
    IrOp op;
    if (find_ir_op(word, op)) {
      if (c.raw_peek() == '[') c.fail("operator '" + word + "' takes no attributes");
      return g->constant(op);
    }
    kernels::Prim p;
    if (kernels::find_prim(word, p)) {
      PrimRef r{p, {}};
      if (c.raw_peek() == '[') {
        c.accept('[');
        attrs(c, r.attrs);
      }
      return g->constant(std::move(r));
    }
    c.fail_at(at, "unknown primitive or operator '" + word + "'");
  }

  // name=value, ... ]   (the '[' already read)
  void attrs(LineCursor& c, kernels::Attrs& out) {
    if (c.accept(']')) return;
    do {
      std::string name = c.ident("an attribute name");
      c.expect('=', "after the attribute name");
      out.set(name, attr_value(c));
    } while (c.accept(','));
    c.expect(']', "to close the attributes");
  }

  kernels::AttrValue attr_value(LineCursor& c) {
    char ch = c.peek();
    if (ch == '"') return c.string_lit();
    if (ch == '(') {
      c.accept('(');
      std::vector<int64_t> v;
      while (!c.accept(')')) {
        bool fl;
        int64_t iv = 0;
        size_t at = c.pos();
        c.number(fl, iv);
        if (fl) c.fail_at(at, "a tuple attribute holds integers only");
        v.push_back(iv);
        if (!c.accept(',')) {
          c.expect(')', "to close the tuple");
          break;
        }
      }
      return v;
    }
    if (c.starts_number()) {
      bool fl;
      int64_t iv = 0;
      double d = c.number(fl, iv);
      if (fl) return d;
      return iv;
    }
    size_t at = c.pos();
    std::string w = c.ident("an attribute value");
    if (w == "True" || w == "False") return w == "True";
    if (w == "inf" || w == "nan") return w == "inf" ? INFINITY : NAN;
    kernels::DType dt;
    if (kernels::parse_dtype(w, dt)) return dt;
    c.fail_at(at, "bad attribute value '" + w + "'");
  }

  // Tensor[DType](d0, d1)[v0, v1, ...]   ("Tensor" already read)
  kernels::Tensor tensor(LineCursor& c) {
    c.expect('[', "after 'Tensor'");
    size_t at = c.pos();
    std::string dn = c.ident("a dtype");
    kernels::DType dt;
    if (!kernels::parse_dtype(dn, dt)) c.fail_at(at, "unknown dtype '" + dn + "'");
    c.expect(']', "after the dtype");
    c.expect('(', "to open the tensor shape");
    kernels::Dims shape;
    int64_t count = 1;
    while (!c.accept(')')) {
      bool fl;
      int64_t d = 0;
      size_t dp = c.pos();
      c.number(fl, d);
      if (fl || d < 0) c.fail_at(dp, "a tensor dimension is a non-negative integer");
      if (shape.size() >= 8) c.fail_at(dp, "too many tensor dimensions");
      count = d == 0 ? 0 : count * d;
      if (count > kMaxTensorElements) c.fail_at(dp, "tensor constant too large");
      shape.push_back(d);
      if (!c.accept(',')) {
        c.expect(')', "to close the tensor shape");
        break;
      }
    }
    c.expect('[', "to open the tensor values");
    std::vector<double> vals;
    size_t vp = c.pos();
    while (!c.accept(']')) {
      if (c.peek() == 'T' || c.peek() == 'F') {
        std::string w = c.ident("a tensor element");
        if (w != "True" && w != "False") c.fail("bad tensor element '" + w + "'");
        vals.push_back(w == "True" ? 1.0 : 0.0);
      } else if (c.peek() == 'i' || c.peek() == 'n') {
        std::string w = c.ident("a tensor element");
        if (w != "inf" && w != "nan") c.fail("bad tensor element '" + w + "'");
        vals.push_back(w == "inf" ? INFINITY : NAN);
      } else {
        bool fl;
        int64_t iv = 0;
        vals.push_back(c.number(fl, iv));
      }
      if (static_cast<int64_t>(vals.size()) > count) c.fail_at(vp, "more tensor values than the shape holds");
      if (!c.accept(',')) {
        c.expect(']', "to close the tensor values");
        break;
      }
    }
    if (static_cast<int64_t>(vals.size()) != count)
      c.fail_at(vp, "the shape holds " + std::to_string(count) + " values, found " + std::to_string(vals.size()));
    return tensor_from_values(dt, shape, vals);
  }

  IrModule& m_;
  std::string file_;
  std::vector<std::string_view> lines_;
  std::unordered_map<std::string, FuncGraph*> graphs_;
  std::unordered_map<const FuncGraph*, std::unordered_map<std::string, Node*>> locals_;
  std::unordered_set<const FuncGraph*> done_;
};

}  // namespace

IrParseResult parse_ir(std::string_view text, IrModule& m, std::string_view file_name) {
  IrParseResult r;
  IrParser p(text, m, file_name);
  try {
    r.graphs = p.run();
  } catch (const IrSyntaxError& e) {
    Diagnostic d;
    d.source = std::make_shared<SourceFile>(std::string(file_name), std::string(text));
    d.span = Span{e.line, e.col, e.line, e.col + 1};
    d.message = e.message;
    r.error = format_diagnostic(d);
    r.graphs.clear();
  }
  return r;
}

}  // namespace msl::ir
