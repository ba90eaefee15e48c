// Methods of dict, set and frozenset, and the dict view types.
//
// keys()/values()/items() return live views (NativeData with their own
// classes dict_keys, dict_values, dict_items) as in Python: they see later
// insertions, and iterating one while the dict changes size raises
// RuntimeError. Keys and items views support the set operators.
//
// Set algebra with non-set arguments (s.union(list), d.keys() & s) is done
// here; `set | set` and friends are the core's binary operators.
#include <fmt/format.h>

#include "interp/builtins/builtins.h"
#include "interp/builtins/conversions.h"
#include "interp/core/native_args.h"

namespace msl {

namespace {

using ast::BinOp;

enum class ViewKind { Keys, Values, Items };

struct DictView final : NativeData {
  DictView(Ref<Class> c, Ref<Dict> d, ViewKind k) : NativeData(std::move(c)), dict(std::move(d)), kind(k) {}
  Ref<Dict> dict;
  ViewKind kind;
};

// Iterates a live dict; a change in size (an insertion or deletion) during
// iteration raises, as in Python.
struct DictIter final : Iterator {
  Ref<Dict> dict;
  ViewKind kind;
  size_t i = 0;
  uint64_t version;
  DictIter(Ref<Dict> d, ViewKind k) : dict(std::move(d)), kind(k), version(dict->map.version()) {}
  bool next(Interp& I, Value& out) override {
    ValueMap& m = dict->map;
    if (m.version() != version) raise_exc(I, "RuntimeError", "dictionary changed size during iteration");
    auto& entries = m.entries();
    while (i < entries.size() && entries[i].value.is_undef()) ++i;
    if (i >= entries.size()) return false;
    const ValueMap::Entry& e = entries[i++];
    switch (kind) {
      case ViewKind::Keys: out = e.key; break;
      case ViewKind::Values: out = e.value; break;
      case ViewKind::Items: out = new_tuple({e.key, e.value}); break;
    }
    return true;
  }
  const char* type_name() const override {
    switch (kind) {
      case ViewKind::Keys: return "dict_keyiterator";
      case ViewKind::Values: return "dict_valueiterator";
      default: return "dict_itemiterator";
    }
  }
};

template <class F>
void for_each_entry(ValueMap& m, F f) {
  for (auto& e : m.entries())
    if (!e.value.is_undef()) f(e);
}

// Live entries copied out, so callbacks into user code (hash, eq) cannot
// invalidate what we are looping over.
std::vector<Value> map_keys(ValueMap& m) {
  std::vector<Value> out;
  out.reserve(m.size());
  for_each_entry(m, [&](ValueMap::Entry& e) { out.push_back(e.key); });
  return out;
}

DictView* self_view(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::NativeData) || !dynamic_cast<DictView*>(a.pos[0].obj()))
    raise_type_error(I, fmt::format("descriptor '{}' requires a dict view", method));
  return static_cast<DictView*>(a.pos[0].obj());
}

// ------------------------------------------------------------------ dict

Value dict_view(Interp& I, Args& a, Object* data, ViewKind kind, const char* name) {
  Dict* d = self_dict(I, a, name);
  method_noargs(I, a, "dict", name);
  return Value::object(new DictView(Ref<Class>(static_cast<Class*>(data)), Ref<Dict>(d), kind));
}

Value dict_keys(Interp& I, Args& a, Object* data) { return dict_view(I, a, data, ViewKind::Keys, "keys"); }
Value dict_values(Interp& I, Args& a, Object* data) { return dict_view(I, a, data, ViewKind::Values, "values"); }
Value dict_items(Interp& I, Args& a, Object* data) { return dict_view(I, a, data, ViewKind::Items, "items"); }

Value dict_get(Interp& I, Args& a, Object*) {
  Dict* d = self_dict(I, a, "get");
  Value v[2];
  Args rest = method_args(a);
  bind_positional(I, "get", rest, 1, 2, v, "dict");
  if (Value* found = d->map.find(I, v[0])) return *found;
  return or_default(v[1], Value());
}

Value dict_setdefault(Interp& I, Args& a, Object*) {
  Dict* d = self_dict(I, a, "setdefault");
  Value v[2];
  Args rest = method_args(a);
  bind_positional(I, "setdefault", rest, 1, 2, v, "dict");
  if (Value* found = d->map.find(I, v[0])) return *found;
  Value dflt = or_default(v[1], Value());
  d->map.set(I, v[0], dflt);
  return dflt;
}

Value dict_pop(Interp& I, Args& a, Object*) {
  Dict* d = self_dict(I, a, "pop");
  Value v[2];
  Args rest = method_args(a);
  bind_positional(I, "pop", rest, 1, 2, v, "dict");
  // CPython answers from an empty dict without hashing the key.
  Value* found = d->map.size() == 0 ? nullptr : d->map.find(I, v[0]);
  if (!found) {
    if (given(v[1])) return v[1];
    raise_key_error(I, v[0]);
  }
  Value out = *found;
  d->map.erase(I, v[0]);
  return out;
}

Value dict_popitem(Interp& I, Args& a, Object*) {
  Dict* d = self_dict(I, a, "popitem");
  method_noargs(I, a, "dict", "popitem");
  auto& entries = d->map.entries();
  for (size_t i = entries.size(); i > 0; --i) {
    if (entries[i - 1].value.is_undef()) continue;
    Value key = entries[i - 1].key, value = entries[i - 1].value;
    d->map.erase(I, key);
    return new_tuple({key, value});
  }
  raise_exc(I, "KeyError", "popitem(): dictionary is empty");
}

Value dict_update(Interp& I, Args& a, Object*) {
  Dict* d = self_dict(I, a, "update");
  if (a.pos.size() > 2)
    raise_type_error(I, fmt::format("update expected at most 1 argument, got {}", a.pos.size() - 1));
  if (a.pos.size() == 2) dict_update_from(I, d, a.pos[1]);
  for (auto& [k, v] : a.kw) d->map.set(I, k.value(), v);
  return Value();
}

Value dict_copy(Interp& I, Args& a, Object*) {
  Dict* d = self_dict(I, a, "copy");
  method_noargs(I, a, "dict", "copy");
  auto out = make<Dict>();
  dict_update_from(I, out.get(), a.pos[0]);
  (void)d;
  return out.value();
}

Value dict_clear(Interp& I, Args& a, Object*) {
  Dict* d = self_dict(I, a, "clear");
  method_noargs(I, a, "dict", "clear");
  d->map.clear();
  return Value();
}

// dict.fromkeys(iterable, value=None), bound as a classmethod.
Value dict_fromkeys(Interp& I, Args& a, Object*) {
  Value v[2];
  Args rest = method_args(a);
  bind_positional(I, "fromkeys", rest, 1, 2, v, "dict");
  Value value = or_default(v[1], Value());
  auto out = make<Dict>();
  Value it = I.iter(v[0]);
  Value k;
  while (I.next(it, k)) {
    tick(I);
    out->map.set(I, k, value);
  }
  return out.value();
}

// ------------------------------------------------------------ dict views

Value view_iter(Interp& I, Args& a, Object*) {
  DictView* view = self_view(I, a, "__iter__");
  return Value::object(new DictIter(view->dict, view->kind));
}

Value view_len(Interp& I, Args& a, Object*) {
  DictView* view = self_view(I, a, "__len__");
  return Value::integer(static_cast<int64_t>(view->dict->map.size()));
}

bool view_contains_value(Interp& I, DictView* view, const Value& x) {
  ValueMap& m = view->dict->map;
  switch (view->kind) {
    case ViewKind::Keys: return m.find(I, x) != nullptr;
    case ViewKind::Items: {
      if (!x.is(Kind::Tuple) || x.as<Tuple>()->items.size() != 2) return false;
      Value key = x.as<Tuple>()->items[0], want = x.as<Tuple>()->items[1];
      Value* found = m.find(I, key);
      if (!found) return false;
      Value have = *found;
      return have.identical(want) || I.eq(have, want);
    }
    case ViewKind::Values: {
      std::vector<Value> values;
      for_each_entry(m, [&](ValueMap::Entry& e) { values.push_back(e.value); });
      for (const Value& v : values)
        if (v.identical(x) || I.eq(v, x)) return true;
      return false;
    }
  }
  return false;
}

Value view_contains(Interp& I, Args& a, Object*) {
  DictView* view = self_view(I, a, "__contains__");
  if (a.pos.size() != 2) raise_type_error(I, "__contains__ expected 1 argument");
  return Value::boolean(view_contains_value(I, view, a.pos[1]));
}

std::vector<Value> view_elements(DictView* view) {
  std::vector<Value> out;
  out.reserve(view->dict->map.size());
  for_each_entry(view->dict->map, [&](ValueMap::Entry& e) {
    switch (view->kind) {
      case ViewKind::Keys: out.push_back(e.key); break;
      case ViewKind::Values: out.push_back(e.value); break;
      case ViewKind::Items: out.push_back(new_tuple({e.key, e.value})); break;
    }
  });
  return out;
}

Value view_repr(Interp& I, Args& a, Object*) {
  DictView* view = self_view(I, a, "__repr__");
  const char* name = view->kind == ViewKind::Keys     ? "dict_keys"
                     : view->kind == ViewKind::Values ? "dict_values"
                                                      : "dict_items";
  return str_value(fmt::format("{}({})", name, I.repr(new_list(view_elements(view)))));
}

Value view_reversed(Interp& I, Args& a, Object*) {
  DictView* view = self_view(I, a, "__reversed__");
  std::vector<Value> items = view_elements(view);
  std::reverse(items.begin(), items.end());
  return I.iter(new_list(std::move(items)));
}

Value set_from_view(Interp& I, DictView* view) {
  auto s = make<Set>();
  for (Value& x : view_elements(view)) s->map.set(I, x, Value());
  return s.value();
}

// Set operators on keys/items views: the result is always a set.
Value view_setop(Interp& I, Args& a, BinOp op, bool reflected) {
  DictView* view = self_view(I, a, "set operation");
  if (a.pos.size() != 2) raise_type_error(I, "expected 1 argument");
  Value mine = set_from_view(I, view);
  Value other = a.pos[1].is(Kind::Set) ? a.pos[1] : make_set(I, a.pos[1], false);
  return reflected ? I.binary(op, other, mine) : I.binary(op, mine, other);
}

Value view_and(Interp& I, Args& a, Object*) { return view_setop(I, a, BinOp::BitAnd, false); }
Value view_or(Interp& I, Args& a, Object*) { return view_setop(I, a, BinOp::BitOr, false); }
Value view_sub(Interp& I, Args& a, Object*) { return view_setop(I, a, BinOp::Sub, false); }
Value view_xor(Interp& I, Args& a, Object*) { return view_setop(I, a, BinOp::BitXor, false); }
Value view_rand(Interp& I, Args& a, Object*) { return view_setop(I, a, BinOp::BitAnd, true); }
Value view_ror(Interp& I, Args& a, Object*) { return view_setop(I, a, BinOp::BitOr, true); }
Value view_rsub(Interp& I, Args& a, Object*) { return view_setop(I, a, BinOp::Sub, true); }
Value view_rxor(Interp& I, Args& a, Object*) { return view_setop(I, a, BinOp::BitXor, true); }

Value view_eq(Interp& I, Args& a, Object*) {
  DictView* view = self_view(I, a, "__eq__");
  if (a.pos.size() != 2) raise_type_error(I, "expected 1 argument");
  const Value& other = a.pos[1];
  Value other_set;
  if (other.is(Kind::Set)) {
    other_set = other;
  } else if (other.is(Kind::NativeData) && dynamic_cast<DictView*>(other.obj()) &&
             static_cast<DictView*>(other.obj())->kind != ViewKind::Values) {
    other_set = set_from_view(I, static_cast<DictView*>(other.obj()));
  } else {
    return I.not_implemented;
  }
  return Value::boolean(I.eq(set_from_view(I, view), other_set));
}

Value view_isdisjoint(Interp& I, Args& a, Object*) {
  DictView* view = self_view(I, a, "isdisjoint");
  if (a.pos.size() != 2) raise_type_error(I, "isdisjoint() takes exactly one argument");
  Value it = I.iter(a.pos[1]);
  Value x;
  while (I.next(it, x)) {
    tick(I);
    if (view_contains_value(I, view, x)) return Value::boolean(false);
  }
  return Value::boolean(true);
}

// ------------------------------------------------------------------- sets

Set* self_any_set(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::Set)) return self_set(I, a, method, "set");
  return a.pos[0].as<Set>();
}

// A temporary set holding `v`'s elements (v itself when it is a set).
Value as_set(Interp& I, const Value& v) {
  if (v.is(Kind::Set)) return v;
  return make_set(I, v, false);
}

// The receiver of a mutating set method: frozensets are refused.
Set* mutable_set(Interp& I, Args& a, const char* method) {
  Set* s = self_set(I, a, method);
  if (s->frozen)
    raise_type_error(I, fmt::format("descriptor '{}' for 'set' objects doesn't apply to a 'frozenset' object", method));
  return s;
}

Value new_set_like(const Set* proto) {
  auto s = make<Set>();
  s->frozen = proto->frozen;
  return s.value();
}

// "set" or "frozenset": the receiver's class, which CPython's messages name.
const char* set_type(Args& a) {
  return !a.pos.empty() && a.pos[0].is(Kind::Set) && a.pos[0].as<Set>()->frozen ? "frozenset" : "set";
}

void one_arg(Interp& I, Args& a, const char* method) { method_onearg(I, a, set_type(a), method); }

void no_kw(Interp& I, Args& a, const char* method) {
  if (!a.kw.empty()) raise_type_error(I, fmt::format("{}.{}() takes no keyword arguments", set_type(a), method));
}

Value set_add(Interp& I, Args& a, Object*) {
  Set* s = mutable_set(I, a, "add");
  one_arg(I, a, "add");
  s->map.set(I, a.pos[1], Value());
  return Value();
}

Value set_remove(Interp& I, Args& a, Object*) {
  Set* s = mutable_set(I, a, "remove");
  one_arg(I, a, "remove");
  if (!s->map.erase(I, a.pos[1])) raise_key_error(I, a.pos[1]);
  return Value();
}

Value set_discard(Interp& I, Args& a, Object*) {
  Set* s = mutable_set(I, a, "discard");
  one_arg(I, a, "discard");
  s->map.erase(I, a.pos[1]);
  return Value();
}

Value set_pop(Interp& I, Args& a, Object*) {
  Set* s = mutable_set(I, a, "pop");
  method_noargs(I, a, set_type(a), "pop");
  for (auto& e : s->map.entries()) {
    if (e.value.is_undef()) continue;
    Value key = e.key;
    s->map.erase(I, key);
    return key;
  }
  raise_exc(I, "KeyError", "pop from an empty set");
}

Value set_clear(Interp& I, Args& a, Object*) {
  Set* s = mutable_set(I, a, "clear");
  method_noargs(I, a, set_type(a), "clear");
  s->map.clear();
  return Value();
}

Value set_copy(Interp& I, Args& a, Object*) {
  Set* s = self_any_set(I, a, "copy");
  method_noargs(I, a, set_type(a), "copy");
  if (s->frozen) return a.pos[0];
  Value out = new_set_like(s);
  for (Value& k : map_keys(s->map)) out.as<Set>()->map.set(I, k, Value());
  return out;
}

void add_all(Interp& I, Set* dst, const Value& src) {
  if (src.is(Kind::Set) || src.is(Kind::Dict)) {
    ValueMap& m = src.is(Kind::Set) ? src.as<Set>()->map : src.as<Dict>()->map;
    for (Value& k : map_keys(m)) dst->map.set(I, k, Value());
    return;
  }
  Value it = I.iter(src);
  Value x;
  while (I.next(it, x)) {
    tick(I);
    dst->map.set(I, x, Value());
  }
}

Value set_update(Interp& I, Args& a, Object*) {
  Set* s = mutable_set(I, a, "update");
  no_kw(I, a, "update");
  for (size_t i = 1; i < a.pos.size(); ++i) add_all(I, s, a.pos[i]);
  return Value();
}

Value set_union(Interp& I, Args& a, Object*) {
  Set* s = self_any_set(I, a, "union");
  no_kw(I, a, "union");
  Value out = new_set_like(s);
  add_all(I, out.as<Set>(), a.pos[0]);
  for (size_t i = 1; i < a.pos.size(); ++i) add_all(I, out.as<Set>(), a.pos[i]);
  return out;
}

// Elements of `s` that are (keep_common) or are not in `other`.
Value filtered(Interp& I, Set* s, const Value& other, bool keep_common) {
  Value o = as_set(I, other);
  Value out = new_set_like(s);
  for (Value& k : map_keys(s->map))
    if ((o.as<Set>()->map.find(I, k) != nullptr) == keep_common) out.as<Set>()->map.set(I, k, Value());
  return out;
}

Value set_intersection(Interp& I, Args& a, Object*) {
  Set* s = self_any_set(I, a, "intersection");
  no_kw(I, a, "intersection");
  Value cur = a.pos[0];
  if (a.pos.size() == 1) return set_copy(I, a, nullptr);
  for (size_t i = 1; i < a.pos.size(); ++i) cur = filtered(I, cur.as<Set>(), a.pos[i], true);
  cur.as<Set>()->frozen = s->frozen;
  return cur;
}

Value set_difference(Interp& I, Args& a, Object*) {
  Set* s = self_any_set(I, a, "difference");
  no_kw(I, a, "difference");
  if (a.pos.size() == 1) return set_copy(I, a, nullptr);
  Value cur = a.pos[0];
  for (size_t i = 1; i < a.pos.size(); ++i) cur = filtered(I, cur.as<Set>(), a.pos[i], false);
  cur.as<Set>()->frozen = s->frozen;
  return cur;
}

Value sym_diff(Interp& I, Set* s, const Value& other) {
  Value o = as_set(I, other);
  Value out = new_set_like(s);
  for (Value& k : map_keys(s->map))
    if (!o.as<Set>()->map.find(I, k)) out.as<Set>()->map.set(I, k, Value());
  for (Value& k : map_keys(o.as<Set>()->map))
    if (!s->map.find(I, k)) out.as<Set>()->map.set(I, k, Value());
  return out;
}

Value set_symmetric_difference(Interp& I, Args& a, Object*) {
  Set* s = self_any_set(I, a, "symmetric_difference");
  one_arg(I, a, "symmetric_difference");
  return sym_diff(I, s, a.pos[1]);
}

// The *_update methods change the set through erase/insert, so iterators
// over it notice the change.
void remove_where(Interp& I, Set* s, const Value& other, bool in_other) {
  Value o = as_set(I, other);
  for (Value& k : map_keys(s->map))
    if ((o.as<Set>()->map.find(I, k) != nullptr) == in_other) s->map.erase(I, k);
}

Value set_intersection_update(Interp& I, Args& a, Object*) {
  Set* s = mutable_set(I, a, "intersection_update");
  no_kw(I, a, "intersection_update");
  for (size_t i = 1; i < a.pos.size(); ++i) remove_where(I, s, a.pos[i], false);
  return Value();
}

Value set_difference_update(Interp& I, Args& a, Object*) {
  Set* s = mutable_set(I, a, "difference_update");
  no_kw(I, a, "difference_update");
  for (size_t i = 1; i < a.pos.size(); ++i) remove_where(I, s, a.pos[i], true);
  return Value();
}

Value set_symmetric_difference_update(Interp& I, Args& a, Object*) {
  Set* s = mutable_set(I, a, "symmetric_difference_update");
  one_arg(I, a, "symmetric_difference_update");
  Value o = as_set(I, a.pos[1]);
  if (o.as<Set>() == s) {
    s->map.clear();
    return Value();
  }
  for (Value& k : map_keys(o.as<Set>()->map)) {
    if (!s->map.erase(I, k)) s->map.set(I, k, Value());
  }
  return Value();
}

bool subset_of(Interp& I, Set* s, const Value& other) {
  Value o = as_set(I, other);
  if (s->map.size() > o.as<Set>()->map.size()) return false;
  for (Value& k : map_keys(s->map))
    if (!o.as<Set>()->map.find(I, k)) return false;
  return true;
}

Value set_issubset(Interp& I, Args& a, Object*) {
  Set* s = self_any_set(I, a, "issubset");
  one_arg(I, a, "issubset");
  return Value::boolean(subset_of(I, s, a.pos[1]));
}

Value set_issuperset(Interp& I, Args& a, Object*) {
  Set* s = self_any_set(I, a, "issuperset");
  one_arg(I, a, "issuperset");
  Value o = as_set(I, a.pos[1]);
  for (Value& k : map_keys(o.as<Set>()->map))
    if (!s->map.find(I, k)) return Value::boolean(false);
  return Value::boolean(true);
}

Value set_isdisjoint(Interp& I, Args& a, Object*) {
  Set* s = self_any_set(I, a, "isdisjoint");
  one_arg(I, a, "isdisjoint");
  Value it = I.iter(a.pos[1]);
  Value x;
  while (I.next(it, x)) {
    tick(I);
    if (s->map.find(I, x)) return Value::boolean(false);
  }
  return Value::boolean(true);
}

}  // namespace

void init_dict_methods(Interp& I) {
  Class* dict = I.cls_dict.get();
  auto def_with = [&](Class* cls, const char* name, NativeFn fn, Ref<Object> data) {
    cls->dict.set(I.intern(name), make<Native>(name, fn, std::move(data)).value());
  };
  const char* view_names[3] = {"dict_keys", "dict_values", "dict_items"};
  Ref<Class> views[3];
  for (int k = 0; k < 3; ++k) {
    views[k] = I.new_class(view_names[k], I.cls_object.get(), "builtins", true);
    Class* c = views[k].get();
    I.def_method(c, "__iter__", view_iter);
    I.def_method(c, "__len__", view_len);
    I.def_method(c, "__contains__", view_contains);
    I.def_method(c, "__repr__", view_repr);
    I.def_method(c, "__reversed__", view_reversed);
    if (k != 1) {
      I.def_method(c, "__and__", view_and);
      I.def_method(c, "__or__", view_or);
      I.def_method(c, "__sub__", view_sub);
      I.def_method(c, "__xor__", view_xor);
      I.def_method(c, "__rand__", view_rand);
      I.def_method(c, "__ror__", view_ror);
      I.def_method(c, "__rsub__", view_rsub);
      I.def_method(c, "__rxor__", view_rxor);
      I.def_method(c, "__eq__", view_eq);
      I.def_method(c, "isdisjoint", view_isdisjoint);
    }
  }
  def_with(dict, "keys", dict_keys, Ref<Object>(views[0].get()));
  def_with(dict, "values", dict_values, Ref<Object>(views[1].get()));
  def_with(dict, "items", dict_items, Ref<Object>(views[2].get()));
  I.def_method(dict, "get", dict_get);
  I.def_method(dict, "setdefault", dict_setdefault);
  I.def_method(dict, "pop", dict_pop);
  I.def_method(dict, "popitem", dict_popitem);
  I.def_method(dict, "update", dict_update);
  I.def_method(dict, "copy", dict_copy);
  I.def_method(dict, "clear", dict_clear);
  dict->dict.set(I.intern("fromkeys"), make<ClassMethod>(make<Native>("fromkeys", dict_fromkeys).value()).value());

  // Methods shared by set and frozenset; the mutating ones only on set.
  for (Class* cls : {I.cls_set.get(), I.cls_frozenset.get()}) {
    I.def_method(cls, "copy", set_copy);
    I.def_method(cls, "union", set_union);
    I.def_method(cls, "intersection", set_intersection);
    I.def_method(cls, "difference", set_difference);
    I.def_method(cls, "symmetric_difference", set_symmetric_difference);
    I.def_method(cls, "issubset", set_issubset);
    I.def_method(cls, "issuperset", set_issuperset);
    I.def_method(cls, "isdisjoint", set_isdisjoint);
  }
  Class* set = I.cls_set.get();
  I.def_method(set, "add", set_add);
  I.def_method(set, "remove", set_remove);
  I.def_method(set, "discard", set_discard);
  I.def_method(set, "pop", set_pop);
  I.def_method(set, "clear", set_clear);
  I.def_method(set, "update", set_update);
  I.def_method(set, "intersection_update", set_intersection_update);
  I.def_method(set, "difference_update", set_difference_update);
  I.def_method(set, "symmetric_difference_update", set_symmetric_difference_update);
}

}  // namespace msl
