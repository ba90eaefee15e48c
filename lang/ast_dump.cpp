// `msl --emit=ast`: the AST as an indented tree, one node per line, two
// spaces per level, each node followed by its line:col.
//
//   Module
//     Assign 1:1
//       Name 'x' 1:1
//       Binary '+' 1:5
//         Constant 1 1:5
//         Constant 2 1:9
//
// Children come in the order of the fields in ast.h. Where a child's role
// would be ambiguous, it is wrapped in a label line without a position
// (`Body`, `OrElse`, `Finally`, `Decorator`, `Returns`, `Base`, `Annotation`,
// `Default`, `Comprehension`, `Spec`, `DictUnpack`); an absent slice bound
// prints as `<none>`. Strings print as Python's repr(), floats as Python's
// repr() (shortest round-trip digits).
#include <charconv>
#include <cmath>
#include <string>

#include "lang/ast.h"
#include "lang/utf8.h"

namespace msl::ast {

const char* to_string(BinOp op) {
  switch (op) {
    case BinOp::Add: return "+";
    case BinOp::Sub: return "-";
    case BinOp::Mul: return "*";
    case BinOp::MatMul: return "@";
    case BinOp::Div: return "/";
    case BinOp::FloorDiv: return "//";
    case BinOp::Mod: return "%";
    case BinOp::Pow: return "**";
    case BinOp::LShift: return "<<";
    case BinOp::RShift: return ">>";
    case BinOp::BitOr: return "|";
    case BinOp::BitXor: return "^";
    case BinOp::BitAnd: return "&";
  }
  return "?";
}

const char* to_string(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return "-";
    case UnaryOp::Pos: return "+";
    case UnaryOp::Invert: return "~";
    case UnaryOp::Not: return "not";
  }
  return "?";
}

const char* to_string(CmpOp op) {
  switch (op) {
    case CmpOp::Lt: return "<";
    case CmpOp::Le: return "<=";
    case CmpOp::Gt: return ">";
    case CmpOp::Ge: return ">=";
    case CmpOp::Eq: return "==";
    case CmpOp::Ne: return "!=";
    case CmpOp::In: return "in";
    case CmpOp::NotIn: return "not in";
    case CmpOp::Is: return "is";
    case CmpOp::IsNot: return "is not";
  }
  return "?";
}

const char* to_string(BoolOpKind op) { return op == BoolOpKind::And ? "and" : "or"; }

namespace {

// Python's repr(float): shortest digits that round-trip, positional notation
// for exponents in [-4, 16), else d.ddde+XX.
std::string float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string s(buf, r.ptr);
  std::string sign;
  if (s[0] == '-') {
    sign = "-";
    s.erase(0, 1);
  }
  size_t e = s.find('e');
  std::string mant = s.substr(0, e);
  int exp = std::stoi(s.substr(e + 1));
  std::string digits;
  for (char c : mant) {
    if (c != '.') digits += c;
  }
  if (exp >= -4 && exp < 16) {
    std::string out;
    if (exp >= 0) {
      std::string ip = digits.substr(0, std::min<size_t>(digits.size(), static_cast<size_t>(exp) + 1));
      ip.append(static_cast<size_t>(exp) + 1 - ip.size(), '0');
      std::string fp = digits.size() > static_cast<size_t>(exp) + 1 ? digits.substr(static_cast<size_t>(exp) + 1) : "0";
      out = ip + "." + fp;
    } else {
      out = "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
    }
    return sign + out;
  }
  std::string out = digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  out += exp < 0 ? "e-" : "e+";
  int a = exp < 0 ? -exp : exp;
  if (a < 10) out += "0";
  out += std::to_string(a);
  return sign + out;
}

std::string pos(const Span& s) { return std::to_string(s.line) + ":" + std::to_string(s.col); }

class Dumper {
 public:
  std::string out;

  void line(int depth, const std::string& text) {
    out.append(static_cast<size_t>(depth) * 2, ' ');
    out += text;
    out += '\n';
  }

  void body(int depth, const char* label, const Body& b) {
    line(depth, label);
    for (const StmtPtr& s : b) stmt(depth + 1, *s);
  }

  void labeled(int depth, const char* label, const Expr* e) {
    if (e == nullptr) return;
    line(depth, label);
    expr(depth + 1, *e);
  }

  void params(int depth, const Parameters& ps) {
    auto one = [&](const char* kind, const Param& p) {
      line(depth, std::string(kind) + " " + python_repr(p.name) + " " + pos(p.span));
      labeled(depth + 1, "Annotation", p.annotation.get());
      labeled(depth + 1, "Default", p.default_value.get());
    };
    for (const Param& p : ps.positional) one("Param", p);
    if (ps.vararg) one("VarArg", *ps.vararg);
    for (const Param& p : ps.kwonly) one("KwOnlyParam", p);
    if (ps.kwarg) one("KwArg", *ps.kwarg);
  }

  void generators(int depth, const std::vector<Comprehension>& gens) {
    for (const Comprehension& g : gens) {
      line(depth, "Comprehension");
      expr(depth + 1, *g.target);
      expr(depth + 1, *g.iter);
      for (const ExprPtr& c : g.ifs) expr(depth + 1, *c);
    }
  }

  void fstring_parts(int depth, const std::vector<FStringPart>& parts) {
    for (const FStringPart& p : parts) {
      if (!p.is_field) {
        line(depth, "Literal " + python_repr(p.literal));
        continue;
      }
      std::string head = "Field";
      if (p.conversion) head += std::string(" !") + p.conversion;
      line(depth, head);
      if (p.expr) expr(depth + 1, *p.expr);
      if (!p.spec.empty()) {
        line(depth + 1, "Spec");
        fstring_parts(depth + 2, p.spec);
      }
    }
  }

  void expr(int depth, const Expr& e) {
    std::string at = pos(e.span);
    switch (e.kind) {
      case ExprKind::Name:
        line(depth, "Name " + python_repr(e.as<Name>()->id) + " " + at);
        return;
      case ExprKind::Constant: {
        const Constant* c = e.as<Constant>();
        std::string v;
        switch (c->value_kind) {
          case ConstKind::None: v = "None"; break;
          case ConstKind::True: v = "True"; break;
          case ConstKind::False: v = "False"; break;
          case ConstKind::Ellipsis: v = "..."; break;
          case ConstKind::Int: v = std::to_string(c->int_value); break;
          case ConstKind::Float: v = float_repr(c->float_value); break;
          case ConstKind::Str: v = python_repr(c->str_value()); break;
        }
        line(depth, "Constant " + v + " " + at);
        return;
      }
      case ExprKind::FString:
        line(depth, "FString " + at);
        fstring_parts(depth + 1, e.as<FString>()->parts);
        return;
      case ExprKind::Tuple: case ExprKind::List: case ExprKind::Set: {
        const std::vector<ExprPtr>& elts = e.kind == ExprKind::Tuple  ? e.as<Tuple>()->elts
                                           : e.kind == ExprKind::List ? e.as<List>()->elts
                                                                      : e.as<Set>()->elts;
        line(depth, std::string(e.kind == ExprKind::Tuple ? "Tuple " : e.kind == ExprKind::List ? "List " : "Set ") + at);
        for (const ExprPtr& x : elts) expr(depth + 1, *x);
        return;
      }
      case ExprKind::Dict: {
        const Dict* d = e.as<Dict>();
        line(depth, "Dict " + at);
        for (size_t i = 0; i < d->values.size(); ++i) {
          if (d->keys[i]) {
            expr(depth + 1, *d->keys[i]);
            expr(depth + 1, *d->values[i]);
          } else {
            labeled(depth + 1, "DictUnpack", d->values[i].get());
          }
        }
        return;
      }
      case ExprKind::ListComp:
        line(depth, "ListComp " + at);
        expr(depth + 1, *e.as<ListComp>()->elt);
        generators(depth + 1, e.as<ListComp>()->generators);
        return;
      case ExprKind::SetComp:
        line(depth, "SetComp " + at);
        expr(depth + 1, *e.as<SetComp>()->elt);
        generators(depth + 1, e.as<SetComp>()->generators);
        return;
      case ExprKind::GeneratorExp:
        line(depth, "GeneratorExp " + at);
        expr(depth + 1, *e.as<GeneratorExp>()->elt);
        generators(depth + 1, e.as<GeneratorExp>()->generators);
        return;
      case ExprKind::DictComp:
        line(depth, "DictComp " + at);
        expr(depth + 1, *e.as<DictComp>()->key);
        expr(depth + 1, *e.as<DictComp>()->value);
        generators(depth + 1, e.as<DictComp>()->generators);
        return;
      case ExprKind::Attribute:
        line(depth, "Attribute " + python_repr(e.as<Attribute>()->attr) + " " + at);
        expr(depth + 1, *e.as<Attribute>()->value);
        return;
      case ExprKind::Subscript:
        line(depth, "Subscript " + at);
        expr(depth + 1, *e.as<Subscript>()->value);
        expr(depth + 1, *e.as<Subscript>()->index);
        return;
      case ExprKind::Slice: {
        const Slice* s = e.as<Slice>();
        line(depth, "Slice " + at);
        for (const Expr* part : {s->lower.get(), s->upper.get(), s->step.get()}) {
          if (part) {
            expr(depth + 1, *part);
          } else {
            line(depth + 1, "<none>");
          }
        }
        return;
      }
      case ExprKind::Call: {
        const Call* c = e.as<Call>();
        line(depth, "Call " + at);
        expr(depth + 1, *c->func);
        for (const Arg& a : c->args) {
          switch (a.kind) {
            case Arg::Kind::Positional: expr(depth + 1, *a.value); break;
            case Arg::Kind::Keyword:
              line(depth + 1, "Keyword " + python_repr(a.name) + " " + pos(a.span));
              expr(depth + 2, *a.value);
              break;
            case Arg::Kind::Star:
              line(depth + 1, "StarArg " + pos(a.span));
              expr(depth + 2, *a.value);
              break;
            case Arg::Kind::DoubleStar:
              line(depth + 1, "DoubleStarArg " + pos(a.span));
              expr(depth + 2, *a.value);
              break;
          }
        }
        return;
      }
      case ExprKind::Unary:
        line(depth, std::string("Unary '") + to_string(e.as<Unary>()->op) + "' " + at);
        expr(depth + 1, *e.as<Unary>()->operand);
        return;
      case ExprKind::Binary:
        line(depth, std::string("Binary '") + to_string(e.as<Binary>()->op) + "' " + at);
        expr(depth + 1, *e.as<Binary>()->left);
        expr(depth + 1, *e.as<Binary>()->right);
        return;
      case ExprKind::BoolOp:
        line(depth, std::string("BoolOp '") + to_string(e.as<BoolOp>()->op) + "' " + at);
        for (const ExprPtr& v : e.as<BoolOp>()->values) expr(depth + 1, *v);
        return;
      case ExprKind::Compare: {
        const Compare* c = e.as<Compare>();
        std::string head = "Compare";
        for (CmpOp op : c->ops) head += std::string(" '") + to_string(op) + "'";
        line(depth, head + " " + at);
        expr(depth + 1, *c->left);
        for (const ExprPtr& x : c->comparators) expr(depth + 1, *x);
        return;
      }
      case ExprKind::IfExp:
        line(depth, "IfExp " + at);
        expr(depth + 1, *e.as<IfExp>()->test);
        expr(depth + 1, *e.as<IfExp>()->body);
        expr(depth + 1, *e.as<IfExp>()->orelse);
        return;
      case ExprKind::Lambda:
        line(depth, "Lambda " + at);
        params(depth + 1, e.as<Lambda>()->params);
        expr(depth + 1, *e.as<Lambda>()->body);
        return;
      case ExprKind::Starred:
        line(depth, "Starred " + at);
        expr(depth + 1, *e.as<Starred>()->value);
        return;
    }
  }

  void aliases(int depth, const std::vector<ImportAlias>& names) {
    for (const ImportAlias& a : names) {
      std::string text = "Alias " + python_repr(a.name);
      if (!a.asname.empty()) text += " as " + python_repr(a.asname);
      line(depth, text + " " + pos(a.span));
    }
  }

  void stmt(int depth, const Stmt& s) {
    std::string at = pos(s.span);
    switch (s.kind) {
      case StmtKind::Expr:
        line(depth, "Expr " + at);
        expr(depth + 1, *s.as<ExprStmt>()->value);
        return;
      case StmtKind::Assign:
        line(depth, "Assign " + at);
        for (const ExprPtr& t : s.as<Assign>()->targets) expr(depth + 1, *t);
        expr(depth + 1, *s.as<Assign>()->value);
        return;
      case StmtKind::AugAssign:
        line(depth, std::string("AugAssign '") + to_string(s.as<AugAssign>()->op) + "=' " + at);
        expr(depth + 1, *s.as<AugAssign>()->target);
        expr(depth + 1, *s.as<AugAssign>()->value);
        return;
      case StmtKind::AnnAssign: {
        const AnnAssign* a = s.as<AnnAssign>();
        line(depth, "AnnAssign " + at);
        expr(depth + 1, *a->target);
        expr(depth + 1, *a->annotation);
        if (a->value) expr(depth + 1, *a->value);
        return;
      }
      case StmtKind::Pass: line(depth, "Pass " + at); return;
      case StmtKind::Break: line(depth, "Break " + at); return;
      case StmtKind::Continue: line(depth, "Continue " + at); return;
      case StmtKind::Del:
        line(depth, "Del " + at);
        for (const ExprPtr& t : s.as<Del>()->targets) expr(depth + 1, *t);
        return;
      case StmtKind::Return:
        line(depth, "Return " + at);
        if (s.as<Return>()->value) expr(depth + 1, *s.as<Return>()->value);
        return;
      case StmtKind::Raise:
        line(depth, "Raise " + at);
        if (s.as<Raise>()->exc) expr(depth + 1, *s.as<Raise>()->exc);
        if (s.as<Raise>()->cause) expr(depth + 1, *s.as<Raise>()->cause);
        return;
      case StmtKind::Assert:
        line(depth, "Assert " + at);
        expr(depth + 1, *s.as<Assert>()->test);
        if (s.as<Assert>()->msg) expr(depth + 1, *s.as<Assert>()->msg);
        return;
      case StmtKind::Global: case StmtKind::Nonlocal: {
        const auto& names = s.kind == StmtKind::Global ? s.as<Global>()->names : s.as<Nonlocal>()->names;
        std::string text = s.kind == StmtKind::Global ? "Global" : "Nonlocal";
        for (const std::string& n : names) text += " " + python_repr(n);
        line(depth, text + " " + at);
        return;
      }
      case StmtKind::If: {
        const If* i = s.as<If>();
        line(depth, "If " + at);
        expr(depth + 1, *i->test);
        body(depth + 1, "Body", i->body);
        if (!i->orelse.empty()) body(depth + 1, "OrElse", i->orelse);
        return;
      }
      case StmtKind::While: {
        const While* w = s.as<While>();
        line(depth, "While " + at);
        expr(depth + 1, *w->test);
        body(depth + 1, "Body", w->body);
        if (!w->orelse.empty()) body(depth + 1, "OrElse", w->orelse);
        return;
      }
      case StmtKind::For: {
        const For* f = s.as<For>();
        line(depth, "For " + at);
        expr(depth + 1, *f->target);
        expr(depth + 1, *f->iter);
        body(depth + 1, "Body", f->body);
        if (!f->orelse.empty()) body(depth + 1, "OrElse", f->orelse);
        return;
      }
      case StmtKind::Try: {
        const Try* t = s.as<Try>();
        line(depth, "Try " + at);
        body(depth + 1, "Body", t->body);
        for (const ExceptHandler& h : t->handlers) {
          std::string head = "ExceptHandler";
          if (!h.name.empty()) head += " " + python_repr(h.name);
          line(depth + 1, head + " " + pos(h.span));
          if (h.type) expr(depth + 2, *h.type);
          body(depth + 2, "Body", h.body);
        }
        if (!t->orelse.empty()) body(depth + 1, "OrElse", t->orelse);
        if (!t->finalbody.empty()) body(depth + 1, "Finally", t->finalbody);
        return;
      }
      case StmtKind::FunctionDef: {
        const FunctionDef* f = s.as<FunctionDef>();
        line(depth, "FunctionDef " + python_repr(f->name) + " " + at);
        for (const ExprPtr& d : f->decorators) labeled(depth + 1, "Decorator", d.get());
        params(depth + 1, f->params);
        labeled(depth + 1, "Returns", f->returns.get());
        body(depth + 1, "Body", f->body);
        return;
      }
      case StmtKind::ClassDef: {
        const ClassDef* c = s.as<ClassDef>();
        line(depth, "ClassDef " + python_repr(c->name) + " " + at);
        for (const ExprPtr& d : c->decorators) labeled(depth + 1, "Decorator", d.get());
        labeled(depth + 1, "Base", c->base.get());
        body(depth + 1, "Body", c->body);
        return;
      }
      case StmtKind::Import:
        line(depth, "Import " + at);
        aliases(depth + 1, s.as<Import>()->names);
        return;
      case StmtKind::ImportFrom:
        line(depth, "ImportFrom " + python_repr(s.as<ImportFrom>()->module) + " " + at);
        aliases(depth + 1, s.as<ImportFrom>()->names);
        return;
    }
  }
};

}  // namespace

std::string dump(const Module& m) {
  Dumper d;
  d.line(0, "Module");
  for (const StmtPtr& s : m.body) d.stmt(1, *s);
  return d.out;
}

std::string dump(const Expr& e) {
  Dumper d;
  d.expr(0, e);
  return d.out;
}

}  // namespace msl::ast
