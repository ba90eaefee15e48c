// Lowering of dicts with constant keys, as MindSpore's graph mode allows
// them in construct: `d = {"a": x, "b": y}`, `d["a"]`, `d["c"] = z`,
// `len(d)`, `"a" in d`, `d.get("c", z)`, `for k, v in d.items()`,
// `dict(a=x)`, `**kwargs`. A dict is the tuple of its values; its keys are
// known to the lowering only (LowerState::dicts), so every lookup becomes a
// constant-index tuple_getitem and gradients flow through the values as
// through any tuple. A dict the host asked for comes back as a dict
// (a MakeDict adapter). `x in seq` over tuples and host sequences lives
// here too: it is the same question of constant membership.
#include <cmath>

#include "lang/ir/lower.h"
#include "lang/ir/lower_impl.h"
#include "lang/ir/python_scalar.h"

namespace msl::ir {
namespace lower_detail {

namespace {

bool is_number(const ConstValue& v) {
  return std::holds_alternative<bool>(v) || std::holds_alternative<int64_t>(v) || std::holds_alternative<double>(v);
}

}  // namespace

std::optional<bool> constant_equal(const ConstValue& a, const ConstValue& b) {
  if (is_number(a) && is_number(b)) {
    const ConstValue args[2] = {a, b};
    std::optional<ConstValue> r = python_scalar_op(kernels::Prim::equal, args);
    return r ? std::optional<bool>(std::get<bool>(*r)) : std::nullopt;
  }
  bool sa = std::holds_alternative<std::string>(a), sb = std::holds_alternative<std::string>(b);
  bool na = std::holds_alternative<NoneValue>(a), nb = std::holds_alternative<NoneValue>(b);
  if (sa && sb) return std::get<std::string>(a) == std::get<std::string>(b);
  if (na || nb) return na && nb;
  if ((sa || is_number(a)) && (sb || is_number(b))) return false;  // a string is no number
  return std::nullopt;
}

namespace {

bool is_key_kind(const ConstValue& v) { return is_number(v) || std::holds_alternative<std::string>(v) ||
                                               std::holds_alternative<NoneValue>(v); }

std::string key_text(const ConstValue& k) {
  if (auto s = std::get_if<std::string>(&k)) return "'" + *s + "'";
  return const_value_str(k);
}

// The position of `key` in `keys`, or -1.
long find_key(const std::vector<ConstValue>& keys, const ConstValue& key) {
  for (size_t i = 0; i < keys.size(); ++i)
    if (constant_equal(keys[i], key).value_or(false)) return static_cast<long>(i);
  return -1;
}

}  // namespace

bool is_builtin_call(const ast::Call& c, const char* name, const Env& env, const Resolver& resolve) {
  if (c.func->kind != ast::ExprKind::Name || c.func->as<ast::Name>()->id != name || env.lookup(name)) return false;
  return !resolve || resolve(name).kind != ResolvedName::Kind::Function;
}

const std::vector<ConstValue>* FnLowerer::dict_keys(const Node* n) const {
  auto it = st_.dicts.find(n);
  return it == st_.dicts.end() ? nullptr : &it->second;
}

Node* FnLowerer::make_dict(std::vector<ConstValue> keys, std::vector<Node*> values, FuncGraph* g, const Span& s,
                           const std::string& name) {
  Node* d = g->apply(IrOp::make_tuple, values, name, loc(s));
  st_.dicts[d] = std::move(keys);
  return d;
}

Node* FnLowerer::dict_display(const ast::Dict& d, FuncGraph* g, Env& env, const std::string& name) {
  std::vector<ConstValue> keys;
  std::vector<Node*> values;
  auto put = [&](const ConstValue& k, Node* v) {
    long i = find_key(keys, k);
    if (i >= 0) {
      values[static_cast<size_t>(i)] = v;  // a later value for the same key wins, in the first key's place
      return;
    }
    keys.push_back(k);
    values.push_back(v);
  };
  for (size_t i = 0; i < d.keys.size(); ++i) {
    if (!d.keys[i]) {
      // {**other, ...}: a dict of known keys merges in.
      Node* other = expr(*d.values[i], g, env);
      const std::vector<ConstValue>* ks = dict_keys(other);
      if (!ks) unsupported(d.values[i]->span, "'**' of a value that is not a dict of constant keys");
      for (size_t j = 0; j < ks->size(); ++j)
        put((*ks)[j], g->apply(IrOp::tuple_getitem, {other, constant(static_cast<int64_t>(j), d.values[i]->span)}, "",
                               loc(d.values[i]->span)));
      continue;
    }
    Node* k = expr(*d.keys[i], g, env);
    if (!k->is_constant() || !is_key_kind(k->value()))
      fail(d.keys[i]->span, "a dict key in graph mode must be a constant string, number or None",
           "graph mode resolves dict lookups when it compiles; use a tuple for values chosen at run time");
    put(k->value(), expr(*d.values[i], g, env));
  }
  return make_dict(std::move(keys), std::move(values), g, d.span, name);
}

Node* FnLowerer::dict_item(Node* d, const Node* key, const Span& s, FuncGraph* g, const std::string& name) {
  const std::vector<ConstValue>& keys = *dict_keys(d);
  if (!key->is_constant() || !is_key_kind(key->value()))
    fail(s, "a dict lookup in graph mode needs a constant key", "the keys of a dict are resolved when it compiles");
  long i = find_key(keys, key->value());
  if (i < 0) {
    std::string known;
    for (const ConstValue& k : keys) known += (known.empty() ? "" : ", ") + key_text(k);
    fail(s, "KeyError: " + key_text(key->value()) + " (the dict has the keys: " + (known.empty() ? "none" : known) + ")",
         "use d.get(key, default) for a key that may be missing");
  }
  return g->apply(IrOp::tuple_getitem, {d, constant(static_cast<int64_t>(i), s)}, name, loc(s));
}

void FnLowerer::dict_store(const ast::Subscript& s, Node* d, Node* v, FuncGraph* g, Env& env) {
  Node* key = expr(*s.index, g, env);
  if (!key->is_constant() || !is_key_kind(key->value()))
    fail(s.index->span, "a dict key in graph mode must be a constant string, number or None",
         "graph mode resolves dict lookups when it compiles");
  std::vector<ConstValue> keys = *dict_keys(d);
  std::vector<Node*> values;
  for (size_t i = 0; i < keys.size(); ++i)
    values.push_back(g->apply(IrOp::tuple_getitem, {d, constant(static_cast<int64_t>(i), s.span)}, "", loc(s.span)));
  long i = find_key(keys, key->value());
  if (i >= 0) {
    values[static_cast<size_t>(i)] = v;
  } else {
    keys.push_back(key->value());
    values.push_back(v);
  }
  const std::string& target = s.value->as<ast::Name>()->id;
  env.vars[target] = make_dict(std::move(keys), std::move(values), g, s.span, target);
}

Node* FnLowerer::dict_method(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name) {
  // The receiver is a local name (looked up, not lowered: anything else is
  // lowered once, by method_call).
  const ast::Attribute& m = *c.func->as<ast::Attribute>();
  Node* d = m.value->kind == ast::ExprKind::Name ? env.lookup(m.value->as<ast::Name>()->id) : nullptr;
  const std::vector<ConstValue>* keysp = d ? dict_keys(d) : nullptr;
  if (!keysp) return nullptr;
  std::vector<ConstValue> keys = *keysp;
  std::vector<Node*> args;
  for (const ast::Arg& a : c.args) {
    if (a.kind != ast::Arg::Kind::Positional && m.attr != "update")
      unsupported(a.span, "a keyword or '*' argument of dict." + m.attr + "()");
    if (a.kind == ast::Arg::Kind::Positional) args.push_back(expr(*a.value, g, env));
  }
  Loc l = loc(c.span);
  auto value = [&](size_t i) {
    return g->apply(IrOp::tuple_getitem, {d, constant(static_cast<int64_t>(i), c.span)}, "", l);
  };
  auto arity = [&](size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi)
      fail(c.span, "dict." + m.attr + "() takes " + std::to_string(lo) + (hi > lo ? " or " + std::to_string(hi) : "") +
                       " arguments, got " + std::to_string(args.size()));
  };
  if (m.attr == "get") {
    arity(1, 2);
    if (!args[0]->is_constant() || !is_key_kind(args[0]->value()))
      fail(c.span, "dict.get() in graph mode needs a constant key");
    long i = find_key(keys, args[0]->value());
    if (i >= 0) return dict_item(d, args[0], c.span, g, name);
    return args.size() > 1 ? args[1] : constant(NoneValue{}, c.span);
  }
  if (m.attr == "keys" || m.attr == "values" || m.attr == "items" || m.attr == "copy") {
    arity(0, 0);
    std::vector<Node*> out;
    for (size_t i = 0; i < keys.size(); ++i) {
      Node* k = constant(keys[i], c.span);
      if (m.attr == "keys") out.push_back(k);
      else if (m.attr == "items") out.push_back(g->apply(IrOp::make_tuple, {k, value(i)}, "", l));
      else out.push_back(value(i));
    }
    if (m.attr == "copy") return make_dict(keys, out, g, c.span, name);
    return g->apply(IrOp::make_tuple, out, name, l);
  }
  if (m.attr == "update") {
    // d.update(other) / d.update(k=v): d's name now means the merged dict.
    if (m.value->kind != ast::ExprKind::Name)
      unsupported(c.span, "dict.update() of a dict that is not a local variable");
    std::vector<Node*> values;
    for (size_t i = 0; i < keys.size(); ++i) values.push_back(value(i));
    auto put = [&](const ConstValue& k, Node* v) {
      long i = find_key(keys, k);
      if (i >= 0) {
        values[static_cast<size_t>(i)] = v;
      } else {
        keys.push_back(k);
        values.push_back(v);
      }
    };
    for (Node* other : args) {
      const std::vector<ConstValue>* ks = dict_keys(other);
      if (!ks) unsupported(c.span, "dict.update() with a value that is not a dict of constant keys");
      for (size_t j = 0; j < ks->size(); ++j)
        put((*ks)[j], g->apply(IrOp::tuple_getitem, {other, constant(static_cast<int64_t>(j), c.span)}, "", l));
    }
    for (const ast::Arg& a : c.args)
      if (a.kind == ast::Arg::Kind::Keyword) put(ConstValue(a.name), expr(*a.value, g, env));
      else if (a.kind != ast::Arg::Kind::Positional) unsupported(a.span, "a '*' argument of dict.update()");
    const std::string& target = m.value->as<ast::Name>()->id;
    env.vars[target] = make_dict(std::move(keys), std::move(values), g, c.span, target);
    return constant(NoneValue{}, c.span);
  }
  fail(c.func->span, "dict." + m.attr + "() is not supported in graph mode",
       "graph mode's dicts have constant keys: d[key], d.get, keys, values, items, copy and update work; "
       "build a new dict instead of removing keys");
}

Node* FnLowerer::dict_builtin(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name) {
  if (is_builtin_call(c, "len", env, resolve_) && c.args.size() == 1 &&
      c.args[0].kind == ast::Arg::Kind::Positional && c.args[0].value->kind == ast::ExprKind::Name) {
    // len of a local dict, or of a local tuple of known length (*args):
    // known now. Anything else (a tensor) is the builtin's, looked up
    // here without lowering the argument twice.
    Node* v = env.lookup(c.args[0].value->as<ast::Name>()->id);
    if (const std::vector<ConstValue>* ks = v ? dict_keys(v) : nullptr)
      return constant(static_cast<int64_t>(ks->size()), c.span);
    if (v && (v->is_call_of(IrOp::make_tuple) || v->is_call_of(IrOp::make_list)))
      return constant(static_cast<int64_t>(v->inputs().size() - 1), c.span);
    return nullptr;
  }
  if (!is_builtin_call(c, "dict", env, resolve_)) return nullptr;
  // dict(other, k=v, ...)
  std::vector<ConstValue> keys;
  std::vector<Node*> values;
  for (const ast::Arg& a : c.args) {
    if (a.kind == ast::Arg::Kind::Keyword) {
      long i = find_key(keys, ConstValue(a.name));
      if (i >= 0) fail(a.span, "dict() got multiple values for keyword argument '" + a.name + "'");
      keys.emplace_back(a.name);
      values.push_back(expr(*a.value, g, env));
      continue;
    }
    Node* other = a.kind == ast::Arg::Kind::Positional ? expr(*a.value, g, env) : nullptr;
    const std::vector<ConstValue>* ks = other ? dict_keys(other) : nullptr;
    if (!ks || !keys.empty()) unsupported(a.span, "dict() of anything but a dict of constant keys and keywords");
    for (size_t j = 0; j < ks->size(); ++j) {
      keys.push_back((*ks)[j]);
      values.push_back(
          g->apply(IrOp::tuple_getitem, {other, constant(static_cast<int64_t>(j), a.span)}, "", loc(a.span)));
    }
  }
  return make_dict(std::move(keys), std::move(values), g, c.span, name);
}

Node* FnLowerer::membership(Node* x, const ast::Expr& seq, const Span& s, FuncGraph* g, Env& env) {
  std::vector<Node*> items = sequence_items(seq, g, env, "'in'");
  Node* acc = nullptr;
  for (Node* item : items) {
    Node* eq = nullptr;
    if (x->is_constant() && item->is_constant())
      if (std::optional<bool> same = constant_equal(x->value(), item->value())) eq = constant(*same, s);
    if (!eq) eq = g->apply(kernels::Prim::equal, {x, item}, "", loc(s));
    if (!acc) {
      acc = eq;
    } else if (auto a = static_truth(acc); a && *a) {
      break;  // found: the rest cannot change it
    } else if (a) {
      acc = eq;
    } else {
      acc = g->apply(kernels::Prim::logical_or, {acc, eq}, "", loc(s));
    }
  }
  return acc ? acc : constant(false, s);
}

Node* FnLowerer::returned_value(Node* v, FuncGraph* g, const Span& s) {
  const std::vector<ConstValue>* keys = dict_keys(v);
  if (!keys) return v;
  if (!entry_ && g == fn_graph_) {
    st_.dict_results[g] = *keys;  // the callers' calls are dicts with these keys
    return v;
  }
  return host_dict(v, g, s);  // to the host (or out of a branch, where the keys do not travel)
}

Node* FnLowerer::host_dict(Node* v, FuncGraph* g, const Span& s) {
  const std::vector<ConstValue>* keys = dict_keys(v);
  if (!keys) return v;
  HostAdapter h;
  h.kind = HostAdapter::Kind::MakeDict;
  h.keys = *keys;
  std::vector<Node*> call{adapter(h, s, "a dict passed out of the function")};
  for (size_t i = 0; i < keys->size(); ++i)
    call.push_back(g->apply(IrOp::tuple_getitem, {v, constant(static_cast<int64_t>(i), s)}, "", loc(s)));
  return g->apply(call, "", loc(s));
}

}  // namespace lower_detail
}  // namespace msl::ir
