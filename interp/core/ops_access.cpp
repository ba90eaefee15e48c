// Generic protocols, continued: attributes, subscripts and slicing, len,
// calls and class instantiation, iteration.
#include <fmt/format.h>

#include "interp/builtins/format.h"
#include "interp/core/nodes.h"
#include "interp/core/set_order.h"

namespace msl {

// --------------------------------------------------------------- attributes

// Binds a class attribute found by lookup to `self` as Python's descriptors do.
static Value bind_attr(Interp& I, const Value& attr, const Value& self, Class* cls) {
  if (attr.is(Kind::Function) || attr.is(Kind::Native)) return make<BoundMethod>(self, attr).value();
  if (attr.is(Kind::StaticMethod)) return attr.as<StaticMethod>()->func;
  if (attr.is(Kind::ClassMethod)) return make<BoundMethod>(Value::object(cls), attr.as<ClassMethod>()->func).value();
  if (attr.is(Kind::Property)) {
    Property* p = attr.as<Property>();
    if (p->fget.is_none()) I.raise(I.exception_class("AttributeError").get(), "property has no getter");
    return I.call1(p->fget, self);
  }
  if (attr.is(Kind::NativeData)) {
    // A native object whose class defines __get__ (a compiled function,
    // msl.jit on a method) binds itself, as Python's descriptors do.
    if (Value* get = I.cls_of(attr)->lookup(I.names().__get__)) {
      Value args[3] = {attr, self, Value::object(cls)};
      return I.call(*get, std::span<Value>(args));
    }
  }
  return attr;
}

static Value special_attr(Interp& I, const Value& obj, Str* name) {
  const Interp::Names& n = I.names();
  if (name == n.__class__) return Value::object(I.cls_of(obj));
  Object* o = obj.is_obj() ? obj.obj() : nullptr;
  if (!o) return Value::undef();
  switch (o->kind) {
    case Kind::Function: {
      Function* f = obj.as<Function>();
      if (name == n.__name__) return f->name.value();
      if (name == n.__qualname__) return f->qualname.value();
      if (name == n.__module__) return f->module->name.value();
      if (Value* v = f->attrs.find(name)) return *v;
      if (name == n.__doc__) return Value();
      break;
    }
    case Kind::Native:
      if (name == n.__name__) return I.str(obj.as<Native>()->name);
      break;
    case Kind::BoundMethod:
      if (name->s == "__self__") return obj.as<BoundMethod>()->self;
      if (name->s == "__func__") return obj.as<BoundMethod>()->func;
      if (name == n.__name__) return I.getattr(obj.as<BoundMethod>()->func, name);
      break;
    case Kind::Module: {
      Module* m = obj.as<Module>();
      Value v = m->get(name);
      if (!v.is_undef()) return v;
      if (name == n.__name__) return m->name.value();
      break;
    }
    case Kind::Instance:
      if (name == n.__dict__) {
        auto d = make<Dict>();
        for (auto& [k, v] : obj.as<Instance>()->attrs.entries()) d->map.set(I, k.value(), v);
        return d.value();
      }
      break;
    case Kind::Exception: {
      ExceptionObj* x = obj.as<ExceptionObj>();
      if (name == n.args) return x->args;
      if (name->s == "__cause__") return x->cause.is_undef() ? Value() : x->cause;
      if (name->s == "__context__") return x->context.is_undef() ? Value() : x->context;
      break;
    }
    case Kind::Slice:
      if (name->s == "start") return obj.as<Slice>()->start;
      if (name->s == "stop") return obj.as<Slice>()->stop;
      if (name->s == "step") return obj.as<Slice>()->step;
      break;
    case Kind::Range:
      if (name->s == "start") return Value::integer(obj.as<Range>()->start);
      if (name->s == "stop") return Value::integer(obj.as<Range>()->stop);
      if (name->s == "step") return Value::integer(obj.as<Range>()->step);
      break;
    case Kind::Property:
      if (name->s == "fget") return obj.as<Property>()->fget;
      if (name->s == "fset") return obj.as<Property>()->fset;
      break;
    default: break;
  }
  return Value::undef();
}

Value Interp::getattr_or_undef(const Value& obj, Str* name) {
  if (obj.is(Kind::Instance) || obj.is(Kind::Exception) || obj.is(Kind::NativeData)) {
    Class* cls = cls_of(obj);
    Instance* inst = obj.is(Kind::NativeData) ? nullptr : obj.as<Instance>();
    // Instance attributes come first unless a property of the same name
    // exists; most classes have no properties, so skip that lookup for them.
    bool has_property = traits(cls).has_property;
    if (inst && !has_property)
      if (Value* v = inst->attrs.find(name)) return *v;
    Value* ca = cls->lookup(name);
    if (has_property) {
      if (ca && ca->is(Kind::Property)) return bind_attr(*this, *ca, obj, cls);
      if (inst)
        if (Value* v = inst->attrs.find(name)) return *v;
    }
    if (ca) return bind_attr(*this, *ca, obj, cls);
    Value s = special_attr(*this, obj, name);
    if (!s.is_undef()) return s;
    if (Value* ga = cls->lookup(names_->__getattr__)) {
      Value r;
      try {
        r = call2(*ga, obj, name->interned ? Value::object(name) : str(name->s));
      } catch (MslError& e) {
        if (isinstance(e.exc, exception_class("AttributeError").get())) return Value::undef();
        throw;
      }
      return r;
    }
    return Value::undef();
  }
  if (obj.is(Kind::Class)) {
    Class* c = obj.as<Class>();
    if (Value* v = c->lookup(name)) {
      if (v->is(Kind::StaticMethod)) return v->as<StaticMethod>()->func;
      if (v->is(Kind::ClassMethod)) return make<BoundMethod>(obj, v->as<ClassMethod>()->func).value();
      return *v;
    }
    if (name == names_->__name__) return c->name.value();
    if (name == names_->__qualname__) return c->name.value();
    if (name == names_->__base__) return c->base ? c->base.value() : Value();
    if (name == names_->__bases__) {
      auto t = make<Tuple>();
      if (c->base) t->items.push_back(c->base.value());
      return t.value();
    }
    if (name == names_->__module__) return str(c->module_name);
    if (name == names_->__doc__) return Value();
    if (name == names_->__class__) return cls_type.value();
    return Value::undef();
  }
  if (obj.is(Kind::Super)) {
    Super* s = obj.as<Super>();
    Class* start = s->start->base.get();
    if (start) {
      if (Value* v = start->lookup(name)) {
        Class* self_cls = s->self.is(Kind::Class) ? s->self.as<Class>() : cls_of(s->self);
        if (s->self.is(Kind::Class) && v->is(Kind::Function)) return *v;
        return bind_attr(*this, *v, s->self, self_cls);
      }
    }
    return Value::undef();
  }
  Value s = special_attr(*this, obj, name);
  if (!s.is_undef()) return s;
  Class* cls = cls_of(obj);
  if (Value* v = cls->lookup(name)) return bind_attr(*this, *v, obj, cls);
  return Value::undef();
}

Value Interp::getattr(const Value& obj, Str* name) {
  Value v = getattr_or_undef(obj, name);
  if (!v.is_undef()) return v;
  Class* error = exception_class("AttributeError").get();
  if (obj.is(Kind::Module))
    raise_missing(error, fmt::format("module '{}' has no attribute '{}'", obj.as<Module>()->name->s, name->s), name,
                  obj);
  if (obj.is(Kind::Class))
    raise_missing(error, fmt::format("type object '{}' has no attribute '{}'", obj.as<Class>()->name->s, name->s),
                  name, obj);
  if (obj.is(Kind::Super)) raise(error, fmt::format("'super' object has no attribute '{}'", name->s));
  raise_missing(error, fmt::format("'{}' object has no attribute '{}'", type_name(obj), name->s), name, obj);
}

// object.__setattr__: the default attribute store, bypassing a user __setattr__.
// A property of the object's class takes the assignment (user classes, and
// native types such as Parameter whose `name` is settable).
static bool set_via_property(Interp& I, Class* cls, const Value& obj, Str* name, Value& v) {
  Value* ca = cls->lookup(name);
  if (!ca || !ca->is(Kind::Property)) return false;
  Property* p = ca->as<Property>();
  if (p->fset.is_none()) I.raise(I.exception_class("AttributeError").get(), "can't set attribute '" + name->s + "'");
  I.call2(p->fset, obj, std::move(v));
  return true;
}

void generic_setattr(Interp& I, const Value& obj, Str* name, Value v) {
  if (obj.is(Kind::Instance) || obj.is(Kind::Exception)) {
    Instance* inst = obj.as<Instance>();
    if (set_via_property(I, inst->cls.get(), obj, name, v)) return;
    if (obj.is(Kind::Exception) && name == I.names().args) {
      obj.as<ExceptionObj>()->args = make<Tuple>(I.to_vector(v)).value();
      return;
    }
    inst->attrs.set(name, std::move(v));
    return;
  }
  if (obj.is(Kind::Class)) {
    Class* c = obj.as<Class>();
    if (c->is_builtin)
      I.raise(I.exception_class("TypeError").get(),
              fmt::format("cannot set '{}' attribute of immutable type '{}'", name->s, c->name->s));
    c->dict.set(name, std::move(v));
    I.bump_class_epoch();
    return;
  }
  if (obj.is(Kind::Module)) {
    obj.as<Module>()->set(name, std::move(v));
    return;
  }
  if (obj.is(Kind::Function)) {
    obj.as<Function>()->attrs.set(name, std::move(v));
    return;
  }
  if (obj.is(Kind::NativeData) && set_via_property(I, obj.as<NativeData>()->cls.get(), obj, name, v)) return;
  I.raise(I.exception_class("AttributeError").get(),
          fmt::format("'{}' object has no attribute '{}'", I.type_name(obj), name->s));
}

void Interp::setattr(const Value& obj, Str* name, Value v) {
  if (obj.is(Kind::Instance)) {
    Instance* inst = obj.as<Instance>();
    const Class::Traits& t = traits(inst->cls.get());
    if (!t.custom_setattr && !t.has_property) {
      inst->attrs.set(name, std::move(v));
      return;
    }
    Value* sa = obj.as<Instance>()->cls->lookup(names_->__setattr__);
    if (sa && !sa->is(Kind::Native)) {
      Value args[3] = {obj, name->interned ? Value::object(name) : str(name->s), std::move(v)};
      call(*sa, args);
      return;
    }
  }
  generic_setattr(*this, obj, name, std::move(v));
}

void Interp::delattr(const Value& obj, Str* name) {
  if (obj.is(Kind::Instance) || obj.is(Kind::Exception)) {
    if (obj.as<Instance>()->attrs.erase(name)) return;
  } else if (obj.is(Kind::Class) && !obj.as<Class>()->is_builtin) {
    if (obj.as<Class>()->dict.erase(name)) {
      bump_class_epoch();
      return;
    }
  } else if (obj.is(Kind::Module)) {
    GlobalSlot* s = obj.as<Module>()->find(name);
    if (s && !s->value.is_undef()) {
      s->value = Value::undef();
      return;
    }
  }
  raise(exception_class("AttributeError").get(), fmt::format("'{}' object has no attribute '{}'", type_name(obj), name->s));
}

// --------------------------------------------------------------- subscripts

int64_t Interp::to_int_index(const Value& v, const char* what) {
  if (v.is_int()) return v.as_int();
  if (v.is_bool()) return v.as_bool() ? 1 : 0;
  if (v.is_obj()) {
    Class* c = cls_of(v);
    if (Value* m = c->lookup(names_->__index__)) return to_int_index(call1(*m, v), what);
  }
  raise(exception_class("TypeError").get(),
        fmt::format("{} must be integers or slices, not {}", what, type_name(v)));
}

double Interp::to_float(const Value& v, const char* what) {
  if (v.is_float()) return v.as_float();
  if (v.is_int()) return static_cast<double>(v.as_int());
  if (v.is_bool()) return v.as_bool() ? 1.0 : 0.0;
  if (v.is_obj())
    if (Value* m = cls_of(v)->lookup(names_->__float__)) return to_float(call1(*m, v), what);
  raise(exception_class("TypeError").get(), fmt::format("{}: must be real number, not {}", what, type_name(v)));
}

void slice_indices(Interp& I, const Slice* s, int64_t n, int64_t& start, int64_t& stop, int64_t& step) {
  step = s->step.is_none() ? 1 : I.to_int_index(s->step, "slice indices");
  if (step == 0) I.raise(I.exception_class("ValueError").get(), "slice step cannot be zero");
  if (step < -INT64_MAX) step = -INT64_MAX;  // same selection, and -step stays representable
  int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? n - 1 : n;
  auto clamp = [&](const Value& v, int64_t dflt) {
    if (v.is_none()) return dflt;
    int64_t i = I.to_int_index(v, "slice indices");
    if (i < 0) {
      i += n;
      if (i < lo) i = lo;
    } else if (i > hi) {
      i = hi;
    }
    return i;
  };
  start = clamp(s->start, step < 0 ? hi : lo);
  stop = clamp(s->stop, step < 0 ? lo : hi);
}

int64_t slice_length(int64_t start, int64_t stop, int64_t step) {
  if (step > 0) return start < stop ? (stop - start - 1) / step + 1 : 0;
  return start > stop ? (start - stop - 1) / (-step) + 1 : 0;
}

// Byte offsets of each code point of a non-ASCII string (plus the end).
static std::vector<size_t> code_point_offsets(const std::string& s) {
  std::vector<size_t> offs;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) offs.push_back(i);
  offs.push_back(s.size());
  return offs;
}

static int64_t normalize_index(Interp& I, const Value& key, int64_t n, const char* type) {
  int64_t i = I.to_int_index(key, (std::string(type) + " indices").c_str());
  if (i < 0) i += n;
  if (i < 0 || i >= n) I.raise(I.exception_class("IndexError").get(), std::string(type) + " index out of range");
  return i;
}

Value Interp::getitem(const Value& obj, const Value& key) {
  if (obj.is_obj()) {
    switch (obj.obj()->kind) {
      case Kind::List:
      case Kind::Tuple: {
        bool is_list = obj.is(Kind::List);
        auto& items = is_list ? obj.as<List>()->items : obj.as<Tuple>()->items;
        int64_t n = static_cast<int64_t>(items.size());
        if (key.is(Kind::Slice)) {
          int64_t start, stop, step;
          slice_indices(*this, key.as<Slice>(), n, start, stop, step);
          std::vector<Value> out;
          int64_t len = slice_length(start, stop, step);
          out.reserve(static_cast<size_t>(len));
          for (int64_t i = 0, j = start; i < len; ++i, j += step) out.push_back(items[static_cast<size_t>(j)]);
          if (is_list) return make<List>(std::move(out)).value();
          return make<Tuple>(std::move(out)).value();
        }
        return items[static_cast<size_t>(normalize_index(*this, key, n, is_list ? "list" : "tuple"))];
      }
      case Kind::Str: {
        Str* s = obj.as<Str>();
        bool ascii = s->is_ascii();
        std::vector<size_t> offs;
        if (!ascii) offs = code_point_offsets(s->s);
        int64_t n = ascii ? static_cast<int64_t>(s->s.size()) : static_cast<int64_t>(offs.size() - 1);
        auto cp = [&](int64_t i) {
          if (ascii) return s->s.substr(static_cast<size_t>(i), 1);
          return s->s.substr(offs[static_cast<size_t>(i)], offs[static_cast<size_t>(i) + 1] - offs[static_cast<size_t>(i)]);
        };
        if (key.is(Kind::Slice)) {
          int64_t start, stop, step;
          slice_indices(*this, key.as<Slice>(), n, start, stop, step);
          int64_t len = slice_length(start, stop, step);
          std::string out;
          if (step == 1 && len > 0) {
            size_t b = ascii ? static_cast<size_t>(start) : offs[static_cast<size_t>(start)];
            size_t e = ascii ? static_cast<size_t>(start + len) : offs[static_cast<size_t>(start + len)];
            return str(s->s.substr(b, e - b));
          }
          for (int64_t i = 0, j = start; i < len; ++i, j += step) out += cp(j);
          return str(std::move(out));
        }
        return str(cp(normalize_index(*this, key, n, "string")));
      }
      case Kind::Dict: {
        if (Value* v = obj.as<Dict>()->map.find(*this, key)) return *v;
        auto args = make<Tuple>();
        args->items.push_back(key);
        auto e = make<ExceptionObj>(exception_class("KeyError"));
        e->args = args.value();
        throw MslError{e.value()};
      }
      case Kind::Range: {
        Range* r = obj.as<Range>();
        int64_t n = r->length();
        if (key.is(Kind::Slice)) {
          int64_t start, stop, step;
          slice_indices(*this, key.as<Slice>(), n, start, stop, step);
          return make<Range>(r->start + start * r->step, r->start + stop * r->step, r->step * step).value();
        }
        return Value::integer(r->start + normalize_index(*this, key, n, "range object") * r->step);
      }
      case Kind::Class: {
        // list[int]-style annotations evaluate to the class itself.
        return obj;
      }
      default:
        if (Value* m = cls_of(obj)->lookup(names_->__getitem__)) return call2(*m, obj, key);
        break;
    }
  }
  raise(exception_class("TypeError").get(), fmt::format("'{}' object is not subscriptable", type_name(obj)));
}

void Interp::setitem(const Value& obj, const Value& key, Value v) {
  if (obj.is(Kind::List)) {
    auto& items = obj.as<List>()->items;
    int64_t n = static_cast<int64_t>(items.size());
    if (key.is(Kind::Slice)) {
      int64_t start, stop, step;
      slice_indices(*this, key.as<Slice>(), n, start, stop, step);
      std::vector<Value> src = to_vector(v);
      if (step == 1) {
        if (stop < start) stop = start;
        items.erase(items.begin() + start, items.begin() + stop);
        items.insert(items.begin() + start, src.begin(), src.end());
        return;
      }
      int64_t len = slice_length(start, stop, step);
      if (static_cast<int64_t>(src.size()) != len)
        raise(exception_class("ValueError").get(),
              fmt::format("attempt to assign sequence of size {} to extended slice of size {}", src.size(), len));
      for (int64_t i = 0, j = start; i < len; ++i, j += step) items[static_cast<size_t>(j)] = src[static_cast<size_t>(i)];
      return;
    }
    items[static_cast<size_t>(normalize_index(*this, key, n, "list assignment"))] = std::move(v);
    return;
  }
  if (obj.is(Kind::Dict)) {
    obj.as<Dict>()->map.set(*this, key, std::move(v));
    return;
  }
  if (obj.is_obj())
    if (Value* m = cls_of(obj)->lookup(names_->__setitem__)) {
      Value args[3] = {obj, key, std::move(v)};
      call(*m, args);
      return;
    }
  raise(exception_class("TypeError").get(), fmt::format("'{}' object does not support item assignment", type_name(obj)));
}

void Interp::delitem(const Value& obj, const Value& key) {
  if (obj.is(Kind::List)) {
    auto& items = obj.as<List>()->items;
    int64_t n = static_cast<int64_t>(items.size());
    if (key.is(Kind::Slice)) {
      int64_t start, stop, step;
      slice_indices(*this, key.as<Slice>(), n, start, stop, step);
      int64_t len = slice_length(start, stop, step);
      std::vector<bool> drop(items.size(), false);
      for (int64_t i = 0, j = start; i < len; ++i, j += step) drop[static_cast<size_t>(j)] = true;
      std::vector<Value> kept;
      for (size_t i = 0; i < items.size(); ++i)
        if (!drop[i]) kept.push_back(std::move(items[i]));
      items = std::move(kept);
      return;
    }
    items.erase(items.begin() + normalize_index(*this, key, n, "list assignment"));
    return;
  }
  if (obj.is(Kind::Dict)) {
    if (!obj.as<Dict>()->map.erase(*this, key)) {
      auto e = make<ExceptionObj>(exception_class("KeyError"));
      e->args = make<Tuple>(std::vector<Value>{key}).value();
      throw MslError{e.value()};
    }
    return;
  }
  if (obj.is_obj())
    if (Value* m = cls_of(obj)->lookup(names_->__delitem__)) {
      call2(*m, obj, key);
      return;
    }
  raise(exception_class("TypeError").get(), fmt::format("'{}' object does not support item deletion", type_name(obj)));
}

int64_t Interp::len(const Value& v) {
  if (v.is_obj()) {
    switch (v.obj()->kind) {
      case Kind::Str: return static_cast<int64_t>(v.as<Str>()->length());
      case Kind::List: return static_cast<int64_t>(v.as<List>()->items.size());
      case Kind::Tuple: return static_cast<int64_t>(v.as<Tuple>()->items.size());
      case Kind::Dict: return static_cast<int64_t>(v.as<Dict>()->map.size());
      case Kind::Set: return static_cast<int64_t>(v.as<Set>()->map.size());
      case Kind::Range: return v.as<Range>()->length();
      default:
        if (Value* m = cls_of(v)->lookup(names_->__len__)) {
          int64_t n = to_int_index(call1(*m, v), "__len__");
          if (n < 0) raise(exception_class("ValueError").get(), "__len__() should return >= 0");
          return n;
        }
    }
  }
  raise(exception_class("TypeError").get(), fmt::format("object of type '{}' has no len()", type_name(v)));
}

// -------------------------------------------------------------------- calls

static Value construct(Interp& I, Class* cls, std::span<Value> args, std::span<std::pair<Ref<Str>, Value>> kw) {
  // Builtin types construct through their native __new__ (int("3"), list(x), ...).
  if (cls->is_builtin && cls->instance_kind != Kind::Exception) {
    Class* c = cls;
    Value* nw = nullptr;
    for (; c && !nw; c = c->base.get())
      if (c->is_builtin) nw = c->dict.find(I.names().__new__);
    if (!nw) I.raise(I.exception_class("TypeError").get(), fmt::format("cannot create '{}' instances", cls->name->s));
    std::vector<Value> a;
    a.reserve(args.size() + 1);
    a.push_back(Value::object(cls));
    a.insert(a.end(), args.begin(), args.end());
    return I.call(*nw, a, kw);
  }
  Value obj;
  if (cls->instance_kind == Kind::Exception) {
    auto e = make<ExceptionObj>(Ref<Class>(cls));
    e->args = make<Tuple>(std::vector<Value>(args.begin(), args.end())).value();
    obj = e.value();
  } else {
    obj = make<Instance>(Ref<Class>(cls)).value();
  }
  Value* init = cls->lookup(I.names().__init__);
  if (init) {
    // self followed by the arguments, on the value stack (no allocation).
    Value keep = *init;
    StackSlots a(I, args.size() + 1);
    a[0] = obj;
    for (size_t i = 0; i < args.size(); ++i) a[i + 1] = args[i];
    Value r = I.call(keep, std::span<Value>(a.p, args.size() + 1), kw);
    if (!r.is_none())
      I.raise(I.exception_class("TypeError").get(), fmt::format("__init__() should return None, not '{}'", I.type_name(r)));
  } else if (!args.empty() || !kw.empty()) {
    I.raise(I.exception_class("TypeError").get(), fmt::format("{}() takes no arguments", cls->name->s));
  }
  return obj;
}

Value Interp::call(const Value& f, std::span<Value> args, std::span<std::pair<Ref<Str>, Value>> kw) {
  if (f.is_obj()) {
    switch (f.obj()->kind) {
      case Kind::Function: return call_function(*this, f.as<Function>(), args, kw);
      case Kind::Native: {
        Native* n = f.as<Native>();
        Args a{args, kw};
        check_stack();
        return n->fn(*this, a, n->data.get());
      }
      case Kind::BoundMethod: {
        BoundMethod* b = f.as<BoundMethod>();
        Value func = b->func;  // keep alive during the call
        std::vector<Value> a;
        a.reserve(args.size() + 1);
        a.push_back(b->self);
        a.insert(a.end(), args.begin(), args.end());
        return call(func, a, kw);
      }
      case Kind::Class: return construct(*this, f.as<Class>(), args, kw);
      case Kind::StaticMethod: return call(f.as<StaticMethod>()->func, args, kw);
      default:
        if (Value* m = cls_of(f)->lookup(names_->__call__)) {
          if (f.is(Kind::Instance) || f.is(Kind::NativeData) || f.is(Kind::Exception)) {
            Value method = *m;
            std::vector<Value> a;
            a.reserve(args.size() + 1);
            a.push_back(f);
            a.insert(a.end(), args.begin(), args.end());
            return call(method, a, kw);
          }
        }
        break;
    }
  }
  raise(exception_class("TypeError").get(), fmt::format("'{}' object is not callable", type_name(f)));
}

Value Interp::call1(const Value& f, Value a) { return call(f, std::span<Value>(&a, 1)); }

Value Interp::call2(const Value& f, Value a, Value b) {
  Value args[2] = {std::move(a), std::move(b)};
  return call(f, args);
}

Value Interp::call_method(const Value& obj, Str* name, std::span<Value> args) {
  Value fn = getattr(obj, name);
  return call(fn, args);
}

// ---------------------------------------------------------------- iteration

namespace {

struct SeqIter final : Iterator {
  Value seq;
  size_t i = 0;
  bool tuple;
  explicit SeqIter(Value s) : seq(std::move(s)), tuple(seq.is(Kind::Tuple)) {}
  bool next(Interp&, Value& out) override {
    auto& items = tuple ? seq.as<Tuple>()->items : seq.as<List>()->items;
    if (i >= items.size()) return false;
    out = items[i++];
    return true;
  }
  const char* type_name() const override { return tuple ? "tuple_iterator" : "list_iterator"; }
};

struct StrIter final : Iterator {
  Value s;
  size_t pos = 0;
  explicit StrIter(Value v) : s(std::move(v)) {}
  bool next(Interp& I, Value& out) override {
    const std::string& str = s.as<Str>()->s;
    if (pos >= str.size()) return false;
    size_t end = pos + 1;
    while (end < str.size() && (static_cast<unsigned char>(str[end]) & 0xC0) == 0x80) ++end;
    out = I.str(str.substr(pos, end - pos));
    pos = end;
    return true;
  }
  const char* type_name() const override { return "str_iterator"; }
};

struct RangeIter final : Iterator {
  int64_t cur, stop, step;
  bool done = false;
  explicit RangeIter(Range* r) : cur(r->start), stop(r->stop), step(r->step) {}
  bool next(Interp&, Value& out) override {
    if (done || (step > 0 ? cur >= stop : cur <= stop)) return false;
    out = Value::integer(cur);
    if (__builtin_add_overflow(cur, step, &cur)) done = true;
    return true;
  }
  const char* type_name() const override { return "range_iterator"; }
};

struct MapIter final : Iterator {
  Value owner;
  ValueMap* map;
  size_t i = 0;
  uint64_t version;
  bool is_dict;
  std::vector<size_t> order;  // sets: entry indices in iteration order (set_order.h)
  MapIter(Value o, ValueMap* m, bool d) : owner(std::move(o)), map(m), version(m->version()), is_dict(d) {
    if (!is_dict) order = set_iteration_order(*m);
  }
  bool next(Interp& I, Value& out) override {
    if (map->version() != version)
      I.raise(I.exception_class("RuntimeError").get(),
              is_dict ? "dictionary changed size during iteration" : "Set changed size during iteration");
    auto& entries = map->entries();
    if (!is_dict) {
      if (i >= order.size()) return false;
      out = entries[order[i++]].key;
      return true;
    }
    while (i < entries.size() && entries[i].value.is_undef()) ++i;
    if (i >= entries.size()) return false;
    out = entries[i++].key;
    return true;
  }
  const char* type_name() const override { return is_dict ? "dict_keyiterator" : "set_iterator"; }
};

}  // namespace

Value Interp::iter(const Value& v) {
  if (v.is_obj()) {
    switch (v.obj()->kind) {
      case Kind::List:
      case Kind::Tuple: return Value::object(new SeqIter(v));
      case Kind::Str: return Value::object(new StrIter(v));
      case Kind::Range: return Value::object(new RangeIter(v.as<Range>()));
      case Kind::Dict: return Value::object(new MapIter(v, &v.as<Dict>()->map, true));
      case Kind::Set: return Value::object(new MapIter(v, &v.as<Set>()->map, false));
      case Kind::Iterator: return v;
      default: {
        Class* c = cls_of(v);
        if (Value* m = c->lookup(names_->__iter__)) {
          Value it = call1(*m, v);
          if (!it.is(Kind::Iterator) && !cls_of(it)->lookup(names_->__next__))
            raise(exception_class("TypeError").get(), fmt::format("iter() returned non-iterator of type '{}'", type_name(it)));
          return it;
        }
        if (c->lookup(names_->__getitem__) && (v.is(Kind::Instance) || v.is(Kind::NativeData))) {
          // The old sequence protocol: __getitem__(0), (1), ... until IndexError.
          auto l = make<List>();
          for (int64_t i = 0;; ++i) {
            try {
              l->items.push_back(getitem(v, Value::integer(i)));
            } catch (MslError& e) {
              if (isinstance(e.exc, exception_class("IndexError").get())) break;
              throw;
            }
            poll();
          }
          return Value::object(new SeqIter(l.value()));
        }
      }
    }
  }
  raise(exception_class("TypeError").get(), fmt::format("'{}' object is not iterable", type_name(v)));
}

bool Interp::next(const Value& it, Value& out) {
  if (it.is(Kind::Iterator)) return static_cast<Iterator*>(it.obj())->next(*this, out);
  Value* m = cls_of(it)->lookup(names_->__next__);
  if (!m) raise(exception_class("TypeError").get(), fmt::format("'{}' object is not an iterator", type_name(it)));
  try {
    out = call1(*m, it);
  } catch (MslError& e) {
    if (isinstance(e.exc, exception_class("StopIteration").get())) return false;
    throw;
  }
  return true;
}

std::vector<Value> Interp::to_vector(const Value& iterable) {
  if (iterable.is(Kind::List)) return iterable.as<List>()->items;
  if (iterable.is(Kind::Tuple)) return iterable.as<Tuple>()->items;
  std::vector<Value> out;
  Value it = iter(iterable);
  Value x;
  while (next(it, x)) {
    if (out.size() >= opts_.max_sequence) raise(exception_class("MemoryError").get(), "iterable is too long");
    out.push_back(std::move(x));
    if ((out.size() & 0xFFF) == 0) poll();
  }
  return out;
}

}  // namespace msl
