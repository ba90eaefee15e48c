// Value representation of the host interpreter.
//
// A Value is 16 bytes: a tag and an 8-byte payload. None, bool, int (64-bit
// signed, overflow raises OverflowError as the spec requires) and float are
// stored inline, so arithmetic never allocates; everything else is a pointer to
// a heap Object. Objects are reference counted (non-atomic: one interpreter is
// used by one thread at a time; only the interrupt flag crosses threads).
// Reference cycles are not collected; see docs/architecture.md.
//
// `Tag::Undef` marks an unbound variable slot; it never escapes to user code.
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

namespace msl {

struct Object;

enum class Tag : uint8_t { Undef = 0, None, Bool, Int, Float, Obj };

// Kinds of heap objects. Builtin kinds are told apart by this tag (no dynamic_cast
// on hot paths); user instances are Kind::Instance and carry their class.
enum class Kind : uint8_t {
  Str, Tuple, List, Dict, Set, Range, Slice, Function, Native, BoundMethod, Class, Instance,
  Exception, Module, Cell, Iterator, Property, StaticMethod, ClassMethod, Super,
  NativeData,  // opaque payload owned by a builtin module (tensors later)
};

struct GcVisitor;

struct Object {
  uint32_t refcount = 0;
  Kind kind;
  // Cycle collector bookkeeping (interp/core/gc.h): container objects are linked
  // into the heap of the interpreter that created them.
  uint8_t gc_state = 0;
  int32_t gc_refs = 0;
  Object* gc_prev = nullptr;
  Object* gc_next = nullptr;

  explicit Object(Kind k);
  virtual ~Object();
  Object(const Object&) = delete;
  Object& operator=(const Object&) = delete;

  // Containers report every object they reference, and drop those
  // references when the collector breaks a garbage cycle.
  virtual void traverse(GcVisitor&) {}
  virtual void gc_clear() {}
};

// Deletes an object whose count reached zero. Deeply nested structures (a
// list inside a list a million times) would recurse once per level through
// the destructors; past a fixed depth, deletions are queued and run
// iteratively instead (CPython's "trashcan"), so freeing never overflows the
// C stack.
void destroy(Object* o);

inline void incref(Object* o) { ++o->refcount; }
inline void decref(Object* o) {
  if (--o->refcount == 0) destroy(o);
}

class Value {
 public:
  Value() : tag_(Tag::None), i_(0) {}
  static Value undef() { Value v; v.tag_ = Tag::Undef; return v; }
  static Value none() { return Value(); }
  static Value boolean(bool b) { Value v; v.tag_ = Tag::Bool; v.i_ = 0; v.b_ = b; return v; }
  static Value integer(int64_t i) { Value v; v.tag_ = Tag::Int; v.i_ = i; return v; }
  static Value number(double f) { Value v; v.tag_ = Tag::Float; v.f_ = f; return v; }
  // Takes a new reference to `o` (which must not be null).
  static Value object(Object* o) { Value v; v.tag_ = Tag::Obj; v.o_ = o; incref(o); return v; }

  Value(const Value& other) : tag_(other.tag_), i_(other.i_) {
    if (tag_ == Tag::Obj) incref(o_);
  }
  Value(Value&& other) noexcept : tag_(other.tag_), i_(other.i_) { other.tag_ = Tag::None; }
  Value& operator=(const Value& other) {
    if (other.tag_ == Tag::Obj) incref(other.o_);
    release();
    tag_ = other.tag_;
    i_ = other.i_;
    return *this;
  }
  Value& operator=(Value&& other) noexcept {
    if (this != &other) {
      release();
      tag_ = other.tag_;
      i_ = other.i_;
      other.tag_ = Tag::None;
    }
    return *this;
  }
  ~Value() { release(); }

  Tag tag() const { return tag_; }
  bool is_undef() const { return tag_ == Tag::Undef; }
  bool is_none() const { return tag_ == Tag::None; }
  bool is_bool() const { return tag_ == Tag::Bool; }
  bool is_int() const { return tag_ == Tag::Int; }
  bool is_float() const { return tag_ == Tag::Float; }
  bool is_obj() const { return tag_ == Tag::Obj; }
  bool is(Kind k) const { return tag_ == Tag::Obj && o_->kind == k; }

  bool as_bool() const { return b_; }
  int64_t as_int() const { return i_; }
  double as_float() const { return f_; }
  Object* obj() const { return o_; }
  template <class T>
  T* as() const { return static_cast<T*>(o_); }

  // Identity (Python `is`): same object, or same inline value.
  bool identical(const Value& o) const {
    if (tag_ != o.tag_) return false;
    if (tag_ == Tag::Bool) return b_ == o.b_;
    return i_ == o.i_;
  }

 private:
  void release() {
    if (tag_ == Tag::Obj) decref(o_);
  }
  Tag tag_;
  union {
    bool b_;
    int64_t i_;
    double f_;
    Object* o_;
  };
};

struct GcVisitor {
  virtual ~GcVisitor() = default;
  virtual void visit(Object* o) = 0;
  void visit(const Value& v) {
    if (v.is_obj()) visit(v.obj());
  }
};

// Intrusive strong reference to a typed object.
template <class T>
class Ref {
 public:
  Ref() = default;
  Ref(T* p) : p_(p) { if (p_) incref(p_); }  // NOLINT: implicit on purpose
  Ref(const Ref& o) : p_(o.p_) { if (p_) incref(p_); }
  Ref(Ref&& o) noexcept : p_(o.p_) { o.p_ = nullptr; }
  template <class U>
  Ref(const Ref<U>& o) : p_(o.get()) { if (p_) incref(p_); }
  Ref& operator=(Ref o) noexcept { std::swap(p_, o.p_); return *this; }
  ~Ref() { if (p_) decref(p_); }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  Value value() const { return Value::object(p_); }

 private:
  T* p_ = nullptr;
};

template <class T, class... Args>
Ref<T> make(Args&&... args) {
  return Ref<T>(new T(std::forward<Args>(args)...));
}

}  // namespace msl
