// Indexing and slicing of tensors, reading and writing, with NumPy's rules.
//
// Basic indexing (ints, slices with any step, None, ...) only computes a new
// geometry over the same storage, so x[1:, ::-1] is a view and writes through
// it reach x. Advanced indexing (integer tensors or lists, bool masks; ints
// next to them count as advanced too, as in NumPy) gathers into a new tensor
// when reading and scatters into x's storage when writing. Several advanced
// indices broadcast together; their dimensions replace the indexed ones when
// the advanced indices are adjacent and go first otherwise (NumPy's rule).
// A bool mask becomes one integer index per masked dimension (its nonzero()).
//
// Everything is validated before anything is read or written: an index out
// of range, a wrong type or a shape mismatch raises with nothing modified.
//
// A tracer (interp/trace.h) takes basic indexing only, recorded as one
// strided_slice (Python's slice rules, as here) plus a reshape that drops
// the int-indexed axes and inserts the None ones. Advanced indices and
// writes are trace errors (gather and scatter_add say what they mean).
#include <fmt/format.h>

#include <cstdint>
#include <cstring>

#include "interp/native_args.h"
#include "interp/tensor_object.h"
#include "interp/trace.h"
#include "kernels/errors.h"
#include "kernels/shape_util.h"

namespace msl {

using kernels::Dims;
using kernels::DType;
using kernels::Tensor;

namespace {

constexpr int kMaxIndexItems = 64;

struct Item {
  enum Kind : uint8_t { Int, Slice, NewAxis, Ellipsis, Array } kind;
  int64_t i;
  const msl::Slice* slice;
  int arr;  // Array: position of the integer or bool tensor in the list of arrays
};

[[noreturn]] void bad_index(Interp& I) {
  raise_exc(I, "IndexError",
            "only integers, slices (`:`), ellipsis (`...`), None and integer or boolean tensors are valid indices");
}

void parse_item(Interp& I, const Value& v, Item& out, std::vector<Tensor>& arrays) {
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
  } else if (is_tensor(v)) {
    const Tensor& t = tensor_of(v);
    if (t.dtype() == DType::Bool) {
      out.kind = Item::Array;
      out.arr = static_cast<int>(arrays.size());
      arrays.push_back(t);
    } else if (kernels::is_integral(t.dtype())) {
      if (t.ndim() == 0) {
        out.kind = Item::Int;
        out.i = element_value(t, 0).as_int();
      } else {
        out.kind = Item::Array;
        out.arr = static_cast<int>(arrays.size());
        arrays.push_back(t);
      }
    } else {
      raise_exc(I, "IndexError", "tensors used as indices must be of integer or boolean type");
    }
  } else if (v.is(Kind::List)) {
    out.kind = Item::Array;
    out.arr = static_cast<int>(arrays.size());
    if (v.as<List>()->items.empty()) {
      arrays.push_back(kernel_call(I, [] { return Tensor(DType::Int64, Dims{0}); }));
    } else {
      arrays.push_back(tensor_from_value(I, v, nullptr, "index"));
      if (kernels::is_floating(arrays.back().dtype()))
        raise_exc(I, "IndexError", "tensors used as indices must be of integer or boolean type");
    }
  } else {
    bad_index(I);
  }
}

// Python's slice.indices() and the resulting length.
void slice_bounds(Interp& I, const msl::Slice* s, int64_t n, int64_t& start, int64_t& step, int64_t& len) {
  int64_t stop;
  slice_indices(I, s, n, start, stop, step);
  len = slice_length(start, stop, step);
}

int64_t check_bound(Interp& I, int64_t i, int64_t size, int axis) {
  if (i < -size || i >= size)
    raise_exc(I, "IndexError", fmt::format("index {} is out of bounds for axis {} with size {}", i, axis, size));
  return i < 0 ? i + size : i;
}

// One advanced index after validation: normalized positions along input axis `axis`.
struct AdvIndex {
  Tensor idx;  // int64, contiguous, values in [0, size)
  int64_t stride;
};

// The geometry an index expression selects.
struct Selection {
  Dims shape, strides;  // the basic (view) part, in output order
  int64_t offset = 0;
  std::vector<AdvIndex> adv;
  Dims adv_shape;   // broadcast shape of the advanced indices
  int adv_pos = 0;  // where the advanced dims go among the basic output dims
};

// A bool mask as one int64 index tensor per masked dimension.
void mask_to_indices(const Tensor& mask, std::vector<Tensor>& out) {
  int m = mask.ndim();
  int64_t n = mask.numel(), nnz = 0;
  for (int64_t k = 0; k < n; ++k) nnz += mask.item_at(k) != 0;
  for (int j = 0; j < m; ++j) out.emplace_back(DType::Int64, Dims{nnz});
  int64_t pos = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (mask.item_at(k) == 0) continue;
    int64_t rest = k;
    for (int j = m - 1; j >= 0; --j) {
      out[out.size() - m + j].data<int64_t>()[pos] = rest % mask.dim(j);
      rest /= mask.dim(j);
    }
    ++pos;
  }
}

Selection select(Interp& I, const Tensor& t, const Value& key) {
  Item items_buf[kMaxIndexItems];
  std::vector<Tensor> arrays;
  int nitems = 0;
  auto add = [&](const Value& v) {
    if (nitems == kMaxIndexItems) raise_exc(I, "IndexError", "too many indices for tensor");
    if (v.is_bool()) bad_index(I);
    parse_item(I, v, items_buf[nitems++], arrays);
  };
  if (key.is(Kind::Tuple)) {
    for (const Value& v : key.as<Tuple>()->items) add(v);
  } else {
    add(key);
  }
  int consumed = 0, ellipses = 0;
  bool any_array = false;
  for (int k = 0; k < nitems; ++k) {
    const Item& it = items_buf[k];
    switch (it.kind) {
      case Item::Int:
      case Item::Slice: ++consumed; break;
      case Item::Array:
        consumed += arrays[it.arr].dtype() == DType::Bool ? arrays[it.arr].ndim() : 1;
        any_array = true;
        break;
      case Item::Ellipsis: ++ellipses; break;
      case Item::NewAxis: break;
    }
  }
  if (ellipses > 1) raise_exc(I, "IndexError", "an index can only have a single ellipsis ('...')");
  if (consumed > t.ndim())
    raise_exc(
        I, "IndexError",
        fmt::format("too many indices for tensor: tensor is {}-dimensional, but {} were indexed", t.ndim(), consumed));
  Selection sel;
  sel.offset = t.offset();
  int d = 0;               // next input dimension
  int last_adv_item = -2;  // item index of the previous advanced index
  bool adjacent = true;
  std::vector<Tensor> adv_idx;
  std::vector<int> adv_axis;
  auto push = [&](int64_t size, int64_t stride) {
    if (sel.shape.size() == kernels::kMaxDims)
      raise_exc(I, "IndexError", fmt::format("indexing gives more than {} dimensions", kernels::kMaxDims));
    sel.shape.push_back(size);
    sel.strides.push_back(stride);
  };
  auto note_adv = [&](int k) {
    if (adv_idx.empty())
      sel.adv_pos = sel.shape.size();
    else if (last_adv_item != k - 1)
      adjacent = false;
    last_adv_item = k;
  };
  for (int k = 0; k < nitems; ++k) {
    Item& it = items_buf[k];
    switch (it.kind) {
      case Item::Int:
        if (any_array) {
          note_adv(k);
          Tensor s(DType::Int64, Dims{});
          *s.data<int64_t>() = it.i;
          adv_idx.push_back(std::move(s));
          adv_axis.push_back(d++);
        } else {
          sel.offset += check_bound(I, it.i, t.dim(d), d) * t.strides()[d];
          ++d;
        }
        break;
      case Item::Slice: {
        int64_t start, step, len;
        slice_bounds(I, it.slice, t.dim(d), start, step, len);
        if (len > 0) sel.offset += start * t.strides()[d];
        // A step wider than the axis selects one element; its stride is then irrelevant (and could overflow).
        push(len, len > 1 ? t.strides()[d] * step : t.strides()[d]);
        ++d;
        break;
      }
      case Item::NewAxis: push(1, 0); break;
      case Item::Ellipsis:
        for (int n = t.ndim() - consumed; n > 0; --n, ++d) push(t.dim(d), t.strides()[d]);
        break;
      case Item::Array: {
        note_adv(k);
        const Tensor& arr = arrays[it.arr];
        if (arr.dtype() == DType::Bool) {
          int m = arr.ndim();
          for (int j = 0; j < m; ++j)
            if (arr.dim(j) != t.dim(d + j))
              raise_exc(I, "IndexError",
                        fmt::format("boolean index did not match indexed tensor along axis {}; size of axis is {} but "
                                    "size of corresponding boolean axis is {}",
                                    d + j, t.dim(d + j), arr.dim(j)));
          if (m == 0) raise_exc(I, "IndexError", "a 0-d bool tensor cannot be used as an index");
          kernel_call(I, [&] { mask_to_indices(arr, adv_idx); });
          for (int j = 0; j < m; ++j) adv_axis.push_back(d++);
        } else {
          adv_idx.push_back(arr);
          adv_axis.push_back(d++);
        }
        break;
      }
    }
  }
  for (; d < t.ndim(); ++d) push(t.dim(d), t.strides()[d]);
  if (adv_idx.empty()) return sel;
  if (!adjacent) sel.adv_pos = 0;
  // Broadcast the advanced indices together and normalize their values.
  Dims b = adv_idx[0].shape();
  for (size_t j = 1; j < adv_idx.size(); ++j) {
    try {
      b = kernels::broadcast_shapes("index", b, adv_idx[j].shape());
    } catch (const kernels::ShapeError&) {
      std::string shapes;
      for (auto& x : adv_idx) shapes += (shapes.empty() ? "" : " ") + x.shape().str();
      raise_exc(I, "IndexError",
                "shape mismatch: indexing tensors could not be broadcast together with shapes " + shapes);
    }
  }
  if (sel.shape.size() + b.size() > kernels::kMaxDims)
    raise_exc(I, "IndexError", fmt::format("indexing gives more than {} dimensions", kernels::kMaxDims));
  sel.adv_shape = b;
  for (size_t j = 0; j < adv_idx.size(); ++j) {
    int axis = adv_axis[j];
    int64_t size = t.dim(axis);
    const Tensor& src = adv_idx[j];
    Tensor norm = kernel_call(I, [&] { return Tensor(DType::Int64, b); });
    Tensor bview = Tensor::view(src, b, kernels::broadcast_strides(src.shape(), src.strides(), b), src.offset());
    int64_t n = norm.numel();
    int64_t* out = norm.data<int64_t>();
    for (int64_t k = 0; k < n; ++k) {
      Value v = element_value(bview, k);
      out[k] = check_bound(I, v.as_int(), size, axis);
    }
    sel.adv.push_back({std::move(norm), t.strides()[axis]});
  }
  return sel;
}

// Output geometry of an advanced selection: for each output dim, its size,
// its stride in the source (basic dims) or in the flat advanced index (B dims).
struct AdvLayout {
  Dims shape;
  Dims src_stride;               // 0 for B dims
  Dims b_stride;                 // 0 for basic dims
  std::vector<int64_t> adv_off;  // source offset contributed by the advanced indices, per B element
};

AdvLayout layout(const Selection& sel) {
  AdvLayout L;
  Dims bstr = kernels::contiguous_strides(sel.adv_shape);
  auto add_basic = [&](int i) {
    L.shape.push_back(sel.shape[i]);
    L.src_stride.push_back(sel.strides[i]);
    L.b_stride.push_back(0);
  };
  for (int i = 0; i < sel.adv_pos; ++i) add_basic(i);
  for (int i = 0; i < sel.adv_shape.size(); ++i) {
    L.shape.push_back(sel.adv_shape[i]);
    L.src_stride.push_back(0);
    L.b_stride.push_back(bstr[i]);
  }
  for (int i = sel.adv_pos; i < sel.shape.size(); ++i) add_basic(i);
  int64_t nb = sel.adv_shape.product();
  L.adv_off.assign(static_cast<size_t>(nb), 0);
  for (auto& a : sel.adv) {
    const int64_t* idx = a.idx.data<int64_t>();
    for (int64_t k = 0; k < nb; ++k) L.adv_off[static_cast<size_t>(k)] += idx[k] * a.stride;
  }
  return L;
}

// Calls f(source offset, output flat index) for every element of the output.
template <class F>
void for_each_adv(const Selection& sel, const AdvLayout& L, F&& f) {
  int64_t n = L.shape.product();
  if (n == 0) return;
  int nd = L.shape.size();
  Dims idx;
  idx.resize(nd);
  int64_t src = sel.offset, b = 0;
  for (int64_t k = 0; k < n; ++k) {
    f(src + L.adv_off[static_cast<size_t>(b)], k);
    for (int i = nd - 1; i >= 0; --i) {
      if (++idx[i] < L.shape[i]) {
        src += L.src_stride[i];
        b += L.b_stride[i];
        break;
      }
      src -= L.src_stride[i] * (L.shape[i] - 1);
      b -= L.b_stride[i] * (L.shape[i] - 1);
      idx[i] = 0;
    }
  }
}

// The value of an assignment as a tensor of `dtype` broadcastable to `shape`.
Tensor assigned_value(Interp& I, const Tensor& dst_base, const Value& v, const Dims& shape) {
  DType dt = dst_base.dtype();
  Tensor val;
  if (is_tensor(v)) {
    val = tensor_of(v);
  } else if (v.is_int() || v.is_float() || v.is_bool() || v.is(Kind::List) || v.is(Kind::Tuple)) {
    val = tensor_from_value(I, v, &dt, "setitem");
  } else {
    raise_type_error(
        I, fmt::format("can only assign a number, a list or a Tensor to a tensor element, not {}", I.type_name(v)));
  }
  // Leading dimensions of size 1 may be dropped, as NumPy allows.
  Dims vs = val.shape(), vst = val.strides();
  int drop = 0;
  while (vs.size() - drop > shape.size() && vs[drop] == 1) ++drop;
  Dims s2, st2;
  for (int i = drop; i < vs.size(); ++i) {
    s2.push_back(vs[i]);
    st2.push_back(vst[i]);
  }
  bool ok = s2.size() <= shape.size();
  for (int i = 0; ok && i < s2.size(); ++i) {
    int64_t a = s2[i], b = shape[shape.size() - s2.size() + i];
    ok = a == b || a == 1;
  }
  if (!ok)
    raise_value_error(
        I, fmt::format("could not broadcast input tensor from shape {} into shape {}", vs.str(), shape.str()));
  Tensor flat = Tensor::view(val, s2, st2, val.offset());
  Tensor bv = Tensor::view(flat, shape, kernels::broadcast_strides(s2, st2, shape), flat.offset());
  // Same dtype and no aliasing with the destination: read it in place.
  if (bv.dtype() == dt && !bv.shares_storage(dst_base)) return bv;
  return kernel_call(I, [&] {
    Tensor c(dt, s2);
    kernels::copy_strided(flat, c);
    return Tensor::view(c, shape, kernels::broadcast_strides(s2, c.strides(), shape), 0);
  });
}

}  // namespace

Value tensor_getitem(Interp& I, const Value& self, const Value& key) {
  TensorObj* o = tensor_obj(self);
  const Tensor& t = o->t;
  Class* cls = result_class(o);
  if (key.is_int() && t.ndim() > 0) {
    int64_t i = check_bound(I, key.as_int(), t.dim(0), 0);
    Dims shape, strides;
    for (int k = 1; k < t.ndim(); ++k) {
      shape.push_back(t.dim(k));
      strides.push_back(t.strides()[k]);
    }
    return wrap_tensor(cls, Tensor::view(t, shape, strides, t.offset() + i * t.strides()[0]));
  }
  Selection sel = select(I, t, key);
  if (sel.adv.empty()) return wrap_tensor(cls, Tensor::view(t, sel.shape, sel.strides, sel.offset));
  AdvLayout L = layout(sel);
  Tensor out = kernel_call(I, [&] { return Tensor(t.dtype(), L.shape); });
  size_t sz = t.itemsize();
  const char* src = static_cast<const char*>(t.storage()->data);
  char* dst = static_cast<char*>(out.raw());
  for_each_adv(sel, L, [&](int64_t so, int64_t k) {
    std::memcpy(dst + k * static_cast<int64_t>(sz), src + so * static_cast<int64_t>(sz), sz);
  });
  return wrap_tensor(cls, std::move(out));
}

void tensor_setitem(Interp& I, const Value& self, const Value& key, const Value& v) {
  if (is_tracer(v))
    trace::cannot_trace(I, v, "writing a traced value into a concrete tensor (x[...] = tracer) cannot be traced");
  const Tensor& t = tensor_obj(self)->t;
  Selection sel = select(I, t, key);
  if (sel.adv.empty()) {
    Tensor dst = Tensor::view(t, sel.shape, sel.strides, sel.offset);
    Tensor val = assigned_value(I, t, v, sel.shape);
    kernel_call(I, [&] { kernels::copy_strided(val, dst); });
    return;
  }
  AdvLayout L = layout(sel);
  Tensor val = assigned_value(I, t, v, L.shape);
  size_t sz = t.itemsize();
  char* dst = static_cast<char*>(t.storage()->data);
  const char* vbase = static_cast<const char*>(val.storage()->data);
  // Walk the value's (broadcast) geometry alongside the output order.
  int nd = val.ndim();
  Dims idx;
  idx.resize(nd);
  int64_t voff = val.offset();
  for_each_adv(sel, L, [&](int64_t so, int64_t) {
    std::memcpy(dst + so * static_cast<int64_t>(sz), vbase + voff * static_cast<int64_t>(sz), sz);
    for (int i = nd - 1; i >= 0; --i) {
      if (++idx[i] < val.dim(i)) {
        voff += val.strides()[i];
        break;
      }
      voff -= val.strides()[i] * (val.dim(i) - 1);
      idx[i] = 0;
    }
  });
}

Value tracer_getitem(Interp& I, const Value& self, const Value& key) {
  const TracerObj& tr = trace::usable(I, self);
  const Dims& shape = tr.spec.shape;
  std::vector<Value> keys;
  if (key.is(Kind::Tuple))
    keys = key.as<Tuple>()->items;
  else
    keys.push_back(key);
  int consumed = 0, ellipses = 0;
  for (Value& k : keys) {
    if (is_tracer(k)) trace::needs_value(I, k, "indexing with a tensor");
    // A 0-d integer tensor indexes like an int, as in select().
    if (is_tensor(k) && tensor_of(k).ndim() == 0 && kernels::is_integral(tensor_of(k).dtype()))
      k = element_value(tensor_of(k), 0);
    if (k.is_int() || k.is(Kind::Slice)) {
      ++consumed;
    } else if (k.identical(I.ellipsis)) {
      ++ellipses;
    } else if (!k.is_none()) {
      if (is_tensor(k) || k.is(Kind::List))
        trace::cannot_trace(I, self,
                            "indexing a traced tensor with a tensor or a list (advanced indexing) is not "
                            "supported\nhelp: use msl.ops.gather");
      bad_index(I);
    }
  }
  if (ellipses > 1) raise_exc(I, "IndexError", "an index can only have a single ellipsis ('...')");
  if (consumed > shape.size())
    raise_exc(I, "IndexError",
              fmt::format("too many indices for tensor: tensor is {}-dimensional, but {} were indexed", shape.size(),
                          consumed));
  std::vector<int64_t> begin, end, strides, out_shape;
  int d = 0;
  auto take_all = [&] {
    begin.push_back(0);
    end.push_back(shape[d]);
    strides.push_back(1);
    out_shape.push_back(shape[d++]);
  };
  for (const Value& k : keys) {
    if (k.is_int()) {
      int64_t i = check_bound(I, k.as_int(), shape[d], d);
      begin.push_back(i);
      end.push_back(i + 1);
      strides.push_back(1);
      ++d;
    } else if (k.is(Kind::Slice)) {
      int64_t start, step, len;
      slice_bounds(I, k.as<msl::Slice>(), shape[d], start, step, len);
      // The end the kernel's own slice rules turn back into this selection:
      // a negative end means "before index 0" only once clamped past -n.
      int64_t stop = start + len * step;
      if (len == 0) stop = start;
      if (step < 0 && stop < 0) stop = -shape[d] - 1;
      begin.push_back(start);
      end.push_back(stop);
      strides.push_back(step);
      out_shape.push_back(len);
      ++d;
    } else if (k.is_none()) {
      out_shape.push_back(1);
    } else {  // the ellipsis: every axis no other item consumes
      for (int n = shape.size() - consumed; n > 0; --n) take_all();
    }
  }
  while (d < shape.size()) take_all();
  if (out_shape.size() > kernels::kMaxDims)
    raise_exc(I, "IndexError", fmt::format("indexing gives more than {} dimensions", kernels::kMaxDims));
  kernels::Attrs attrs{{"begin", begin}, {"end", end}, {"strides", strides}};
  Value r = trace::apply_prim(I, kernels::Prim::strided_slice, std::span<const Value>(&self, 1), attrs);
  if (tracer_obj(r)->spec.shape.vec() == out_shape) return r;
  kernels::Attrs reshape{{"shape", out_shape}};
  return trace::apply_prim(I, kernels::Prim::reshape, std::span<const Value>(&r, 1), reshape);
}

}  // namespace msl
