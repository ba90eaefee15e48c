// Generic protocols: truth, repr/str, hashing, equality, arithmetic,
// comparison, attribute access, calls and construction. Builtin kinds are
// handled by switching on Kind; instances and native-data objects go through
// their class's dunder methods, so library types can be written in MSL.
#include <cmath>
#include <unordered_set>

#include <fmt/format.h>

#include "interp/builtins/format.h"
#include "interp/core/nodes.h"
#include "interp/core/set_order.h"
#include "interp/tensor/tensor_object.h"
#include "lang/python_number.h"

namespace msl {

using ast::BinOp;
using ast::CmpOp;

// ------------------------------------------------------------------ types

Class* Interp::cls_of(const Value& v) {
  switch (v.tag()) {
    case Tag::Undef:
    case Tag::None: return cls_none.get();
    case Tag::Bool: return cls_bool.get();
    case Tag::Int: return cls_int.get();
    case Tag::Float: return cls_float.get();
    case Tag::Obj: break;
  }
  switch (v.obj()->kind) {
    case Kind::Str: return cls_str.get();
    case Kind::Tuple: return cls_tuple.get();
    case Kind::List: return cls_list.get();
    case Kind::Dict: return cls_dict.get();
    case Kind::Set: return v.as<Set>()->frozen ? cls_frozenset.get() : cls_set.get();
    case Kind::Range: return cls_range.get();
    case Kind::Slice: return cls_slice.get();
    case Kind::Function: return cls_function.get();
    case Kind::Native: return cls_builtin_function.get();
    case Kind::BoundMethod: return cls_method.get();
    case Kind::Class: return cls_type.get();
    case Kind::Instance:
    case Kind::Exception: return v.as<Instance>()->cls.get();
    case Kind::Module: return cls_module.get();
    case Kind::Cell: return cls_cell.get();
    case Kind::Iterator: return iterator_class(static_cast<Iterator*>(v.obj())->type_name());
    case Kind::Property: return cls_property.get();
    case Kind::StaticMethod: return cls_staticmethod.get();
    case Kind::ClassMethod: return cls_classmethod.get();
    case Kind::Super: return cls_super.get();
    case Kind::NativeData: return v.as<NativeData>()->cls.get();
  }
  return cls_object.get();
}

Class* Interp::iterator_class(const char* name) {
  // One class per native iterator type (zip, map, list_iterator, ...), made on
  // first use; all share the iterator protocol methods of cls_iterator.
  auto it = iterator_classes_.find(name);
  if (it != iterator_classes_.end()) return it->second.get();
  Ref<Class> c = new_class(name, cls_iterator.get(), "builtins", true);
  iterator_classes_.emplace(name, c);
  return c.get();
}

std::string Interp::type_name(const Value& v) { return cls_of(v)->name->s; }

// Looks up a dunder method defined by a user class (or a native type) on the
// value's class; null for builtin kinds, which the callers handle inline.
static Value* user_method(Interp& I, const Value& v, Str* name) {
  if (!v.is_obj()) return nullptr;
  Kind k = v.obj()->kind;
  if (k != Kind::Instance && k != Kind::Exception && k != Kind::NativeData) return nullptr;
  return I.cls_of(v)->lookup(name);
}

static Value bind_call(Interp& I, const Value& fn, const Value& self, std::span<Value> rest = {}) {
  std::vector<Value> args;
  args.reserve(rest.size() + 1);
  args.push_back(self);
  for (auto& r : rest) args.push_back(r);
  return I.call(fn, args);
}

// --------------------------------------------------------------- truthiness

bool Interp::truthy(const Value& v) {
  switch (v.tag()) {
    case Tag::Undef:
    case Tag::None: return false;
    case Tag::Bool: return v.as_bool();
    case Tag::Int: return v.as_int() != 0;
    case Tag::Float: return v.as_float() != 0;
    case Tag::Obj: break;
  }
  switch (v.obj()->kind) {
    case Kind::Str: return !v.as<Str>()->s.empty();
    case Kind::Tuple: return !v.as<Tuple>()->items.empty();
    case Kind::List: return !v.as<List>()->items.empty();
    case Kind::Dict: return v.as<Dict>()->map.size() > 0;
    case Kind::Set: return v.as<Set>()->map.size() > 0;
    case Kind::Range: return v.as<Range>()->length() > 0;
    default: break;
  }
  if (is_tensor(v)) return tensor_truthy(*this, tensor_of(v));  // tensor fast path (no __bool__ call)
  if (Value* m = user_method(*this, v, names_->__bool__)) {
    Value r = bind_call(*this, *m, v);
    if (!r.is_bool()) raise(exception_class("TypeError").get(), "__bool__ should return bool, returned " + type_name(r));
    return r.as_bool();
  }
  if (Value* m = user_method(*this, v, names_->__len__)) return to_int_index(bind_call(*this, *m, v), "__len__") != 0;
  return true;
}

// -------------------------------------------------------------- repr / str

namespace {
// Objects whose repr is being computed, to print recursive containers as [...].
struct ReprGuard {
  static std::unordered_set<Object*>& active() {
    static thread_local std::unordered_set<Object*> a;
    return a;
  }
  explicit ReprGuard(Object* o) : o_(o) { recursive = !active().insert(o).second; }
  ~ReprGuard() {
    if (!recursive) active().erase(o_);
  }
  Object* o_;
  bool recursive = false;
};

std::string address(const void* p) { return fmt::format("0x{:x}", reinterpret_cast<uintptr_t>(p)); }
}  // namespace

std::string Interp::repr(const Value& v) {
  // Containers append into one buffer, so nested structures cost linear time.
  if (v.is(Kind::Tuple) || v.is(Kind::List) || v.is(Kind::Dict) || v.is(Kind::Set)) {
    std::string out;
    repr_into(out, v);
    return out;
  }
  return repr_leaf(v);
}

void Interp::repr_into(std::string& s, const Value& v) {
  check_stack();
  Object* o = v.is_obj() ? v.obj() : nullptr;
  if (!o) {
    s += repr_leaf(v);
    return;
  }
  switch (o->kind) {
    case Kind::Tuple:
    case Kind::List: {
      ReprGuard g(o);
      bool tuple = o->kind == Kind::Tuple;
      if (g.recursive) {
        s += tuple ? "(...)" : "[...]";
        return;
      }
      auto& items = tuple ? v.as<Tuple>()->items : v.as<List>()->items;
      s += tuple ? "(" : "[";
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) s += ", ";
        repr_into(s, items[i]);
      }
      if (tuple && items.size() == 1) s += ",";
      s += tuple ? ")" : "]";
      return;
    }
    case Kind::Dict: {
      ReprGuard g(o);
      if (g.recursive) {
        s += "{...}";
        return;
      }
      s += "{";
      bool first = true;
      for (auto& e : v.as<Dict>()->map.entries()) {
        if (e.value.is_undef()) continue;
        if (!first) s += ", ";
        first = false;
        repr_into(s, e.key);
        s += ": ";
        repr_into(s, e.value);
      }
      s += "}";
      return;
    }
    case Kind::Set: {
      Set* st = v.as<Set>();
      if (st->map.size() == 0) {
        s += st->frozen ? "frozenset()" : "set()";
        return;
      }
      ReprGuard g(o);
      if (g.recursive) {
        s += "{...}";
        return;
      }
      s += st->frozen ? "frozenset({" : "{";
      bool first = true;
      for (size_t i : set_iteration_order(st->map)) {
        if (!first) s += ", ";
        first = false;
        repr_into(s, st->map.entries()[i].key);
      }
      s += st->frozen ? "})" : "}";
      return;
    }
    default: s += repr_leaf(v);
  }
}

// repr() of everything but the builtin containers.
std::string Interp::repr_leaf(const Value& v) {
  check_stack();
  switch (v.tag()) {
    case Tag::Undef: return "<undefined>";
    case Tag::None: return "None";
    case Tag::Bool: return v.as_bool() ? "True" : "False";
    case Tag::Int: return std::to_string(v.as_int());
    case Tag::Float: return float_repr(v.as_float());
    case Tag::Obj: break;
  }
  Object* o = v.obj();
  switch (o->kind) {
    case Kind::Str: return str_repr(v.as<Str>()->s);
    case Kind::Tuple:
    case Kind::List:
    case Kind::Dict:
    case Kind::Set: return repr(v);
    case Kind::Range: {
      Range* r = v.as<Range>();
      if (r->step == 1) return fmt::format("range({}, {})", r->start, r->stop);
      return fmt::format("range({}, {}, {})", r->start, r->stop, r->step);
    }
    case Kind::Slice: {
      Slice* s = v.as<Slice>();
      return "slice(" + repr(s->start) + ", " + repr(s->stop) + ", " + repr(s->step) + ")";
    }
    case Kind::Function: return "<function " + v.as<Function>()->qualname->s + " at " + address(o) + ">";
    case Kind::Native: return "<built-in function " + v.as<Native>()->name + ">";
    case Kind::BoundMethod: {
      BoundMethod* b = v.as<BoundMethod>();
      std::string fname = b->func.is(Kind::Function) ? b->func.as<Function>()->qualname->s
                          : b->func.is(Kind::Native) ? b->func.as<Native>()->name
                                                     : "?";
      return "<bound method " + fname + " of " + repr(b->self) + ">";
    }
    case Kind::Class: {
      Class* c = v.as<Class>();
      if (c->is_builtin) return "<class '" + c->name->s + "'>";
      return "<class '" + c->module_name + "." + c->name->s + "'>";
    }
    case Kind::Module: {
      Module* m = v.as<Module>();
      if (m->file.empty()) return "<module '" + m->name->s + "' (built-in)>";
      return "<module '" + m->name->s + "' from '" + m->file + "'>";
    }
    case Kind::Cell: return "<cell at " + address(o) + ">";
    case Kind::Iterator: return std::string("<") + static_cast<Iterator*>(o)->type_name() + " object at " + address(o) + ">";
    case Kind::Property: return "<property object at " + address(o) + ">";
    case Kind::StaticMethod: return "<staticmethod object at " + address(o) + ">";
    case Kind::ClassMethod: return "<classmethod object at " + address(o) + ">";
    case Kind::Super: return "<super: <class '" + v.as<Super>()->start->name->s + "'>, <" + type_name(v.as<Super>()->self) + " object>>";
    case Kind::Instance:
    case Kind::Exception:
    case Kind::NativeData: break;
  }
  if (Value* m = user_method(*this, v, names_->__repr__)) {
    Value r = bind_call(*this, *m, v);
    if (!r.is(Kind::Str)) raise(exception_class("TypeError").get(), "__repr__ returned non-string (type " + type_name(r) + ")");
    return r.as<Str>()->s;
  }
  if (o->kind == Kind::Exception) {
    ExceptionObj* x = v.as<ExceptionObj>();
    std::string args = x->args.is(Kind::Tuple) ? repr(x->args) : "()";
    if (x->args.is(Kind::Tuple) && x->args.as<Tuple>()->items.size() == 1) args = "(" + repr(x->args.as<Tuple>()->items[0]) + ")";
    return x->cls->name->s + args;
  }
  Class* c = cls_of(v);
  if (c == cls_ellipsis.get()) return "Ellipsis";
  if (c == cls_not_implemented.get()) return "NotImplemented";
  return "<" + (c->is_builtin ? std::string() : c->module_name + ".") + c->name->s + " object at " + address(o) + ">";
}

std::string Interp::to_str(const Value& v) {
  if (v.is(Kind::Str)) return v.as<Str>()->s;
  if (Value* m = user_method(*this, v, names_->__str__)) {
    Value r = bind_call(*this, *m, v);
    if (!r.is(Kind::Str)) raise(exception_class("TypeError").get(), "__str__ returned non-string (type " + type_name(r) + ")");
    return r.as<Str>()->s;
  }
  if (v.is(Kind::Exception)) {
    ExceptionObj* x = v.as<ExceptionObj>();
    if (!x->args.is(Kind::Tuple)) return "";
    auto& items = x->args.as<Tuple>()->items;
    if (items.empty()) return "";
    // KeyError shows the repr of its key, as in Python.
    if (items.size() == 1) {
      if (x->cls->is_subclass_of(exception_class("KeyError").get())) return repr(items[0]);
      return to_str(items[0]);
    }
    return repr(x->args);
  }
  return repr(v);
}

// ------------------------------------------------------- hashing, equality

static size_t hash_int(int64_t i) { return static_cast<size_t>(i) * 0x9E3779B97F4A7C15ull ^ (static_cast<size_t>(i) >> 29); }

size_t Interp::hash(const Value& v) {
  switch (v.tag()) {
    case Tag::Undef:
    case Tag::None: return 0x345678;
    case Tag::Bool: return hash_int(v.as_bool() ? 1 : 0);
    case Tag::Int: return hash_int(v.as_int());
    case Tag::Float: {
      double d = v.as_float();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) return hash_int(static_cast<int64_t>(d));
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return hash_int(static_cast<int64_t>(bits));
    }
    case Tag::Obj: break;
  }
  Object* o = v.obj();
  switch (o->kind) {
    case Kind::Str: return v.as<Str>()->hash();
    case Kind::Tuple: {
      check_stack();
      size_t h = 0x27D4EB2F165667C5ull;
      for (auto& x : v.as<Tuple>()->items) h = (h ^ hash(x)) * 0x100000001B3ull;
      return h;
    }
    case Kind::Set:
      if (v.as<Set>()->frozen) {
        size_t h = 0;
        for (auto& e : v.as<Set>()->map.entries())
          if (!e.value.is_undef()) h ^= e.hash * 0x9E3779B97F4A7C15ull;
        return h;
      }
      [[fallthrough]];
    case Kind::List:
    case Kind::Dict: raise(exception_class("TypeError").get(), "unhashable type: '" + type_name(v) + "'");
    case Kind::Instance:
    case Kind::Exception:
    case Kind::NativeData: {
      Class* c = cls_of(v);
      if (Value* m = c->lookup(names_->__hash__)) {
        if (m->is_none()) raise(exception_class("TypeError").get(), "unhashable type: '" + type_name(v) + "'");
        if (!m->is(Kind::Native)) return static_cast<size_t>(to_int_index(bind_call(*this, *m, v), "__hash__"));
      } else if (c->lookup(names_->__eq__)) {
        // Defining __eq__ without __hash__ makes instances unhashable, as in Python.
        raise(exception_class("TypeError").get(), "unhashable type: '" + type_name(v) + "'");
      }
      break;
    }
    default: break;
  }
  return std::hash<const void*>()(o);
}

static bool is_number(const Value& v) { return v.is_int() || v.is_float() || v.is_bool(); }
static double num(const Value& v) {
  return v.is_float() ? v.as_float() : v.is_int() ? static_cast<double>(v.as_int()) : (v.as_bool() ? 1.0 : 0.0);
}
static int64_t ival(const Value& v) { return v.is_int() ? v.as_int() : (v.as_bool() ? 1 : 0); }

bool Interp::eq(const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) {
    if (a.is_float() || b.is_float()) return num(a) == num(b);
    return ival(a) == ival(b);
  }
  if (a.is_none() || b.is_none()) return a.is_none() && b.is_none();
  if (!a.is_obj() || !b.is_obj()) {
    if (Value* m = user_method(*this, a, names_->__eq__)) {
      Value r = call2(*m, a, b);
      if (!r.identical(not_implemented)) return truthy(r);
    }
    if (Value* m = user_method(*this, b, names_->__eq__)) {
      Value r = call2(*m, b, a);
      if (!r.identical(not_implemented)) return truthy(r);
    }
    return false;
  }
  if (a.obj() == b.obj() && !a.is(Kind::Instance)) return true;
  Kind ka = a.obj()->kind, kb = b.obj()->kind;
  if (ka == kb) {
    switch (ka) {
      case Kind::Str: return a.as<Str>()->s == b.as<Str>()->s;
      case Kind::Tuple:
      case Kind::List: {
        check_stack();
        auto& x = ka == Kind::Tuple ? a.as<Tuple>()->items : a.as<List>()->items;
        auto& y = ka == Kind::Tuple ? b.as<Tuple>()->items : b.as<List>()->items;
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i)
          if (!x[i].identical(y[i]) && !eq(x[i], y[i])) return false;
        return true;
      }
      case Kind::Dict: {
        check_stack();
        auto& x = a.as<Dict>()->map;
        auto& y = b.as<Dict>()->map;
        if (x.size() != y.size()) return false;
        for (auto& e : x.entries()) {
          if (e.value.is_undef()) continue;
          Value* other = y.find(*this, e.key);
          if (!other || !eq(e.value, *other)) return false;
        }
        return true;
      }
      case Kind::Set: {
        auto& x = a.as<Set>()->map;
        auto& y = b.as<Set>()->map;
        if (x.size() != y.size()) return false;
        for (auto& e : x.entries())
          if (!e.value.is_undef() && !y.find(*this, e.key)) return false;
        return true;
      }
      case Kind::Range: {
        Range* x = a.as<Range>();
        Range* y = b.as<Range>();
        int64_t n = x->length();
        if (n != y->length()) return false;
        if (n == 0) return true;
        if (x->start != y->start) return false;
        return n == 1 || x->step == y->step;
      }
      case Kind::BoundMethod:
        return a.as<BoundMethod>()->self.identical(b.as<BoundMethod>()->self) &&
               a.as<BoundMethod>()->func.identical(b.as<BoundMethod>()->func);
      default: break;
    }
  }
  if (Value* m = user_method(*this, a, names_->__eq__)) {
    Value r = call2(*m, a, b);
    if (!r.identical(not_implemented)) return truthy(r);
  }
  if (Value* m = user_method(*this, b, names_->__eq__)) {
    Value r = call2(*m, b, a);
    if (!r.identical(not_implemented)) return truthy(r);
  }
  return a.obj() == b.obj();
}

// -------------------------------------------------------------- arithmetic

// The dunder methods of a binary operator (plain, reflected, in-place), taken
// from the pre-interned names: nothing is built or interned per operation.
struct BinOpNames {
  Str* plain;
  Str* reflected;
  Str* inplace;
};
static BinOpNames binop_names(const Interp::Names& n, BinOp op) {
  switch (op) {
    case BinOp::Add: return {n.__add__, n.__radd__, n.__iadd__};
    case BinOp::Sub: return {n.__sub__, n.__rsub__, n.__isub__};
    case BinOp::Mul: return {n.__mul__, n.__rmul__, n.__imul__};
    case BinOp::MatMul: return {n.__matmul__, n.__rmatmul__, n.__imatmul__};
    case BinOp::Div: return {n.__truediv__, n.__rtruediv__, n.__itruediv__};
    case BinOp::FloorDiv: return {n.__floordiv__, n.__rfloordiv__, n.__ifloordiv__};
    case BinOp::Mod: return {n.__mod__, n.__rmod__, n.__imod__};
    case BinOp::Pow: return {n.__pow__, n.__rpow__, n.__ipow__};
    case BinOp::LShift: return {n.__lshift__, n.__rlshift__, n.__ilshift__};
    case BinOp::RShift: return {n.__rshift__, n.__rrshift__, n.__irshift__};
    case BinOp::BitOr: return {n.__or__, n.__ror__, n.__ior__};
    case BinOp::BitXor: return {n.__xor__, n.__rxor__, n.__ixor__};
    case BinOp::BitAnd: return {n.__and__, n.__rand__, n.__iand__};
  }
  return {n.__add__, n.__radd__, n.__iadd__};
}


static py::Number number_of(const Value& v) {
  if (v.is_float()) return v.as_float();
  if (v.is_bool()) return v.as_bool();
  return v.as_int();
}

static Value value_of(const py::Number& n) {
  if (auto i = std::get_if<int64_t>(&n)) return Value::integer(*i);
  if (auto b = std::get_if<bool>(&n)) return Value::boolean(*b);
  return Value::number(std::get<double>(n));
}

// The result of Python arithmetic (lang/python_number.h) as a value, or its
// error raised; Undef for an operation numbers do not have (@).
static Value arith_value(Interp& I, const py::ArithResult& r) {
  switch (r.error) {
    case py::ArithError::None: return value_of(r.value);
    case py::ArithError::ZeroDivision: I.raise(I.exception_class("ZeroDivisionError").get(), r.message);
    case py::ArithError::Overflow: I.raise(I.exception_class("OverflowError").get(), r.message);
    case py::ArithError::Domain: I.raise(I.exception_class("ValueError").get(), r.message);
    case py::ArithError::Unsupported: break;
  }
  return Value::undef();
}

// Arithmetic on two numbers (int, bool or float). Returns Undef for unsupported ops.
static Value numeric(Interp& I, BinOp op, const Value& a, const Value& b) {
  return arith_value(I, py::binary(op, number_of(a), number_of(b)));
}

static Value repeat_seq(Interp& I, const Value& seq, int64_t n) {
  if (n < 0) n = 0;
  if (seq.is(Kind::Str)) {
    const std::string& s = seq.as<Str>()->s;
    if (!s.empty() && static_cast<uint64_t>(n) > I.options().max_sequence * 4 / s.size())
      I.raise(I.exception_class("MemoryError").get(), "repeated string is too long");
    std::string out;
    out.reserve(s.size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += s;
    return I.str(std::move(out));
  }
  auto& items = seq.is(Kind::List) ? seq.as<List>()->items : seq.as<Tuple>()->items;
  if (!items.empty() && static_cast<uint64_t>(n) > I.options().max_sequence / items.size())
    I.raise(I.exception_class("MemoryError").get(), "repeated sequence is too long");
  std::vector<Value> out;
  out.reserve(items.size() * static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
  if (seq.is(Kind::List)) return make<List>(std::move(out)).value();
  return make<Tuple>(std::move(out)).value();
}

// Set operators are the set methods (interp/builtins/dict_methods.cpp) applied to two
// sets: `a | b` is a.union(b), `a |= b` is a.update(b), and so on.
static Value set_op(Interp& I, BinOp op, const Value& a, const Value& b, bool in_place) {
  const char* name = nullptr;
  switch (op) {
    case BinOp::BitOr: name = in_place ? "update" : "union"; break;
    case BinOp::BitAnd: name = in_place ? "intersection_update" : "intersection"; break;
    case BinOp::Sub: name = in_place ? "difference_update" : "difference"; break;
    case BinOp::BitXor: name = in_place ? "symmetric_difference_update" : "symmetric_difference"; break;
    default: return Value::undef();
  }
  Value arg = b;
  Value r = I.call_method(a, I.intern(name), std::span<Value>(&arg, 1));
  return in_place ? a : r;
}

static Value builtin_binary(Interp& I, BinOp op, const Value& a, const Value& b) {
  if (is_number(a) && is_number(b)) return numeric(I, op, a, b);
  if (!a.is_obj() && !b.is_obj()) return Value::undef();
  Kind ka = a.is_obj() ? a.obj()->kind : Kind::Instance;
  Kind kb = b.is_obj() ? b.obj()->kind : Kind::Instance;
  switch (op) {
    case BinOp::Add:
      if (ka == Kind::Str && kb == Kind::Str) return I.str(a.as<Str>()->s + b.as<Str>()->s);
      if (ka == Kind::List && kb == Kind::List) {
        auto l = make<List>(a.as<List>()->items);
        l->items.insert(l->items.end(), b.as<List>()->items.begin(), b.as<List>()->items.end());
        return l.value();
      }
      if (ka == Kind::Tuple && kb == Kind::Tuple) {
        auto t = make<Tuple>(a.as<Tuple>()->items);
        t->items.insert(t->items.end(), b.as<Tuple>()->items.begin(), b.as<Tuple>()->items.end());
        return t.value();
      }
      break;
    case BinOp::Mul:
      if ((ka == Kind::Str || ka == Kind::List || ka == Kind::Tuple) && (b.is_int() || b.is_bool()))
        return repeat_seq(I, a, ival(b));
      if ((kb == Kind::Str || kb == Kind::List || kb == Kind::Tuple) && (a.is_int() || a.is_bool()))
        return repeat_seq(I, b, ival(a));
      break;
    case BinOp::Mod:
      if (ka == Kind::Str) return I.str(percent_format(I, a.as<Str>()->s, b));
      break;
    case BinOp::BitOr:
    case BinOp::BitAnd:
    case BinOp::Sub:
    case BinOp::BitXor:
      if (ka == Kind::Set && kb == Kind::Set) return set_op(I, op, a, b, false);
      if (op == BinOp::BitOr && ka == Kind::Dict && kb == Kind::Dict) {
        auto d = make<Dict>();
        for (auto* src : {a.as<Dict>(), b.as<Dict>()})
          for (auto& e : src->map.entries())
            if (!e.value.is_undef()) d->map.set(I, e.key, e.value);
        return d.value();
      }
      break;
    default: break;
  }
  return Value::undef();
}

[[noreturn]] static void unsupported(Interp& I, BinOp op, const Value& a, const Value& b) {
  std::string ta = I.type_name(a), tb = I.type_name(b);
  if (op == BinOp::Add && (a.is(Kind::Str) || a.is(Kind::List) || a.is(Kind::Tuple)))
    I.raise(I.exception_class("TypeError").get(),
            fmt::format("can only concatenate {} (not \"{}\") to {}", ta, tb, ta));
  if (op == BinOp::Mul && (a.is(Kind::Str) || a.is(Kind::List) || a.is(Kind::Tuple)))
    I.raise(I.exception_class("TypeError").get(), fmt::format("can't multiply sequence by non-int of type '{}'", tb));
  if (op == BinOp::Mul && (b.is(Kind::Str) || b.is(Kind::List) || b.is(Kind::Tuple)))
    I.raise(I.exception_class("TypeError").get(), fmt::format("can't multiply sequence by non-int of type '{}'", ta));
  const char* sym = op == BinOp::Pow ? "** or pow()" : ast::to_string(op);
  I.raise(I.exception_class("TypeError").get(),
          fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", sym, ta, tb));
}

Value Interp::binary(BinOp op, const Value& a, const Value& b) {
  // Tensor fast path: straight to the tensor operator, no dunder lookup.
  if (is_tensor(a) || is_tensor(b)) {
    Value t = tensor_binary(*this, op, a, b);
    if (!t.is_undef()) return t;
  }
  Value r = builtin_binary(*this, op, a, b);
  if (!r.is_undef()) return r;
  BinOpNames names = binop_names(*names_, op);
  Value* m = user_method(*this, a, names.plain);
  if (m) {
    r = call2(*m, a, b);
    if (!r.identical(not_implemented)) return r;
  }
  Value* rm = user_method(*this, b, names.reflected);
  if (rm) {
    r = call2(*rm, b, a);
    if (!r.identical(not_implemented)) return r;
  }
  unsupported(*this, op, a, b);
}

Value Interp::inplace(BinOp op, const Value& a, const Value& b) {
  if (is_tensor(a)) return binary(op, a, b);  // tensors rebind: `x += y` is `x = x + y`
  if (a.is(Kind::List) && op == BinOp::Add) {
    // `lst += iterable` extends in place (the list may alias other names).
    std::vector<Value> items = to_vector(b);
    auto& dst = a.as<List>()->items;
    dst.insert(dst.end(), items.begin(), items.end());
    return a;
  }
  if (a.is(Kind::List) && op == BinOp::Mul && (b.is_int() || b.is_bool())) {
    Value r = repeat_seq(*this, a, ival(b));
    a.as<List>()->items = std::move(r.as<List>()->items);
    return a;
  }
  if (a.is(Kind::Set) && !a.as<Set>()->frozen && b.is(Kind::Set) &&
      (op == BinOp::BitOr || op == BinOp::BitAnd || op == BinOp::Sub || op == BinOp::BitXor))
    return set_op(*this, op, a, b, true);
  if (Value* m = user_method(*this, a, binop_names(*names_, op).inplace)) {
    Value r = call2(*m, a, b);
    if (!r.identical(not_implemented)) return r;
  }
  return binary(op, a, b);
}

Value Interp::unary(ast::UnaryOp op, const Value& v) {
  if (is_tensor(v)) return tensor_unary(*this, op, v);  // tensor fast path
  switch (op) {
    case ast::UnaryOp::Not: return Value::boolean(!truthy(v));
    case ast::UnaryOp::Neg:
      if (v.is_int() || v.is_bool() || v.is_float()) return arith_value(*this, py::negate(number_of(v)));
      if (Value* m = user_method(*this, v, names_->__neg__)) return bind_call(*this, *m, v);
      break;
    case ast::UnaryOp::Pos:
      if (v.is_int() || v.is_bool()) return Value::integer(ival(v));
      if (v.is_float()) return v;
      if (Value* m = user_method(*this, v, names_->__pos__)) return bind_call(*this, *m, v);
      break;
    case ast::UnaryOp::Invert:
      if (v.is_int() || v.is_bool()) return Value::integer(~ival(v));
      if (Value* m = user_method(*this, v, names_->__invert__)) return bind_call(*this, *m, v);
      break;
  }
  raise(exception_class("TypeError").get(),
        fmt::format("bad operand type for unary {}: '{}'", ast::to_string(op), type_name(v)));
}

// -------------------------------------------------------------- comparison

// Three-way comparison of builtin values; returns false in `ok` when the
// types are not ordered against each other.
static int cmp3(Interp& I, const Value& a, const Value& b, bool& ok) {
  ok = true;
  // Callers treat NaN as unordered (ok false): every comparison false.
  if (is_number(a) && is_number(b)) return py::compare(number_of(a), number_of(b), ok);
  if (a.is(Kind::Str) && b.is(Kind::Str)) {
    int c = a.as<Str>()->s.compare(b.as<Str>()->s);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if ((a.is(Kind::List) && b.is(Kind::List)) || (a.is(Kind::Tuple) && b.is(Kind::Tuple))) {
    I.check_stack();
    auto& x = a.is(Kind::List) ? a.as<List>()->items : a.as<Tuple>()->items;
    auto& y = b.is(Kind::List) ? b.as<List>()->items : b.as<Tuple>()->items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (x[i].identical(y[i]) || I.eq(x[i], y[i])) continue;
      return I.less(x[i], y[i]) ? -1 : 1;
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  ok = false;
  return 0;
}

static Str* cmp_dunder(const Interp::Names& n, CmpOp op, bool reflected) {
  switch (op) {
    case CmpOp::Lt: return reflected ? n.__gt__ : n.__lt__;
    case CmpOp::Le: return reflected ? n.__ge__ : n.__le__;
    case CmpOp::Gt: return reflected ? n.__lt__ : n.__gt__;
    default: return reflected ? n.__le__ : n.__ge__;
  }
}

static bool is_nan_pair(const Value& a, const Value& b) {
  return is_number(a) && is_number(b) && (std::isnan(num(a)) || std::isnan(num(b)));
}

Value Interp::compare(CmpOp op, const Value& a, const Value& b) {
  // Tensor fast path for the six elementwise comparisons.
  if (op <= CmpOp::Ne && (is_tensor(a) || is_tensor(b))) {
    Value t = tensor_compare(*this, op, a, b);
    if (!t.is_undef()) return t;
  }
  switch (op) {
    case CmpOp::Eq:
    case CmpOp::Ne: {
      if (Value* m = user_method(*this, a, op == CmpOp::Eq ? names_->__eq__ : names_->__ne__)) {
        Value r = call2(*m, a, b);
        if (!r.identical(not_implemented)) return r;
      }
      bool e = eq(a, b);
      return Value::boolean(op == CmpOp::Eq ? e : !e);
    }
    case CmpOp::Is: return Value::boolean(a.identical(b));
    case CmpOp::IsNot: return Value::boolean(!a.identical(b));
    case CmpOp::In: return Value::boolean(contains(b, a));
    case CmpOp::NotIn: return Value::boolean(!contains(b, a));
    default: break;
  }
  if (a.is(Kind::Set) && b.is(Kind::Set)) {
    auto subset = [&](const Value& x, const Value& y) {
      for (auto& e : x.as<Set>()->map.entries())
        if (!e.value.is_undef() && !y.as<Set>()->map.find(*this, e.key)) return false;
      return true;
    };
    size_t na = a.as<Set>()->map.size(), nb = b.as<Set>()->map.size();
    switch (op) {
      case CmpOp::Le: return Value::boolean(subset(a, b));
      case CmpOp::Lt: return Value::boolean(na < nb && subset(a, b));
      case CmpOp::Ge: return Value::boolean(subset(b, a));
      case CmpOp::Gt: return Value::boolean(na > nb && subset(b, a));
      default: break;
    }
  }
  bool ok;
  int c = cmp3(*this, a, b, ok);
  if (ok) {
    switch (op) {
      case CmpOp::Lt: return Value::boolean(c < 0);
      case CmpOp::Le: return Value::boolean(c <= 0);
      case CmpOp::Gt: return Value::boolean(c > 0);
      case CmpOp::Ge: return Value::boolean(c >= 0);
      default: break;
    }
  }
  if (is_nan_pair(a, b)) return Value::boolean(false);
  if (Value* m = user_method(*this, a, cmp_dunder(*names_, op, false))) {
    Value r = call2(*m, a, b);
    if (!r.identical(not_implemented)) return r;
  }
  if (Value* m = user_method(*this, b, cmp_dunder(*names_, op, true))) {
    Value r = call2(*m, b, a);
    if (!r.identical(not_implemented)) return r;
  }
  raise(exception_class("TypeError").get(), fmt::format("'{}' not supported between instances of '{}' and '{}'",
                                                        ast::to_string(op), type_name(a), type_name(b)));
}

bool Interp::less(const Value& a, const Value& b) {
  if (a.is_int() && b.is_int()) return a.as_int() < b.as_int();
  bool ok;
  int c = cmp3(*this, a, b, ok);
  if (ok) return c < 0;
  return truthy(compare(CmpOp::Lt, a, b));
}

bool Interp::contains(const Value& container, const Value& item) {
  if (container.is_obj()) {
    switch (container.obj()->kind) {
      case Kind::Str: {
        if (!item.is(Kind::Str))
          raise(exception_class("TypeError").get(), "'in <string>' requires string as left operand, not " + type_name(item));
        return container.as<Str>()->s.find(item.as<Str>()->s) != std::string::npos;
      }
      case Kind::List:
      case Kind::Tuple: {
        auto& items = container.is(Kind::List) ? container.as<List>()->items : container.as<Tuple>()->items;
        for (size_t i = 0; i < items.size(); ++i)
          if (items[i].identical(item) || eq(items[i], item)) return true;
        return false;
      }
      case Kind::Dict: return container.as<Dict>()->map.find(*this, item) != nullptr;
      case Kind::Set: return container.as<Set>()->map.find(*this, item) != nullptr;
      case Kind::Range: {
        if (!item.is_int() && !item.is_bool()) break;
        Range* r = container.as<Range>();
        int64_t x = ival(item);
        if (r->step > 0 ? (x < r->start || x >= r->stop) : (x > r->start || x <= r->stop)) return false;
        return (x - r->start) % r->step == 0;
      }
      default:
        if (Value* m = user_method(*this, container, names_->__contains__)) return truthy(call2(*m, container, item));
        break;
    }
  }
  if (!container.is_obj() || (!container.is(Kind::Instance) && !container.is(Kind::Iterator) &&
                              !container.is(Kind::NativeData) && !container.is(Kind::Range)))
    raise(exception_class("TypeError").get(), "argument of type '" + type_name(container) + "' is not iterable");
  Value it = iter(container);
  Value x;
  while (next(it, x))
    if (x.identical(item) || eq(x, item)) return true;
  return false;
}

}  // namespace msl
