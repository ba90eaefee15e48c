// The compiler from AST to executable nodes.
//
// It works in three steps, like CPython's symtable + compiler:
//  1. collect: walk the tree once, creating a Scope per module, class,
//     function and lambda, recording which names each scope binds, uses,
//     and declares global/nonlocal. Comprehension variables are renamed to
//     hidden frame slots ("x@3") so they do not leak into the enclosing scope.
//  2. analyse: decide for every scope which names are frame slots, which of
//     those are captured by inner functions (cells), and which are free
//     variables reached through the closure; everything else is global.
//  3. generate: build the node tree, resolving each name reference to the
//     node kind decided in step 2.
#include <map>
#include <set>

#include "interp/core/node_factory.h"

namespace msl {
namespace {

using namespace ast;

struct Scope {
  enum class Kind { Module, Class, Function } kind;
  Scope* parent = nullptr;
  std::string name;
  std::map<std::string, std::string> parent_overlay;  // comprehension renames visible where defined
  std::vector<std::string> params;
  std::vector<std::string> bound;  // in order of first binding
  std::set<std::string> bound_set, globals, nonlocals, hidden, used, cells;
  std::vector<std::pair<std::string, std::string>> freevars;  // (name here, name in parent)
  std::map<std::string, uint32_t> free_index;
  std::map<std::string, uint32_t> slots;
  std::vector<std::string> slot_order;
  bool uses_super = false;
  size_t index = 0;  // in Collector::scopes
  Span span;
  std::map<std::string, Span> decl_span;  // where each global/nonlocal was declared
  Span decl(const std::string& n) const {
    auto it = decl_span.find(n);
    return it == decl_span.end() ? span : it->second;
  }

  void bind(const std::string& n) {
    if (bound_set.insert(n).second) bound.push_back(n);
  }
  // Frees what only the collector and the analyser read, before generating:
  // the scopes of deferred bodies (DeferredBody) live until their first call.
  void drop_analysis() {
    parent_overlay.clear();
    std::vector<std::string>().swap(bound);
    bound_set.clear();
    hidden.clear();
    used.clear();
    decl_span.clear();
  }
  bool is_local(const std::string& n) const {
    // Names that live in this scope's frame slots.
    return slots.count(n) > 0;
  }
};

struct CompileError {
  Span span;
  std::string message;
};

std::string translate(const std::vector<std::map<std::string, std::string>>& overlays, const std::string& n) {
  for (auto it = overlays.rbegin(); it != overlays.rend(); ++it) {
    auto f = it->find(n);
    if (f != it->end()) return f->second;
  }
  return n;
}

std::map<std::string, std::string> flatten(const std::vector<std::map<std::string, std::string>>& overlays) {
  std::map<std::string, std::string> out;
  for (auto& m : overlays)
    for (auto& [k, v] : m) out[k] = v;
  return out;
}

// Enters an inner scope for the lifetime of the guard: the current scope
// becomes `child` and comprehension renames of the outer scope are hidden
// (inner scopes reach outer variables through free variables instead).
struct EnterScope {
  EnterScope(Scope*& cur, std::vector<std::map<std::string, std::string>>& overlays, Scope* child)
      : cur_(cur), overlays_(overlays), saved_(cur), saved_overlays_(std::move(overlays)) {
    overlays_.clear();
    cur_ = child;
  }
  ~EnterScope() {
    cur_ = saved_;
    overlays_ = std::move(saved_overlays_);
  }
  Scope*& cur_;
  std::vector<std::map<std::string, std::string>>& overlays_;
  Scope* saved_;
  std::vector<std::map<std::string, std::string>> saved_overlays_;
};

// ------------------------------------------------------------------ collect

class Collector {
 public:
  std::vector<std::unique_ptr<Scope>> scopes;
  std::map<const void*, Scope*> scope_of;                                  // def/lambda/class node → scope
  std::map<const Expr*, std::map<std::string, std::string>> comp_renames;  // comprehension → renames
  int counter = 0;

  Scope* new_scope(Scope::Kind k, Scope* parent, const void* key, std::string name, Span span) {
    scopes.push_back(std::make_unique<Scope>());
    Scope* s = scopes.back().get();
    s->index = scopes.size() - 1;
    s->kind = k;
    s->parent = parent;
    s->name = std::move(name);
    s->span = span;
    s->parent_overlay = flatten(overlays_);
    scope_of[key] = s;
    return s;
  }

  void run(const ast::Module& m) {
    cur_ = new_scope(Scope::Kind::Module, nullptr, &m, "<module>", Span{1, 1, 1, 1});
    body(m.body);
  }

 private:
  Scope* cur_ = nullptr;
  std::vector<std::map<std::string, std::string>> overlays_;

  void use(const std::string& n) { cur_->used.insert(translate(overlays_, n)); }

  void body(const Body& b) {
    for (auto& s : b) stmt(*s);
  }

  void target(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: cur_->bind(translate(overlays_, e.as<ast::Name>()->id)); break;
      case ExprKind::Tuple:
        for (auto& x : e.as<ast::Tuple>()->elts) target(*x);
        break;
      case ExprKind::List:
        for (auto& x : e.as<ast::List>()->elts) target(*x);
        break;
      case ExprKind::Starred: target(*e.as<ast::Starred>()->value); break;
      default: expr(e); break;
    }
  }

  void params(const Parameters& p, Scope* s) {
    for (auto& x : p.positional) s->params.push_back(x.name);
    for (auto& x : p.kwonly) s->params.push_back(x.name);
    if (p.vararg) s->params.push_back(p.vararg->name);
    if (p.kwarg) s->params.push_back(p.kwarg->name);
  }
  void defaults(const Parameters& p) {
    for (auto& x : p.positional)
      if (x.default_value) expr(*x.default_value);
    for (auto& x : p.kwonly)
      if (x.default_value) expr(*x.default_value);
  }

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Expr: expr(*s.as<ast::ExprStmt>()->value); break;
      case StmtKind::Assign: {
        auto* a = s.as<ast::Assign>();
        expr(*a->value);
        for (auto& t : a->targets) target(*t);
        break;
      }
      case StmtKind::AugAssign: {
        auto* a = s.as<ast::AugAssign>();
        expr(*a->value);
        if (a->target->kind == ExprKind::Name) use(a->target->as<ast::Name>()->id);
        target(*a->target);
        break;
      }
      case StmtKind::AnnAssign: {
        auto* a = s.as<ast::AnnAssign>();
        if (a->value) expr(*a->value);
        target(*a->target);
        break;
      }
      case StmtKind::Del:
        for (auto& t : s.as<ast::Del>()->targets) target(*t);
        break;
      case StmtKind::Return:
        if (auto& v = s.as<ast::Return>()->value) expr(*v);
        break;
      case StmtKind::Raise: {
        auto* r = s.as<ast::Raise>();
        if (r->exc) expr(*r->exc);
        if (r->cause) expr(*r->cause);
        break;
      }
      case StmtKind::Assert: {
        auto* a = s.as<ast::Assert>();
        expr(*a->test);
        if (a->msg) expr(*a->msg);
        break;
      }
      case StmtKind::Global:
        for (auto& n : s.as<ast::Global>()->names) {
          cur_->globals.insert(n);
          cur_->decl_span[n] = s.span;
        }
        break;
      case StmtKind::Nonlocal:
        for (auto& n : s.as<ast::Nonlocal>()->names) {
          if (cur_->kind == Scope::Kind::Module)
            throw CompileError{s.span, "Nonlocal declaration not allowed at module level"};
          cur_->nonlocals.insert(n);
          cur_->decl_span[n] = s.span;
        }
        break;
      case StmtKind::If: {
        auto* i = s.as<ast::If>();
        expr(*i->test);
        body(i->body);
        body(i->orelse);
        break;
      }
      case StmtKind::While: {
        auto* w = s.as<ast::While>();
        expr(*w->test);
        body(w->body);
        body(w->orelse);
        break;
      }
      case StmtKind::For: {
        auto* f = s.as<ast::For>();
        expr(*f->iter);
        target(*f->target);
        body(f->body);
        body(f->orelse);
        break;
      }
      case StmtKind::Try: {
        auto* t = s.as<ast::Try>();
        body(t->body);
        for (auto& h : t->handlers) {
          if (h.type) expr(*h.type);
          if (!h.name.empty()) cur_->bind(h.name);
          body(h.body);
        }
        body(t->orelse);
        body(t->finalbody);
        break;
      }
      case StmtKind::FunctionDef: {
        auto* d = s.as<ast::FunctionDef>();
        for (auto& dec : d->decorators) expr(*dec);
        defaults(d->params);
        cur_->bind(d->name);
        Scope* child = new_scope(Scope::Kind::Function, cur_, d, d->name, d->span);
        params(d->params, child);
        {
          EnterScope scope(cur_, overlays_, child);
          body(d->body);
        }
        break;
      }
      case StmtKind::ClassDef: {
        auto* c = s.as<ast::ClassDef>();
        for (auto& dec : c->decorators) expr(*dec);
        if (c->base) expr(*c->base);
        cur_->bind(c->name);
        Scope* child = new_scope(Scope::Kind::Class, cur_, c, c->name, c->span);
        {
          EnterScope scope(cur_, overlays_, child);
          body(c->body);
        }
        break;
      }
      case StmtKind::Import:
        for (auto& a : s.as<ast::Import>()->names)
          cur_->bind(!a.asname.empty() ? a.asname : a.name.substr(0, a.name.find('.')));
        break;
      case StmtKind::ImportFrom:
        for (auto& a : s.as<ast::ImportFrom>()->names)
          if (a.name != "*") cur_->bind(!a.asname.empty() ? a.asname : a.name);
        break;
      case StmtKind::Pass:
      case StmtKind::Break:
      case StmtKind::Continue: break;
    }
  }

  void comp_targets(const Expr& e, std::map<std::string, std::string>& renames) {
    switch (e.kind) {
      case ExprKind::Name: {
        const std::string& n = e.as<ast::Name>()->id;
        if (!renames.count(n)) renames[n] = n + "@" + std::to_string(++counter);
        cur_->hidden.insert(renames[n]);
        break;
      }
      case ExprKind::Tuple:
        for (auto& x : e.as<ast::Tuple>()->elts) comp_targets(*x, renames);
        break;
      case ExprKind::List:
        for (auto& x : e.as<ast::List>()->elts) comp_targets(*x, renames);
        break;
      case ExprKind::Starred: comp_targets(*e.as<ast::Starred>()->value, renames); break;
      default: break;
    }
  }

  void comprehension(const Expr& e, const std::vector<ast::Comprehension>& gens, const Expr* a, const Expr* b) {
    expr(*gens[0].iter);  // the outermost iterable is evaluated in the enclosing scope
    std::map<std::string, std::string> renames;
    for (auto& g : gens) comp_targets(*g.target, renames);
    comp_renames[&e] = renames;
    overlays_.push_back(renames);
    for (size_t i = 0; i < gens.size(); ++i) {
      if (i > 0) expr(*gens[i].iter);
      target_exprs(*gens[i].target);
      for (auto& c : gens[i].ifs) expr(*c);
    }
    if (a) expr(*a);
    if (b) expr(*b);
    overlays_.pop_back();
  }

  // Sub-expressions of a comprehension target (subscripts/attributes) are uses.
  void target_exprs(const Expr& e) {
    if (e.kind == ExprKind::Attribute || e.kind == ExprKind::Subscript) expr(e);
  }

  void expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: use(e.as<ast::Name>()->id); break;
      case ExprKind::Constant: break;
      case ExprKind::FString:
        for (auto& p : e.as<ast::FString>()->parts) fpart(p);
        break;
      case ExprKind::Tuple:
        for (auto& x : e.as<ast::Tuple>()->elts) expr(*x);
        break;
      case ExprKind::List:
        for (auto& x : e.as<ast::List>()->elts) expr(*x);
        break;
      case ExprKind::Set:
        for (auto& x : e.as<ast::Set>()->elts) expr(*x);
        break;
      case ExprKind::Dict: {
        auto* d = e.as<ast::Dict>();
        for (size_t i = 0; i < d->keys.size(); ++i) {
          if (d->keys[i]) expr(*d->keys[i]);
          expr(*d->values[i]);
        }
        break;
      }
      case ExprKind::ListComp:
        comprehension(e, e.as<ast::ListComp>()->generators, e.as<ast::ListComp>()->elt.get(), nullptr);
        break;
      case ExprKind::SetComp:
        comprehension(e, e.as<ast::SetComp>()->generators, e.as<ast::SetComp>()->elt.get(), nullptr);
        break;
      case ExprKind::GeneratorExp:
        comprehension(e, e.as<ast::GeneratorExp>()->generators, e.as<ast::GeneratorExp>()->elt.get(), nullptr);
        break;
      case ExprKind::DictComp:
        comprehension(e, e.as<ast::DictComp>()->generators, e.as<ast::DictComp>()->key.get(),
                      e.as<ast::DictComp>()->value.get());
        break;
      case ExprKind::Attribute: expr(*e.as<ast::Attribute>()->value); break;
      case ExprKind::Subscript:
        expr(*e.as<ast::Subscript>()->value);
        expr(*e.as<ast::Subscript>()->index);
        break;
      case ExprKind::Slice: {
        auto* s = e.as<ast::Slice>();
        if (s->lower) expr(*s->lower);
        if (s->upper) expr(*s->upper);
        if (s->step) expr(*s->step);
        break;
      }
      case ExprKind::Call: {
        auto* c = e.as<ast::Call>();
        if (c->func->kind == ExprKind::Name && c->func->as<ast::Name>()->id == "super" && c->args.empty())
          cur_->uses_super = true;
        expr(*c->func);
        for (auto& a : c->args) expr(*a.value);
        break;
      }
      case ExprKind::Unary: expr(*e.as<ast::Unary>()->operand); break;
      case ExprKind::Binary:
        expr(*e.as<ast::Binary>()->left);
        expr(*e.as<ast::Binary>()->right);
        break;
      case ExprKind::BoolOp:
        for (auto& x : e.as<ast::BoolOp>()->values) expr(*x);
        break;
      case ExprKind::Compare:
        expr(*e.as<ast::Compare>()->left);
        for (auto& x : e.as<ast::Compare>()->comparators) expr(*x);
        break;
      case ExprKind::IfExp:
        expr(*e.as<ast::IfExp>()->test);
        expr(*e.as<ast::IfExp>()->body);
        expr(*e.as<ast::IfExp>()->orelse);
        break;
      case ExprKind::Lambda: {
        auto* l = e.as<ast::Lambda>();
        defaults(l->params);
        Scope* child = new_scope(Scope::Kind::Function, cur_, l, "<lambda>", l->span);
        params(l->params, child);
        {
          EnterScope scope(cur_, overlays_, child);
          expr(*l->body);
        }
        break;
      }
      case ExprKind::Starred: expr(*e.as<ast::Starred>()->value); break;
    }
  }

  void fpart(const FStringPart& p) {
    if (!p.is_field) return;
    expr(*p.expr);
    for (auto& s : p.spec) fpart(s);
  }
};

// ------------------------------------------------------------------ analyse

class Analyzer {
 public:
  explicit Analyzer(Collector& c) : c_(c) {}

  void run() {
    // Slots first, so free-variable resolution can see every scope's locals.
    for (auto& s : c_.scopes) assign_slots(*s);
    for (auto& s : c_.scopes) {
      for (auto& n : s->nonlocals)
        if (!need_free(s.get(), n)) throw CompileError{s->decl(n), "No binding for nonlocal '" + n + "' found"};
      for (auto& n : s->used)
        if (!s->is_local(n) && !s->globals.count(n) && s->kind != Scope::Kind::Module) need_free(s.get(), n);
      if (s->uses_super) need_free(s.get(), "__class__");
    }
  }

 private:
  Collector& c_;

  void add_slot(Scope& s, const std::string& n) {
    if (s.slots.count(n)) return;
    s.slots[n] = static_cast<uint32_t>(s.slot_order.size());
    s.slot_order.push_back(n);
  }

  void assign_slots(Scope& s) {
    for (auto& n : s.globals)
      if (s.nonlocals.count(n)) throw CompileError{s.decl(n), "Name '" + n + "' is nonlocal and global"};
    if (s.kind == Scope::Kind::Function) {
      for (auto& p : s.params) {
        if (s.globals.count(p)) throw CompileError{s.decl(p), "Name '" + p + "' is parameter and global"};
        if (s.nonlocals.count(p)) throw CompileError{s.decl(p), "Name '" + p + "' is parameter and nonlocal"};
        add_slot(s, p);
      }
      for (auto& n : s.bound)
        if (!s.globals.count(n) && !s.nonlocals.count(n)) add_slot(s, n);
    }
    for (auto& n : s.hidden) add_slot(s, n);
    if (s.kind == Scope::Kind::Class) add_slot(s, "__class__");
  }

  void add_free(Scope* s, const std::string& n, const std::string& parent_name) {
    if (s->free_index.count(n)) return;
    s->free_index[n] = static_cast<uint32_t>(s->freevars.size());
    s->freevars.emplace_back(n, parent_name);
  }

  // Makes `n` a free variable of `s` if an enclosing function (or class-body
  // slot) binds it. Returns false when it is a global.
  bool need_free(Scope* s, const std::string& n) {
    if (s->free_index.count(n)) return true;
    Scope* p = s->parent;
    if (!p) return false;
    auto ov = s->parent_overlay.find(n);
    std::string pn = ov != s->parent_overlay.end() ? ov->second : n;
    if (p->kind == Scope::Kind::Module) {
      if (p->hidden.count(pn)) {
        p->cells.insert(pn);
        add_free(s, n, pn);
        return true;
      }
      return false;
    }
    if (p->kind == Scope::Kind::Function && p->is_local(pn)) {
      p->cells.insert(pn);
      add_free(s, n, pn);
      return true;
    }
    if (p->kind == Scope::Kind::Class && (p->hidden.count(pn) || pn == "__class__")) {
      p->cells.insert(pn);
      add_free(s, n, pn);
      return true;
    }
    if (p->globals.count(pn)) return false;
    if (need_free(p, pn)) {
      add_free(s, n, pn);
      return true;
    }
    return false;
  }
};

// ----------------------------------------------------------------- generate

// What the generator works from: the module's scopes, its source and, when
// kept, its syntax tree. Function bodies compiled on their first call
// (DeferredBody) share it, so it lives while any of them waits.
struct CompileUnit {
  Collector c;
  SourcePtr src;
  std::shared_ptr<const ast::Module> owner;  // null: the tree is not kept, nothing is deferred
};

}  // namespace

// A function body left to its first call: most functions of an imported
// library are never called in a run (`import msl.nn` defines ~2,000), and
// generating their nodes was a third of the import's time. Only where the
// syntax tree outlives the compile (CompileUnit::owner); the analysis of
// names ran for the whole module already, so the nodes made later are those
// made now. Its scope is freed once the body is generated.
struct DeferredBody {
  std::shared_ptr<CompileUnit> unit;
  Scope* scope = nullptr;
  const void* key = nullptr;       // the def or lambda, the scope's key
  std::vector<std::string> qual;   // the qualname's parts around the body
  const Body* body = nullptr;      // a def's
  const Expr* lambda_body = nullptr;
};

namespace {

class Generator {
 public:
  Generator(Interp& I, std::shared_ptr<CompileUnit> unit, msl::Module* mod, ast::Module* release = nullptr)
      : I_(I), unit_(std::move(unit)), c_(unit_->c), mod_(mod), src_(unit_->src), owner_(unit_->owner),
        release_(release) {}

  // Generates a deferred body into `code`, which keeps `d` until then.
  void deferred(FuncCode& code, const DeferredBody& d) {
    cur_ = d.scope;
    qual_ = d.qual;
    StmtNodePtr body;
    ExprNodePtr lambda;
    if (d.body)
      body = block(*d.body);
    else
      lambda = expr(*d.lambda_body);
    done_with(d.key, *d.scope);
    code.body = std::move(body);
    code.expr = std::move(lambda);
  }

  std::shared_ptr<FuncCode> module(const ast::Module& m, CompileMode mode) {
    mode_ = mode;
    Scope* s = c_.scope_of.at(&m);
    auto code = new_code(*s, "<module>", "<module>");
    code->is_module = true;
    cur_ = s;
    std::vector<StmtNodePtr> stmts;
    for (size_t i = 0; i < m.body.size(); ++i) {
      const Stmt& st = *m.body[i];
      if (mode == CompileMode::Eval && i + 1 == m.body.size() && st.kind == StmtKind::Expr) {
        auto n = nodes::result_stmt(expr(*st.as<ast::ExprStmt>()->value));
        n->span = st.span;
        stmts.push_back(std::move(n));
      } else {
        size_t kept_before = keeps_ast_;
        stmts.push_back(stmt(st));
        // No function's code points into this statement: its AST is done.
        if (release_ == &m && keeps_ast_ == kept_before) release_->body[i].reset();
      }
    }
    code->body = nodes::block(std::move(stmts));
    return code;
  }

 private:
  Interp& I_;
  std::shared_ptr<CompileUnit> unit_;
  Collector& c_;
  msl::Module* mod_;
  SourcePtr src_;
  std::shared_ptr<const ast::Module> owner_;
  ast::Module* release_;   // the module whose top-level statements are freed once compiled, if any
  size_t keeps_ast_ = 0;   // codes made that keep owner_ (and point into its statements)
  const ast::FunctionDef* pending_def_ = nullptr;  // the def function() is compiling
  const ast::Lambda* lambda_expr_ = nullptr;        // the lambda function() is compiling
  Scope* cur_ = nullptr;
  CompileMode mode_ = CompileMode::File;
  std::vector<std::map<std::string, std::string>> overlays_;
  std::vector<std::string> qual_;  // enclosing class/function names for qualnames

  Ref<Str> intern(const std::string& s) { return Ref<Str>(I_.intern(s)); }

  // The scope of `key` (a def, lambda or class) after its code was
  // generated: nothing asks for it again, so it is freed at once (a huge
  // script's scopes and executable nodes do not all exist together).
  void done_with(const void* key, Scope& s) {
    c_.scope_of.erase(key);
    c_.scopes[s.index].reset();
  }

  std::shared_ptr<FuncCode> new_code(Scope& s, const std::string& name, const std::string& qualname) {
    auto code = std::make_shared<FuncCode>();
    code->name = name;
    code->qualname = qualname;
    code->source = src_;
    code->span = s.span;
    code->nslots = static_cast<uint32_t>(s.slot_order.size());
    for (auto& n : s.slot_order) {
      code->slot_names.push_back(intern(n));
      bool cell = s.cells.count(n) > 0;
      code->slot_is_cell.push_back(cell);
      if (cell) code->cell_slots.push_back(s.slots.at(n));
    }
    return code;
  }

  std::string qualname(const std::string& name) {
    std::string q;
    for (auto& p : qual_) q += p + ".";
    return q + name;
  }

  template <class T>
  T with_span(T n, const Span& span) {
    n->span = span;
    return n;
  }

  // A reference to variable `id` usable for load, store and delete.
  ExprNodePtr name_ref(const std::string& id, const Span& span) {
    std::string n = translate(overlays_, id);
    Scope* s = cur_;
    auto slot_node = [&](uint32_t slot) -> ExprNodePtr {
      if (s->cells.count(n)) return nodes::local_cell(slot, intern(id));
      return nodes::local(slot, intern(id));
    };
    auto global_node = [&]() -> ExprNodePtr {
      Str* name = I_.intern(id);
      return nodes::global(mod_->slot(name), I_.builtins_module()->find(name));
    };
    ExprNodePtr out;
    if (s->kind == Scope::Kind::Function) {
      if (s->slots.count(n))
        out = slot_node(s->slots.at(n));
      else if (s->globals.count(n))
        out = global_node();
      else if (s->free_index.count(n))
        out = nodes::free_var(s->free_index.at(n), intern(id));
      else
        out = global_node();
    } else if (s->kind == Scope::Kind::Class) {
      if (s->slots.count(n))
        out = slot_node(s->slots.at(n));
      else if (s->globals.count(n))
        out = global_node();
      else {
        ExprNodePtr fallback =
            s->free_index.count(n) ? nodes::free_var(s->free_index.at(n), intern(id)) : global_node();
        fallback->span = span;
        if (s->nonlocals.count(n))
          out = std::move(fallback);
        else
          out = nodes::class_name(intern(id), std::move(fallback));
      }
    } else {
      if (s->slots.count(n))
        out = slot_node(s->slots.at(n));
      else
        out = global_node();
    }
    out->span = span;
    return out;
  }

  std::vector<nodes::ClosureSource> closure_for(Scope& child) {
    std::vector<nodes::ClosureSource> out;
    for (auto& [n, pn] : child.freevars) {
      if (cur_->slots.count(pn) && cur_->cells.count(pn))
        out.push_back({false, cur_->slots.at(pn)});
      else
        out.push_back({true, cur_->free_index.at(pn)});
    }
    return out;
  }

  static Ref<Str> docstring(const Body& body) {
    if (body.empty() || body[0]->kind != StmtKind::Expr) return nullptr;
    const Expr& e = *body[0]->as<ast::ExprStmt>()->value;
    if (e.kind != ExprKind::Constant || e.as<ast::Constant>()->value_kind != ConstKind::Str) return nullptr;
    return Ref<Str>(new Str(e.as<ast::Constant>()->str_value()));
  }

  // The function object of a def (key: its FunctionDef) or lambda (its
  // Lambda); its body is generated now, or deferred where the tree is kept.
  ExprNodePtr function(const void* key, Scope& child, const std::string& name, const Parameters& p,
                       const Body* body, const Expr* lambda_body, const Span& span) {
    auto code = new_code(child, name, qualname(name));
    if (owner_) {
      ++keeps_ast_;
      code->ast = owner_;
      code->def = std::exchange(pending_def_, nullptr);
      if (!body) code->lambda = lambda_expr_;
      for (auto& fv : child.freevars) code->freevar_names.push_back(fv.first);
    }
    code->nposargs = static_cast<uint32_t>(p.positional.size());
    code->nkwonly = static_cast<uint32_t>(p.kwonly.size());
    code->has_vararg = p.vararg != nullptr;
    code->has_kwarg = p.kwarg != nullptr;
    for (auto& n : child.params) code->param_names.push_back(intern(n));
    code->simple = !code->has_vararg && !code->has_kwarg && code->nkwonly == 0;
    std::vector<ExprNodePtr> defaults, kwdefaults;
    for (auto& x : p.positional)
      if (x.default_value) defaults.push_back(expr(*x.default_value));
    for (auto& x : p.kwonly) kwdefaults.push_back(x.default_value ? expr(*x.default_value) : nullptr);
    auto closure = closure_for(child);

    if (body) code->doc = docstring(*body);
    qual_.push_back(name);
    qual_.push_back("<locals>");
    if (owner_) {
      auto d = std::make_shared<DeferredBody>();
      d->unit = unit_;
      d->scope = &child;
      d->key = key;
      d->qual = qual_;
      d->body = body;
      d->lambda_body = lambda_body;
      code->deferred = std::move(d);
    } else {
      EnterScope scope(cur_, overlays_, &child);
      if (body)
        code->body = block(*body);
      else
        code->expr = expr(*lambda_body);
      done_with(key, child);
    }
    qual_.pop_back();
    qual_.pop_back();
    return with_span(
        nodes::make_function(std::move(code), std::move(defaults), std::move(kwdefaults), std::move(closure)), span);
  }

  ExprNodePtr decorate(const std::vector<ExprPtr>& decorators, ExprNodePtr value) {
    for (auto it = decorators.rbegin(); it != decorators.rend(); ++it) {
      std::vector<nodes::CallArg> args;
      args.push_back({Arg::Kind::Positional, nullptr, std::move(value)});
      value = with_span(nodes::call(expr(**it), std::move(args)), (*it)->span);
    }
    return value;
  }

  StmtNodePtr block(const Body& body) {
    std::vector<StmtNodePtr> out;
    out.reserve(body.size());
    for (auto& s : body) out.push_back(stmt(*s));
    return nodes::block(std::move(out));
  }
  StmtNodePtr opt_block(const Body& body) { return body.empty() ? nullptr : block(body); }

  StmtNodePtr stmt(const Stmt& s) {
    StmtNodePtr n = stmt_inner(s);
    n->span = s.span;
    return n;
  }

  StmtNodePtr stmt_inner(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Expr:
        if (mode_ == CompileMode::Interactive && cur_->kind == Scope::Kind::Module)
          return nodes::display_stmt(expr(*s.as<ast::ExprStmt>()->value));
        return nodes::expr_stmt(expr(*s.as<ast::ExprStmt>()->value));
      case StmtKind::Assign: {
        auto* a = s.as<ast::Assign>();
        std::vector<ExprNodePtr> targets;
        for (auto& t : a->targets) targets.push_back(target(*t));
        return nodes::assign(std::move(targets), expr(*a->value));
      }
      case StmtKind::AugAssign: {
        auto* a = s.as<ast::AugAssign>();
        return nodes::aug_assign(target(*a->target), a->op, expr(*a->value));
      }
      case StmtKind::AnnAssign: {
        auto* a = s.as<ast::AnnAssign>();
        if (!a->value) return nodes::pass();
        std::vector<ExprNodePtr> targets;
        targets.push_back(target(*a->target));
        return nodes::assign(std::move(targets), expr(*a->value));
      }
      case StmtKind::Pass:
      case StmtKind::Global:
      case StmtKind::Nonlocal: return nodes::pass();
      case StmtKind::Del: {
        std::vector<ExprNodePtr> targets;
        for (auto& t : s.as<ast::Del>()->targets) targets.push_back(target(*t));
        return nodes::del(std::move(targets));
      }
      case StmtKind::Return: {
        auto& v = s.as<ast::Return>()->value;
        return nodes::ret(v ? expr(*v) : nullptr);
      }
      case StmtKind::Raise: {
        auto* r = s.as<ast::Raise>();
        return nodes::raise(r->exc ? expr(*r->exc) : nullptr, r->cause ? expr(*r->cause) : nullptr);
      }
      case StmtKind::Break: return nodes::brk();
      case StmtKind::Continue: return nodes::cont();
      case StmtKind::Assert: {
        auto* a = s.as<ast::Assert>();
        return nodes::assert_(expr(*a->test), a->msg ? expr(*a->msg) : nullptr);
      }
      case StmtKind::If: {
        auto* i = s.as<ast::If>();
        return nodes::if_(expr(*i->test), block(i->body), opt_block(i->orelse));
      }
      case StmtKind::While: {
        auto* w = s.as<ast::While>();
        return nodes::while_(expr(*w->test), block(w->body), opt_block(w->orelse));
      }
      case StmtKind::For: {
        auto* f = s.as<ast::For>();
        auto iter = expr(*f->iter);
        return nodes::for_(target(*f->target), std::move(iter), block(f->body), opt_block(f->orelse));
      }
      case StmtKind::Try: {
        auto* t = s.as<ast::Try>();
        std::vector<nodes::Handler> handlers;
        for (auto& h : t->handlers) {
          nodes::Handler nh;
          if (h.type) nh.type = expr(*h.type);
          if (!h.name.empty()) nh.target = name_ref(h.name, h.span);
          nh.body = block(h.body);
          nh.span = h.span;
          handlers.push_back(std::move(nh));
        }
        return nodes::try_(block(t->body), std::move(handlers), opt_block(t->orelse), opt_block(t->finalbody));
      }
      case StmtKind::FunctionDef: {
        auto* d = s.as<ast::FunctionDef>();
        Scope& child = *c_.scope_of.at(d);
        pending_def_ = d;
        ExprNodePtr fn = function(d, child, d->name, d->params, &d->body, nullptr, d->span);
        fn = decorate(d->decorators, std::move(fn));
        std::vector<ExprNodePtr> targets;
        targets.push_back(name_ref(d->name, d->name_span));
        return nodes::assign(std::move(targets), std::move(fn));
      }
      case StmtKind::ClassDef: {
        auto* c = s.as<ast::ClassDef>();
        Scope& child = *c_.scope_of.at(c);
        ExprNodePtr base = c->base ? expr(*c->base) : nullptr;
        auto code = new_code(child, c->name, qualname(c->name));
        auto closure = closure_for(child);
        {
          EnterScope scope(cur_, overlays_, &child);
          qual_.push_back(c->name);
          code->body = block(c->body);
          code->doc = docstring(c->body);
          qual_.pop_back();
        }
        int cell = child.cells.count("__class__") ? static_cast<int>(child.slots.at("__class__")) : -1;
        done_with(c, child);
        ExprNodePtr cls = with_span(
            nodes::make_class(intern(c->name), std::move(base), std::move(code), std::move(closure), cell), c->span);
        cls = decorate(c->decorators, std::move(cls));
        std::vector<ExprNodePtr> targets;
        targets.push_back(name_ref(c->name, c->name_span));
        return nodes::assign(std::move(targets), std::move(cls));
      }
      case StmtKind::Import: {
        std::vector<StmtNodePtr> parts;
        for (auto& a : s.as<ast::Import>()->names) {
          bool leaf = !a.asname.empty();
          std::string bind = leaf ? a.asname : a.name.substr(0, a.name.find('.'));
          std::vector<ExprNodePtr> targets;
          targets.push_back(name_ref(bind, a.span));
          auto st = nodes::assign(std::move(targets), with_span(nodes::import_module(a.name, leaf), a.span));
          st->span = a.span;
          parts.push_back(std::move(st));
        }
        return nodes::block(std::move(parts));
      }
      case StmtKind::ImportFrom: {
        auto* f = s.as<ast::ImportFrom>();
        std::vector<nodes::ImportName> names;
        for (auto& a : f->names) {
          nodes::ImportName n;
          n.name = intern(a.name);
          n.span = a.span;
          if (a.name != "*") n.target = name_ref(a.asname.empty() ? a.name : a.asname, a.span);
          names.push_back(std::move(n));
        }
        return nodes::import_from(f->module, std::move(names), mod_);
      }
    }
    return nodes::pass();
  }

  ExprNodePtr target(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: return name_ref(e.as<ast::Name>()->id, e.span);
      case ExprKind::Tuple: {
        std::vector<ExprNodePtr> elts;
        for (auto& x : e.as<ast::Tuple>()->elts) elts.push_back(target(*x));
        return with_span(nodes::tuple(std::move(elts)), e.span);
      }
      case ExprKind::List: {
        std::vector<ExprNodePtr> elts;
        for (auto& x : e.as<ast::List>()->elts) elts.push_back(target(*x));
        return with_span(nodes::list(std::move(elts)), e.span);
      }
      case ExprKind::Starred: return with_span(nodes::starred(target(*e.as<ast::Starred>()->value)), e.span);
      case ExprKind::Attribute:
      case ExprKind::Subscript: return expr(e);
      default: throw CompileError{e.span, "Cannot assign to expression"};
    }
  }

  std::vector<nodes::CallArg> call_args(const std::vector<Arg>& args) {
    std::vector<nodes::CallArg> out;
    for (auto& a : args) out.push_back({a.kind, a.name.empty() ? nullptr : intern(a.name), expr(*a.value)});
    return out;
  }

  ExprNodePtr comprehension(const Expr& e, const std::vector<ast::Comprehension>& gens, const Expr* a, const Expr* b,
                            nodes::CompKind kind) {
    std::vector<nodes::CompClause> clauses;
    nodes::CompClause first;
    first.iter = expr(*gens[0].iter);
    overlays_.push_back(c_.comp_renames.at(&e));
    for (size_t i = 0; i < gens.size(); ++i) {
      nodes::CompClause c = i == 0 ? std::move(first) : nodes::CompClause{};
      if (i > 0) c.iter = expr(*gens[i].iter);
      c.target = target(*gens[i].target);
      for (auto& cond : gens[i].ifs) c.ifs.push_back(expr(*cond));
      clauses.push_back(std::move(c));
    }
    ExprNodePtr ea = a ? expr(*a) : nullptr;
    ExprNodePtr eb = b ? expr(*b) : nullptr;
    overlays_.pop_back();
    return nodes::comprehension(kind, std::move(ea), std::move(eb), std::move(clauses));
  }

  std::vector<nodes::FPart> fparts(const std::vector<FStringPart>& parts) {
    std::vector<nodes::FPart> out;
    for (auto& p : parts) {
      nodes::FPart fp;
      if (!p.is_field) {
        fp.literal = p.literal;
      } else {
        fp.expr = expr(*p.expr);
        fp.conversion = p.conversion;
        fp.spec = fparts(p.spec);
      }
      out.push_back(std::move(fp));
    }
    return out;
  }

  Value constant(const Constant& c) {
    switch (c.value_kind) {
      case ConstKind::None: return Value();
      case ConstKind::True: return Value::boolean(true);
      case ConstKind::False: return Value::boolean(false);
      case ConstKind::Int: return Value::integer(c.int_value);
      case ConstKind::Float: return Value::number(c.float_value);
      case ConstKind::Str: return I_.str(c.str_value());
      case ConstKind::Ellipsis: return I_.ellipsis;
    }
    return Value();
  }

  // A display of constants only, as one node holding their values; null
  // for any other (and for small ones, where a node per element is as cheap).
  ExprNodePtr const_display(const std::vector<ExprPtr>& elts, bool is_list) {
    if (elts.size() < 8) return nullptr;
    for (auto& x : elts)
      if (x->kind != ExprKind::Constant) return nullptr;
    std::vector<Value> items;
    items.reserve(elts.size());
    for (auto& x : elts) items.push_back(constant(*x->as<ast::Constant>()));
    return nodes::const_display(is_list, std::move(items));
  }

  ExprNodePtr expr(const Expr& e) {
    ExprNodePtr n = expr_inner(e);
    n->span = e.span;
    return n;
  }

  ExprNodePtr expr_inner(const Expr& e) {
    switch (e.kind) {
      case ExprKind::Name: return name_ref(e.as<ast::Name>()->id, e.span);
      case ExprKind::Constant: return nodes::constant(constant(*e.as<ast::Constant>()));
      case ExprKind::FString: return nodes::fstring(fparts(e.as<ast::FString>()->parts));
      case ExprKind::Tuple: {
        if (ExprNodePtr n = const_display(e.as<ast::Tuple>()->elts, false)) return n;
        std::vector<ExprNodePtr> elts;
        for (auto& x : e.as<ast::Tuple>()->elts) elts.push_back(expr(*x));
        return nodes::tuple(std::move(elts));
      }
      case ExprKind::List: {
        if (ExprNodePtr n = const_display(e.as<ast::List>()->elts, true)) return n;
        std::vector<ExprNodePtr> elts;
        for (auto& x : e.as<ast::List>()->elts) elts.push_back(expr(*x));
        return nodes::list(std::move(elts));
      }
      case ExprKind::Set: {
        std::vector<ExprNodePtr> elts;
        for (auto& x : e.as<ast::Set>()->elts) elts.push_back(expr(*x));
        return nodes::set(std::move(elts));
      }
      case ExprKind::Dict: {
        auto* d = e.as<ast::Dict>();
        std::vector<ExprNodePtr> keys, values;
        for (size_t i = 0; i < d->keys.size(); ++i) {
          keys.push_back(d->keys[i] ? expr(*d->keys[i]) : nullptr);
          values.push_back(expr(*d->values[i]));
        }
        return nodes::dict(std::move(keys), std::move(values));
      }
      case ExprKind::ListComp:
        return comprehension(e, e.as<ast::ListComp>()->generators, e.as<ast::ListComp>()->elt.get(), nullptr,
                             nodes::CompKind::List);
      case ExprKind::SetComp:
        return comprehension(e, e.as<ast::SetComp>()->generators, e.as<ast::SetComp>()->elt.get(), nullptr,
                             nodes::CompKind::Set);
      case ExprKind::GeneratorExp:
        return comprehension(e, e.as<ast::GeneratorExp>()->generators, e.as<ast::GeneratorExp>()->elt.get(), nullptr,
                             nodes::CompKind::Generator);
      case ExprKind::DictComp:
        return comprehension(e, e.as<ast::DictComp>()->generators, e.as<ast::DictComp>()->key.get(),
                             e.as<ast::DictComp>()->value.get(), nodes::CompKind::Dict);
      case ExprKind::Attribute: {
        auto* a = e.as<ast::Attribute>();
        return nodes::attribute(expr(*a->value), intern(a->attr));
      }
      case ExprKind::Subscript: {
        auto* s = e.as<ast::Subscript>();
        return nodes::subscript(expr(*s->value), expr(*s->index));
      }
      case ExprKind::Slice: {
        auto* s = e.as<ast::Slice>();
        return nodes::slice(s->lower ? expr(*s->lower) : nullptr, s->upper ? expr(*s->upper) : nullptr,
                            s->step ? expr(*s->step) : nullptr);
      }
      case ExprKind::Call: {
        auto* c = e.as<ast::Call>();
        if (c->func->kind == ExprKind::Name && c->func->as<ast::Name>()->id == "super" && c->args.empty() &&
            cur_->kind == Scope::Kind::Function) {
          ExprNodePtr first =
              cur_->params.empty() ? nodes::constant(Value::undef()) : name_ref(cur_->params[0], c->span);
          return nodes::super0(name_ref("__class__", c->span), std::move(first));
        }
        if (c->func->kind == ExprKind::Attribute) {
          auto* a = c->func->as<ast::Attribute>();
          return nodes::call_method(expr(*a->value), intern(a->attr), call_args(c->args));
        }
        return nodes::call(expr(*c->func), call_args(c->args));
      }
      case ExprKind::Unary: {
        auto* u = e.as<ast::Unary>();
        return nodes::unary(u->op, expr(*u->operand));
      }
      case ExprKind::Binary: {
        auto* b = e.as<ast::Binary>();
        return nodes::binary(b->op, expr(*b->left), expr(*b->right));
      }
      case ExprKind::BoolOp: {
        std::vector<ExprNodePtr> values;
        for (auto& x : e.as<ast::BoolOp>()->values) values.push_back(expr(*x));
        return nodes::boolop(e.as<ast::BoolOp>()->op, std::move(values));
      }
      case ExprKind::Compare: {
        auto* c = e.as<ast::Compare>();
        std::vector<ExprNodePtr> comps;
        for (auto& x : c->comparators) comps.push_back(expr(*x));
        return nodes::compare(expr(*c->left), c->ops, std::move(comps));
      }
      case ExprKind::IfExp: {
        auto* i = e.as<ast::IfExp>();
        return nodes::ifexp(expr(*i->test), expr(*i->body), expr(*i->orelse));
      }
      case ExprKind::Lambda: {
        auto* l = e.as<ast::Lambda>();
        lambda_expr_ = l;
        Scope& child = *c_.scope_of.at(l);
        ExprNodePtr fn = function(l, child, "<lambda>", l->params, nullptr, l->body.get(), l->span);
        return fn;
      }
      case ExprKind::Starred: return nodes::starred(expr(*e.as<ast::Starred>()->value));
    }
    return nodes::constant(Value());
  }
};

}  // namespace

namespace {

[[noreturn]] void raise_compile_error(Interp& I, const SourcePtr& source, const CompileError& e) {
  Value exc = I.new_exception(I.exception_class("SyntaxError").get(), e.message);
  ExceptionObj* x = exc.as<ExceptionObj>();
  Diagnostic d;
  d.source = source;
  d.span = e.span;
  d.message = e.message + ".";
  x->diagnostics.push_back(std::move(d));
  x->need_location = false;
  throw MslError{exc};
}

std::shared_ptr<FuncCode> compile(Interp& I, const ast::Module& m, msl::Module* mod, CompileMode mode,
                                  std::shared_ptr<const ast::Module> owner, ast::Module* release) {
  try {
    auto unit = std::make_shared<CompileUnit>();
    unit->src = m.source;
    unit->owner = std::move(owner);
    unit->c.run(m);
    Analyzer(unit->c).run();
    for (auto& scope : unit->c.scopes) scope->drop_analysis();
    return Generator(I, std::move(unit), mod, release).module(m, mode);
  } catch (CompileError& e) {
    raise_compile_error(I, m.source, e);
  }
}

}  // namespace

void compile_deferred_body(Interp& I, FuncCode& code, msl::Module* mod) {
  std::shared_ptr<DeferredBody> d = code.deferred;
  try {
    Generator(I, d->unit, mod).deferred(code, *d);
  } catch (CompileError& e) {
    raise_compile_error(I, d->unit->src, e);
  }
  code.deferred.reset();
}

std::shared_ptr<FuncCode> compile_module(Interp& I, const ast::Module& m, msl::Module* mod, CompileMode mode,
                                         std::shared_ptr<const ast::Module> owner) {
  return compile(I, m, mod, mode, std::move(owner), nullptr);
}

std::shared_ptr<FuncCode> compile_module_once(Interp& I, const std::shared_ptr<ast::Module>& m, msl::Module* mod,
                                              CompileMode mode) {
  return compile(I, *m, mod, mode, m, m.get());
}

}  // namespace msl
