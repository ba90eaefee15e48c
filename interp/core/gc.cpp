#include "interp/core/gc.h"

#include <algorithm>
#include <vector>

namespace msl {
namespace {

thread_local GcHeap* current_heap = nullptr;

bool is_container(Kind k) {
  switch (k) {
    case Kind::Tuple:
    case Kind::List:
    case Kind::Dict:
    case Kind::Set:
    case Kind::Function:
    case Kind::BoundMethod:
    case Kind::Class:
    case Kind::Instance:
    case Kind::Exception:
    case Kind::Module:
    case Kind::Cell:
    case Kind::Property:
    case Kind::StaticMethod:
    case Kind::ClassMethod:
    case Kind::Super: return true;
    default: return false;
  }
}

enum : uint8_t { kIdle = 0, kCandidate = 1, kReachable = 2 };

struct Subtract final : GcVisitor {
  using GcVisitor::visit;
  void visit(Object* o) override {
    if (o->gc_state == kCandidate) --o->gc_refs;
  }
};

struct Mark final : GcVisitor {
  using GcVisitor::visit;
  std::vector<Object*>* work;
  void visit(Object* o) override {
    if (o->gc_state == kCandidate) {
      o->gc_state = kReachable;
      work->push_back(o);
    }
  }
};

}  // namespace

Object::Object(Kind k) : kind(k) {
  if (current_heap && is_container(k)) GcHeap::track(this);
}

Object::~Object() {
  if (gc_prev) GcHeap::untrack(this);
}

GcHeap::GcHeap(void (*request)(void*), void* owner) : request_(request), owner_(owner) {
  head_.gc_prev = head_.gc_next = &head_;
}

GcHeap::~GcHeap() {
  deactivate();
  for (Object* o = head_.gc_next; o != &head_;) {
    Object* next = o->gc_next;
    o->gc_prev = o->gc_next = nullptr;
    o = next;
  }
  head_.gc_prev = head_.gc_next = nullptr;
}

void GcHeap::activate() { current_heap = this; }

void GcHeap::deactivate() {
  if (current_heap == this) current_heap = nullptr;
}

void GcHeap::track(Object* o) {
  GcHeap* h = current_heap;
  Object* head = &h->head_;
  o->gc_next = head;
  o->gc_prev = head->gc_prev;
  head->gc_prev->gc_next = o;
  head->gc_prev = o;
  if (++h->allocations_ == h->threshold_ && h->request_) h->request_(h->owner_);
}

void* GcHeap::current_owner() { return current_heap ? current_heap->owner_ : nullptr; }

void GcHeap::track_native(Object* o) {
  if (current_heap && !o->gc_prev) track(o);
}

void GcHeap::untrack(Object* o) {
  o->gc_prev->gc_next = o->gc_next;
  o->gc_next->gc_prev = o->gc_prev;
  o->gc_prev = o->gc_next = nullptr;
}

size_t GcHeap::collect() {
  std::vector<Object*> all;
  for (Object* o = head_.gc_next; o != &head_; o = o->gc_next) all.push_back(o);
  for (Object* o : all) {
    o->gc_state = kCandidate;
    o->gc_refs = static_cast<int32_t>(std::min<uint32_t>(o->refcount, INT32_MAX));
  }
  Subtract subtract;
  for (Object* o : all) o->traverse(subtract);

  std::vector<Object*> work;
  for (Object* o : all)
    if (o->gc_refs > 0) {
      o->gc_state = kReachable;
      work.push_back(o);
    }
  Mark mark;
  mark.work = &work;
  while (!work.empty()) {
    Object* o = work.back();
    work.pop_back();
    o->traverse(mark);
  }

  std::vector<Object*> garbage;
  for (Object* o : all) {
    if (o->gc_state == kCandidate) garbage.push_back(o);
    o->gc_state = kIdle;
  }
  // Finalizers run before any cycle is cut, on intact objects.
  bool deferred = false;
  for (Object* o : garbage) deferred |= defer_finalizer(o);
  if (deferred) {
    allocations_ = threshold_ - 1;  // the next container made asks again
    return 0;
  }
  // Hold every garbage object while the cycles are cut, so none is freed
  // half-way; then release them.
  for (Object* o : garbage) incref(o);
  for (Object* o : garbage) o->gc_clear();
  for (Object* o : garbage) decref(o);

  // The next collection waits until as many containers were made as survived
  // this one: the total cost stays linear in the number of allocations.
  allocations_ = 0;
  threshold_ = std::max<size_t>(20000, all.size() - garbage.size());
  return garbage.size();
}

}  // namespace msl
