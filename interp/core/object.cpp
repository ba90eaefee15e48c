// Storage structures behind objects: attribute maps, the ordered hash table of
// dict and set, module namespaces.
#include "interp/core/object.h"

#include <atomic>

#include "interp/core/interp.h"

namespace msl {

void destroy(Object* o) {
  // An instance with a __del__ is not freed yet: its interpreter runs the
  // finalizer at its next safe point (gc.h: defer_finalizer).
  if ((o->kind == Kind::Instance || o->kind == Kind::Exception) && defer_finalizer(o)) return;
  static thread_local int depth = 0;
  static thread_local std::vector<Object*> pending;
  if (depth >= 64) {
    pending.push_back(o);
    return;
  }
  ++depth;
  delete o;
  --depth;
  if (depth == 0) {
    while (!pending.empty()) {
      Object* p = pending.back();
      pending.pop_back();
      ++depth;
      delete p;
      --depth;
    }
  }
}

size_t Str::compute_hash() const {
  // FNV-1a; never 0, so 0 can mean "not computed yet".
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h == 0 ? 1 : h;
}

int8_t Str::compute_ascii() const {
  for (unsigned char c : s)
    if (c >= 0x80) return 0;
  return 1;
}

// ------------------------------------------------------------------ AttrMap

static constexpr size_t kAttrIndexThreshold = 12;

Value* AttrMap::find(Str* name) {
  if (!index_.empty()) {
    auto it = index_.find(name);
    return it == index_.end() ? nullptr : &entries_[it->second].second;
  }
  for (auto& e : entries_)
    if (e.first.get() == name) return &e.second;
  return nullptr;
}

void AttrMap::set(Str* name, Value v) {
  if (Value* slot = find(name)) {
    *slot = std::move(v);
    return;
  }
  if (entries_.empty()) entries_.reserve(4);  // most objects get a few attributes in __init__
  entries_.emplace_back(Ref<Str>(name), std::move(v));
  if (!index_.empty()) {
    index_.emplace(name, static_cast<uint32_t>(entries_.size() - 1));
  } else if (entries_.size() > kAttrIndexThreshold) {
    rebuild_index();
  }
}

bool AttrMap::erase(Str* name) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].first.get() == name) {
      entries_.erase(entries_.begin() + static_cast<long>(i));
      if (!index_.empty()) rebuild_index();
      return true;
    }
  }
  return false;
}

void AttrMap::rebuild_index() {
  index_.clear();
  if (entries_.size() <= kAttrIndexThreshold) return;
  for (uint32_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].first.get(), i);
}

// ----------------------------------------------------------------- ValueMap

static constexpr int32_t kEmpty = -1;
static constexpr int32_t kDeleted = -2;

int64_t ValueMap::lookup(Interp& I, const Value& key, size_t h, size_t* slot_out) {
  if (index_.empty()) {
    if (slot_out) *slot_out = SIZE_MAX;
    return -1;
  }
  size_t mask = index_.size() - 1;
  size_t i = h & mask;
  size_t first_deleted = SIZE_MAX;
  size_t perturb = h;
  while (true) {
    int32_t ix = index_[i];
    if (ix == kEmpty) {
      if (slot_out) *slot_out = first_deleted != SIZE_MAX ? first_deleted : i;
      return -1;
    }
    if (ix == kDeleted) {
      if (first_deleted == SIZE_MAX) first_deleted = i;
    } else {
      Entry& e = entries_[static_cast<size_t>(ix)];
      if (e.hash == h && (e.key.identical(key) || I.eq(e.key, key))) {
        if (slot_out) *slot_out = i;
        return ix;
      }
    }
    perturb >>= 5;
    i = (i * 5 + perturb + 1) & mask;
  }
}

Value* ValueMap::find(Interp& I, const Value& key) {
  size_t h = I.hash(key);
  int64_t ix = lookup(I, key, h, nullptr);
  return ix < 0 ? nullptr : &entries_[static_cast<size_t>(ix)].value;
}

void ValueMap::grow() {
  // Compact deleted entries, then size the index for a load factor <= 2/3.
  std::vector<Entry> live;
  live.reserve(live_ + 1);
  for (auto& e : entries_)
    if (!e.value.is_undef()) live.push_back(std::move(e));
  entries_ = std::move(live);
  size_t cap = 8;
  while (cap * 2 < (entries_.size() + 1) * 3) cap *= 2;
  index_.assign(cap, kEmpty);
  size_t mask = cap - 1;
  for (size_t ix = 0; ix < entries_.size(); ++ix) {
    size_t h = entries_[ix].hash;
    size_t i = h & mask, perturb = h;
    while (index_[i] != kEmpty) {
      perturb >>= 5;
      i = (i * 5 + perturb + 1) & mask;
    }
    index_[i] = static_cast<int32_t>(ix);
  }
}

bool ValueMap::set(Interp& I, const Value& key, Value value) {
  size_t h = I.hash(key);
  size_t slot;
  int64_t ix = lookup(I, key, h, &slot);
  if (ix >= 0) {
    entries_[static_cast<size_t>(ix)].value = std::move(value);
    return false;
  }
  if ((entries_.size() + 1) * 3 > index_.size() * 2) {
    grow();
    lookup(I, key, h, &slot);
  }
  index_[slot] = static_cast<int32_t>(entries_.size());
  entries_.push_back(Entry{h, key, std::move(value)});
  ++live_;
  ++version_;
  return true;
}

bool ValueMap::erase(Interp& I, const Value& key) {
  size_t h = I.hash(key);
  size_t slot;
  int64_t ix = lookup(I, key, h, &slot);
  if (ix < 0) return false;
  index_[slot] = kDeleted;
  Entry& e = entries_[static_cast<size_t>(ix)];
  e.value = Value::undef();
  e.key = Value();
  --live_;
  ++version_;
  return true;
}

void ValueMap::clear() {
  entries_.clear();
  index_.clear();
  live_ = 0;
  ++version_;
}

// -------------------------------------------------------------------- misc

int64_t Range::length() const {
  if (step > 0) return start < stop ? (stop - start - 1) / step + 1 : 0;
  return start > stop ? (start - stop - 1) / (-step) + 1 : 0;
}

Value* Class::lookup(Str* name) {
  for (Class* c = this; c; c = c->base.get())
    if (Value* v = c->dict.find(name)) return v;
  return nullptr;
}

const Class::Traits& Class::traits(uint64_t epoch, Str* setattr_name, Str* del_name) {
  if (traits_epoch_ == epoch) return traits_;
  traits_ = Traits{};
  for (Class* c = this; c; c = c->base.get()) {
    for (auto& [name, v] : c->dict.entries()) {
      if (v.is(Kind::Property)) traits_.has_property = true;
      if (name.get() == setattr_name && !v.is(Kind::Native)) traits_.custom_setattr = true;
      if (name.get() == del_name) traits_.has_del = true;
    }
  }
  traits_epoch_ = epoch;
  return traits_;
}

// ------------------------------------------------- cycle collector hooks

namespace {
std::atomic<bool> code_kept_until_exit{false};
}

void keep_code_until_exit() { code_kept_until_exit.store(true, std::memory_order_relaxed); }

Function::~Function() {
  if (!code || !code_kept_until_exit.load(std::memory_order_relaxed)) return;
  // The last interpreter's teardown runs on one thread.
  static auto* kept = new std::vector<std::shared_ptr<FuncCode>>();
  kept->push_back(std::move(code));
}

void Function::traverse(GcVisitor& v) {
  if (module) v.visit(module.get());
  for (auto& d : defaults) v.visit(d);
  for (auto& d : kwdefaults) v.visit(d);
  for (auto& c : closure)
    if (c) v.visit(c.get());
  attrs.traverse(v);
}
void Function::gc_clear() {
  module = nullptr;
  defaults.clear();
  kwdefaults.clear();
  closure.clear();
  attrs.clear();
}

void Class::traverse(GcVisitor& v) {
  if (base) v.visit(base.get());
  dict.traverse(v);
}
void Class::gc_clear() {
  base = nullptr;
  dict.clear();
}

void Instance::traverse(GcVisitor& v) {
  if (cls) v.visit(cls.get());
  attrs.traverse(v);
}
void Instance::gc_clear() {
  cls = nullptr;
  attrs.clear();
}

void ExceptionObj::traverse(GcVisitor& v) {
  Instance::traverse(v);
  v.visit(args);
  v.visit(cause);
  v.visit(context);
  v.visit(suggest_in);
}
void ExceptionObj::gc_clear() {
  Instance::gc_clear();
  args = cause = context = suggest_in = Value();
}

void Module::traverse(GcVisitor& v) {
  for (GlobalSlot* s : order) v.visit(s->value);
}
void Module::gc_clear() {
  for (GlobalSlot* s : order) s->value = Value::undef();
}

GlobalSlot* Module::slot(Str* name) {
  auto it = globals.find(name);
  if (it != globals.end()) return it->second.get();
  auto s = std::make_unique<GlobalSlot>();
  s->name = Ref<Str>(name);
  GlobalSlot* p = s.get();
  globals.emplace(name, std::move(s));
  order.push_back(p);
  return p;
}

GlobalSlot* Module::find(Str* name) const {
  auto it = globals.find(name);
  return it == globals.end() ? nullptr : it->second.get();
}

}  // namespace msl
