// Expression nodes: variables, displays, attribute/subscript access, calls,
// operators and function creation. Hot paths (int/float arithmetic, calls of
// plain MSL functions, method calls) are handled inline; the rest defers to
// the generic protocols in ops.cpp.
#include <cmath>

#include "interp/builtins/format.h"
#include "interp/core/node_factory.h"

namespace msl {

void ExprNode::store(Frame& f, Value) { f.I.raise(f.I.exception_class("SyntaxError").get(), "cannot assign to expression"); }
void ExprNode::del(Frame& f) { f.I.raise(f.I.exception_class("SyntaxError").get(), "cannot delete expression"); }
void ExprNode::aug(Frame& f, ast::BinOp op, ExprNode* value) {
  Value cur = eval(f);
  Value rhs = value->eval(f);
  if (cur.is_int() && rhs.is_int()) {
    int64_t z;
    bool ok = false;
    switch (op) {
      case ast::BinOp::Add: ok = !__builtin_add_overflow(cur.as_int(), rhs.as_int(), &z); break;
      case ast::BinOp::Sub: ok = !__builtin_sub_overflow(cur.as_int(), rhs.as_int(), &z); break;
      case ast::BinOp::Mul: ok = !__builtin_mul_overflow(cur.as_int(), rhs.as_int(), &z); break;
      default: break;
    }
    if (ok) {
      store(f, Value::integer(z));
      return;
    }
  } else if (cur.is_float() && rhs.is_float() && op == ast::BinOp::Add) {
    store(f, Value::number(cur.as_float() + rhs.as_float()));
    return;
  }
  store(f, f.I.inplace(op, cur, rhs));
}

namespace nodes {
namespace {

[[noreturn]] void name_error(Frame& f, Str* name) {
  f.I.raise_missing(f.I.exception_class("NameError").get(), "name '" + name->s + "' is not defined", name,
                    f.module ? Value::object(f.module) : Value());
}
[[noreturn]] void unbound_local(Interp& I, Str* name) {
  I.raise(I.exception_class("UnboundLocalError").get(),
          "cannot access local variable '" + name->s + "' where it is not associated with a value");
}
[[noreturn]] void unbound_free(Interp& I, Str* name) {
  I.raise(I.exception_class("NameError").get(),
          "cannot access free variable '" + name->s + "' where it is not associated with a value in enclosing scope");
}

// ------------------------------------------------------------------ names

// `var += string` where `var` holds the only reference to a string: append
// in place instead of copying (CPython does the same). Returns false when the
// fast path does not apply and nothing was evaluated.
bool append_in_place(Frame& f, Value& var, ast::BinOp op, ExprNode* value, ExprNode* target) {
  if (op != ast::BinOp::Add || !var.is(Kind::Str) || var.obj()->refcount != 1 || var.as<Str>()->interned) return false;
  Value rhs = value->eval(f);
  // Re-check: evaluating the right side may have aliased or rebound the variable.
  if (rhs.is(Kind::Str) && var.is(Kind::Str) && var.obj()->refcount == 1) {
    var.as<Str>()->append(rhs.as<Str>()->s);
  } else {
    target->store(f, f.I.inplace(op, target->eval(f), rhs));
  }
  return true;
}

struct Const final : ExprNode {
  Value v;
  Value eval(Frame&) override { return v; }
};

struct Local final : ExprNode {
  uint32_t slot;
  Ref<Str> name;
  Value eval(Frame& f) override {
    Value& v = f.slots[slot];
    if (v.is_undef()) {
      try {
        unbound_local(f.I, name.get());
      } catch (MslError& e) {
        locate(e, span);
        throw;
      }
    }
    return v;
  }
  const Value* peek(Frame& f) override {
    const Value& v = f.slots[slot];
    return v.is_undef() ? nullptr : &v;
  }
  void store(Frame& f, Value v) override { f.slots[slot] = std::move(v); }
  void aug(Frame& f, ast::BinOp op, ExprNode* value) override {
    if (!append_in_place(f, f.slots[slot], op, value, this)) ExprNode::aug(f, op, value);
  }
  void del(Frame& f) override {
    if (f.slots[slot].is_undef()) eval(f);
    f.slots[slot] = Value::undef();
  }
};

struct LocalCell final : ExprNode {
  uint32_t slot;
  Ref<Str> name;
  Cell* cell(Frame& f) { return f.slots[slot].as<Cell>(); }
  Value eval(Frame& f) override {
    Value& v = cell(f)->value;
    if (v.is_undef()) {
      try {
        unbound_local(f.I, name.get());
      } catch (MslError& e) {
        locate(e, span);
        throw;
      }
    }
    return v;
  }
  void store(Frame& f, Value v) override { cell(f)->value = std::move(v); }
  void del(Frame& f) override {
    eval(f);
    cell(f)->value = Value::undef();
  }
};

struct FreeVar final : ExprNode {
  uint32_t index;
  Ref<Str> name;
  Cell* cell(Frame& f) { return f.func->closure[index].get(); }
  Value eval(Frame& f) override {
    Value& v = cell(f)->value;
    if (v.is_undef()) {
      try {
        unbound_free(f.I, name.get());
      } catch (MslError& e) {
        locate(e, span);
        throw;
      }
    }
    return v;
  }
  void store(Frame& f, Value v) override { cell(f)->value = std::move(v); }
  void del(Frame& f) override {
    eval(f);
    cell(f)->value = Value::undef();
  }
};

struct Global final : ExprNode {
  GlobalSlot* slot;
  GlobalSlot* builtin;  // may be null
  Value eval(Frame& f) override {
    if (!slot->value.is_undef()) return slot->value;
    if (builtin && !builtin->value.is_undef()) return builtin->value;
    try {
      name_error(f, slot->name.get());
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
  void store(Frame&, Value v) override { slot->value = std::move(v); }
  void aug(Frame& f, ast::BinOp op, ExprNode* value) override {
    if (!append_in_place(f, slot->value, op, value, this)) ExprNode::aug(f, op, value);
  }
  void del(Frame& f) override {
    if (slot->value.is_undef()) {
      try {
        name_error(f, slot->name.get());
      } catch (MslError& e) {
        locate(e, span);
        throw;
      }
    }
    slot->value = Value::undef();
  }
};

struct ClassName final : ExprNode {
  Ref<Str> name;
  ExprNodePtr fallback;
  Value eval(Frame& f) override {
    if (Value* v = f.class_ns->dict.find(name.get())) return *v;
    return fallback->eval(f);
  }
  void store(Frame& f, Value v) override { f.class_ns->dict.set(name.get(), std::move(v)); }
  void del(Frame& f) override {
    if (!f.class_ns->dict.erase(name.get())) {
      try {
        name_error(f, name.get());
      } catch (MslError& e) {
        locate(e, span);
        throw;
      }
    }
  }
};

// --------------------------------------------------------------- displays

// Evaluates elements into `out`, expanding *starred ones.
void eval_elements(Frame& f, std::vector<ExprNodePtr>& elts, std::vector<Value>& out);

struct StarredNode final : ExprNode {
  ExprNodePtr value;
  Value eval(Frame& f) override {
    f.I.raise(f.I.exception_class("SyntaxError").get(), "can't use starred expression here");
  }
};

void eval_elements(Frame& f, std::vector<ExprNodePtr>& elts, std::vector<Value>& out) {
  out.reserve(elts.size());
  for (auto& e : elts) {
    if (auto* st = dynamic_cast<StarredNode*>(e.get())) {
      Value seq = st->value->eval(f);
      try {
        for (Value& v : f.I.to_vector(seq)) out.push_back(std::move(v));
      } catch (MslError& err) {
        locate(err, st->span);
        throw;
      }
    } else {
      out.push_back(e->eval(f));
    }
  }
}

// Destructuring assignment into a tuple/list of targets (with at most one *star).
void unpack_store(Frame& f, std::vector<ExprNodePtr>& targets, const Value& v, const Span& span) {
  Interp& I = f.I;
  std::vector<Value> items;
  try {
    if (v.is(Kind::Tuple)) items = v.as<Tuple>()->items;
    else if (v.is(Kind::List)) items = v.as<List>()->items;
    else items = I.to_vector(v);
  } catch (MslError& e) {
    if (I.isinstance(e.exc, I.exception_class("TypeError").get()))
      e = MslError{I.new_exception(I.exception_class("TypeError").get(),
                                   "cannot unpack non-iterable " + I.type_name(v) + " object")};
    locate(e, span);
    throw e;
  }
  int star = -1;
  for (size_t i = 0; i < targets.size(); ++i)
    if (dynamic_cast<StarredNode*>(targets[i].get())) star = static_cast<int>(i);
  size_t n = targets.size();
  try {
    if (star < 0) {
      if (items.size() > n)
        I.raise(I.exception_class("ValueError").get(), "too many values to unpack (expected " + std::to_string(n) + ")");
      if (items.size() < n)
        I.raise(I.exception_class("ValueError").get(), "not enough values to unpack (expected " + std::to_string(n) +
                                                            ", got " + std::to_string(items.size()) + ")");
    } else if (items.size() < n - 1) {
      I.raise(I.exception_class("ValueError").get(), "not enough values to unpack (expected at least " +
                                                          std::to_string(n - 1) + ", got " + std::to_string(items.size()) + ")");
    }
  } catch (MslError& e) {
    locate(e, span);
    throw;
  }
  if (star < 0) {
    for (size_t i = 0; i < n; ++i) targets[i]->store(f, std::move(items[i]));
    return;
  }
  size_t s = static_cast<size_t>(star);
  size_t after = n - s - 1;
  for (size_t i = 0; i < s; ++i) targets[i]->store(f, std::move(items[i]));
  auto rest = make<List>();
  for (size_t i = s; i < items.size() - after; ++i) rest->items.push_back(std::move(items[i]));
  static_cast<StarredNode*>(targets[s].get())->value->store(f, rest.value());
  for (size_t i = 0; i < after; ++i) targets[s + 1 + i]->store(f, std::move(items[items.size() - after + i]));
}

struct TupleNode final : ExprNode {
  std::vector<ExprNodePtr> elts;
  Value eval(Frame& f) override {
    auto t = make<Tuple>();
    eval_elements(f, elts, t->items);
    return t.value();
  }
  void store(Frame& f, Value v) override { unpack_store(f, elts, v, span); }
  void del(Frame& f) override {
    for (auto& e : elts) e->del(f);
  }
};

struct ListNode final : ExprNode {
  std::vector<ExprNodePtr> elts;
  Value eval(Frame& f) override {
    auto l = make<List>();
    eval_elements(f, elts, l->items);
    return l.value();
  }
  void store(Frame& f, Value v) override { unpack_store(f, elts, v, span); }
  void del(Frame& f) override {
    for (auto& e : elts) e->del(f);
  }
};

// A list or tuple display whose elements are all constants: the values
// themselves (16 bytes an element, where a node per element takes 56), so
// a literal of a million numbers compiles into one node.
struct ConstDisplayNode final : ExprNode {
  bool is_list = true;
  std::vector<Value> items;
  Value eval(Frame&) override {
    if (is_list) {
      auto l = make<List>();
      l->items = items;
      return l.value();
    }
    auto t = make<Tuple>();
    t->items = items;
    return t.value();
  }
};

struct SetNode final : ExprNode {
  std::vector<ExprNodePtr> elts;
  Value eval(Frame& f) override {
    std::vector<Value> items;
    eval_elements(f, elts, items);
    auto s = make<Set>();
    try {
      for (auto& v : items) s->map.set(f.I, v, Value());
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
    return s.value();
  }
};

struct DictNode final : ExprNode {
  std::vector<ExprNodePtr> keys, values;
  Value eval(Frame& f) override {
    auto d = make<Dict>();
    Interp& I = f.I;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!keys[i]) {
        Value m = values[i]->eval(f);
        try {
          if (!m.is(Kind::Dict)) I.raise(I.exception_class("TypeError").get(), "'" + I.type_name(m) + "' object is not a mapping");
          for (auto& e : m.as<Dict>()->map.entries())
            if (!e.value.is_undef()) d->map.set(I, e.key, e.value);
        } catch (MslError& e) {
          locate(e, values[i]->span);
          throw;
        }
        continue;
      }
      Value k = keys[i]->eval(f);
      Value v = values[i]->eval(f);
      try {
        d->map.set(I, k, std::move(v));
      } catch (MslError& e) {
        locate(e, keys[i]->span);
        throw;
      }
    }
    return d.value();
  }
};

struct Comprehension final : ExprNode {
  CompKind kind;
  ExprNodePtr elt, value;
  std::vector<CompClause> clauses;

  void run(Frame& f, size_t level, std::vector<Value>* list, Set* set, Dict* dict) {
    CompClause& c = clauses[level];
    Value iterable = c.iter->eval(f);
    Value it;
    try {
      it = f.I.iter(iterable);
    } catch (MslError& e) {
      locate(e, c.iter->span);
      throw;
    }
    Value item;
    while (true) {
      f.I.poll();
      try {
        if (!f.I.next(it, item)) break;
      } catch (MslError& e) {
        locate(e, c.iter->span);
        throw;
      }
      c.target->store(f, std::move(item));
      bool ok = true;
      for (auto& cond : c.ifs) {
        if (!truth(f.I, cond->eval(f), cond->span)) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      if (level + 1 < clauses.size()) {
        run(f, level + 1, list, set, dict);
      } else if (dict) {
        Value k = elt->eval(f);
        Value v = value->eval(f);
        try {
          dict->map.set(f.I, k, std::move(v));
        } catch (MslError& e) {
          locate(e, elt->span);
          throw;
        }
      } else if (set) {
        Value v = elt->eval(f);
        try {
          set->map.set(f.I, v, Value());
        } catch (MslError& e) {
          locate(e, elt->span);
          throw;
        }
      } else {
        list->push_back(elt->eval(f));
      }
    }
  }

  Value eval(Frame& f) override {
    switch (kind) {
      case CompKind::List: {
        auto l = make<List>();
        run(f, 0, &l->items, nullptr, nullptr);
        return l.value();
      }
      case CompKind::Generator: {
        // Generator expressions are evaluated eagerly; iterating the result
        // yields the same items in the same order.
        auto l = make<List>();
        run(f, 0, &l->items, nullptr, nullptr);
        return f.I.iter(l.value());
      }
      case CompKind::Set: {
        auto s = make<Set>();
        run(f, 0, nullptr, s.get(), nullptr);
        return s.value();
      }
      case CompKind::Dict: {
        auto d = make<Dict>();
        run(f, 0, nullptr, nullptr, d.get());
        return d.value();
      }
    }
    return Value();
  }
};

// ------------------------------------------------------ attribute, subscript

struct AttributeNode final : ExprNode {
  ExprNodePtr obj;
  Ref<Str> name;
  Value eval(Frame& f) override {
    Value tmp;
    const Value* op = obj->peek(f);
    if (!op) {
      tmp = obj->eval(f);
      op = &tmp;
    }
    const Value& o = *op;
    if (o.is(Kind::Instance)) {
      // Instance attributes are the common case: read them here, without the
      // call into Interp::getattr (which repeats this check for other callers);
      // measurably faster on method-heavy code (tests/bench/interp/methods.msl).
      Instance* inst = o.as<Instance>();
      if (!f.I.traits(inst->cls.get()).has_property)
        if (Value* v = inst->attrs.find(name.get())) return *v;
    }
    try {
      return f.I.getattr(o, name.get());
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
  void store(Frame& f, Value v) override {
    Value o = obj->eval(f);
    try {
      f.I.setattr(o, name.get(), std::move(v));
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
  void del(Frame& f) override {
    Value o = obj->eval(f);
    try {
      f.I.delattr(o, name.get());
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
  void aug(Frame& f, ast::BinOp op, ExprNode* value) override {
    Value o = obj->eval(f);
    try {
      Value cur = f.I.getattr(o, name.get());
      Value rhs = value->eval(f);
      f.I.setattr(o, name.get(), f.I.inplace(op, cur, rhs));
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
};

struct SubscriptNode final : ExprNode {
  ExprNodePtr obj, index;
  Value eval(Frame& f) override {
    Value o = obj->eval(f);
    Value k = index->eval(f);
    if (o.is(Kind::List) && k.is_int()) {
      auto& items = o.as<List>()->items;
      int64_t i = k.as_int();
      int64_t n = static_cast<int64_t>(items.size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return items[static_cast<size_t>(i)];
    }
    try {
      return f.I.getitem(o, k);
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
  void store(Frame& f, Value v) override {
    Value o = obj->eval(f);
    Value k = index->eval(f);
    try {
      f.I.setitem(o, k, std::move(v));
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
  void del(Frame& f) override {
    Value o = obj->eval(f);
    Value k = index->eval(f);
    try {
      f.I.delitem(o, k);
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
  void aug(Frame& f, ast::BinOp op, ExprNode* value) override {
    Value o = obj->eval(f);
    Value k = index->eval(f);
    try {
      Value cur = f.I.getitem(o, k);
      Value rhs = value->eval(f);
      f.I.setitem(o, k, f.I.inplace(op, cur, rhs));
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
};

struct SliceNode final : ExprNode {
  ExprNodePtr lo, hi, step;
  Value eval(Frame& f) override {
    Value a = lo ? lo->eval(f) : Value();
    Value b = hi ? hi->eval(f) : Value();
    Value c = step ? step->eval(f) : Value();
    return make<Slice>(std::move(a), std::move(b), std::move(c)).value();
  }
};

// ------------------------------------------------------------------- calls

struct CallNode : ExprNode {
  ExprNodePtr func;
  std::vector<CallArg> args;
  bool plain = true;  // only positional, non-starred arguments

  // Evaluates the arguments: positional values into `pos`, keywords into `kw`.
  void eval_args(Frame& f, std::vector<Value>& pos, std::vector<std::pair<Ref<Str>, Value>>& kw) {
    Interp& I = f.I;
    for (auto& a : args) {
      switch (a.kind) {
        case ast::Arg::Kind::Positional:
          pos.push_back(a.value->eval(f));
          break;
        case ast::Arg::Kind::Keyword:
          kw.emplace_back(a.name, a.value->eval(f));
          break;
        case ast::Arg::Kind::Star: {
          Value seq = a.value->eval(f);
          try {
            for (Value& v : I.to_vector(seq)) pos.push_back(std::move(v));
          } catch (MslError& e) {
            if (I.isinstance(e.exc, I.exception_class("TypeError").get()) && !seq.is(Kind::Instance))
              e = MslError{I.new_exception(I.exception_class("TypeError").get(),
                                           "argument after * must be an iterable, not " + I.type_name(seq))};
            locate(e, a.value->span);
            throw e;
          }
          break;
        }
        case ast::Arg::Kind::DoubleStar: {
          Value m = a.value->eval(f);
          try {
            if (!m.is(Kind::Dict))
              I.raise(I.exception_class("TypeError").get(), "argument after ** must be a mapping, not " + I.type_name(m));
            for (auto& e : m.as<Dict>()->map.entries()) {
              if (e.value.is_undef()) continue;
              if (!e.key.is(Kind::Str)) I.raise(I.exception_class("TypeError").get(), "keywords must be strings");
              kw.emplace_back(Ref<Str>(I.intern(e.key.as<Str>()->s)), e.value);
            }
          } catch (MslError& e) {
            locate(e, a.value->span);
            throw;
          }
          break;
        }
      }
    }
  }

  // Calls `fn` with the arguments; `self` (if not undef) is prepended.
  Value invoke(Frame& f, const Value& fn, const Value* self) {
    Interp& I = f.I;
    size_t extra = self ? 1 : 0;
    if (plain) {
      size_t n = args.size() + extra;
      if (fn.is(Kind::Function)) {
        Function* fun = fn.as<Function>();
        FuncCode* code = fun->code.get();
        if (code->simple && code->nposargs == n) {
          // Fast path: evaluate arguments straight into the callee's slots.
          Interp::CallDepthGuard depth(I);
          StackSlots frame(I, code->nslots);
          Value* slots = frame.p;
          if (self) slots[0] = *self;
          for (size_t i = 0; i < args.size(); ++i) slots[i + extra] = args[i].value->eval(f);
          return run_function_body(I, fun, slots);
        }
      }
      StackSlots tmp(I, n);
      if (self) tmp.p[0] = *self;
      for (size_t i = 0; i < args.size(); ++i) tmp.p[i + extra] = args[i].value->eval(f);
      return I.call(fn, std::span<Value>(tmp.p, n));
    }
    std::vector<Value> pos;
    std::vector<std::pair<Ref<Str>, Value>> kw;
    if (self) pos.push_back(*self);
    eval_args(f, pos, kw);
    return I.call(fn, pos, kw);
  }

  Value eval(Frame& f) override {
    Value fn = func->eval(f);
    try {
      return invoke(f, fn, nullptr);
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
};

struct CallMethodNode final : CallNode {
  ExprNodePtr obj;
  Ref<Str> name;
  Value eval(Frame& f) override {
    Interp& I = f.I;
    Value tmp;
    const Value* op = obj->peek(f);
    if (!op) {
      tmp = obj->eval(f);
      op = &tmp;
    }
    const Value& o = *op;
    try {
      // Look the method up on the class without making a bound method, unless
      // the instance itself has an attribute of that name.
      Class* cls = nullptr;
      if (o.is(Kind::Instance) || o.is(Kind::Exception)) {
        Instance* inst = o.as<Instance>();
        if (!inst->attrs.find(name.get())) cls = inst->cls.get();
      } else if (o.is_obj() && (o.obj()->kind == Kind::Str || o.obj()->kind == Kind::List ||
                                o.obj()->kind == Kind::Dict || o.obj()->kind == Kind::Tuple ||
                                o.obj()->kind == Kind::Set || o.obj()->kind == Kind::NativeData)) {
        cls = I.cls_of(o);
      }
      if (cls) {
        if (Value* m = cls->lookup(name.get())) {
          if (m->is(Kind::Function) || m->is(Kind::Native)) {
            Value method = *m;
            return invoke(f, method, &o);
          }
        }
      }
      Value fn = I.getattr(o, name.get());
      return invoke(f, fn, nullptr);
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
};

struct Super0 final : ExprNode {
  ExprNodePtr class_cell, first_arg;
  Value eval(Frame& f) override {
    Interp& I = f.I;
    try {
      Value cls = class_cell->eval(f);
      Value self = first_arg->eval(f);
      if (!cls.is(Kind::Class)) I.raise(I.exception_class("RuntimeError").get(), "super(): __class__ cell not found");
      return make<Super>(Ref<Class>(cls.as<Class>()), self).value();
    } catch (MslError& e) {
      if (I.isinstance(e.exc, I.exception_class("NameError").get()))
        e = MslError{I.new_exception(I.exception_class("RuntimeError").get(), "super(): no arguments")};
      locate(e, span);
      throw e;
    }
  }
};

// --------------------------------------------------------------- operators

struct UnaryNode final : ExprNode {
  ast::UnaryOp op;
  ExprNodePtr x;
  Value eval(Frame& f) override {
    Value v = x->eval(f);
    if (op == ast::UnaryOp::Not) return Value::boolean(!truth(f.I, v, span));
    if (op == ast::UnaryOp::Neg) {
      if (v.is_int() && v.as_int() != INT64_MIN) return Value::integer(-v.as_int());
      if (v.is_float()) return Value::number(-v.as_float());
    }
    try {
      return f.I.unary(op, v);
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
};

struct BinaryNode final : ExprNode {
  ast::BinOp op;
  ExprNodePtr l, r;
  Value eval(Frame& f) override {
    Value a = l->eval(f);
    Value b = r->eval(f);
    if (a.is_int() && b.is_int()) {
      int64_t x = a.as_int(), y = b.as_int(), z;
      switch (op) {
        case ast::BinOp::Add:
          if (!__builtin_add_overflow(x, y, &z)) return Value::integer(z);
          break;
        case ast::BinOp::Sub:
          if (!__builtin_sub_overflow(x, y, &z)) return Value::integer(z);
          break;
        case ast::BinOp::Mul:
          if (!__builtin_mul_overflow(x, y, &z)) return Value::integer(z);
          break;
        case ast::BinOp::Mod:
          if (y > 0 && x >= 0) return Value::integer(x % y);
          break;
        case ast::BinOp::FloorDiv:
          if (y > 0 && x >= 0) return Value::integer(x / y);
          break;
        case ast::BinOp::BitAnd: return Value::integer(x & y);
        case ast::BinOp::BitOr: return Value::integer(x | y);
        case ast::BinOp::BitXor: return Value::integer(x ^ y);
        default: break;
      }
    } else if (a.is_float() && b.is_float()) {
      double x = a.as_float(), y = b.as_float();
      switch (op) {
        case ast::BinOp::Add: return Value::number(x + y);
        case ast::BinOp::Sub: return Value::number(x - y);
        case ast::BinOp::Mul: return Value::number(x * y);
        case ast::BinOp::Div:
          if (y != 0) return Value::number(x / y);
          break;
        default: break;
      }
    }
    try {
      return f.I.binary(op, a, b);
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
};

struct BoolOpNode final : ExprNode {
  ast::BoolOpKind op;
  std::vector<ExprNodePtr> values;
  Value eval(Frame& f) override {
    Value v;
    for (size_t i = 0; i < values.size(); ++i) {
      v = values[i]->eval(f);
      if (i + 1 == values.size()) break;
      bool t = truth(f.I, v, values[i]->span);
      if (op == ast::BoolOpKind::And ? !t : t) break;
    }
    return v;
  }
};

struct CompareNode final : ExprNode {
  ExprNodePtr left;
  std::vector<ast::CmpOp> ops;
  std::vector<ExprNodePtr> comparators;

  static bool fast(ast::CmpOp op, int64_t x, int64_t y) {
    switch (op) {
      case ast::CmpOp::Lt: return x < y;
      case ast::CmpOp::Le: return x <= y;
      case ast::CmpOp::Gt: return x > y;
      case ast::CmpOp::Ge: return x >= y;
      case ast::CmpOp::Eq: return x == y;
      case ast::CmpOp::Ne: return x != y;
      default: return false;
    }
  }

  Value eval(Frame& f) override {
    Value a = left->eval(f);
    Value result;
    for (size_t i = 0; i < ops.size(); ++i) {
      Value b = comparators[i]->eval(f);
      if (a.is_int() && b.is_int() && ops[i] <= ast::CmpOp::Ne) {
        result = Value::boolean(fast(ops[i], a.as_int(), b.as_int()));
      } else {
        try {
          result = f.I.compare(ops[i], a, b);
        } catch (MslError& e) {
          locate(e, span);
          throw;
        }
      }
      if (i + 1 < ops.size()) {
        if (!truth(f.I, result, span)) return result;
        a = std::move(b);
      }
    }
    return result;
  }
};

struct IfExpNode final : ExprNode {
  ExprNodePtr test, body, orelse;
  Value eval(Frame& f) override { return truth(f.I, test->eval(f), test->span) ? body->eval(f) : orelse->eval(f); }
};

// ------------------------------------------------------ functions, classes

std::vector<Ref<Cell>> gather_closure(Frame& f, const std::vector<ClosureSource>& sources) {
  std::vector<Ref<Cell>> cells;
  cells.reserve(sources.size());
  for (const auto& s : sources) {
    if (s.from_free) cells.push_back(f.func->closure[s.index]);
    else cells.push_back(Ref<Cell>(f.slots[s.index].as<Cell>()));
  }
  return cells;
}

struct MakeFunction final : ExprNode {
  std::shared_ptr<FuncCode> code;
  std::vector<ExprNodePtr> defaults, kwdefaults;
  std::vector<ClosureSource> closure;
  Value eval(Frame& f) override {
    Interp& I = f.I;
    auto fn = make<Function>();
    fn->code = code;
    fn->module = Ref<Module>(f.module);
    for (auto& d : defaults) fn->defaults.push_back(d->eval(f));
    for (auto& d : kwdefaults) fn->kwdefaults.push_back(d ? d->eval(f) : Value::undef());
    fn->closure = gather_closure(f, closure);
    fn->name = Ref<Str>(I.intern(code->name));
    fn->qualname = Ref<Str>(I.intern(code->qualname));
    if (code->doc) fn->attrs.set(I.names().__doc__, code->doc.value());
    return fn.value();
  }
};

struct MakeClass final : ExprNode {
  Ref<Str> name;
  ExprNodePtr base;
  std::shared_ptr<FuncCode> body;
  std::vector<ClosureSource> closure;
  int class_cell = -1;
  Value eval(Frame& f) override {
    Interp& I = f.I;
    Value b = base ? base->eval(f) : I.cls_object.value();
    Class* bc = nullptr;
    try {
      if (!b.is(Kind::Class)) I.raise(I.exception_class("TypeError").get(), "class base must be a class, not " + I.type_name(b));
      bc = b.as<Class>();
      if (bc->is_builtin && bc != I.cls_object.get() && !bc->is_subclass_of(I.exc_base.get()))
        I.raise(I.exception_class("TypeError").get(), "cannot subclass builtin type '" + bc->name->s + "'");
    } catch (MslError& e) {
      locate(e, base ? base->span : span);
      throw;
    }
    Ref<Class> cls = I.new_class(name->s, bc, f.module->name ? f.module->name->s : "__main__", false);
    cls->dict.set(I.names().__module__, f.module->name ? f.module->name.value() : I.str("__main__"));
    cls->dict.set(I.names().__qualname__, I.str(body->qualname));
    if (body->doc) cls->dict.set(I.names().__doc__, body->doc.value());
    // Run the body as a call of a throwaway function whose namespace is the class.
    auto fn = make<Function>();
    fn->code = body;
    fn->module = Ref<Module>(f.module);
    fn->closure = gather_closure(f, closure);
    fn->name = name;
    Interp::CallDepthGuard depth(I);
    StackSlots frame(I, body->nslots);
    Value* slots = frame.p;
    for (uint32_t s : body->cell_slots) slots[s] = make<Cell>().value();
    Frame cf{I, slots, fn.get(), f.module, cls.get(), body.get(), Value()};
    try {
      body->body->exec(cf);
    } catch (MslError& e) {
      ExceptionObj* x = e.obj();
      x->traceback.push_back(TraceEntry{body->source, x->need_location ? body->span : x->location, body->name});
      x->need_location = true;
      locate(e, span);
      throw;
    }
    // A body that sets __module__ (a package re-exporting its classes,
    // `numpy.ndarray`) renames the module the class reports, as in Python.
    if (const Value* m = cls->dict.find(I.names().__module__); m && m->is(Kind::Str)) cls->module_name = m->as<Str>()->s;
    if (class_cell >= 0) slots[class_cell].as<Cell>()->value = cls.value();
    I.bump_class_epoch();
    return cls.value();
  }
};

// ----------------------------------------------------------------- f-strings

struct FStringNode final : ExprNode {
  std::vector<FPart> parts;
  std::string render(Frame& f, std::vector<FPart>& ps) {
    std::string out;
    for (auto& p : ps) {
      if (!p.expr) {
        out += p.literal;
        continue;
      }
      Value v = p.expr->eval(f);
      try {
        if (p.conversion == 'r' || p.conversion == 'a') v = f.I.str(f.I.repr(v));
        else if (p.conversion == 's') v = f.I.str(f.I.to_str(v));
        std::string spec = p.spec.empty() ? std::string() : render(f, p.spec);
        out += format_value(f.I, v, spec);
      } catch (MslError& e) {
        locate(e, p.expr->span);
        throw;
      }
    }
    return out;
  }
  Value eval(Frame& f) override { return f.I.str(render(f, parts)); }
};

struct ImportModule final : ExprNode {
  std::string dotted;
  bool want_leaf;
  Value eval(Frame& f) override {
    Interp& I = f.I;
    try {
      Ref<Module> leaf = I.import_module(dotted, f.code->source.get());
      if (want_leaf) return leaf.value();
      std::string top = dotted.substr(0, dotted.find('.'));
      return I.import_module(top, f.code->source.get()).value();
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
};

template <class T>
std::unique_ptr<T> node() {
  return std::make_unique<T>();
}

}  // namespace

// ----------------------------------------------------------------- factories

ExprNodePtr constant(Value v) {
  auto n = node<Const>();
  n->v = std::move(v);
  return n;
}
ExprNodePtr local(uint32_t slot, Ref<Str> name) {
  auto n = node<Local>();
  n->slot = slot;
  n->name = std::move(name);
  return n;
}
ExprNodePtr local_cell(uint32_t slot, Ref<Str> name) {
  auto n = node<LocalCell>();
  n->slot = slot;
  n->name = std::move(name);
  return n;
}
ExprNodePtr free_var(uint32_t index, Ref<Str> name) {
  auto n = node<FreeVar>();
  n->index = index;
  n->name = std::move(name);
  return n;
}
ExprNodePtr global(GlobalSlot* slot, GlobalSlot* builtin) {
  auto n = node<Global>();
  n->slot = slot;
  n->builtin = builtin;
  return n;
}
ExprNodePtr class_name(Ref<Str> name, ExprNodePtr fallback) {
  auto n = node<ClassName>();
  n->name = std::move(name);
  n->fallback = std::move(fallback);
  return n;
}
ExprNodePtr tuple(std::vector<ExprNodePtr> elts) {
  auto n = node<TupleNode>();
  n->elts = std::move(elts);
  return n;
}
ExprNodePtr list(std::vector<ExprNodePtr> elts) {
  auto n = node<ListNode>();
  n->elts = std::move(elts);
  return n;
}
ExprNodePtr const_display(bool is_list, std::vector<Value> items) {
  auto n = node<ConstDisplayNode>();
  n->is_list = is_list;
  n->items = std::move(items);
  return n;
}
ExprNodePtr set(std::vector<ExprNodePtr> elts) {
  auto n = node<SetNode>();
  n->elts = std::move(elts);
  return n;
}
ExprNodePtr dict(std::vector<ExprNodePtr> keys, std::vector<ExprNodePtr> values) {
  auto n = node<DictNode>();
  n->keys = std::move(keys);
  n->values = std::move(values);
  return n;
}
ExprNodePtr starred(ExprNodePtr value) {
  auto n = node<StarredNode>();
  n->value = std::move(value);
  return n;
}
ExprNodePtr comprehension(CompKind kind, ExprNodePtr elt, ExprNodePtr value, std::vector<CompClause> clauses) {
  auto n = node<Comprehension>();
  n->kind = kind;
  n->elt = std::move(elt);
  n->value = std::move(value);
  n->clauses = std::move(clauses);
  return n;
}
ExprNodePtr attribute(ExprNodePtr obj, Ref<Str> name) {
  auto n = node<AttributeNode>();
  n->obj = std::move(obj);
  n->name = std::move(name);
  return n;
}
ExprNodePtr subscript(ExprNodePtr obj, ExprNodePtr index) {
  auto n = node<SubscriptNode>();
  n->obj = std::move(obj);
  n->index = std::move(index);
  return n;
}
ExprNodePtr slice(ExprNodePtr lo, ExprNodePtr hi, ExprNodePtr step) {
  auto n = node<SliceNode>();
  n->lo = std::move(lo);
  n->hi = std::move(hi);
  n->step = std::move(step);
  return n;
}
static bool all_plain(const std::vector<CallArg>& args) {
  for (auto& a : args)
    if (a.kind != ast::Arg::Kind::Positional) return false;
  return true;
}
ExprNodePtr call(ExprNodePtr func, std::vector<CallArg> args) {
  auto n = node<CallNode>();
  n->func = std::move(func);
  n->plain = all_plain(args);
  n->args = std::move(args);
  return n;
}
ExprNodePtr call_method(ExprNodePtr obj, Ref<Str> name, std::vector<CallArg> args) {
  auto n = node<CallMethodNode>();
  n->obj = std::move(obj);
  n->name = std::move(name);
  n->plain = all_plain(args);
  n->args = std::move(args);
  return n;
}
ExprNodePtr super0(ExprNodePtr class_cell, ExprNodePtr first_arg) {
  auto n = node<Super0>();
  n->class_cell = std::move(class_cell);
  n->first_arg = std::move(first_arg);
  return n;
}
ExprNodePtr unary(ast::UnaryOp op, ExprNodePtr x) {
  auto n = node<UnaryNode>();
  n->op = op;
  n->x = std::move(x);
  return n;
}
ExprNodePtr binary(ast::BinOp op, ExprNodePtr l, ExprNodePtr r) {
  auto n = node<BinaryNode>();
  n->op = op;
  n->l = std::move(l);
  n->r = std::move(r);
  return n;
}
ExprNodePtr boolop(ast::BoolOpKind op, std::vector<ExprNodePtr> values) {
  auto n = node<BoolOpNode>();
  n->op = op;
  n->values = std::move(values);
  return n;
}
ExprNodePtr compare(ExprNodePtr left, std::vector<ast::CmpOp> ops, std::vector<ExprNodePtr> comparators) {
  auto n = node<CompareNode>();
  n->left = std::move(left);
  n->ops = std::move(ops);
  n->comparators = std::move(comparators);
  return n;
}
ExprNodePtr ifexp(ExprNodePtr test, ExprNodePtr body, ExprNodePtr orelse) {
  auto n = node<IfExpNode>();
  n->test = std::move(test);
  n->body = std::move(body);
  n->orelse = std::move(orelse);
  return n;
}
ExprNodePtr make_function(std::shared_ptr<FuncCode> code, std::vector<ExprNodePtr> defaults,
                          std::vector<ExprNodePtr> kwdefaults, std::vector<ClosureSource> closure) {
  auto n = node<MakeFunction>();
  n->code = std::move(code);
  n->defaults = std::move(defaults);
  n->kwdefaults = std::move(kwdefaults);
  n->closure = std::move(closure);
  return n;
}
ExprNodePtr make_class(Ref<Str> name, ExprNodePtr base, std::shared_ptr<FuncCode> body,
                       std::vector<ClosureSource> closure, int class_cell) {
  auto n = node<MakeClass>();
  n->name = std::move(name);
  n->base = std::move(base);
  n->body = std::move(body);
  n->closure = std::move(closure);
  n->class_cell = class_cell;
  return n;
}
ExprNodePtr fstring(std::vector<FPart> parts) {
  auto n = node<FStringNode>();
  n->parts = std::move(parts);
  return n;
}
ExprNodePtr import_module(std::string dotted, bool want_leaf) {
  auto n = node<ImportModule>();
  n->dotted = std::move(dotted);
  n->want_leaf = want_leaf;
  return n;
}

}  // namespace nodes
}  // namespace msl
