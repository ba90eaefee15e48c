// Internal to the indexing binding (tensor_index.cpp, tensor_index_prims.cpp):
// a subscript key parsed once, and the primitive-based read and update that
// advanced and traced indexing go through.
#pragma once

#include <cstdint>
#include <vector>

#include "interp/core/interp.h"
#include "interp/core/object.h"
#include "kernels/tensor.h"

namespace msl::index_detail {

// One item of a subscript key.
struct Item {
  enum Kind : uint8_t { Int, Slice, NewAxis, Ellipsis, Array } kind = Int;
  int64_t i = 0;                        // Int
  const msl::Slice* slice = nullptr;    // Slice
  Value arr;                            // Array: an integer or bool tensor or tracer
  bool is_mask() const;
};

struct Key {
  std::vector<Item> items;
  int consumed = 0;         // dimensions of x the items index
  bool any_array = false;   // an advanced index (integer or bool tensor, list)
  bool any_tracer = false;  // an item is a traced tensor
};

// Parses and checks `key` against a tensor of rank `ndim`: item kinds, one
// ellipsis at most, no more indexed dimensions than `ndim`. Lists become
// CPU tensors of class `tensor_cls`; a concrete 0-d integer tensor becomes an int (basic
// indexing, as NumPy); a traced one stays an index tensor.
Key parse_key(Interp& I, const Value& key, int ndim, Class* tensor_cls);

[[noreturn]] void bad_index(Interp& I);
// `i` normalized into [0, size), or NumPy's IndexError naming `axis`.
int64_t check_bound(Interp& I, int64_t i, int64_t size, int axis);

// x[key] through primitives (strided_slice, transpose, gather_nd,
// nonzero, reshape): for advanced keys and whenever x or the key is traced.
Value read(Interp& I, const Value& x, const Key& key);

// x[key] = v through primitives. in_place (x concrete, nothing traced):
// writes into x's storage with `assign` and returns x; otherwise returns
// the functional result (a new tensor or tracer) and leaves x alone.
Value update(Interp& I, const Value& x, const Key& key, const Value& v, bool in_place);

}  // namespace msl::index_detail
