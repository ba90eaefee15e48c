// Heap object types of the host interpreter.
//
// Each builtin type is a C++ struct deriving from Object with a Kind tag;
// its Python-visible class (for type(), isinstance and method lookup) is one
// of the Interp's builtin Class objects (Interp::cls_of). User classes are
// Class objects too, and their instances are Instance (or ExceptionObj when
// the class derives from BaseException).
//
// Attribute and variable names are interned Str objects (Interp::intern), so
// name lookups compare pointers, never characters.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/core/value.h"
#include "lang/diagnostics.h"
#include "lang/source.h"

namespace msl {

class Interp;
struct Class;
struct Module;
struct FuncCode;

// ------------------------------------------------------------------ strings

struct Str : Object {
  explicit Str(std::string v) : Object(Kind::Str), s(std::move(v)) {}
  std::string s;  // UTF-8
  bool interned = false;

  size_t hash() const {
    if (hash_ == 0) hash_ = compute_hash();
    return hash_;
  }
  bool is_ascii() const {
    if (ascii_ < 0) ascii_ = compute_ascii();
    return ascii_ != 0;
  }
  // Appends in place. Only for a string nobody else can observe (refcount 1,
  // not interned): `s += t` in a loop then costs O(len(t)), as in CPython.
  void append(std::string_view more) {
    s += more;
    hash_ = 0;
    if (ascii_ == 1) ascii_ = -1;
  }
  // Length in code points (Python's len()).
  size_t length() const { return is_ascii() ? s.size() : utf8_length(s); }

 private:
  size_t compute_hash() const;
  int8_t compute_ascii() const;
  mutable size_t hash_ = 0;
  mutable int8_t ascii_ = -1;
};

// ------------------------------------------------------------ attribute maps

// Insertion-ordered map from interned names to values, for instance
// attributes, class dictionaries and module namespaces. Small maps (the common
// case: a handful of attributes) are searched linearly by pointer; larger ones
// get a hash index.
class AttrMap {
 public:
  Value* find(Str* name);
  const Value* find(Str* name) const { return const_cast<AttrMap*>(this)->find(name); }
  void set(Str* name, Value v);
  bool erase(Str* name);
  size_t size() const { return entries_.size(); }
  const std::vector<std::pair<Ref<Str>, Value>>& entries() const { return entries_; }
  void traverse(GcVisitor& v) const {
    for (auto& e : entries_) v.visit(e.second);
  }
  void clear() {
    entries_.clear();
    index_.clear();
  }

 private:
  void rebuild_index();
  std::vector<std::pair<Ref<Str>, Value>> entries_;
  std::unordered_map<Str*, uint32_t> index_;  // only when entries_ is large
};

// --------------------------------------------------------------- containers

struct Tuple : Object {
  Tuple() : Object(Kind::Tuple) {}
  explicit Tuple(std::vector<Value> v) : Object(Kind::Tuple), items(std::move(v)) {}
  std::vector<Value> items;
  void traverse(GcVisitor& v) override {
    for (auto& x : items) v.visit(x);
  }
  void gc_clear() override { items.clear(); }
};

struct List : Object {
  List() : Object(Kind::List) {}
  explicit List(std::vector<Value> v) : Object(Kind::List), items(std::move(v)) {}
  std::vector<Value> items;
  void traverse(GcVisitor& v) override {
    for (auto& x : items) v.visit(x);
  }
  void gc_clear() override { items.clear(); }
};

// An insertion-ordered hash table keyed by Values (Python's dict layout: a
// dense entry array plus an open-addressing index). Hashing and equality may
// call user __hash__/__eq__, hence the Interp argument.
class ValueMap {
 public:
  struct Entry {
    size_t hash;
    Value key;
    Value value;  // Undef marks a deleted entry
  };
  Value* find(Interp& I, const Value& key);
  // Returns true when the key was new.
  bool set(Interp& I, const Value& key, Value value);
  bool erase(Interp& I, const Value& key);
  void clear();
  size_t size() const { return live_; }
  // Entries in insertion order; skip those whose value is_undef().
  const std::vector<Entry>& entries() const { return entries_; }
  std::vector<Entry>& entries() { return entries_; }
  // Bumped on every insertion or deletion, so iterators can detect
  // "dictionary changed size during iteration".
  uint64_t version() const { return version_; }
  void traverse(GcVisitor& v) const {
    for (auto& e : entries_) {
      v.visit(e.key);
      v.visit(e.value);
    }
  }

 private:
  int64_t lookup(Interp& I, const Value& key, size_t h, size_t* slot_out);
  void grow();
  std::vector<Entry> entries_;
  std::vector<int32_t> index_;  // -1 empty, -2 deleted, else entry index
  size_t live_ = 0;
  uint64_t version_ = 0;
};

struct Dict : Object {
  Dict() : Object(Kind::Dict) {}
  ValueMap map;
  void traverse(GcVisitor& v) override { map.traverse(v); }
  void gc_clear() override { map.clear(); }
};

struct Set : Object {
  Set() : Object(Kind::Set) {}
  ValueMap map;  // values are None
  bool frozen = false;
  void traverse(GcVisitor& v) override { map.traverse(v); }
  void gc_clear() override { map.clear(); }
};

struct Range : Object {
  Range(int64_t a, int64_t b, int64_t c) : Object(Kind::Range), start(a), stop(b), step(c) {}
  int64_t start, stop, step;
  int64_t length() const;
};

struct Slice : Object {
  Slice(Value a, Value b, Value c) : Object(Kind::Slice), start(std::move(a)), stop(std::move(b)), step(std::move(c)) {}
  Value start, stop, step;
};

// ---------------------------------------------------------------- callables

struct Cell : Object {
  Cell() : Object(Kind::Cell), value(Value::undef()) {}
  explicit Cell(Value v) : Object(Kind::Cell), value(std::move(v)) {}
  Value value;
  void traverse(GcVisitor& v) override { v.visit(value); }
  void gc_clear() override { value = Value::undef(); }
};

// An MSL function (def or lambda) closed over its defining environment.
struct Function : Object {
  Function() : Object(Kind::Function) {}
  std::shared_ptr<FuncCode> code;
  Ref<Module> module;                  // globals
  std::vector<Value> defaults;         // for the last N positional parameters
  std::vector<Value> kwdefaults;       // one per keyword-only parameter; Undef = required
  std::vector<Ref<Cell>> closure;      // free variables, in FuncCode::freevars order
  Ref<Str> name;
  Ref<Str> qualname;
  AttrMap attrs;                       // f.__doc__, user-set attributes

  ~Function() override;
  void traverse(GcVisitor& v) override;
  void gc_clear() override;
};

// From now on a destroyed Function leaves its compiled code (executable
// nodes and the syntax tree they point into: pure memory) allocated, for the
// process's exit to return: freeing it node by node was ~10 ms of the msl
// command's teardown after `import msl.nn`. Called by ~Interp when
// Options::process_exits_after is set; never undone.
void keep_code_until_exit();

struct Args {
  std::span<Value> pos;
  std::span<std::pair<Ref<Str>, Value>> kw;
};

using NativeFn = Value (*)(Interp& I, Args& args, Object* data);

// A function implemented in C++. `data` is optional state (e.g. the module a
// builtin belongs to) passed back on every call.
struct Native : Object {
  Native(std::string n, NativeFn f, Ref<Object> d = nullptr)
      : Object(Kind::Native), name(std::move(n)), fn(f), data(std::move(d)) {}
  std::string name;
  NativeFn fn;
  Ref<Object> data;
};

struct BoundMethod : Object {
  BoundMethod(Value s, Value f) : Object(Kind::BoundMethod), self(std::move(s)), func(std::move(f)) {}
  Value self;
  Value func;
  void traverse(GcVisitor& v) override {
    v.visit(self);
    v.visit(func);
  }
  void gc_clear() override { self = func = Value(); }
};

struct Property : Object {
  Property() : Object(Kind::Property) {}
  Value fget, fset, fdel;
  void traverse(GcVisitor& v) override {
    v.visit(fget);
    v.visit(fset);
    v.visit(fdel);
  }
  void gc_clear() override { fget = fset = fdel = Value(); }
};
struct StaticMethod : Object {
  explicit StaticMethod(Value f) : Object(Kind::StaticMethod), func(std::move(f)) {}
  Value func;
  void traverse(GcVisitor& v) override { v.visit(func); }
  void gc_clear() override { func = Value(); }
};
struct ClassMethod : Object {
  explicit ClassMethod(Value f) : Object(Kind::ClassMethod), func(std::move(f)) {}
  Value func;
  void traverse(GcVisitor& v) override { v.visit(func); }
  void gc_clear() override { func = Value(); }
};

// ------------------------------------------------------------------ classes

struct Class : Object {
  Class() : Object(Kind::Class) {}
  Ref<Str> name;
  Ref<Class> base;  // null only for `object`
  AttrMap dict;
  std::string module_name;
  // What kind of object calling the class creates: Instance for user classes,
  // Exception for BaseException and its subclasses; builtin types construct
  // through their `__new__` native in dict.
  Kind instance_kind = Kind::Instance;
  bool is_builtin = false;
  // Interp::serial() of the interpreter that made it (0: none), so that an
  // instance's __del__ only ever runs in that interpreter.
  uint64_t interp_serial = 0;

  // Looks `name` up in this class and its bases. Null when absent.
  Value* lookup(Str* name);

  // Facts about the class and its bases that let attribute access skip the
  // generic descriptor protocol. Recomputed when any class was mutated
  // since (`epoch` is the Interp's class-mutation counter).
  struct Traits {
    bool has_property = false;     // some Property in the MRO
    bool custom_setattr = false;   // a user-defined __setattr__
    bool has_del = false;          // a __del__ (instances are finalized: Interp::run_finalizers)
  };
  const Traits& traits(uint64_t epoch, Str* setattr_name, Str* del_name);
  Traits traits_;
  uint64_t traits_epoch_ = 0;
  bool is_subclass_of(const Class* other) const {
    for (const Class* c = this; c; c = c->base.get())
      if (c == other) return true;
    return false;
  }
  void traverse(GcVisitor& v) override;
  void gc_clear() override;
};

struct Instance : Object {
  explicit Instance(Ref<Class> c, Kind k = Kind::Instance) : Object(k), cls(std::move(c)) {}
  Ref<Class> cls;
  AttrMap attrs;
  bool finalized = false;  // its __del__ was queued once: never again, even if it is resurrected
  void traverse(GcVisitor& v) override;
  void gc_clear() override;
};

// One frame of a traceback: where a user function was when the error passed.
struct TraceEntry {
  SourcePtr source;
  Span span;
  std::string function;
};

// Instances of BaseException and its subclasses (builtin or user-defined).
struct ExceptionObj : Instance {
  explicit ExceptionObj(Ref<Class> c) : Instance(std::move(c), Kind::Exception) {}
  Value args;  // a Tuple
  std::vector<TraceEntry> traceback;  // innermost frame first
  // True until the innermost frame's failing expression has been recorded in
  // `location`; a function boundary then moves it into `traceback`.
  bool need_location = true;
  Span location;
  Value cause;    // `raise X from Y`
  Value context;  // the exception being handled when this one was raised
  bool suppress_context = false;  // `raise X from ...` hides the context
  // Where an `except` clause caught it: the last frame of its traceback when
  // it is shown as the cause or context of a later exception.
  bool handled = false;
  TraceEntry handled_at;
  // SyntaxError raised for a whole file: every diagnostic found in it.
  std::vector<Diagnostic> diagnostics;
  // NameError/AttributeError: the name not found and where it was looked
  // for (a module, or the object), for the traceback's "Did you mean"
  // (name_suggestion.h).
  Ref<Str> suggest_for;
  Value suggest_in;
  void traverse(GcVisitor& v) override;
  void gc_clear() override;
};

// ------------------------------------------------------------------ modules

struct GlobalSlot {
  Ref<Str> name;
  Value value = Value::undef();
};

struct Module : Object {
  Module() : Object(Kind::Module) {}
  Ref<Str> name;
  std::string file;  // empty for builtin modules
  // Stable slots: compiled code caches GlobalSlot pointers.
  std::unordered_map<Str*, std::unique_ptr<GlobalSlot>> globals;
  std::vector<GlobalSlot*> order;  // definition order, for dir() and `import *`

  GlobalSlot* slot(Str* name);  // creates an unbound slot when absent
  void traverse(GcVisitor& v) override;
  void gc_clear() override;
  GlobalSlot* find(Str* name) const;
  void set(Str* name, Value v) { slot(name)->value = std::move(v); }
  Value get(Str* name) const {
    GlobalSlot* s = find(name);
    return s ? s->value : Value::undef();
  }
};

// ---------------------------------------------------------------- iterators

// Native iterators (over lists, ranges, dicts, ...). Iteration over user
// objects goes through their __iter__/__next__ instead.
struct Iterator : Object {
  Iterator() : Object(Kind::Iterator) {}
  // Stores the next item in `out` and returns true, or returns false at the end.
  virtual bool next(Interp& I, Value& out) = 0;
  virtual const char* type_name() const { return "iterator"; }
};

struct Super : Object {
  Super(Ref<Class> c, Value s) : Object(Kind::Super), start(std::move(c)), self(std::move(s)) {}
  Ref<Class> start;  // lookup begins at start->base
  Value self;
  void traverse(GcVisitor& v) override {
    if (start) v.visit(start.get());
    v.visit(self);
  }
  void gc_clear() override {
    start = nullptr;
    self = Value();
  }
};

// Opaque native payload (files, later tensors) with a class for method lookup.
struct NativeData : Object {
  explicit NativeData(Ref<Class> c) : Object(Kind::NativeData), cls(std::move(c)) {}
  Ref<Class> cls;
};

}  // namespace msl
