// Indexing through primitives: what x[key] and x[key] = v do when the key
// is advanced (integer or bool tensors, lists) or anything is traced. The
// same code runs eagerly on tensors, records into a trace on tracers, and
// gives graph mode its functional update (x[i] = v lowers to
// x = setitem(x, i, v), lang/ir/lower.cpp), so PyNative and graph mode
// compute the same copies of the same elements, bit for bit. The binding
// never touches tensor memory here: it computes shapes and attributes, and
// kernels run on the tensor's device.
//
// NumPy's advanced indexing as primitives:
//   V  = strided_slice(x)             the slices; advanced axes stay whole
//   Vt = transpose(V, adv + rest)     the indexed axes first
//   G  = gather_nd(Vt, idx)           idx: the advanced indices broadcast
//                                     together and stacked, [B..., K]
//   G' = transpose(G), reshape(G')    the B block where NumPy puts it
//                                     (adjacent indices: in their place;
//                                     otherwise first), None axes added
// A write runs the same steps backwards: the value, broadcast to x[key]'s
// shape, is rearranged to B + rest, scattered into Vt with
// tensor_scatter_update, and the result is assigned into x's view (eager,
// in place) or put back with transpose and strided_slice_update (a new x).
//
// A bool mask is nonzero(mask), one integer index per masked dimension. Its
// length depends on the data, so a trace takes masks only where the shape
// does not: a concrete mask (nonzero runs now, its indices are constants),
// or `x[mask] = v` with v not depending on the count (masked_fill). x[mask]
// with a traced mask is a trace error, so graph mode runs it eagerly.
#include <fmt/format.h>

#include <numeric>
#include <optional>

#include "interp/core/native_args.h"
#include "interp/tensor/tensor_index.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"
#include "kernels/errors.h"
#include "kernels/shape_util.h"

namespace msl::index_detail {

using kernels::Attrs;
using kernels::Device;
using kernels::Dims;
using kernels::DType;
using kernels::Prim;
using kernels::Tensor;

namespace {

const Dims& shape_of(const Value& v) { return is_tracer(v) ? tracer_obj(v)->spec.shape : tensor_of(v).shape(); }
DType dtype_of(const Value& v) { return is_tracer(v) ? tracer_obj(v)->spec.dtype : tensor_of(v).dtype(); }
Class* tensor_class(const Value& v) { return tensor_class_of(static_cast<const NativeData*>(v.obj()))->tensor_cls; }

// The device of a traced tensor's device type: the default device when it
// is of that type (the Debug device in tests), else the CPU.
Device* device_of_type(kernels::DeviceType t) {
  Device* d = kernels::default_device();
  return d->type() == t ? d : kernels::cpu_device();
}

// `t` as an operand of a primitive on `home`: itself when already there or
// a 0-d CPU tensor (a host scalar goes with any device), else a copy.
Tensor on_device(const Tensor& t, Device* home) {
  if (t.device() == home || (t.ndim() == 0 && t.device()->type() == kernels::DeviceType::CPU)) return t;
  return t.to_device(home);
}

std::vector<int64_t> vec(const Dims& d) { return std::vector<int64_t>(d.begin(), d.end()); }

// Primitive `p` on tensors or tracers: recorded when any input is traced,
// run now otherwise. `axes` maps the index dimension of a gather_nd /
// tensor_scatter_update range error to the axis of x the user indexed.
Value prim(Interp& I, Class* cls, Prim p, std::vector<Value> in, const Attrs& attrs = {},
           const std::vector<int>* axes = nullptr) {
  if (trace::any_tracer(in)) {
    // Concrete operands made here (index lists, values from numbers) may be
    // on another device than the traced tensor: the graph takes them on its.
    kernels::DeviceType dev{};
    for (const Value& v : in)
      if (is_tracer(v)) {
        dev = tracer_obj(v)->spec.device;
        break;
      }
    for (Value& v : in)
      if (is_tensor(v) && tensor_of(v).device()->type() != dev)
        v = wrap_tensor(cls, kernel_call(I, [&] { return tensor_of(v).to_device(device_of_type(dev)); }));
    return trace::apply_prim(I, p, in, attrs);
  }
  return wrap_tensor(cls, kernel_call(I, [&] {
                       // Index tensors and values made here from Python
                       // numbers and lists go to the device of input 0 (x,
                       // or what it was derived from).
                       std::vector<Tensor> ts;
                       for (const Value& v : in) ts.push_back(on_device(tensor_of(v), tensor_of(in[0]).device()));
                       try {
                         return kernels::execute1(p, ts, attrs);
                       } catch (const kernels::IndexOutOfRange& e) {
                         if (!axes) throw;
                         throw kernels::IndexError(
                             fmt::format("index {} is out of bounds for axis {} with size {}", e.index,
                                         (*axes)[static_cast<size_t>(e.dim)], e.size));
                       }
                     }));
}

Value reshape(Interp& I, Class* cls, const Value& v, const Dims& shape) {
  if (shape_of(v) == shape) return v;
  return prim(I, cls, Prim::reshape, {v}, Attrs{{"shape", vec(shape)}});
}

Value transpose(Interp& I, Class* cls, const Value& v, const std::vector<int64_t>& perm) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return v;
  return prim(I, cls, Prim::transpose, {v}, Attrs{{"perm", perm}});
}

// Writes `value` into `dst`'s storage (an eager write: dst is a tensor or a
// view of one).
void assign(Interp& I, const Value& dst, const Value& value) {
  kernel_call(I, [&] {
    Tensor in[2] = {tensor_of(dst), on_device(tensor_of(value), tensor_of(dst).device())};
    kernels::execute1(Prim::assign, in);
  });
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

Value int_tensor(Interp& I, Class* cls, int64_t i) {
  DType dt = DType::Int64;
  return wrap_tensor(cls, tensor_from_value(I, Value::integer(i), &dt, "index"));
}

// NumPy's check that a boolean index fits the axes it covers.
void check_mask(Interp& I, const Dims& mask, const Dims& x, int d) {
  if (mask.size() == 0) raise_exc(I, "IndexError", "a 0-d bool tensor cannot be used as an index");
  for (int j = 0; j < mask.size(); ++j)
    if (d + j >= x.size() || mask[j] != x[d + j])
      raise_exc(I, "IndexError",
                fmt::format("boolean index did not match indexed tensor along axis {}; size of axis is {} but size "
                            "of corresponding boolean axis is {}",
                            d + j, d + j < x.size() ? x[d + j] : 0, mask[j]));
}

// Python slice bounds as strided_slice attributes for one axis of size n
// (the end the kernel's own slice rules turn back into this selection: a
// negative end means "before index 0" only once clamped past -n).
void slice_attrs(Interp& I, const msl::Slice* s, int64_t n, int64_t& begin, int64_t& end, int64_t& step,
                 int64_t& len) {
  int64_t stop;
  slice_indices(I, s, n, begin, stop, step);
  len = slice_length(begin, stop, step);
  end = begin + len * step;
  if (len == 0) end = begin;
  if (step < 0 && end < 0) end = -n - 1;
}

// How a key selects from x, as primitive attributes and shapes.
struct Plan {
  std::vector<int64_t> begin, end, strides;  // strided_slice over every axis of x
  bool sliced = false;                       // the slice is not all of x
  Dims slice_shape;                          // its shape (int-indexed axes of size 1)
  // Advanced part (empty without advanced indices):
  std::vector<int> adv_axes;   // axes of x the advanced indices take, in key order
  std::vector<Value> adv_idx;  // one integer index per entry of adv_axes
  std::vector<int64_t> rest;   // the other axes of x, in order
  Dims B;                      // broadcast shape of the advanced indices
  int p = 0;                   // rest axes before the B block in the result
  Dims out_shape;              // x[key].shape
};

// Advanced indices as one [B..., K] int64 tensor for gather_nd.
Value stacked_indices(Interp& I, Class* cls, const Plan& pl) {
  Dims col = pl.B;
  col.push_back(1);
  std::vector<Value> cols;
  for (const Value& v : pl.adv_idx) {
    Value c = v;
    if (dtype_of(c) != DType::Int64) c = prim(I, cls, Prim::cast, {c}, Attrs{{"dtype", DType::Int64}});
    if (shape_of(c) != pl.B) c = prim(I, cls, Prim::broadcast_to, {c}, Attrs{{"shape", vec(pl.B)}});
    cols.push_back(reshape(I, cls, c, col));
  }
  if (cols.size() == 1) return cols[0];
  return prim(I, cls, Prim::concat, cols, Attrs{{"axis", int64_t{-1}}});
}

Plan plan(Interp& I, Class* cls, const Value& x, const Key& key) {
  const Dims& shape = shape_of(x);
  int nd = shape.size();
  Plan pl;
  // The result's dimensions other than B, in key order: (size, is a None axis).
  std::vector<std::pair<int64_t, bool>> basic;
  int adv_pos = 0, last_adv = -2;
  bool adjacent = true;
  int d = 0;
  auto whole = [&](bool keep) {
    pl.begin.push_back(0);
    pl.end.push_back(shape[d]);
    pl.strides.push_back(1);
    pl.slice_shape.push_back(shape[d]);
    if (keep) {
      pl.rest.push_back(d);
      basic.emplace_back(shape[d], false);
    }
    ++d;
  };
  auto note_adv = [&](int k) {
    if (pl.adv_axes.empty()) {
      adv_pos = static_cast<int>(basic.size());
      for (auto& b : basic) pl.p += b.second ? 0 : 1;
    } else if (last_adv != k - 1) {
      adjacent = false;
    }
    last_adv = k;
  };
  for (int k = 0; k < static_cast<int>(key.items.size()); ++k) {
    const Item& it = key.items[static_cast<size_t>(k)];
    switch (it.kind) {
      case Item::Int: {
        int64_t i = check_bound(I, it.i, shape[d], d);
        if (key.any_array) {
          note_adv(k);
          pl.adv_axes.push_back(d);
          pl.adv_idx.push_back(int_tensor(I, cls, i));
          whole(false);
        } else {
          pl.begin.push_back(i);
          pl.end.push_back(i + 1);
          pl.strides.push_back(1);
          pl.slice_shape.push_back(1);
          pl.sliced = true;
          ++d;
        }
        break;
      }
      case Item::Slice: {
        int64_t b, e, s, len;
        slice_attrs(I, it.slice, shape[d], b, e, s, len);
        pl.begin.push_back(b);
        pl.end.push_back(e);
        pl.strides.push_back(s);
        pl.slice_shape.push_back(len);
        pl.sliced |= len != shape[d] || s != 1;
        pl.rest.push_back(d);
        basic.emplace_back(len, false);
        ++d;
        break;
      }
      case Item::NewAxis: basic.emplace_back(1, true); break;
      case Item::Ellipsis:
        for (int n = nd - key.consumed; n > 0; --n) whole(true);
        break;
      case Item::Array: {
        note_adv(k);
        if (!it.is_mask()) {
          pl.adv_axes.push_back(d);
          pl.adv_idx.push_back(it.arr);
          whole(false);
          break;
        }
        const Dims& m = shape_of(it.arr);
        check_mask(I, m, shape, d);
        if (is_tracer(it.arr))
          trace::cannot_trace(I, it.arr,
                              "indexing with a traced bool mask (x[mask]) gives a shape that depends on the mask's "
                              "values\nhelp: x[mask] = v and msl.ops.masked_fill keep the shape and trace");
        // One integer index per masked axis: the columns of nonzero(mask).
        Value nz = prim(I, cls, Prim::nonzero, {it.arr});
        int64_t nnz = shape_of(nz)[0];
        for (int j = 0; j < m.size(); ++j) {
          Attrs a{{"begin", std::vector<int64_t>{0, j}},
                  {"end", std::vector<int64_t>{nnz, j + 1}},
                  {"strides", std::vector<int64_t>{1, 1}}};
          pl.adv_axes.push_back(d);
          pl.adv_idx.push_back(reshape(I, cls, prim(I, cls, Prim::strided_slice, {nz}, a), Dims{nnz}));
          whole(false);
        }
        break;
      }
    }
  }
  while (d < nd) whole(true);
  if (!pl.adv_axes.empty()) {
    if (!adjacent) adv_pos = pl.p = 0;
    Dims b = shape_of(pl.adv_idx[0]);
    for (size_t j = 1; j < pl.adv_idx.size(); ++j) {
      try {
        b = kernels::broadcast_shapes("index", b, shape_of(pl.adv_idx[j]));
      } catch (const kernels::ShapeError&) {
        // NumPy names the index arrays as given (a mask as its count).
        std::string shapes;
        for (const Item& it : key.items)
          if (it.kind == Item::Array)
            shapes += (shapes.empty() ? "" : " ") + (it.is_mask() ? "(mask)" : shape_of(it.arr).str());
        raise_exc(I, "IndexError",
                  "shape mismatch: indexing tensors could not be broadcast together with shapes " + shapes);
      }
    }
    pl.B = b;
  }
  for (int i = 0; i < static_cast<int>(basic.size()); ++i) {
    if (i == adv_pos && !pl.adv_axes.empty())
      for (int64_t s : pl.B) pl.out_shape.push_back(s);
    pl.out_shape.push_back(basic[static_cast<size_t>(i)].first);
  }
  if (!pl.adv_axes.empty() && adv_pos == static_cast<int>(basic.size()))
    for (int64_t s : pl.B) pl.out_shape.push_back(s);
  if (pl.out_shape.size() > kernels::kMaxDims)
    raise_exc(I, "IndexError", fmt::format("indexing gives more than {} dimensions", kernels::kMaxDims));
  return pl;
}

// B + rest -> rest[:p] + B + rest[p:] (the permutation of gather_nd's result).
std::vector<int64_t> block_perm(const Plan& pl) {
  int64_t nb = pl.B.size(), nr = static_cast<int64_t>(pl.rest.size());
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < pl.p; ++i) perm.push_back(nb + i);
  for (int64_t i = 0; i < nb; ++i) perm.push_back(i);
  for (int64_t i = pl.p; i < nr; ++i) perm.push_back(nb + i);
  return perm;
}

// (rest[:p] + B + rest[p:]).
Dims arranged_shape(const Plan& pl, const Dims& sliced) {
  Dims s;
  for (int i = 0; i < pl.p; ++i) s.push_back(sliced[static_cast<int>(pl.rest[static_cast<size_t>(i)])]);
  for (int64_t b : pl.B) s.push_back(b);
  for (size_t i = static_cast<size_t>(pl.p); i < pl.rest.size(); ++i)
    s.push_back(sliced[static_cast<int>(pl.rest[i])]);
  return s;
}

// x's axes with the advanced ones first: the layout gather_nd indexes.
std::vector<int64_t> adv_first(const Plan& pl) {
  std::vector<int64_t> perm(pl.adv_axes.begin(), pl.adv_axes.end());
  perm.insert(perm.end(), pl.rest.begin(), pl.rest.end());
  return perm;
}

Value sliced(Interp& I, Class* cls, const Value& x, const Plan& pl) {
  if (!pl.sliced) return x;
  return prim(I, cls, Prim::strided_slice, {x}, Attrs{{"begin", pl.begin}, {"end", pl.end}, {"strides", pl.strides}});
}

// The value of `x[key] = v` as a tensor (or tracer) of x's dtype and the
// shape `shape`, by NumPy's rules: numbers and lists convert, tensors are
// cast, leading dimensions of size 1 may be dropped, then it broadcasts.
Value assigned_value(Interp& I, Class* cls, DType dt, const Value& v, const Dims& shape) {
  Value val;
  if (is_tensor_or_tracer(v)) {
    val = v;
    if (dtype_of(val) != dt) val = prim(I, cls, Prim::cast, {val}, Attrs{{"dtype", dt}});
  } else if (v.is_int() || v.is_float() || v.is_bool() || v.is(Kind::List) || v.is(Kind::Tuple)) {
    val = wrap_tensor(cls, tensor_from_value(I, v, &dt, "setitem"));
  } else {
    raise_type_error(
        I, fmt::format("can only assign a number, a list or a Tensor to a tensor element, not {}", I.type_name(v)));
  }
  const Dims& vs = shape_of(val);
  int drop = 0;
  while (vs.size() - drop > shape.size() && vs[drop] == 1) ++drop;
  Dims s2;
  for (int i = drop; i < vs.size(); ++i) s2.push_back(vs[i]);
  bool ok = s2.size() <= shape.size();
  for (int i = 0; ok && i < s2.size(); ++i) {
    int64_t a = s2[i], b = shape[shape.size() - s2.size() + i];
    ok = a == b || a == 1;
  }
  if (!ok)
    raise_value_error(
        I, fmt::format("could not broadcast input tensor from shape {} into shape {}", vs.str(), shape.str()));
  val = reshape(I, cls, val, s2);
  if (s2 == shape) return val;
  return prim(I, cls, Prim::broadcast_to, {val}, Attrs{{"shape", vec(shape)}});
}

// x[mask] = v where v does not depend on the masked count: v broadcasts
// against x.shape[m:], so masked_fill(x, mask, v) is the same write with a
// static shape (it traces with a traced mask). nullopt: not this case.
std::optional<Value> masked_write(Interp& I, Class* cls, const Value& x, const Key& key, const Value& v,
                                  bool in_place) {
  if (key.items.size() != 1 || key.items[0].kind != Item::Array || !key.items[0].is_mask()) return std::nullopt;
  const Value& mask = key.items[0].arr;
  const Dims& xs = shape_of(x);
  Dims ms = shape_of(mask);
  check_mask(I, ms, xs, 0);
  DType dt = dtype_of(x);
  Value val;
  if (is_tensor_or_tracer(v))
    val = v;
  else if (v.is_int() || v.is_float() || v.is_bool() || v.is(Kind::List) || v.is(Kind::Tuple))
    val = wrap_tensor(cls, tensor_from_value(I, v, &dt, "setitem"));
  else
    return std::nullopt;  // the general path's TypeError
  // Without its leading 1s the value must fit x.shape[m:] alone.
  Dims rest;
  for (int i = ms.size(); i < xs.size(); ++i) rest.push_back(xs[i]);
  const Dims& vs = shape_of(val);
  int drop = 0;
  while (drop < vs.size() && vs[drop] == 1 && vs.size() - drop > rest.size()) ++drop;
  if (vs.size() - drop > rest.size()) return std::nullopt;
  for (int i = drop; i < vs.size(); ++i) {
    int64_t a = vs[i], b = rest[rest.size() - (vs.size() - i)];
    if (a != b && a != 1) return std::nullopt;
  }
  Value value = assigned_value(I, cls, dt, val, rest);
  while (ms.size() < xs.size()) ms.push_back(1);
  Value r = prim(I, cls, Prim::masked_fill, {x, reshape(I, cls, mask, ms), value});
  if (in_place) assign(I, x, r);
  return in_place ? x : r;
}

}  // namespace

Value read(Interp& I, const Value& x, const Key& key) {
  Class* cls = tensor_class(x);
  Plan pl = plan(I, cls, x, key);
  Value v = sliced(I, cls, x, pl);
  if (pl.adv_axes.empty()) return reshape(I, cls, v, pl.out_shape);
  v = transpose(I, cls, v, adv_first(pl));
  Value idx = stacked_indices(I, cls, pl);
  Value g = prim(I, cls, Prim::gather_nd, {v, idx}, {}, &pl.adv_axes);
  g = transpose(I, cls, g, block_perm(pl));
  return reshape(I, cls, g, pl.out_shape);
}

Value update(Interp& I, const Value& x, const Key& key, const Value& v, bool in_place) {
  Class* cls = tensor_class(x);
  if (auto r = masked_write(I, cls, x, key, v, in_place)) return *r;
  Plan pl = plan(I, cls, x, key);
  DType dt = dtype_of(x);
  Value val = assigned_value(I, cls, dt, v, pl.out_shape);
  Value window = sliced(I, cls, x, pl);
  Value result;  // the new contents of the window
  if (pl.adv_axes.empty()) {
    result = reshape(I, cls, val, pl.slice_shape);
    if (in_place) {
      assign(I, window, result);
      return x;
    }
  } else {
    std::vector<int64_t> first = adv_first(pl);
    Value vt = transpose(I, cls, window, first);
    // The value as gather_nd's result would be laid out: B + rest.
    Value u = reshape(I, cls, val, arranged_shape(pl, pl.slice_shape));
    u = transpose(I, cls, u, inverse(block_perm(pl)));
    Value idx = stacked_indices(I, cls, pl);
    Value scattered = prim(I, cls, Prim::tensor_scatter_update, {vt, idx, u}, {}, &pl.adv_axes);
    if (in_place) {
      assign(I, vt, scattered);
      return x;
    }
    result = transpose(I, cls, scattered, inverse(first));
    if (!pl.sliced) return result;
  }
  return prim(I, cls, Prim::strided_slice_update, {x, result},
              Attrs{{"begin", pl.begin}, {"end", pl.end}, {"strides", pl.strides}});
}

}  // namespace msl::index_detail
