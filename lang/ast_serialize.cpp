// The AST's byte encoding (lang/ast_serialize.h): a pre-order walk, every
// node a tag byte then its fields in declaration order. Integers are LEB128
// varints (line and column numbers are small), strings a length then bytes,
// an absent expression the tag 0.
#include "lang/ast_serialize.h"

#include <cstring>

namespace msl::ast {

namespace {

// Deeper than any tree the parser makes (kMaxExprDepth expressions inside
// kMaxNesting blocks): a deeper encoding is damage, refused before it could
// exhaust the stack.
constexpr int kMaxDepth = 10000;

class Writer {
 public:
  std::string out;

  void u(uint64_t v) {
    while (v >= 0x80) {
      out.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out.push_back(static_cast<char>(v));
  }
  void byte(uint8_t b) { out.push_back(static_cast<char>(b)); }
  void str(const std::string& s) {
    u(s.size());
    out += s;
  }
  void span(const Span& s) {
    u(s.line);
    u(s.col);
    u(s.end_line);
    u(s.end_col);
  }
  void exprs(const std::vector<ExprPtr>& v) {
    u(v.size());
    for (const ExprPtr& e : v) expr(e.get());
  }
  void body(const Body& b) {
    u(b.size());
    for (const StmtPtr& s : b) stmt(*s);
  }
  void param(const Param& p) {
    str(p.name);
    expr(p.default_value.get());
    expr(p.annotation.get());
    span(p.span);
  }
  void params(const Parameters& p) {
    u(p.positional.size());
    for (const Param& x : p.positional) param(x);
    byte(p.vararg != nullptr);
    if (p.vararg) param(*p.vararg);
    u(p.kwonly.size());
    for (const Param& x : p.kwonly) param(x);
    byte(p.kwarg != nullptr);
    if (p.kwarg) param(*p.kwarg);
  }
  void generators(const std::vector<Comprehension>& gs) {
    u(gs.size());
    for (const Comprehension& g : gs) {
      expr(g.target.get());
      expr(g.iter.get());
      exprs(g.ifs);
    }
  }
  void fparts(const std::vector<FStringPart>& parts) {
    u(parts.size());
    for (const FStringPart& p : parts) {
      byte(p.is_field);
      str(p.literal);
      expr(p.expr.get());
      byte(static_cast<uint8_t>(p.conversion));
      fparts(p.spec);
      str(p.expr_text);
    }
  }
  void double_bits(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    u(bits);
  }

  void expr(const Expr* e) {
    if (e == nullptr) {
      byte(0);
      return;
    }
    byte(static_cast<uint8_t>(e->kind) + 1);
    span(e->span);
    switch (e->kind) {
      case ExprKind::Name: str(e->as<Name>()->id); return;
      case ExprKind::Constant: {
        const Constant* c = e->as<Constant>();
        byte(static_cast<uint8_t>(c->value_kind));
        if (c->value_kind == ConstKind::Int) u(static_cast<uint64_t>(c->int_value));
        if (c->value_kind == ConstKind::Float) double_bits(c->float_value);
        if (c->value_kind == ConstKind::Str) str(c->str_value());
        return;
      }
      case ExprKind::FString: fparts(e->as<FString>()->parts); return;
      case ExprKind::Tuple: exprs(e->as<Tuple>()->elts); return;
      case ExprKind::List: exprs(e->as<List>()->elts); return;
      case ExprKind::Dict: exprs(e->as<Dict>()->keys); exprs(e->as<Dict>()->values); return;
      case ExprKind::Set: exprs(e->as<Set>()->elts); return;
      case ExprKind::ListComp: expr(e->as<ListComp>()->elt.get()); generators(e->as<ListComp>()->generators); return;
      case ExprKind::SetComp: expr(e->as<SetComp>()->elt.get()); generators(e->as<SetComp>()->generators); return;
      case ExprKind::DictComp: {
        const DictComp* d = e->as<DictComp>();
        expr(d->key.get());
        expr(d->value.get());
        generators(d->generators);
        return;
      }
      case ExprKind::GeneratorExp:
        expr(e->as<GeneratorExp>()->elt.get());
        generators(e->as<GeneratorExp>()->generators);
        return;
      case ExprKind::Attribute: {
        const Attribute* a = e->as<Attribute>();
        expr(a->value.get());
        str(a->attr);
        span(a->attr_span);
        return;
      }
      case ExprKind::Subscript: expr(e->as<Subscript>()->value.get()); expr(e->as<Subscript>()->index.get()); return;
      case ExprKind::Slice: {
        const Slice* s = e->as<Slice>();
        expr(s->lower.get());
        expr(s->upper.get());
        expr(s->step.get());
        return;
      }
      case ExprKind::Call: {
        const Call* c = e->as<Call>();
        expr(c->func.get());
        u(c->args.size());
        for (const Arg& a : c->args) {
          byte(static_cast<uint8_t>(a.kind));
          str(a.name);
          expr(a.value.get());
          span(a.span);
        }
        return;
      }
      case ExprKind::Unary: byte(static_cast<uint8_t>(e->as<Unary>()->op)); expr(e->as<Unary>()->operand.get()); return;
      case ExprKind::Binary: {
        const Binary* b = e->as<Binary>();
        byte(static_cast<uint8_t>(b->op));
        expr(b->left.get());
        expr(b->right.get());
        span(b->op_span);
        return;
      }
      case ExprKind::BoolOp: byte(static_cast<uint8_t>(e->as<BoolOp>()->op)); exprs(e->as<BoolOp>()->values); return;
      case ExprKind::Compare: {
        const Compare* c = e->as<Compare>();
        expr(c->left.get());
        u(c->ops.size());
        for (CmpOp op : c->ops) byte(static_cast<uint8_t>(op));
        exprs(c->comparators);
        return;
      }
      case ExprKind::IfExp: {
        const IfExp* i = e->as<IfExp>();
        expr(i->test.get());
        expr(i->body.get());
        expr(i->orelse.get());
        return;
      }
      case ExprKind::Lambda: params(e->as<Lambda>()->params); expr(e->as<Lambda>()->body.get()); return;
      case ExprKind::Starred: expr(e->as<Starred>()->value.get()); return;
    }
  }

  void names(const std::vector<std::string>& v) {
    u(v.size());
    for (const std::string& s : v) str(s);
  }
  void aliases(const std::vector<ImportAlias>& v) {
    u(v.size());
    for (const ImportAlias& a : v) {
      str(a.name);
      str(a.asname);
      span(a.span);
    }
  }

  void stmt(const Stmt& s) {
    byte(static_cast<uint8_t>(s.kind));
    span(s.span);
    switch (s.kind) {
      case StmtKind::Expr: expr(s.as<ExprStmt>()->value.get()); return;
      case StmtKind::Assign: exprs(s.as<Assign>()->targets); expr(s.as<Assign>()->value.get()); return;
      case StmtKind::AugAssign: {
        const AugAssign* a = s.as<AugAssign>();
        expr(a->target.get());
        byte(static_cast<uint8_t>(a->op));
        expr(a->value.get());
        return;
      }
      case StmtKind::AnnAssign: {
        const AnnAssign* a = s.as<AnnAssign>();
        expr(a->target.get());
        expr(a->annotation.get());
        expr(a->value.get());
        return;
      }
      case StmtKind::Pass: case StmtKind::Break: case StmtKind::Continue: return;
      case StmtKind::Del: exprs(s.as<Del>()->targets); return;
      case StmtKind::Return: expr(s.as<Return>()->value.get()); return;
      case StmtKind::Raise: expr(s.as<Raise>()->exc.get()); expr(s.as<Raise>()->cause.get()); return;
      case StmtKind::Assert: expr(s.as<Assert>()->test.get()); expr(s.as<Assert>()->msg.get()); return;
      case StmtKind::Global: names(s.as<Global>()->names); return;
      case StmtKind::Nonlocal: names(s.as<Nonlocal>()->names); return;
      case StmtKind::If: {
        const If* i = s.as<If>();
        expr(i->test.get());
        body(i->body);
        body(i->orelse);
        return;
      }
      case StmtKind::While: {
        const While* w = s.as<While>();
        expr(w->test.get());
        body(w->body);
        body(w->orelse);
        return;
      }
      case StmtKind::For: {
        const For* f = s.as<For>();
        expr(f->target.get());
        expr(f->iter.get());
        body(f->body);
        body(f->orelse);
        return;
      }
      case StmtKind::Try: {
        const Try* t = s.as<Try>();
        body(t->body);
        u(t->handlers.size());
        for (const ExceptHandler& h : t->handlers) {
          expr(h.type.get());
          str(h.name);
          body(h.body);
          span(h.span);
        }
        body(t->orelse);
        body(t->finalbody);
        return;
      }
      case StmtKind::FunctionDef: {
        const FunctionDef* f = s.as<FunctionDef>();
        str(f->name);
        params(f->params);
        body(f->body);
        exprs(f->decorators);
        expr(f->returns.get());
        span(f->name_span);
        return;
      }
      case StmtKind::ClassDef: {
        const ClassDef* c = s.as<ClassDef>();
        str(c->name);
        expr(c->base.get());
        body(c->body);
        exprs(c->decorators);
        span(c->name_span);
        return;
      }
      case StmtKind::Import: aliases(s.as<Import>()->names); return;
      case StmtKind::ImportFrom: str(s.as<ImportFrom>()->module); aliases(s.as<ImportFrom>()->names); return;
    }
  }
};

// Thrown by Reader on anything it did not expect; caught in deserialize().
struct Damaged {};

class Reader {
 public:
  explicit Reader(std::string_view bytes) : in_(bytes) {}
  bool at_end() const { return pos_ == in_.size(); }

  uint64_t u() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = byte();
      v |= uint64_t(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    throw Damaged{};
  }
  uint32_t u32() {
    uint64_t v = u();
    if (v > UINT32_MAX) throw Damaged{};
    return static_cast<uint32_t>(v);
  }
  uint8_t byte() {
    if (pos_ >= in_.size()) throw Damaged{};
    return static_cast<uint8_t>(in_[pos_++]);
  }
  // A count of items that take at least one byte each: never more than the
  // bytes left, so damage cannot ask for a huge allocation.
  size_t count() {
    uint64_t n = u();
    if (n > in_.size() - pos_) throw Damaged{};
    return static_cast<size_t>(n);
  }
  template <class E>
  E enumerator(E last) {
    uint8_t b = byte();
    if (b > static_cast<uint8_t>(last)) throw Damaged{};
    return static_cast<E>(b);
  }
  bool flag() { return enumerator<uint8_t>(1) != 0; }
  std::string str() {
    size_t n = count();
    std::string s(in_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  Span span() {
    Span s;
    s.line = u32();
    s.col = u32();
    s.end_line = u32();
    s.end_col = u32();
    return s;
  }
  // An expression the tree requires (only the fields ast.h calls optional
  // may be absent: compile and dump follow the others unchecked).
  ExprPtr need() {
    ExprPtr e = expr();
    if (!e) throw Damaged{};
    return e;
  }
  std::vector<ExprPtr> exprs(bool nullable = false) {
    std::vector<ExprPtr> v(count());
    for (ExprPtr& e : v) e = nullable ? expr() : need();
    return v;
  }
  Body body() {
    Body b(count());
    for (StmtPtr& s : b) s = stmt();
    return b;
  }
  Param param() {
    Param p;
    p.name = str();
    p.default_value = expr();
    p.annotation = expr();
    p.span = span();
    return p;
  }
  Parameters params() {
    Parameters p;
    p.positional.resize(count());
    for (Param& x : p.positional) x = param();
    if (flag()) p.vararg = std::make_unique<Param>(param());
    p.kwonly.resize(count());
    for (Param& x : p.kwonly) x = param();
    if (flag()) p.kwarg = std::make_unique<Param>(param());
    return p;
  }
  std::vector<Comprehension> generators() {
    std::vector<Comprehension> gs(count());
    for (Comprehension& g : gs) {
      g.target = need();
      g.iter = need();
      g.ifs = exprs();
    }
    return gs;
  }
  std::vector<FStringPart> fparts() {
    Deeper guard(*this);
    std::vector<FStringPart> parts(count());
    for (FStringPart& p : parts) {
      p.is_field = flag();
      p.literal = str();
      p.expr = expr();
      if (p.is_field != (p.expr != nullptr)) throw Damaged{};
      p.conversion = static_cast<char>(byte());
      p.spec = fparts();
      p.expr_text = str();
    }
    return parts;
  }

  ExprPtr expr() {
    uint8_t tag = byte();
    if (tag == 0) return nullptr;
    if (tag - 1 > static_cast<int>(ExprKind::Starred)) throw Damaged{};
    Deeper guard(*this);
    Span span_ = span();
    ExprPtr e = expr_body(static_cast<ExprKind>(tag - 1));
    e->span = span_;
    return e;
  }

  ExprPtr expr_body(ExprKind kind) {
    switch (kind) {
      case ExprKind::Name: {
        auto n = std::make_unique<Name>();
        n->id = str();
        return n;
      }
      case ExprKind::Constant: {
        auto c = std::make_unique<Constant>();
        c->value_kind = enumerator(ConstKind::Ellipsis);
        if (c->value_kind == ConstKind::Int) c->int_value = static_cast<int64_t>(u());
        if (c->value_kind == ConstKind::Float) {
          uint64_t bits = u();
          std::memcpy(&c->float_value, &bits, sizeof bits);
        }
        if (c->value_kind == ConstKind::Str) c->set_str_value() = str();
        return c;
      }
      case ExprKind::FString: {
        auto f = std::make_unique<FString>();
        f->parts = fparts();
        return f;
      }
      case ExprKind::Tuple: {
        auto t = std::make_unique<Tuple>();
        t->elts = exprs();
        return t;
      }
      case ExprKind::List: {
        auto l = std::make_unique<List>();
        l->elts = exprs();
        return l;
      }
      case ExprKind::Dict: {
        auto d = std::make_unique<Dict>();
        d->keys = exprs(true);  // null: a `**mapping` entry
        d->values = exprs();
        if (d->keys.size() != d->values.size()) throw Damaged{};
        return d;
      }
      case ExprKind::Set: {
        auto s = std::make_unique<Set>();
        s->elts = exprs();
        return s;
      }
      case ExprKind::ListComp: {
        auto c = std::make_unique<ListComp>();
        c->elt = need();
        c->generators = generators();
        return c;
      }
      case ExprKind::SetComp: {
        auto c = std::make_unique<SetComp>();
        c->elt = need();
        c->generators = generators();
        return c;
      }
      case ExprKind::DictComp: {
        auto c = std::make_unique<DictComp>();
        c->key = need();
        c->value = need();
        c->generators = generators();
        return c;
      }
      case ExprKind::GeneratorExp: {
        auto c = std::make_unique<GeneratorExp>();
        c->elt = need();
        c->generators = generators();
        return c;
      }
      case ExprKind::Attribute: {
        auto a = std::make_unique<Attribute>();
        a->value = need();
        a->attr = str();
        a->attr_span = span();
        return a;
      }
      case ExprKind::Subscript: {
        auto s = std::make_unique<Subscript>();
        s->value = need();
        s->index = need();
        return s;
      }
      case ExprKind::Slice: {
        auto s = std::make_unique<Slice>();
        s->lower = expr();
        s->upper = expr();
        s->step = expr();
        return s;
      }
      case ExprKind::Call: {
        auto c = std::make_unique<Call>();
        c->func = need();
        c->args.resize(count());
        for (Arg& a : c->args) {
          a.kind = enumerator(Arg::Kind::DoubleStar);
          a.name = str();
          a.value = need();
          a.span = span();
        }
        return c;
      }
      case ExprKind::Unary: {
        auto x = std::make_unique<Unary>();
        x->op = enumerator(UnaryOp::Not);
        x->operand = need();
        return x;
      }
      case ExprKind::Binary: {
        auto b = std::make_unique<Binary>();
        b->op = enumerator(BinOp::BitAnd);
        b->left = need();
        b->right = need();
        b->op_span = span();
        return b;
      }
      case ExprKind::BoolOp: {
        auto b = std::make_unique<BoolOp>();
        b->op = enumerator(BoolOpKind::Or);
        b->values = exprs();
        return b;
      }
      case ExprKind::Compare: {
        auto c = std::make_unique<Compare>();
        c->left = need();
        c->ops.resize(count());
        for (CmpOp& op : c->ops) op = enumerator(CmpOp::IsNot);
        c->comparators = exprs();
        if (c->ops.size() != c->comparators.size()) throw Damaged{};
        return c;
      }
      case ExprKind::IfExp: {
        auto i = std::make_unique<IfExp>();
        i->test = need();
        i->body = need();
        i->orelse = need();
        return i;
      }
      case ExprKind::Lambda: {
        auto l = std::make_unique<Lambda>();
        l->params = params();
        l->body = need();
        return l;
      }
      case ExprKind::Starred: {
        auto s = std::make_unique<Starred>();
        s->value = need();
        return s;
      }
    }
    throw Damaged{};
  }

  std::vector<std::string> names() {
    std::vector<std::string> v(count());
    for (std::string& s : v) s = str();
    return v;
  }
  std::vector<ImportAlias> aliases() {
    std::vector<ImportAlias> v(count());
    for (ImportAlias& a : v) {
      a.name = str();
      a.asname = str();
      a.span = span();
    }
    return v;
  }

  StmtPtr stmt() {
    StmtKind kind = enumerator(StmtKind::ImportFrom);
    Deeper guard(*this);
    Span span_ = span();
    StmtPtr s = stmt_body(kind);
    s->span = span_;
    return s;
  }

  StmtPtr stmt_body(StmtKind kind) {
    switch (kind) {
      case StmtKind::Expr: {
        auto s = std::make_unique<ExprStmt>();
        s->value = need();
        return s;
      }
      case StmtKind::Assign: {
        auto s = std::make_unique<Assign>();
        s->targets = exprs();
        s->value = need();
        return s;
      }
      case StmtKind::AugAssign: {
        auto s = std::make_unique<AugAssign>();
        s->target = need();
        s->op = enumerator(BinOp::BitAnd);
        s->value = need();
        return s;
      }
      case StmtKind::AnnAssign: {
        auto s = std::make_unique<AnnAssign>();
        s->target = need();
        s->annotation = need();
        s->value = expr();
        return s;
      }
      case StmtKind::Pass: return std::make_unique<Pass>();
      case StmtKind::Break: return std::make_unique<Break>();
      case StmtKind::Continue: return std::make_unique<Continue>();
      case StmtKind::Del: {
        auto s = std::make_unique<Del>();
        s->targets = exprs();
        return s;
      }
      case StmtKind::Return: {
        auto s = std::make_unique<Return>();
        s->value = expr();
        return s;
      }
      case StmtKind::Raise: {
        auto s = std::make_unique<Raise>();
        s->exc = expr();
        s->cause = expr();
        return s;
      }
      case StmtKind::Assert: {
        auto s = std::make_unique<Assert>();
        s->test = need();
        s->msg = expr();
        return s;
      }
      case StmtKind::Global: {
        auto s = std::make_unique<Global>();
        s->names = names();
        return s;
      }
      case StmtKind::Nonlocal: {
        auto s = std::make_unique<Nonlocal>();
        s->names = names();
        return s;
      }
      case StmtKind::If: {
        auto s = std::make_unique<If>();
        s->test = need();
        s->body = body();
        s->orelse = body();
        return s;
      }
      case StmtKind::While: {
        auto s = std::make_unique<While>();
        s->test = need();
        s->body = body();
        s->orelse = body();
        return s;
      }
      case StmtKind::For: {
        auto s = std::make_unique<For>();
        s->target = need();
        s->iter = need();
        s->body = body();
        s->orelse = body();
        return s;
      }
      case StmtKind::Try: {
        auto s = std::make_unique<Try>();
        s->body = body();
        s->handlers.resize(count());
        for (ExceptHandler& h : s->handlers) {
          h.type = expr();
          h.name = str();
          h.body = body();
          h.span = span();
        }
        s->orelse = body();
        s->finalbody = body();
        return s;
      }
      case StmtKind::FunctionDef: {
        auto s = std::make_unique<FunctionDef>();
        s->name = str();
        s->params = params();
        s->body = body();
        s->decorators = exprs();
        s->returns = expr();
        s->name_span = span();
        return s;
      }
      case StmtKind::ClassDef: {
        auto s = std::make_unique<ClassDef>();
        s->name = str();
        s->base = expr();
        s->body = body();
        s->decorators = exprs();
        s->name_span = span();
        return s;
      }
      case StmtKind::Import: {
        auto s = std::make_unique<Import>();
        s->names = aliases();
        return s;
      }
      case StmtKind::ImportFrom: {
        auto s = std::make_unique<ImportFrom>();
        s->module = str();
        s->names = aliases();
        return s;
      }
    }
    throw Damaged{};
  }

 private:
  struct Deeper {
    explicit Deeper(Reader& r) : r_(r) {
      if (++r_.depth_ > kMaxDepth) throw Damaged{};
    }
    ~Deeper() { --r_.depth_; }
    Reader& r_;
  };

  std::string_view in_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string serialize(const Module& m) {
  Writer w;
  w.u(kAstFormatVersion);
  w.body(m.body);
  return std::move(w.out);
}

std::unique_ptr<Module> deserialize(std::string_view bytes, SourcePtr source) {
  try {
    Reader r(bytes);
    if (r.u() != kAstFormatVersion) return nullptr;
    auto m = std::make_unique<Module>();
    m->source = std::move(source);
    m->body = r.body();
    if (!r.at_end()) return nullptr;
    return m;
  } catch (const Damaged&) {
    return nullptr;
  }
}

}  // namespace msl::ast
