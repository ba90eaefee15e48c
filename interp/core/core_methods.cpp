// Methods of the core types that the interpreter itself relies on: object,
// type, super, BaseException, property and iterators. The rest of the
// builtin library lives in builtins.cpp and the *_methods.cpp files.
#include <fmt/format.h>

#include "interp/core/nodes.h"

namespace msl {

void generic_setattr(Interp& I, const Value& obj, Str* name, Value v);

namespace {

Value object_init(Interp& I, Args& a, Object*) {
  if (a.pos.size() > 1 || !a.kw.empty()) {
    Class* c = a.pos.empty() ? I.cls_object.get() : I.cls_of(a.pos[0]);
    I.raise(I.exception_class("TypeError").get(), c->name->s + "() takes no arguments");
  }
  return Value();
}

Value object_new(Interp& I, Args& a, Object*) {
  Class* cls = a.pos.empty() || !a.pos[0].is(Kind::Class) ? I.cls_object.get() : a.pos[0].as<Class>();
  return make<Instance>(Ref<Class>(cls)).value();
}

Value object_setattr(Interp& I, Args& a, Object*) {
  check_arity(I, "__setattr__", a, 3, 3);
  if (!a.pos[1].is(Kind::Str)) I.raise(I.exception_class("TypeError").get(), "attribute name must be string");
  generic_setattr(I, a.pos[0], I.intern(a.pos[1].as<Str>()->s), a.pos[2]);
  return Value();
}

Value type_new(Interp& I, Args& a, Object*) {
  if (a.pos.size() == 2) return Value::object(I.cls_of(a.pos[1]));
  I.raise(I.exception_class("TypeError").get(), "type() takes 1 argument");
}

Value super_new(Interp& I, Args& a, Object*) {
  if (a.pos.size() != 3)
    I.raise(I.exception_class("RuntimeError").get(), "super(): no arguments");
  if (!a.pos[1].is(Kind::Class)) I.raise(I.exception_class("TypeError").get(), "super() argument 1 must be a type, not " + I.type_name(a.pos[1]));
  Class* c = a.pos[1].as<Class>();
  const Value& self = a.pos[2];
  bool ok = self.is(Kind::Class) ? self.as<Class>()->is_subclass_of(c) : I.isinstance(self, c);
  if (!ok) I.raise(I.exception_class("TypeError").get(), "super(type, obj): obj must be an instance or subtype of type");
  return make<Super>(Ref<Class>(c), self).value();
}

Value exc_init(Interp& I, Args& a, Object*) {
  if (a.pos.empty() || !a.pos[0].is(Kind::Exception)) I.raise(I.exception_class("TypeError").get(), "descriptor '__init__' requires an exception");
  a.pos[0].as<ExceptionObj>()->args = make<Tuple>(std::vector<Value>(a.pos.begin() + 1, a.pos.end())).value();
  return Value();
}

Value exc_str(Interp& I, Args& a, Object*) {
  check_arity(I, "__str__", a, 1, 1);
  if (!a.pos[0].is(Kind::Exception)) return I.str(I.to_str(a.pos[0]));
  ExceptionObj* x = a.pos[0].as<ExceptionObj>();
  if (!x->args.is(Kind::Tuple)) return I.str("");
  auto& items = x->args.as<Tuple>()->items;
  if (items.empty()) return I.str("");
  if (items.size() == 1) {
    if (x->cls->is_subclass_of(I.exception_class("KeyError").get())) return I.str(I.repr(items[0]));
    return I.str(I.to_str(items[0]));
  }
  return I.str(I.repr(x->args));
}

Value exc_repr(Interp& I, Args& a, Object*) {
  check_arity(I, "__repr__", a, 1, 1);
  if (!a.pos[0].is(Kind::Exception)) return I.str(I.repr(a.pos[0]));
  ExceptionObj* x = a.pos[0].as<ExceptionObj>();
  std::string args = "()";
  if (x->args.is(Kind::Tuple)) {
    auto& items = x->args.as<Tuple>()->items;
    args = items.size() == 1 ? "(" + I.repr(items[0]) + ")" : I.repr(x->args);
  }
  return I.str(x->cls->name->s + args);
}

Value property_with(Interp& I, Args& a, int which) {
  check_arity(I, "property", a, 2, 2);
  if (!a.pos[0].is(Kind::Property)) I.raise(I.exception_class("TypeError").get(), "descriptor requires a property");
  Property* old = a.pos[0].as<Property>();
  auto p = make<Property>();
  p->fget = which == 0 ? a.pos[1] : old->fget;
  p->fset = which == 1 ? a.pos[1] : old->fset;
  p->fdel = which == 2 ? a.pos[1] : old->fdel;
  return p.value();
}

Value iterator_iter(Interp& I, Args& a, Object*) {
  check_arity(I, "__iter__", a, 1, 1);
  return a.pos[0];
}

Value iterator_next(Interp& I, Args& a, Object*) {
  check_arity(I, "__next__", a, 1, 1);
  Value out;
  if (!I.next(a.pos[0], out)) I.raise(I.exception_class("StopIteration").get(), "");
  return out;
}

// range.index / range.count: arithmetic, no iteration.
Value range_find(Interp& I, Args& a, bool count) {
  check_arity(I, count ? "count" : "index", a, 2, 2);
  Range* r = a.pos[0].as<Range>();
  const Value& x = a.pos[1];
  bool in = I.contains(a.pos[0], x);
  if (count) return Value::integer(in ? 1 : 0);
  if (!in) I.raise(I.exception_class("ValueError").get(), I.repr(x) + " is not in range");
  return Value::integer((I.to_int_index(x, "range") - r->start) / r->step);
}

}  // namespace

void init_core_methods(Interp& I) {
  I.def_method(I.cls_object.get(), "__init__", object_init);
  I.def_method(I.cls_object.get(), "__new__", object_new);
  I.def_method(I.cls_object.get(), "__setattr__", object_setattr);
  I.def_method(I.cls_type.get(), "__new__", type_new);
  I.def_method(I.cls_super.get(), "__new__", super_new);
  I.def_method(I.exc_base.get(), "__init__", exc_init);
  I.def_method(I.exc_base.get(), "__str__", exc_str);
  I.def_method(I.exc_base.get(), "__repr__", exc_repr);
  I.def_method(I.cls_property.get(), "getter", [](Interp& I, Args& a, Object*) { return property_with(I, a, 0); });
  I.def_method(I.cls_property.get(), "setter", [](Interp& I, Args& a, Object*) { return property_with(I, a, 1); });
  I.def_method(I.cls_property.get(), "deleter", [](Interp& I, Args& a, Object*) { return property_with(I, a, 2); });
  I.def_method(I.cls_range.get(), "index", [](Interp& I, Args& a, Object*) { return range_find(I, a, false); });
  I.def_method(I.cls_range.get(), "count", [](Interp& I, Args& a, Object*) { return range_find(I, a, true); });
  I.def_method(I.cls_iterator.get(), "__iter__", iterator_iter);
  // gc.collect(): free unreachable reference cycles now (they are also freed
  // automatically as containers are allocated).
  I.register_native_module("gc", [](Interp& I, Module& m) {
    I.def_native(&m, "collect", [](Interp& I, Args& a, Object*) {
      check_arity(I, "collect", a, 0, 0);
      return Value::integer(static_cast<int64_t>(I.collect_garbage()));
    });
  });
  I.def_method(I.cls_iterator.get(), "__next__", iterator_next);
}

}  // namespace msl
