// The cycle collector.
//
// Reference counting frees most objects the moment they become unreachable,
// but not cycles (a class and its methods' __class__ cell, a recursive
// closure, an object holding its own bound method). Container objects
// (lists, tuples, dicts, sets, functions, cells, classes, instances, modules
// ...) are therefore linked into the GcHeap of the interpreter running when
// they were made, and collect() finds the garbage cycles among them by
// CPython's trial deletion:
//   1. copy each tracked object's reference count into gc_refs;
//   2. for every reference from one tracked object to another, decrement the
//      target's gc_refs — what remains counts references from outside the
//      heap (C++ locals, the value stack, untracked objects);
//   3. everything reachable from an object with gc_refs > 0 is alive;
//   4. the rest is garbage: hold it, clear its references, release it.
// No roots need to be enumerated, so a C++ local holding a Value is always
// safe. Collection runs only at safe points (Interp::poll, at loop back-edges
// and calls), never inside an allocation, once enough containers have been
// made since the last one.
#pragma once

#include <cstddef>

#include "interp/core/value.h"

namespace msl {

// Defined by the interpreter (interp.cpp): when `o` is an instance whose
// class defines __del__ and whose finalizer has not been queued yet, queues
// it with the interpreter running on this thread (if it is the instance's
// own) and takes a reference to `o`; true when queued.
bool defer_finalizer(Object* o);

class GcHeap {
 public:
  explicit GcHeap(void (*request)(void*), void* owner);
  ~GcHeap();  // untracks whatever is still alive
  GcHeap(const GcHeap&) = delete;
  GcHeap& operator=(const GcHeap&) = delete;

  // Makes this the heap new objects on the calling thread are tracked in.
  void activate();
  void deactivate();
  // Frees unreachable cycles; returns how many objects were freed. When
  // some garbage has a __del__ that has not run, frees nothing: those are
  // queued (defer_finalizer) and a later collection, after their finalizers
  // ran, frees what is still unreachable (CPython's order, PEP 442).
  size_t collect();
  bool due() const { return allocations_ >= threshold_; }

  // Called from Object's constructor and destructor.
  static void track(Object* o);
  static void untrack(Object* o);
  // Tracks a native object that holds references (NativeData is not a
  // container kind: tensors hold none, and tracking every one would slow
  // collections), in the heap active on this thread, if any. Without it a
  // cycle through the object (a Cell holding its own compiled function,
  // msl.jit(self)) is never freed.
  static void track_native(Object* o);
  // The owner (the Interp) of the heap active on this thread, if any.
  static void* current_owner();

 private:
  Object head_{Kind::Str};  // sentinel of the circular list (a non-container kind: never tracked)
  size_t allocations_ = 0;
  size_t threshold_ = 20000;
  void (*request_)(void*);
  void* owner_;
};

}  // namespace msl
