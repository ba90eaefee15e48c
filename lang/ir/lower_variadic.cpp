// Lowering of calls whose arity is known only at the call site: `*xs` and
// `**d` arguments of known length spliced into a call, and defs with
// `*args`, `**kwargs` or keyword-only parameters (`construct(self,
// *inputs)`, `def f(x, *, axis=0)`). Graph mode sees every call's shape
// when it compiles, so such a def is lowered once per call shape (how many
// extra positional arguments, which extra keywords): the graph takes the
// extras as parameters, `args` is the tuple of them and `kwargs` the dict
// of them (lower_dict.cpp), so `len(args)`, `for x in args`, `args[0]`,
// `kwargs["k"]` and `f(*args)` are all decided when it compiles.
#include "lang/ir/lower.h"
#include "lang/ir/lower_impl.h"

namespace msl::ir {
namespace lower_detail {

bool is_variadic(const ResolvedName& r) {
  if (r.kind != ResolvedName::Kind::Function || !r.def) return false;
  const ast::Parameters& ps = r.def->params;
  return ps.vararg || ps.kwarg || !ps.kwonly.empty();
}

void FnLowerer::call_arguments(const ast::Call& c, FuncGraph* g, Env& env, std::vector<Node*>& pos,
                               std::vector<std::pair<std::string, Node*>>& kw) {
  for (const ast::Arg& a : c.args) {
    if (a.kind == ast::Arg::Kind::Positional) pos.push_back(expr(*a.value, g, env));
    else if (a.kind == ast::Arg::Kind::Keyword) kw.emplace_back(a.name, expr(*a.value, g, env));
    else splice_argument(a, g, env, pos, kw);
  }
}

void FnLowerer::splice_argument(const ast::Arg& a, FuncGraph* g, Env& env, std::vector<Node*>& pos,
                                std::vector<std::pair<std::string, Node*>>& kw) {
  Node* v = expr(*a.value, g, env);
  Loc l = loc(a.span);
  if (a.kind == ast::Arg::Kind::DoubleStar) {
    const std::vector<ConstValue>* keys = dict_keys(v);
    if (!keys) unsupported(a.span, "'**' argument of a value that is not a dict of constant keys");
    for (size_t i = 0; i < keys->size(); ++i) {
      auto k = std::get_if<std::string>(&(*keys)[i]);
      if (!k) fail(a.span, "keywords must be strings, got the key " + const_value_str((*keys)[i]));
      kw.emplace_back(*k, g->apply(IrOp::tuple_getitem, {v, constant(static_cast<int64_t>(i), a.span)}, "", l));
    }
    return;
  }
  if (dict_keys(v)) {
    // *d: its keys
    for (const ConstValue& k : *dict_keys(v)) pos.push_back(constant(k, a.span));
    return;
  }
  if (!v->is_call_of(IrOp::make_tuple) && !v->is_call_of(IrOp::make_list))
    fail(a.span, "'*' argument of a value whose length is not known at compile time is not supported in graph mode",
         "graph mode splices tuples and lists of known length (a display, *args); pass the items one by one");
  for (size_t i = 1; i < v->inputs().size(); ++i) pos.push_back(v->inputs()[i]);
}

Node* FnLowerer::variadic_call(const ResolvedName& r, std::vector<Node*> pos,
                               std::vector<std::pair<std::string, Node*>> kw, const Span& s, FuncGraph* g,
                               const std::string& name, const ast::Call* c) {
  const ast::Parameters& ps = r.def->params;
  const std::string fname = r.name.empty() ? r.def->name : r.name;
  size_t named = ps.positional.size() - r.bound;
  std::vector<Node*> bound(named, nullptr), kwonly(ps.kwonly.size(), nullptr), extra_pos, extra_kw;
  CallShape shape;
  for (size_t i = 0; i < pos.size(); ++i) {
    if (i < named) bound[i] = pos[i];
    else if (ps.vararg) extra_pos.push_back(pos[i]);
    else
      fail(s, fname + "() takes " + std::to_string(named) + " positional arguments but " + std::to_string(pos.size()) +
                  " were given");
  }
  for (auto& [k, v] : kw) {
    Node** slot = nullptr;
    for (size_t i = 0; i < named && !slot; ++i)
      if (ps.positional[i + r.bound].name == k) slot = &bound[i];
    for (size_t i = 0; i < ps.kwonly.size() && !slot; ++i)
      if (ps.kwonly[i].name == k) slot = &kwonly[i];
    if (slot) {
      if (*slot) fail(s, fname + "() got multiple values for argument '" + k + "'");
      *slot = v;
      continue;
    }
    if (!ps.kwarg) fail(s, fname + "() got an unexpected keyword argument '" + k + "'");
    for (const std::string& seen : shape.extra_keywords)
      if (seen == k) fail(s, fname + "() got multiple values for keyword argument '" + k + "'");
    shape.extra_keywords.push_back(k);
    extra_kw.push_back(v);
  }
  size_t first_default = ps.positional.size() - r.defaults.size();
  for (size_t i = 0; i < named; ++i) {
    if (bound[i]) continue;
    size_t p = i + r.bound;
    if (p < first_default) fail(s, fname + "() missing required argument '" + ps.positional[p].name + "'");
    bound[i] = constant(r.defaults[p - first_default], s);
  }
  for (size_t i = 0; i < ps.kwonly.size(); ++i) {
    if (kwonly[i]) continue;
    if (i < r.kwonly_defaults.size() && r.kwonly_defaults[i]) {
      kwonly[i] = constant(*r.kwonly_defaults[i], s);
    } else if (r.kwonly_defaults.empty() && ps.kwonly[i].default_value &&
               ps.kwonly[i].default_value->kind == ast::ExprKind::Constant) {
      Env literal;  // a literal names nothing
      kwonly[i] = expr(*ps.kwonly[i].default_value, g, literal);
    } else {
      fail(s, fname + "() missing required keyword-only argument '" + ps.kwonly[i].name + "'");
    }
  }
  shape.extra_positional = extra_pos.size();
  FuncGraph* fg = function_graph(r, &shape);
  std::vector<Node*> call{constant(fg, s)};
  for (auto* list : {&bound, &kwonly, &extra_pos, &extra_kw}) call.insert(call.end(), list->begin(), list->end());
  return call_node(std::move(call), g, name, loc(s), c);
}

FuncGraph* FnLowerer::variadic_entry(const ResolvedName& r, size_t arity) {
  FnLowerer sub(st_, r.context ? r.context : ctx_);  // locations in the def's file
  Loc l = sub.loc(r.def->span);
  FuncGraph* w = m_.new_graph((r.name.empty() ? r.def->name : r.name) + "_call", st_.root, l);
  std::vector<Node*> pos;
  for (size_t i = 0; i < arity; ++i) pos.push_back(w->add_param("x" + std::to_string(i), l));
  sub.set_out(w, sub.variadic_call(r, std::move(pos), {}, r.def->span, w, "", nullptr));
  return w;
}

}  // namespace lower_detail
}  // namespace msl::ir
