// Indexing and slicing of tensors, reading and writing, with NumPy's rules.
//
// Basic indexing (ints, slices with any step, None, ...) of a concrete
// tensor only computes a new geometry over the same storage, so x[1:, ::-1]
// is a view and writes through it reach x; a basic write assigns into that
// view with the `assign` primitive. Advanced indexing (integer tensors or
// lists, bool masks; ints next to them count as advanced too, as in NumPy)
// and everything traced go through primitives (tensor_index_prims.cpp):
// gather_nd to read, tensor_scatter_update / masked_fill then assign to
// write. Several advanced indices broadcast together; their dimensions
// replace the indexed ones when the advanced indices are adjacent and go
// first otherwise (NumPy's rule). A bool mask becomes one integer index per
// masked dimension (nonzero).
//
// The binding reads no tensor memory: kernels run on the tensor's device.
// Everything is validated before anything is written: an index out of
// range, a wrong type or a shape mismatch raises with nothing modified.
//
// A tracer (interp/tensor/trace.h) takes the same keys, recorded as primitives;
// the one exception is a traced bool mask selecting (x[mask]), whose shape
// depends on the data. An in-place write into a tracer is a trace error:
// graph mode lowers `x[i] = v` to the functional setitem (x rebound).
#include <fmt/format.h>

#include <cstdint>

#include "interp/core/native_args.h"
#include "interp/tensor/tensor_index.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"
#include "kernels/errors.h"
#include "kernels/shape_util.h"

namespace msl {

using kernels::Dims;
using kernels::DType;
using kernels::Tensor;

namespace index_detail {

bool Item::is_mask() const {
  return is_tracer(arr) ? tracer_obj(arr)->spec.dtype == DType::Bool : tensor_of(arr).dtype() == DType::Bool;
}

void bad_index(Interp& I) {
  raise_exc(I, "IndexError",
            "only integers, slices (`:`), ellipsis (`...`), None and integer or boolean tensors are valid indices");
}

int64_t check_bound(Interp& I, int64_t i, int64_t size, int axis) {
  if (i < -size || i >= size)
    raise_exc(I, "IndexError", fmt::format("index {} is out of bounds for axis {} with size {}", i, axis, size));
  return i < 0 ? i + size : i;
}

namespace {

constexpr int kMaxIndexItems = 64;

[[noreturn]] void not_integer(Interp& I) {
  raise_exc(I, "IndexError", "tensors used as indices must be of integer or boolean type");
}

Item parse_item(Interp& I, const Value& v, Key& key, Class* cls) {
  Item out;
  if (v.is_bool()) bad_index(I);
  if (v.is_int()) {
    out.kind = Item::Int;
    out.i = v.as_int();
  } else if (v.is(Kind::Slice)) {
    out.kind = Item::Slice;
    out.slice = v.as<msl::Slice>();
  } else if (v.is_none()) {
    out.kind = Item::NewAxis;
  } else if (v.identical(I.ellipsis)) {
    out.kind = Item::Ellipsis;
  } else if (is_tracer(v)) {
    DType dt = tracer_obj(v)->spec.dtype;
    if (dt != DType::Bool && !kernels::is_integral(dt)) not_integer(I);
    out.kind = Item::Array;
    out.arr = v;
    key.any_tracer = true;
  } else if (is_tensor(v)) {
    const Tensor& t = tensor_of(v);
    if (t.dtype() != DType::Bool && !kernels::is_integral(t.dtype())) not_integer(I);
    if (t.dtype() != DType::Bool && t.ndim() == 0) {
      // A 0-d integer tensor indexes like an int (a view, as in NumPy): its
      // one element is read to the host.
      out.kind = Item::Int;
      out.i = static_cast<int64_t>(kernel_call(I, [&] { return t.item_at(0); }));
    } else {
      out.kind = Item::Array;
      out.arr = v;
    }
  } else if (v.is(Kind::List)) {
    // An index list is a CPU tensor (kernels take it with the indexed tensor).
    out.kind = Item::Array;
    if (v.as<List>()->items.empty()) {
      out.arr = wrap_tensor(cls, kernel_call(I, [] { return Tensor(DType::Int64, Dims{0}); }));
    } else {
      out.arr = wrap_tensor(cls, tensor_from_value(I, v, nullptr, "index"));
      if (kernels::is_floating(tensor_of(out.arr).dtype())) not_integer(I);
    }
  } else {
    bad_index(I);
  }
  return out;
}

}  // namespace

Key parse_key(Interp& I, const Value& key, int ndim, Class* cls) {
  Key k;
  auto add = [&](const Value& v) {
    if (k.items.size() == kMaxIndexItems) raise_exc(I, "IndexError", "too many indices for tensor");
    k.items.push_back(parse_item(I, v, k, cls));
  };
  if (key.is(Kind::Tuple)) {
    for (const Value& v : key.as<Tuple>()->items) add(v);
  } else {
    add(key);
  }
  int ellipses = 0;
  for (const Item& it : k.items) {
    switch (it.kind) {
      case Item::Int:
      case Item::Slice: ++k.consumed; break;
      case Item::Array: {
        k.any_array = true;
        const Dims& s = is_tracer(it.arr) ? tracer_obj(it.arr)->spec.shape : tensor_of(it.arr).shape();
        k.consumed += it.is_mask() ? s.size() : 1;
        break;
      }
      case Item::Ellipsis: ++ellipses; break;
      case Item::NewAxis: break;
    }
  }
  if (ellipses > 1) raise_exc(I, "IndexError", "an index can only have a single ellipsis ('...')");
  if (k.consumed > ndim)
    raise_exc(
        I, "IndexError",
        fmt::format("too many indices for tensor: tensor is {}-dimensional, but {} were indexed", ndim, k.consumed));
  return k;
}

}  // namespace index_detail

namespace {

using index_detail::Item;
using index_detail::Key;

bool is_traced(const Value& v) {
  if (is_tracer(v)) return true;
  if (v.is(Kind::Tuple))
    for (const Value& x : v.as<Tuple>()->items)
      if (is_tracer(x)) return true;
  return false;
}

// The view a basic key (no advanced index) selects from a concrete tensor:
// a geometry over the same storage.
Tensor basic_view(Interp& I, const Tensor& t, const Key& key) {
  Dims shape, strides;
  int64_t offset = t.offset();
  auto push = [&](int64_t size, int64_t stride) {
    if (shape.size() == kernels::kMaxDims)
      raise_exc(I, "IndexError", fmt::format("indexing gives more than {} dimensions", kernels::kMaxDims));
    shape.push_back(size);
    strides.push_back(stride);
  };
  int d = 0;
  for (const Item& it : key.items) {
    switch (it.kind) {
      case Item::Int:
        offset += index_detail::check_bound(I, it.i, t.dim(d), d) * t.strides()[d];
        ++d;
        break;
      case Item::Slice: {
        int64_t start, stop, step;
        slice_indices(I, it.slice, t.dim(d), start, stop, step);
        int64_t len = slice_length(start, stop, step);
        if (len > 0) offset += start * t.strides()[d];
        // A step wider than the axis selects one element; its stride is then irrelevant (and could overflow).
        push(len, len > 1 ? t.strides()[d] * step : t.strides()[d]);
        ++d;
        break;
      }
      case Item::NewAxis: push(1, 0); break;
      case Item::Ellipsis:
        for (int n = t.ndim() - key.consumed; n > 0; --n, ++d) push(t.dim(d), t.strides()[d]);
        break;
      case Item::Array: break;  // not in a basic key
    }
  }
  for (; d < t.ndim(); ++d) push(t.dim(d), t.strides()[d]);
  return Tensor::view(t, shape, strides, offset);
}

}  // namespace

Value tensor_getitem(Interp& I, const Value& self, const Value& key) {
  TensorObj* o = tensor_obj(self);
  const Tensor& t = o->t;
  if (key.is_int() && t.ndim() > 0) {
    int64_t i = index_detail::check_bound(I, key.as_int(), t.dim(0), 0);
    Dims shape, strides;
    for (int k = 1; k < t.ndim(); ++k) {
      shape.push_back(t.dim(k));
      strides.push_back(t.strides()[k]);
    }
    return wrap_tensor(result_class(o), Tensor::view(t, shape, strides, t.offset() + i * t.strides()[0]));
  }
  Key k = index_detail::parse_key(I, key, t.ndim(), result_class(o));
  if (!k.any_array) return wrap_tensor(result_class(o), basic_view(I, t, k));
  return index_detail::read(I, self, k);
}

void tensor_setitem(Interp& I, const Value& self, const Value& key, const Value& v) {
  if (is_tracer(v) || is_traced(key))
    trace::cannot_trace(I, is_tracer(v) ? v : key,
                        "writing into a concrete tensor (x[...] = v) with traced values cannot be traced");
  TensorObj* o = tensor_obj(self);
  Key k = index_detail::parse_key(I, key, o->t.ndim(), result_class(o));
  index_detail::update(I, self, k, v, true);
}

Value tensor_setitem_functional(Interp& I, const Value& self, const Value& key, const Value& v) {
  if (!is_tensor_or_tracer(self))
    raise_type_error(I, fmt::format("'{}' object does not support item assignment in graph mode", I.type_name(self)));
  int ndim = is_tracer(self) ? trace::usable(I, self).spec.shape.size() : tensor_of(self).ndim();
  Key k = index_detail::parse_key(I, key, ndim, tensor_class_of(static_cast<const NativeData*>(self.obj()))->tensor_cls);
  return index_detail::update(I, self, k, v, false);
}

Value tracer_getitem(Interp& I, const Value& self, const Value& key) {
  const TracerObj& tr = trace::usable(I, self);
  Key k = index_detail::parse_key(I, key, tr.spec.shape.size(), tensor_class_of(&tr)->tensor_cls);
  return index_detail::read(I, self, k);
}

}  // namespace msl
