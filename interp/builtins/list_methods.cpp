// Methods of list and tuple, and the sort shared by list.sort and sorted().
//
// The sort is a stable merge sort on an index permutation: a comparison
// that raises (or a __lt__ that is inconsistent) leaves the values intact,
// never half-moved. Like CPython it compares with `<` only, computes each key
// once, and keeps stability under reverse=True by reversing before and after.
// Lists of only ints, only floats or only strs are compared without going
// through the generic protocol.
//
// Methods that compare elements may run user __eq__ code that mutates the
// list, so loops re-read the size every step and hold a reference to the
// element being compared.
#include <fmt/format.h>

#include <algorithm>

#include "interp/builtins/builtins.h"
#include "interp/core/native_args.h"

namespace msl {

namespace {

template <class T, class Less>
void merge_sort(std::vector<T>& idx, std::vector<T>& tmp, size_t lo, size_t hi, Less& less) {
  if (hi - lo <= 12) {
    for (size_t i = lo + 1; i < hi; ++i) {
      T x = idx[i];
      size_t j = i;
      while (j > lo && less(x, idx[j - 1])) {
        idx[j] = idx[j - 1];
        --j;
      }
      idx[j] = x;
    }
    return;
  }
  size_t mid = lo + (hi - lo) / 2;
  merge_sort(idx, tmp, lo, mid, less);
  merge_sort(idx, tmp, mid, hi, less);
  if (!less(idx[mid], idx[mid - 1])) return;  // already in order: sorted input costs n comparisons
  std::copy(idx.begin() + static_cast<ptrdiff_t>(lo), idx.begin() + static_cast<ptrdiff_t>(mid),
            tmp.begin() + static_cast<ptrdiff_t>(lo));
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi) {
    if (less(idx[j], tmp[i]))
      idx[k++] = idx[j++];
    else
      idx[k++] = tmp[i++];
  }
  while (i < mid) idx[k++] = tmp[i++];
}

// `a < b` with inline comparisons for the types sorted most often (numbers,
// strs and tuples of them), deferring to the generic protocol otherwise.
// Equality of tuple elements is decided the same way, so results are exactly
// those of I.less.
bool fast_less(Interp& I, const Value& a, const Value& b, int depth = 0);

bool fast_eq(Interp& I, const Value& a, const Value& b) {
  if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
  if (a.is_float() && b.is_float()) return a.as_float() == b.as_float();
  if (a.is(Kind::Str) && b.is(Kind::Str)) return a.as<Str>()->s == b.as<Str>()->s;
  return a.identical(b) || I.eq(a, b);
}

bool fast_less(Interp& I, const Value& a, const Value& b, int depth) {
  if (a.is_int() && b.is_int()) return a.as_int() < b.as_int();
  if (a.is_float() && b.is_float()) return a.as_float() < b.as_float();
  if (a.is(Kind::Str) && b.is(Kind::Str)) return a.as<Str>()->s < b.as<Str>()->s;
  if (a.is(Kind::Tuple) && b.is(Kind::Tuple) && depth < 8) {
    auto& x = a.as<Tuple>()->items;
    auto& y = b.as<Tuple>()->items;
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (fast_eq(I, x[i], y[i])) continue;
      return fast_less(I, x[i], y[i], depth + 1);
    }
    return x.size() < y.size();
  }
  return I.less(a, b);
}

template <class Less>
std::vector<uint32_t> sorted_order(size_t n, Less less) {
  std::vector<uint32_t> idx(n), tmp(n);
  for (size_t i = 0; i < n; ++i) idx[i] = static_cast<uint32_t>(i);
  merge_sort(idx, tmp, 0, n, less);
  return idx;
}

// Sorts by a numeric key stored next to the index, so comparisons touch
// contiguous memory instead of chasing each Value.
template <class K>
std::vector<uint32_t> sorted_order_numeric(const std::vector<Value>& kv, K (*get)(const Value&)) {
  struct Item {
    K key;
    uint32_t idx;
  };
  size_t n = kv.size();
  std::vector<Item> items(n), tmp(n);
  for (size_t i = 0; i < n; ++i) items[i] = Item{get(kv[i]), static_cast<uint32_t>(i)};
  auto less = [](const Item& a, const Item& b) { return a.key < b.key; };
  bool ordered = true;  // `<` is a strict weak order unless a nan is present
  for (const Item& it : items) ordered = ordered && it.key == it.key;
  if (ordered)
    std::stable_sort(items.begin(), items.end(), less);
  else
    merge_sort(items, tmp, 0, n, less);
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = items[i].idx;
  return order;
}

}  // namespace

void sort_values(Interp& I, std::vector<Value>& items, const Value& key, bool reverse) {
  size_t n = items.size();
  if (n > UINT32_MAX) raise_memory_error(I);
  std::vector<Value> keys;
  if (!key.is_none()) {
    keys.reserve(n);
    for (const Value& x : items) {
      tick(I);
      keys.push_back(I.call1(key, x));
    }
  }
  if (n < 2) return;
  std::vector<Value>& k = key.is_none() ? items : keys;
  std::vector<Value> work_keys;
  if (reverse) {
    work_keys.assign(k.rbegin(), k.rend());
  } else {
    work_keys = k;
  }
  bool all_int = true, all_float = true, all_str = true;
  for (const Value& x : work_keys) {
    all_int = all_int && x.is_int();
    all_float = all_float && x.is_float();
    all_str = all_str && x.is(Kind::Str);
  }
  const std::vector<Value>& kv = work_keys;
  std::vector<uint32_t> order;
  if (all_int) {
    order = sorted_order_numeric<int64_t>(kv, [](const Value& v) { return v.as_int(); });
  } else if (all_float) {
    order = sorted_order_numeric<double>(kv, [](const Value& v) { return v.as_float(); });
  } else if (all_str) {
    // UTF-8 byte order is code-point order, which is Python's str order.
    order = sorted_order(n, [&](uint32_t a, uint32_t b) { return kv[a].as<Str>()->s < kv[b].as<Str>()->s; });
  } else {
    size_t count = 0;
    order = sorted_order(n, [&](uint32_t a, uint32_t b) {
      if ((++count & 0x3FF) == 0) tick(I);
      return fast_less(I, kv[a], kv[b]);
    });
  }
  // order[i] indexes the (possibly reversed) working sequence.
  std::vector<Value> out;
  out.reserve(n);
  for (uint32_t i : order) out.push_back(reverse ? items[n - 1 - i] : items[i]);
  if (reverse) std::reverse(out.begin(), out.end());
  items = std::move(out);
}

namespace {

// ----------------------------------------------------------------- list

Value list_append(Interp& I, Args& a, Object*) {
  List* l = self_list(I, a, "append");
  if (a.pos.size() != 2 || !a.kw.empty()) {
    if (!a.kw.empty()) raise_type_error(I, "list.append() takes no keyword arguments");
    raise_type_error(I, fmt::format("list.append() takes exactly one argument ({} given)", a.pos.size() - 1));
  }
  l->items.push_back(a.pos[1]);
  return Value();
}

Value list_extend(Interp& I, Args& a, Object*) {
  List* l = self_list(I, a, "extend");
  if (a.pos.size() != 2 || !a.kw.empty()) {
    if (!a.kw.empty()) raise_type_error(I, "list.extend() takes no keyword arguments");
    raise_type_error(I, fmt::format("list.extend() takes exactly one argument ({} given)", a.pos.size() - 1));
  }
  std::vector<Value> items = I.to_vector(a.pos[1]);  // a copy, so l.extend(l) works
  check_result_size(I, l->items.size() + items.size(), kMaxResultItems);
  l->items.insert(l->items.end(), items.begin(), items.end());
  return Value();
}

Value list_insert(Interp& I, Args& a, Object*) {
  List* l = self_list(I, a, "insert");
  Value v[2];
  Args rest = method_args(a);
  bind_positional(I, "insert", rest, 2, 2, v, "list");
  int64_t i = arg_index(I, v[0]);
  int64_t n = static_cast<int64_t>(l->items.size());
  if (i < 0) {
    i += n;
    if (i < 0) i = 0;
  } else if (i > n) {
    i = n;
  }
  l->items.insert(l->items.begin() + i, v[1]);
  return Value();
}

Value list_pop(Interp& I, Args& a, Object*) {
  List* l = self_list(I, a, "pop");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "pop", rest, 0, 1, v, "list");
  int64_t i = given(v[0]) ? arg_index(I, v[0]) : -1;
  int64_t n = static_cast<int64_t>(l->items.size());
  if (n == 0) raise_exc(I, "IndexError", "pop from empty list");
  if (i < 0) i += n;
  if (i < 0 || i >= n) raise_exc(I, "IndexError", "pop index out of range");
  Value out = std::move(l->items[static_cast<size_t>(i)]);
  l->items.erase(l->items.begin() + i);
  return out;
}

// Index of the first element equal to x in [start, stop), or -1.
int64_t find_equal(Interp& I, const Value& seq, const Value& x, int64_t start, int64_t stop) {
  for (int64_t i = start;; ++i) {
    auto& items = seq.is(Kind::List) ? seq.as<List>()->items : seq.as<Tuple>()->items;
    if (i >= stop || i >= static_cast<int64_t>(items.size())) return -1;
    Value item = items[static_cast<size_t>(i)];
    if (item.identical(x) || I.eq(item, x)) return i;
  }
}

// start/stop arguments of index(): slice-style, clamped to [0, n].
void clamp_range(Interp& I, const Value& start_v, const Value& stop_v, int64_t n, int64_t& start, int64_t& stop) {
  auto clamp = [&](const Value& v, int64_t dflt) {
    if (!given(v)) return dflt;
    int64_t i = arg_index(I, v);
    if (i < 0) {
      i += n;
      if (i < 0) i = 0;
    } else if (i > n) {
      i = n;
    }
    return i;
  };
  start = clamp(start_v, 0);
  stop = clamp(stop_v, n);
}

Value seq_index(Interp& I, Args& a, const Value& self, const char* type) {
  Value v[3];
  Args rest = method_args(a);
  bind_positional(I, "index", rest, 1, 3, v, type);
  auto& items = self.is(Kind::List) ? self.as<List>()->items : self.as<Tuple>()->items;
  int64_t start, stop;
  clamp_range(I, v[1], v[2], static_cast<int64_t>(items.size()), start, stop);
  int64_t i = find_equal(I, self, v[0], start, stop);
  if (i < 0) {
    if (std::string_view(type) == "list") raise_value_error(I, fmt::format("{} is not in list", I.repr(v[0])));
    raise_value_error(I, "tuple.index(x): x not in tuple");
  }
  return Value::integer(i);
}

Value seq_count(Interp& I, Args& a, const Value& self) {
  Value v[1] = {method_onearg(I, a, self.is(Kind::List) ? "list" : "tuple", "count")};
  int64_t count = 0;
  for (size_t i = 0;; ++i) {
    auto& items = self.is(Kind::List) ? self.as<List>()->items : self.as<Tuple>()->items;
    if (i >= items.size()) break;
    Value item = items[i];
    if (item.identical(v[0]) || I.eq(item, v[0])) ++count;
  }
  return Value::integer(count);
}

Value list_remove(Interp& I, Args& a, Object*) {
  List* l = self_list(I, a, "remove");
  Value v[1] = {method_onearg(I, a, "list", "remove")};
  int64_t i = find_equal(I, a.pos[0], v[0], 0, INT64_MAX);
  if (i < 0 || i >= static_cast<int64_t>(l->items.size())) raise_value_error(I, "list.remove(x): x not in list");
  l->items.erase(l->items.begin() + i);
  return Value();
}

Value list_index(Interp& I, Args& a, Object*) {
  self_list(I, a, "index");
  return seq_index(I, a, a.pos[0], "list");
}

Value list_count(Interp& I, Args& a, Object*) {
  self_list(I, a, "count");
  return seq_count(I, a, a.pos[0]);
}

Value list_sort(Interp& I, Args& a, Object*) {
  List* l = self_list(I, a, "sort");
  Value v[2];
  Args rest = method_args(a);
  bind_args(I, "sort", rest, {"key", "reverse"}, 0, v, 0);
  Value key = or_default(v[0], Value());
  bool reverse = given(v[1]) && I.truthy(v[1]);
  // As in CPython the list is empty while it is being sorted, so a key
  // function or __lt__ that mutates it is detected instead of corrupting it.
  Value keep = a.pos[0];
  std::vector<Value> items = std::move(l->items);
  l->items.clear();
  try {
    sort_values(I, items, key, reverse);
  } catch (...) {
    l->items = std::move(items);
    throw;
  }
  bool modified = !l->items.empty();
  l->items = std::move(items);
  if (modified) raise_value_error(I, "list modified during sort");
  return Value();
}

Value list_reverse(Interp& I, Args& a, Object*) {
  List* l = self_list(I, a, "reverse");
  method_noargs(I, a, "list", "reverse");
  std::reverse(l->items.begin(), l->items.end());
  return Value();
}

Value list_copy(Interp& I, Args& a, Object*) {
  List* l = self_list(I, a, "copy");
  method_noargs(I, a, "list", "copy");
  return new_list(l->items);
}

Value list_clear(Interp& I, Args& a, Object*) {
  List* l = self_list(I, a, "clear");
  method_noargs(I, a, "list", "clear");
  std::vector<Value> old = std::move(l->items);  // destructors may run user code: detach first
  l->items.clear();
  return Value();
}

// ---------------------------------------------------------------- tuple

Value tuple_index(Interp& I, Args& a, Object*) {
  self_tuple(I, a, "index");
  return seq_index(I, a, a.pos[0], "tuple");
}

Value tuple_count(Interp& I, Args& a, Object*) {
  self_tuple(I, a, "count");
  return seq_count(I, a, a.pos[0]);
}

}  // namespace

void init_list_methods(Interp& I) {
  Class* list = I.cls_list.get();
  I.def_method(list, "append", list_append);
  I.def_method(list, "extend", list_extend);
  I.def_method(list, "insert", list_insert);
  I.def_method(list, "pop", list_pop);
  I.def_method(list, "remove", list_remove);
  I.def_method(list, "index", list_index);
  I.def_method(list, "count", list_count);
  I.def_method(list, "sort", list_sort);
  I.def_method(list, "reverse", list_reverse);
  I.def_method(list, "copy", list_copy);
  I.def_method(list, "clear", list_clear);
  Class* tuple = I.cls_tuple.get();
  I.def_method(tuple, "index", tuple_index);
  I.def_method(tuple, "count", tuple_count);
}

}  // namespace msl
