// Lowering of statements: function bodies, assignment, if/elif/else with
// the tuple join, nested defs, and the effect chain. Loops are in
// lower_loop.cpp. The scheme is described in lower.h.
#include "lang/ir/lower.h"

#include <algorithm>


#include "lang/ir/lower_impl.h"
#include "lang/ir/python_scalar.h"

namespace msl::ir {
namespace lower_detail {

namespace {
void names_in_target(const ast::Expr& t, std::set<std::string>& out) {
  if (t.kind == ast::ExprKind::Name) out.insert(t.as<ast::Name>()->id);
  // x[i] = v rebinds x (store_subscript).
  if (t.kind == ast::ExprKind::Subscript && t.as<ast::Subscript>()->value->kind == ast::ExprKind::Name)
    out.insert(t.as<ast::Subscript>()->value->as<ast::Name>()->id);
  if (t.kind == ast::ExprKind::Tuple)
    for (auto& e : t.as<ast::Tuple>()->elts) names_in_target(*e, out);
  if (t.kind == ast::ExprKind::List)
    for (auto& e : t.as<ast::List>()->elts) names_in_target(*e, out);
}

// `outs.append(y)`, `d.update(...)`, `v = outs.pop()`: the method call
// rebinds a local list or dict (list_method, dict_method), so a loop or
// branch around it carries the name.
void rebound_by_call(const ast::Expr* e, std::set<std::string>& out) {
  if (!e || e->kind != ast::ExprKind::Call) return;
  const ast::Expr& f = *e->as<ast::Call>()->func;
  if (f.kind != ast::ExprKind::Attribute || f.as<ast::Attribute>()->value->kind != ast::ExprKind::Name) return;
  static const char* const kRebinding[] = {"append", "extend", "insert", "pop", "remove", "clear", "reverse", "update"};
  for (const char* m : kRebinding)
    if (f.as<ast::Attribute>()->attr == m) out.insert(f.as<ast::Attribute>()->value->as<ast::Name>()->id);
}

void collect(const ast::Body& body, std::set<std::string>& out) {
  for (auto& sp : body) {
    const ast::Stmt& s = *sp;
    switch (s.kind) {
      case ast::StmtKind::Expr: rebound_by_call(s.as<ast::ExprStmt>()->value.get(), out); break;
      case ast::StmtKind::Assign:
        for (auto& t : s.as<ast::Assign>()->targets) names_in_target(*t, out);
        rebound_by_call(s.as<ast::Assign>()->value.get(), out);
        break;
      case ast::StmtKind::AugAssign: names_in_target(*s.as<ast::AugAssign>()->target, out); break;
      case ast::StmtKind::AnnAssign: names_in_target(*s.as<ast::AnnAssign>()->target, out); break;
      case ast::StmtKind::FunctionDef: out.insert(s.as<ast::FunctionDef>()->name); break;
      case ast::StmtKind::If:
        collect(s.as<ast::If>()->body, out);
        collect(s.as<ast::If>()->orelse, out);
        break;
      case ast::StmtKind::While:
        collect(s.as<ast::While>()->body, out);
        collect(s.as<ast::While>()->orelse, out);
        break;
      case ast::StmtKind::For:
        names_in_target(*s.as<ast::For>()->target, out);
        collect(s.as<ast::For>()->body, out);
        collect(s.as<ast::For>()->orelse, out);
        break;
      default: break;
    }
  }
}

// The last source line of the statements, looking inside compound
// statements (whose own span may end at their header).
uint32_t last_line(const ast::Body& body) {
  uint32_t last = 0;
  for (auto& s : body) {
    last = std::max(last, s->span.end_line);
    switch (s->kind) {
      case ast::StmtKind::If:
        last = std::max({last, last_line(s->as<ast::If>()->body), last_line(s->as<ast::If>()->orelse)});
        break;
      case ast::StmtKind::While:
        last = std::max({last, last_line(s->as<ast::While>()->body), last_line(s->as<ast::While>()->orelse)});
        break;
      case ast::StmtKind::For:
        last = std::max({last, last_line(s->as<ast::For>()->body), last_line(s->as<ast::For>()->orelse)});
        break;
      case ast::StmtKind::FunctionDef: last = std::max(last, last_line(s->as<ast::FunctionDef>()->body)); break;
      default: break;
    }
  }
  return last;
}


const char* stmt_construct(ast::StmtKind k) {
  switch (k) {
    case ast::StmtKind::Del: return "'del' statement";
    case ast::StmtKind::Raise: return "'raise' statement";
    case ast::StmtKind::Break: return "'break' statement";
    case ast::StmtKind::Continue: return "'continue' statement";
    case ast::StmtKind::Assert: return "'assert' statement";
    case ast::StmtKind::Global: return "'global' statement";
    case ast::StmtKind::Nonlocal: return "'nonlocal' statement";
    case ast::StmtKind::Try: return "'try' statement";
    case ast::StmtKind::ClassDef: return "class definition";
    case ast::StmtKind::Import:
    case ast::StmtKind::ImportFrom: return "'import' statement";
    default: return "this statement";
  }
}
}  // namespace

Stmts pointers(const ast::Body& body) {
  Stmts out;
  for (auto& s : body) out.push_back(s.get());
  return out;
}

std::set<std::string> assigned_names(const ast::Body& body) {
  std::set<std::string> out;
  collect(body, out);
  return out;
}

bool contains_return(const ast::Body& body) {
  for (auto& s : body) {
    if (s->kind == ast::StmtKind::Return) return true;
    if (s->kind == ast::StmtKind::If &&
        (contains_return(s->as<ast::If>()->body) || contains_return(s->as<ast::If>()->orelse)))
      return true;
    if (s->kind == ast::StmtKind::While &&
        (contains_return(s->as<ast::While>()->body) || contains_return(s->as<ast::While>()->orelse)))
      return true;
    if (s->kind == ast::StmtKind::For &&
        (contains_return(s->as<ast::For>()->body) || contains_return(s->as<ast::For>()->orelse)))
      return true;
  }
  return false;
}

bool contains_exit(const ast::Body& body) {
  for (auto& s : body) {
    switch (s->kind) {
      case ast::StmtKind::Return:
      case ast::StmtKind::Break:
      case ast::StmtKind::Continue: return true;
      case ast::StmtKind::If:
        if (contains_exit(s->as<ast::If>()->body) || contains_exit(s->as<ast::If>()->orelse)) return true;
        break;
      // A nested loop owns its break/continue; only a return leaves it
      // (a break/continue in its else clause is rejected when lowered).
      case ast::StmtKind::While:
      case ast::StmtKind::For: {
        bool w = s->kind == ast::StmtKind::While;
        const ast::Body& b = w ? s->as<ast::While>()->body : s->as<ast::For>()->body;
        const ast::Body& e = w ? s->as<ast::While>()->orelse : s->as<ast::For>()->orelse;
        if (contains_return(b) || contains_return(e)) return true;
        break;
      }
      default: break;
    }
  }
  return false;
}

void FnLowerer::fail(const Span& s, const std::string& msg, const std::string& help) const {
  Diagnostic d;
  d.source = src_;
  d.span = s;
  d.message = msg;
  d.help = help;
  d.error_type = "GraphModeError";
  throw LowerError{std::move(d)};
}

void FnLowerer::unsupported(const Span& s, const std::string& what) const {
  fail(s, what + " is not supported in graph mode", "move it out of construct or use PyNative mode");
}

FuncGraph* FnLowerer::function_graph(const ResolvedName& r, const CallShape* shape) {
  const void* key = r.key ? r.key : r.def ? static_cast<const void*>(r.def) : static_cast<const void*>(r.lambda);
  bool entry = key == st_.entry;
  CallShape none;
  if (r.def && is_variadic(r)) {
    // One graph per call shape (lower_variadic.cpp).
    if (!shape) shape = &none;
    std::string k = std::to_string(reinterpret_cast<uintptr_t>(key)) + "/" + std::to_string(shape->extra_positional);
    for (const std::string& kw : shape->extra_keywords) k += "," + kw;
    key = st_.shape_keys.insert(k).first->c_str();
  }
  auto it = st_.done.find(key);
  if (it != st_.done.end()) return it->second;
  const ContextPtr& ctx = r.context ? r.context : ctx_;
  FnLowerer sub(st_, ctx);
  sub.entry_ = entry;
  Span span = r.def ? r.def->span : r.lambda->span;
  // A function that prints sequences its prints and calls (lower.h,
  // "Effects"); a textual check is enough, false positives only add order.
  uint32_t last = span.end_line;
  if (r.def) last = std::max(last, last_line(r.def->body));
  for (uint32_t line = span.line; line <= last && !sub.effects_; ++line)
    sub.effects_ = ctx->source && ctx->source->line_text(line).find("print") != std::string_view::npos;
  std::string name = !r.name.empty() ? r.name : r.def ? r.def->name : "lambda";
  FuncGraph* g = m_.new_graph(name, st_.root, sub.loc(span));
  sub.fn_graph_ = g;
  st_.done[key] = g;  // before the body: recursive calls find it
  Env env;
  if (r.def) {
    sub.lower_def_into(g, *r.def, env, r.bound, shape);
  } else {
    const ast::Parameters& ps = r.lambda->params;
    if (ps.vararg || ps.kwarg || !ps.kwonly.empty()) sub.unsupported(r.lambda->span, "lambda with '*' parameters");
    for (size_t i = r.bound; i < ps.positional.size(); ++i)
      env.vars[ps.positional[i].name] = g->add_param(ps.positional[i].name, sub.loc(ps.positional[i].span));
    sub.set_out(g, sub.expr(*r.lambda->body, g, env));
  }
  if (sub.effects_ || sub.effect_count_ > 0) st_.effectful.insert(g);  // its callers sequence its calls
  if (!r.defaults.empty() && !shape) {  // a variadic def's call binds its defaults (variadic_call)
    std::vector<Node*>& d = st_.defaults[g];
    for (const ConstValue& v : r.defaults) d.push_back(m_.new_constant(v, nullptr, g->loc()));
  }
  return g;
}

void FnLowerer::lower_def_into(FuncGraph* g, const ast::FunctionDef& def, Env& env, size_t bound,
                               const CallShape* shape) {
  const ast::Parameters& ps = def.params;
  // A nested def's calls are not seen before its body is lowered.
  const char* help = "graph mode binds '*args', '**kwargs' and keyword-only parameters of functions and methods "
                     "it resolves by name (a call of known arity); move this def out of the function";
  if (!shape && ps.vararg) fail(ps.vararg->span, "'*args' parameter of a nested function is not supported in graph mode", help);
  if (!shape && ps.kwarg) fail(ps.kwarg->span, "'**kwargs' parameter of a nested function is not supported in graph mode", help);
  if (!shape && !ps.kwonly.empty())
    fail(ps.kwonly[0].span, "keyword-only parameter of a nested function is not supported in graph mode", help);
  if (!def.decorators.empty() && g->parent() && g->parent() != st_.root)
    unsupported(def.decorators[0]->span, "decorator");
  for (size_t i = bound; i < ps.positional.size(); ++i)
    env.vars[ps.positional[i].name] = g->add_param(ps.positional[i].name, loc(ps.positional[i].span));
  if (shape) {
    // Parameters: named, keyword-only, the extra positionals (*args, a
    // tuple), the extra keywords (**kwargs, a dict).
    for (const ast::Param& p : ps.kwonly) env.vars[p.name] = g->add_param(p.name, loc(p.span));
    std::vector<Node*> extra;
    for (size_t i = 0; i < shape->extra_positional; ++i)
      extra.push_back(g->add_param(ps.vararg->name + "_" + std::to_string(i), loc(ps.vararg->span)));
    if (ps.vararg) env.vars[ps.vararg->name] = g->apply(IrOp::make_tuple, extra, ps.vararg->name, loc(ps.vararg->span));
    std::vector<Node*> kwvalues;
    std::vector<ConstValue> keys;
    for (const std::string& k : shape->extra_keywords) {
      kwvalues.push_back(g->add_param(k, loc(ps.kwarg->span)));
      keys.emplace_back(k);
    }
    if (ps.kwarg) env.vars[ps.kwarg->name] = make_dict(std::move(keys), std::move(kwvalues), g, ps.kwarg->span, ps.kwarg->name);
  }
  finish(pointers(def.body), g, env, def.span);
}

void FnLowerer::finish(const Stmts& ss, FuncGraph* g, Env& env, const Span& s) {
  if (stmts(ss, g, env)) return;
  if (loop_)
    loop_continue(g, env, s);
  else
    set_out(g, constant(NoneValue{}, s));
}

bool FnLowerer::stmts(const Stmts& ss, FuncGraph* g, Env& env) {
  for (size_t i = 0; i < ss.size(); ++i) {
    const ast::Stmt& s = *ss[i];
    switch (s.kind) {
      case ast::StmtKind::Pass: break;
      case ast::StmtKind::Expr: {
        const ast::Expr& e = *s.as<ast::ExprStmt>()->value;
        if (e.kind == ast::ExprKind::Constant && e.as<ast::Constant>()->value_kind == ast::ConstKind::Str)
          break;  // docstring
        // A call whose value is discarded runs for its effects (lower.h).
        if (e.kind == ast::ExprKind::Call) discarded_call_ = e.as<ast::Call>();
        expr(e, g, env);
        discarded_call_ = nullptr;
        break;
      }
      case ast::StmtKind::Assign: {
        auto* a = s.as<ast::Assign>();
        std::string name;
        if (a->targets.size() == 1 && a->targets[0]->kind == ast::ExprKind::Name)
          name = a->targets[0]->as<ast::Name>()->id;
        Node* v = expr(*a->value, g, env, name);
        for (auto& t : a->targets) assign(*t, v, g, env);
        std::string dotted;
        if (!name.empty() && global_attribute(*a->value, env, dotted)) env.aliases[name] = {v, dotted};
        break;
      }
      case ast::StmtKind::AnnAssign: {
        auto* a = s.as<ast::AnnAssign>();
        if (!a->value) break;
        std::string name = a->target->kind == ast::ExprKind::Name ? a->target->as<ast::Name>()->id : "";
        assign(*a->target, expr(*a->value, g, env, name), g, env);
        break;
      }
      case ast::StmtKind::AugAssign: {
        auto* a = s.as<ast::AugAssign>();
        if (a->target->kind == ast::ExprKind::Subscript) {
          // x[i] op= y is x[i] = x[i] op y, a functional update of x.
          const auto& sub = *a->target->as<ast::Subscript>();
          Node* cur = subscript(sub, g, env, "");
          Node* y = expr(*a->value, g, env);
          store_subscript(sub, binop(a->op, cur, y, s.span, s.span, g, ""), g, env);
          break;
        }
        if (a->target->kind != ast::ExprKind::Name)
          unsupported(a->target->span, "augmented assignment to an attribute or item");
        // x op= y is x = x op y on values (no in-place update in graphs).
        const std::string& id = a->target->as<ast::Name>()->id;
        Node* x = expr(*a->target, g, env);
        Node* y = expr(*a->value, g, env);
        env.vars[id] = binop(a->op, x, y, s.span, s.span, g, id);
        break;
      }
      case ast::StmtKind::Return: {
        auto* r = s.as<ast::Return>();
        set_out(g, r->value ? returned_value(expr(*r->value, g, env), g, s.span) : constant(NoneValue{}, s.span));
        return true;
      }
      case ast::StmtKind::If: {
        Stmts rest(ss.begin() + static_cast<long>(i) + 1, ss.end());
        if (if_stmt(*s.as<ast::If>(), rest, g, env)) return true;
        break;
      }
      case ast::StmtKind::Break:
      case ast::StmtKind::Continue:
        if (!loop_) unsupported(s.span, stmt_construct(s.kind));  // e.g. in an unrolled loop
        if (s.kind == ast::StmtKind::Break)
          loop_break(g, env, s.span);
        else
          loop_continue(g, env, s.span);
        return true;  // statements after it are unreachable
      case ast::StmtKind::While:
      case ast::StmtKind::For: {
        Stmts rest(ss.begin() + static_cast<long>(i) + 1, ss.end());
        if (loop_stmt(s, rest, g, env)) return true;
        break;
      }
      case ast::StmtKind::FunctionDef: {
        auto* d = s.as<ast::FunctionDef>();
        nested_def(*d, g, env);
        break;
      }
      case ast::StmtKind::Raise: raise_stmt(*s.as<ast::Raise>(), g, env); break;
      case ast::StmtKind::Assert: assert_stmt(*s.as<ast::Assert>(), g, env); break;
      default: unsupported(s.span, stmt_construct(s.kind));
    }
  }
  return false;
}

void FnLowerer::assign(const ast::Expr& t, Node* v, FuncGraph* g, Env& env) {
  if (t.kind == ast::ExprKind::Name) {
    env.vars[t.as<ast::Name>()->id] = v;
    return;
  }
  if (t.kind == ast::ExprKind::Tuple || t.kind == ast::ExprKind::List) {
    const auto& elts = t.kind == ast::ExprKind::Tuple ? t.as<ast::Tuple>()->elts : t.as<ast::List>()->elts;
    for (auto& e : elts)
      if (e->kind == ast::ExprKind::Starred) return starred_assign(elts, v, g, env, t.span);
    for (size_t i = 0; i < elts.size(); ++i) {
      const ast::Expr& e = *elts[i];
      std::string name = e.kind == ast::ExprKind::Name ? e.as<ast::Name>()->id : "";
      Node* item = g->apply(IrOp::tuple_getitem, {v, constant(static_cast<int64_t>(i), e.span)}, name, loc(e.span));
      assign(e, item, g, env);
    }
    return;
  }
  if (t.kind == ast::ExprKind::Attribute) unsupported(t.span, "attribute assignment");
  if (t.kind == ast::ExprKind::Subscript) {
    store_subscript(*t.as<ast::Subscript>(), v, g, env);
    return;
  }
  unsupported(t.span, "this assignment target");
}

std::optional<ConstValue> FnLowerer::static_value(const Node* n) {
  if (n->is_constant()) {
    const ConstValue& v = n->value();
    bool scalar = std::holds_alternative<bool>(v) || std::holds_alternative<int64_t>(v) ||
                  std::holds_alternative<double>(v) || std::holds_alternative<std::string>(v) ||
                  std::holds_alternative<NoneValue>(v);
    return scalar ? std::optional<ConstValue>(v) : std::nullopt;
  }
  if (!n->is_apply() || !n->callee()->as_prim() || n->num_args() == 0 || n->num_args() > 2) return std::nullopt;
  if (!n->callee()->as_prim()->attrs.empty()) return std::nullopt;  // a tensor primitive's call, not arithmetic
  std::vector<ConstValue> args;
  for (size_t i = 0; i < n->num_args(); ++i) {
    std::optional<ConstValue> a = static_value(n->arg(i));
    if (!a) return std::nullopt;
    args.push_back(std::move(*a));
  }
  try {
    return python_scalar_op(n->callee()->as_prim()->prim, args);
  } catch (const ScalarArithmeticError&) {
    return std::nullopt;  // the division fails when it runs
  }
}

std::optional<bool> FnLowerer::static_truth(const Node* c) {
  if (c->is_apply() && c->callee()->as_prim()) {
    using kernels::Prim;
    Prim p = c->callee()->as_prim()->prim;
    if (p == Prim::logical_not && c->num_args() == 1) {
      auto t = static_truth(c->arg(0));
      return t ? std::optional<bool>(!*t) : std::nullopt;
    }
    if ((p == Prim::logical_and || p == Prim::logical_or) && c->num_args() == 2) {
      auto a = static_truth(c->arg(0)), b = static_truth(c->arg(1));
      if (!a || !b) return std::nullopt;
      return p == Prim::logical_and ? (*a && *b) : (*a || *b);
    }
  }
  // A constant, or arithmetic and comparisons of constants
  // (lang/ir/python_scalar.h); a tensor's truth is a run-time question.
  std::optional<ConstValue> r = static_value(c);
  if (!r) return std::nullopt;
  if (std::holds_alternative<NoneValue>(*r)) return false;
  if (const std::string* s = std::get_if<std::string>(&*r)) return !s->empty();
  if (const bool* b = std::get_if<bool>(&*r)) return *b;
  if (const int64_t* i = std::get_if<int64_t>(&*r)) return *i != 0;
  if (const double* d = std::get_if<double>(&*r)) return *d != 0;
  return std::nullopt;
}

bool FnLowerer::if_stmt(const ast::If& s, const Stmts& rest, FuncGraph* g, Env& env) {
  Node* cond = expr(*s.test, g, env);
  if (auto taken = static_truth(cond)) {
    // Known at compile time: only the branch taken exists (its statements
    // lower into this graph; the caller goes on with the rest unless it
    // left).
    return stmts(pointers(*taken ? s.body : s.orelse), g, env);
  }
  // A branch that leaves (return, break, continue) takes the statements
  // after the if with it, into both branches.
  bool returns = contains_exit(s.body) || contains_exit(s.orelse);
  size_t effects_before = effect_count_;
  FuncGraph* br[2];
  Env benv[2];
  const ast::Body* bodies[2] = {&s.body, &s.orelse};
  for (int k = 0; k < 2; ++k) {
    br[k] = m_.new_graph(g->name() + (k == 0 ? "_true" : "_false"), g, loc(s.span));
    benv[k].parent = &env;
    Stmts ss = pointers(*bodies[k]);
    if (returns) {
      ss.insert(ss.end(), rest.begin(), rest.end());
      finish(ss, br[k], benv[k], s.span);
    } else {
      stmts(ss, br[k], benv[k]);
    }
  }
  std::vector<std::string> joined;
  if (!returns) {
    std::set<std::string> names;
    for (auto& b : benv)
      for (auto& [n, v] : b.vars) names.insert(n);
    for (auto& n : names)
      if (benv[0].lookup(n) && benv[1].lookup(n)) joined.push_back(n);
    for (int k = 0; k < 2; ++k) {
      std::vector<Node*> outs;
      for (auto& n : joined) outs.push_back(benv[k].lookup(n));
      set_out(br[k], br[k]->apply(IrOp::make_tuple, outs, "", loc(s.span)));
    }
  }
  bool effect = effects_ || effect_count_ != effects_before;  // a branch has effects
  if (effect && state_of(g)) cond = g->apply(IrOp::depend, {cond, state_of(g)}, "", loc(s.span));
  Node* sw = g->apply(IrOp::switch_, {cond, constant(br[0], s.span), constant(br[1], s.span)}, "", loc(s.span));
  Node* res = g->apply({sw}, "", loc(s.span));
  if (effect) sequence(g, res);
  if (returns) {
    set_out(g, res);
    return true;
  }
  for (size_t i = 0; i < joined.size(); ++i) {
    Node* v = g->apply(IrOp::tuple_getitem, {res, constant(static_cast<int64_t>(i), s.span)}, joined[i], loc(s.span));
    // A dict with the same keys in both branches stays a dict.
    const std::vector<ConstValue>* k0 = dict_keys(benv[0].lookup(joined[i]));
    const std::vector<ConstValue>* k1 = dict_keys(benv[1].lookup(joined[i]));
    if (k0 || k1) {
      bool same = k0 && k1 && k0->size() == k1->size();
      for (size_t j = 0; same && j < k0->size(); ++j) same = const_value_str((*k0)[j]) == const_value_str((*k1)[j]);
      if (!same)
        fail(s.span, "the dict '" + joined[i] + "' has different keys after the two branches of this if",
             "graph mode knows a dict's keys when it compiles: set the same keys in both branches");
      st_.dicts[v] = *k0;
    }
    env.vars[joined[i]] = v;
  }
  return false;
}

Node* FnLowerer::state_of(FuncGraph* g) {
  auto it = st_.effects.find(g);
  return it == st_.effects.end() ? nullptr : it->second.first;
}

void FnLowerer::sequence(FuncGraph* g, Node* effect) {
  ++effect_count_;
  Node* u = state_of(g);
  if (!u) u = m_.new_constant(NoneValue{}, nullptr, effect->loc());  // the graph's initial state
  st_.effects[g] = {g->apply(IrOp::update_state, {u, effect}, "", effect->loc()), effect};
}

void FnLowerer::order_after_state(FuncGraph* g, std::vector<Node*>& call) {
  Node* u = state_of(g);
  if (!u) return;
  size_t i = call.size() > 1 ? 1 : 0;
  call[i] = g->apply(IrOp::depend, {call[i], u}, "", call[i]->loc());
}

void FnLowerer::set_out(FuncGraph* g, Node* out) {
  auto it = st_.effects.find(g);
  // The output waits for the graph's effects, unless it is the last effect.
  if (it != st_.effects.end() && it->second.second != out)
    out = g->apply(IrOp::depend, {out, it->second.first}, "", out->loc());
  g->set_output(out);
}

FuncGraph* FnLowerer::nested_def(const ast::FunctionDef& def, FuncGraph* g, Env& env) {
  if (!def.decorators.empty()) unsupported(def.decorators[0]->span, "decorator on a nested function");
  FuncGraph* ng = m_.new_graph(def.name, g, loc(def.span));
  env.vars[def.name] = constant(ng, def.span);  // visible in its own body: recursion
  Env nenv{&env, {}};
  LoopFrame* outer = loop_;  // a loop around the def is not the body's loop
  loop_ = nullptr;
  lower_def_into(ng, def, nenv);
  loop_ = outer;
  // Constant defaults are known now; others would need evaluation here.
  std::vector<Node*> defaults;
  for (auto& p : def.params.positional)
    if (p.default_value) {
      const ast::Expr& d = *p.default_value;
      if (d.kind != ast::ExprKind::Constant) unsupported(d.span, "a default value that is not a literal");
      defaults.push_back(expr(d, g, env));
    }
  if (!defaults.empty()) st_.defaults[ng] = std::move(defaults);
  return ng;
}

}  // namespace lower_detail

FuncGraph* Lowerer::lower(const ast::FunctionDef& def) {
  ResolvedName r;
  r.kind = ResolvedName::Kind::Function;
  r.def = &def;
  return lower(r);
}

FuncGraph* Lowerer::lower(const ResolvedName& fn) {
  const void* key = fn.key ? fn.key : fn.def ? static_cast<const void*>(fn.def) : static_cast<const void*>(fn.lambda);
  if (failed_.count(key)) return nullptr;
  std::unordered_set<const void*> before;
  for (auto& [d, g] : done_) before.insert(d);
  lower_detail::LowerState st{module_, root_, done_, defaults_, {}, effectful_, dicts_, dict_results_, shape_keys_};
  st.entry = key;
  lower_detail::FnLowerer fl(st, context_);
  try {
    if (fn.positional_arity && lower_detail::is_variadic(fn)) return fl.variadic_entry(fn, *fn.positional_arity);
    return fl.function_graph(fn);
  } catch (lower_detail::LowerError& e) {
    errors_.push_back(std::move(e.diag));
    // Every function whose lowering this call started is incomplete.
    for (auto& [d, g] : done_)
      if (!before.count(d)) failed_.insert(d);
    return nullptr;
  }
}

LowerResult lower_function(IrModule& m, const SourcePtr& source, const ast::FunctionDef& def, const Resolver& resolve) {
  Lowerer l(m, source, resolve);
  LowerResult r;
  r.graph = l.lower(def);
  r.errors = l.errors();
  return r;
}

}  // namespace msl::ir
