// The attributes and methods of the Tensor and Parameter classes.
//
// Tensor methods that compute go through the primitive registry (reshape,
// transpose, cast, the reductions), so they accept the same dtypes and raise
// the same messages as the msl._core functions of the same primitives.
// Methods that only re-read the data (item, tolist, copy, len, iteration)
// work on the kernels::Tensor directly.
//
// A Parameter is a tensor with a name and a requires_grad flag; it wraps
// the data it was given without copying, and `set_data` swaps the data in
// place so every holder of the Parameter sees the new value.
//
// On a tracer (interp/tensor/trace.h) the shape/dtype properties answer from its
// spec, and the methods that map to primitives (astype, reshape, transpose,
// T, sum/max/min/mean, argmax/argmin, iteration) record them into the
// trace. Every other method reaches self_tensor, which rejects a tracer
// with the trace's error: those that read values (item, tolist, float(),
// ...) say that the value is not known while tracing, the rest that they
// cannot be traced.
#include <fmt/format.h>

#include <cmath>

#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"

namespace msl {

using kernels::Attrs;
using kernels::Dims;
using kernels::DType;
using kernels::Prim;
using kernels::Tensor;

namespace {

// Methods that read a tensor's values.
bool reads_values(std::string_view method) {
  for (const char* m : {"item", "tolist", "asnumpy", "__float__", "__int__", "__index__", "__str__"})
    if (method == m) return true;
  return false;
}

[[noreturn]] void tracer_unsupported(Interp& I, const Value& self, const char* method) {
  std::string what = std::string(method).starts_with("__") ? std::string(method) : std::string(method) + "()";
  if (reads_values(method)) trace::needs_value(I, self, "Tensor." + what);
  trace::cannot_trace(I, self, fmt::format("Tensor.{} is not supported on a traced tensor", what));
}

TensorObj* self_tensor(Interp& I, Args& a, const char* method) {
  if (!a.pos.empty() && is_tracer(a.pos[0])) tracer_unsupported(I, a.pos[0], method);
  if (a.pos.empty() || !is_tensor(a.pos[0]))
    raise_type_error(I, fmt::format("descriptor '{}' requires a 'Tensor' object", method));
  return tensor_obj(a.pos[0]);
}

TensorObj* self_param(Interp& I, Args& a, const char* method) {
  TensorObj* o = self_tensor(I, a, method);
  if (!o->param) raise_type_error(I, fmt::format("descriptor '{}' requires a 'Parameter' object", method));
  return o;
}

// Axes given as None (all), an int, or a tuple/list of ints.
std::vector<int64_t> axes_arg(Interp& I, const Value& v, int ndim, const char* fname) {
  std::vector<int64_t> axes;
  if (!given_not_none(v)) {
    for (int i = 0; i < ndim; ++i) axes.push_back(i);
  } else if (v.is(Kind::Tuple) || v.is(Kind::List)) {
    for (const Value& x : v.is(Kind::Tuple) ? v.as<Tuple>()->items : v.as<List>()->items) {
      if (x.is_float()) raise_type_error(I, fmt::format("{}: axis must be an int or a tuple of ints", fname));
      axes.push_back(arg_index(I, x));
    }
  } else {
    if (v.is_float()) raise_type_error(I, fmt::format("{}: axis must be an int or a tuple of ints", fname));
    axes.push_back(arg_index(I, v));
  }
  return axes;
}

// Integers given as separate arguments or as one tuple/list: reshape(2, 3), reshape((2, 3)).
std::vector<int64_t> ints_from_args(Interp& I, std::span<Value> pos) {
  std::span<const Value> items(pos.data(), pos.size());
  if (pos.size() == 1 && (pos[0].is(Kind::Tuple) || pos[0].is(Kind::List))) {
    const auto& v = pos[0].is(Kind::Tuple) ? pos[0].as<Tuple>()->items : pos[0].as<List>()->items;
    items = std::span<const Value>(v.data(), v.size());
  }
  std::vector<int64_t> out;
  for (const Value& x : items) out.push_back(arg_index(I, x));
  return out;
}

Value call_prim(Interp& I, TensorObj* self, Prim p, const Tensor& in, const Attrs& attrs) {
  return run_prim1(I, result_class(self), p, std::span<const Tensor>(&in, 1), attrs);
}

// The receiver when it is a tracer (checked usable), else null.
const TracerObj* tracer_self(Interp& I, Args& a) {
  if (a.pos.empty() || !is_tracer(a.pos[0])) return nullptr;
  return &trace::usable(I, a.pos[0]);
}

// Records a one-input primitive on a tracer value.
Value trace_prim(Interp& I, const Value& x, Prim p, const Attrs& attrs) {
  return trace::apply_prim(I, p, std::span<const Value>(&x, 1), attrs);
}

std::vector<int64_t> reversed_perm(int ndim) {
  std::vector<int64_t> perm;
  for (int i = ndim - 1; i >= 0; --i) perm.push_back(i);
  return perm;
}

// ------------------------------------------------------------- properties

Value prop_shape(Interp& I, Args& a, Object*) {
  const TracerObj* tr = tracer_self(I, a);
  const Dims& shape = tr ? tr->spec.shape : self_tensor(I, a, "shape")->t.shape();
  std::vector<Value> dims;
  for (int64_t d : shape) dims.push_back(Value::integer(d));
  return new_tuple(std::move(dims));
}

Value prop_dtype(Interp& I, Args& a, Object*) {
  if (const TracerObj* tr = tracer_self(I, a)) return dtype_value(tensor_class_of(tr), tr->spec.dtype);
  TensorObj* o = self_tensor(I, a, "dtype");
  return dtype_value(tensor_class_of(o), o->t.dtype());
}

Value prop_ndim(Interp& I, Args& a, Object*) {
  if (const TracerObj* tr = tracer_self(I, a)) return Value::integer(tr->spec.shape.size());
  return Value::integer(self_tensor(I, a, "ndim")->t.ndim());
}
Value prop_size(Interp& I, Args& a, Object*) {
  if (const TracerObj* tr = tracer_self(I, a)) return Value::integer(tr->spec.shape.product());
  return Value::integer(self_tensor(I, a, "size")->t.numel());
}

Tensor reversed_axes_transpose(Interp& I, const Tensor& t) {
  Tensor in = t;
  Attrs attrs{{"perm", reversed_perm(t.ndim())}};
  return kernel_call(I, [&] { return kernels::execute1(Prim::transpose, std::span<const Tensor>(&in, 1), attrs); });
}

Value prop_T(Interp& I, Args& a, Object*) {
  if (const TracerObj* tr = tracer_self(I, a))
    return trace_prim(I, a.pos[0], Prim::transpose, Attrs{{"perm", reversed_perm(tr->spec.shape.size())}});
  TensorObj* o = self_tensor(I, a, "T");
  return wrap_tensor(result_class(o), reversed_axes_transpose(I, o->t));
}

Value prop_data(Interp& I, Args& a, Object*) {
  self_tensor(I, a, "data");
  return a.pos[0];
}

Value prop_name(Interp& I, Args& a, Object*) { return str_value(self_param(I, a, "name")->param->name); }

Value prop_set_name(Interp& I, Args& a, Object*) {
  TensorObj* o = self_param(I, a, "name");
  if (a.pos.size() != 2) raise_type_error(I, "name setter takes one value");
  o->param->name = arg_str(I, a.pos[1], "Parameter name")->s;
  return Value();
}

Value prop_requires_grad(Interp& I, Args& a, Object*) {
  return Value::boolean(self_param(I, a, "requires_grad")->param->requires_grad);
}

Value prop_set_requires_grad(Interp& I, Args& a, Object*) {
  TensorObj* o = self_param(I, a, "requires_grad");
  if (a.pos.size() != 2) raise_type_error(I, "requires_grad setter takes one value");
  if (!a.pos[1].is_bool()) raise_type_error(I, "requires_grad must be a bool, not " + I.type_name(a.pos[1]));
  o->param->requires_grad = a.pos[1].as_bool();
  return Value();
}

void def_property(Interp& I, Class* c, const char* name, NativeFn get, NativeFn set = nullptr) {
  auto p = make<Property>();
  p->fget = make<Native>(name, get).value();
  if (set) p->fset = make<Native>(name, set).value();
  c->dict.set(I.intern(name), p.value());
}

// ---------------------------------------------------------- construction

// Tensor(shape=, dtype=, init=): MindSpore's delayed initialization,
// done at once here (init_data() then returns the tensor itself): the
// values of msl.common.initializer.initializer(init, shape, dtype).
Value initialized_tensor(Interp& I, const Value& shape, const Value& dtype, const Value& init) {
  if (!given_not_none(shape) || !given_not_none(init))
    raise_value_error(I, "For 'Tensor', 'shape' and 'init' must both be given when 'input_data' is None");
  Ref<Module> m = I.import_module("msl.common.initializer", nullptr);
  Value make = m->get(I.intern("initializer"));
  Value args[3] = {init, shape, given(dtype) ? dtype : Value::none()};
  Value t = I.call(make, std::span<Value>(args));
  if (!is_tensor(t)) raise_type_error(I, "Tensor: initializer() did not make a tensor");
  return t;
}

Value tensor_new(Interp& I, Args& a, Object*) {
  Value v[4];
  Args rest = method_args(a);
  bind_args(I, "Tensor", rest, {"input_data", "dtype", "shape", "init"}, 0, v);
  if (!given_not_none(v[0]) && (given_not_none(v[2]) || given_not_none(v[3]))) {
    Value t = initialized_tensor(I, v[2], v[1], v[3]);
    return wrap_tensor(static_cast<TensorClass*>(a.pos[0].as<Class>())->tensor_cls, kernels::Tensor(tensor_of(t)));
  }
  if (given_not_none(v[2]) || given_not_none(v[3]))
    raise_value_error(I, "For 'Tensor', 'shape' and 'init' are only for a Tensor without 'input_data'");
  if (!given_not_none(v[0])) raise_value_error(I, "Tensor: input_data must be given");
  DType d;
  const DType* dp = nullptr;
  if (given_not_none(v[1])) {
    d = dtype_arg(I, v[1], "Tensor");
    dp = &d;
  }
  Tensor t = tensor_from_value(I, v[0], dp, "Tensor");
  return wrap_tensor(static_cast<TensorClass*>(a.pos[0].as<Class>())->tensor_cls, std::move(t));
}

// Tensor.init_data(): the tensor, whose values Tensor(shape=, init=)
// already made.
Value m_init_data(Interp& I, Args& a, Object*) {
  if (a.pos.empty() || !is_tensor(a.pos[0])) raise_type_error(I, "init_data() needs a Tensor");
  return a.pos[0];
}

Value param_new(Interp& I, Args& a, Object*) {
  Value v[3];
  Args rest = method_args(a);
  bind_args(I, "Parameter", rest, {"default_input", "name", "requires_grad"}, 1, v);
  Tensor t = is_tensor(v[0]) ? tensor_of(v[0]) : tensor_from_value(I, v[0], nullptr, "Parameter");
  auto info = std::make_unique<ParamInfo>();
  if (given_not_none(v[1])) info->name = arg_str(I, v[1], "Parameter name")->s;
  if (given(v[2])) {
    if (!v[2].is_bool()) raise_type_error(I, "requires_grad must be a bool, not " + I.type_name(v[2]));
    info->requires_grad = v[2].as_bool();
  }
  Ref<TensorObj> o(new TensorObj(Ref<Class>(a.pos[0].as<Class>()), std::move(t)));
  o->param = std::move(info);
  return o.value();
}

// ---------------------------------------------------------------- methods

Value m_astype(Interp& I, Args& a, Object*) {
  const TracerObj* tr = tracer_self(I, a);
  TensorObj* o = tr ? nullptr : self_tensor(I, a, "astype");
  Value v[1];
  Args rest = method_args(a);
  bind_args(I, "astype", rest, {"dtype"}, 1, v);
  Attrs attrs{{"dtype", dtype_arg(I, v[0], "astype")}};
  if (tr) return trace_prim(I, a.pos[0], Prim::cast, attrs);
  return call_prim(I, o, Prim::cast, o->t, attrs);
}

Value m_reshape(Interp& I, Args& a, Object*) {
  const TracerObj* tr = tracer_self(I, a);
  TensorObj* o = tr ? nullptr : self_tensor(I, a, "reshape");
  no_kwargs(I, "reshape", a);
  Attrs attrs{{"shape", ints_from_args(I, a.pos.subspan(1))}};
  if (tr) return trace_prim(I, a.pos[0], Prim::reshape, attrs);
  // The reshape primitive is a view; a strided tensor is made contiguous first (NumPy copies then too).
  Tensor in = o->t.is_contiguous() ? o->t : kernel_call(I, [&] { return o->t.contiguous(); });
  return call_prim(I, o, Prim::reshape, in, attrs);
}

Value m_transpose(Interp& I, Args& a, Object*) {
  const TracerObj* tr = tracer_self(I, a);
  TensorObj* o = tr ? nullptr : self_tensor(I, a, "transpose");
  no_kwargs(I, "transpose", a);
  if (tr) {
    std::vector<int64_t> perm =
        a.pos.size() == 1 ? reversed_perm(tr->spec.shape.size()) : ints_from_args(I, a.pos.subspan(1));
    return trace_prim(I, a.pos[0], Prim::transpose, Attrs{{"perm", perm}});
  }
  if (a.pos.size() == 1) return wrap_tensor(result_class(o), reversed_axes_transpose(I, o->t));
  Attrs attrs{{"perm", ints_from_args(I, a.pos.subspan(1))}};
  return call_prim(I, o, Prim::transpose, o->t, attrs);
}

// MindSpore 2.x's Tensor.sum(axis=None, dtype=None, keepdims=False) and
// Tensor.max/min(axis=None, keepdims=False); `keep_dims=` (ops.ReduceSum's
// spelling, which earlier MSL versions took) is accepted as a keyword too.
template <Prim p>
Value m_reduce(Interp& I, Args& a, Object*) {
  constexpr bool is_sum = p == Prim::reduce_sum;
  const char* name = is_sum ? "sum" : p == Prim::reduce_max ? "max" : "min";
  const TracerObj* tr = tracer_self(I, a);
  TensorObj* o = tr ? nullptr : self_tensor(I, a, name);
  Value v[4];  // axis, dtype (sum only), keepdims, keep_dims
  Args rest = method_args(a);
  if constexpr (is_sum) {
    bind_args(I, name, rest, {"axis", "dtype", "keepdims", "keep_dims"}, 0, v);
  } else {
    Value w[3];
    bind_args(I, name, rest, {"axis", "keepdims", "keep_dims"}, 0, w);
    v[0] = w[0];
    v[2] = w[1];
    v[3] = w[2];
  }
  if (given(v[2]) && given(v[3])) raise_type_error(I, std::string(name) + "() got both keepdims and keep_dims");
  const Value& keep = given(v[2]) ? v[2] : v[3];
  int ndim = tr ? tr->spec.shape.size() : o->t.ndim();
  Attrs attrs{{"axes", axes_arg(I, v[0], ndim, name)}, {"keep_dims", given(keep) && I.truthy(keep)}};
  Value x = a.pos[0];
  if (given(v[1]) && !v[1].is_none()) {
    Attrs cast{{"dtype", dtype_arg(I, v[1], name)}};
    x = tr ? trace_prim(I, x, Prim::cast, cast) : call_prim(I, o, Prim::cast, o->t, cast);
    if (!tr) o = static_cast<TensorObj*>(x.obj());
  }
  if (tr) return trace_prim(I, x, p, attrs);
  return call_prim(I, o, p, o->t, attrs);
}

// The number of elements a mean over `axes` divides by: the input's count
// over the output's, or, for an empty input, the product of the reduced
// dimensions (the reduction has validated the axes).
int64_t mean_count(const Dims& in, int64_t out_numel, const std::vector<int64_t>& axes) {
  if (in.product() != 0) return out_numel == 0 ? 0 : in.product() / out_numel;
  int64_t count = 1;
  for (int64_t ax : axes) count *= in[static_cast<int>(ax < 0 ? ax + in.size() : ax)];
  return count;
}

// mean() of a tracer: the same cast, sum and division, recorded.
Value traced_mean(Interp& I, const TracerObj& tr, Value x, const std::vector<int64_t>& axes, bool keep) {
  if (!kernels::is_floating(tr.spec.dtype)) x = trace_prim(I, x, Prim::cast, Attrs{{"dtype", DType::Float32}});
  Value s = trace_prim(I, x, Prim::reduce_sum, Attrs{{"axes", axes}, {"keep_dims", keep}});
  int64_t count = mean_count(tr.spec.shape, tracer_obj(s)->spec.shape.product(), axes);
  Value in[2] = {s, Value::number(static_cast<double>(count))};
  return trace::apply_prim(I, Prim::div, in, {});
}

Value m_mean(Interp& I, Args& a, Object*) {
  if (const TracerObj* tr = tracer_self(I, a)) {
    Value v[2];
    Args rest = method_args(a);
    bind_args(I, "mean", rest, {"axis", "keep_dims"}, 0, v);
    std::vector<int64_t> axes = axes_arg(I, v[0], tr->spec.shape.size(), "mean");
    return traced_mean(I, *tr, a.pos[0], axes, given(v[1]) && I.truthy(v[1]));
  }
  TensorObj* o = self_tensor(I, a, "mean");
  Value v[2];
  Args rest = method_args(a);
  bind_args(I, "mean", rest, {"axis", "keep_dims"}, 0, v);
  std::vector<int64_t> axes = axes_arg(I, v[0], o->t.ndim(), "mean");
  Attrs attrs{{"axes", axes}, {"keep_dims", given(v[1]) && I.truthy(v[1])}};
  Tensor r = kernel_call(I, [&] {
    Tensor x = o->t;
    if (!kernels::is_floating(x.dtype()))
      x = kernels::execute1(Prim::cast, std::span<const Tensor>(&x, 1), Attrs{{"dtype", DType::Float32}});
    Tensor s = kernels::execute1(Prim::reduce_sum, std::span<const Tensor>(&x, 1), attrs);
    int64_t count = mean_count(x.shape(), s.numel(), axes);
    Tensor in[2] = {s, Tensor::scalar(s.dtype(), static_cast<double>(count))};
    return kernels::execute1(Prim::div, in, {});
  });
  return wrap_tensor(result_class(o), std::move(r));
}

template <Prim p>
Value m_arg(Interp& I, Args& a, Object*) {
  const char* name = p == Prim::argmax ? "argmax" : "argmin";
  const TracerObj* tr = tracer_self(I, a);
  TensorObj* o = tr ? nullptr : self_tensor(I, a, name);
  // MindSpore 1.x's (axis, keep_dims), 2.x's keepdims, PyTorch's (dim, keepdim).
  Value v[5];
  Args rest = method_args(a);
  bind_args(I, name, rest, {"axis", "keep_dims", "dim", "keepdim", "keepdims"}, 0, v);
  if (given_not_none(v[2])) v[0] = v[2];
  bool keep = (given(v[1]) && I.truthy(v[1])) || (given(v[3]) && I.truthy(v[3])) || (given(v[4]) && I.truthy(v[4]));
  if (given_not_none(v[0])) {
    Attrs attrs{{"axis", arg_index(I, v[0])}, {"keep_dims", keep}};
    if (tr) return trace_prim(I, a.pos[0], p, attrs);
    return call_prim(I, o, p, o->t, attrs);
  }
  if (tr) {
    Value flat =
        trace_prim(I, a.pos[0], Prim::reshape, Attrs{{"shape", std::vector<int64_t>{tr->spec.shape.product()}}});
    return trace_prim(I, flat, p, Attrs{{"axis", int64_t{0}}, {"keep_dims", false}});
  }
  // Over the flattened tensor.
  Tensor flat = kernel_call(I, [&] {
    Tensor c = o->t.contiguous();
    Dims shape{c.numel()};
    return Tensor::view(c, shape, kernels::contiguous_strides(shape), c.offset());
  });
  Attrs attrs{{"axis", int64_t{0}}, {"keep_dims", false}};
  return call_prim(I, o, p, flat, attrs);
}

Value m_item(Interp& I, Args& a, Object*) {
  TensorObj* o = self_tensor(I, a, "item");
  method_noargs(I, a, "Tensor", "item");
  return tensor_item(I, o->t);
}

Value m_tolist(Interp& I, Args& a, Object*) {
  TensorObj* o = self_tensor(I, a, "tolist");
  method_noargs(I, a, "Tensor", "tolist");
  return tensor_to_list(I, o->t);
}

// A NumPy array holding a copy of the values (numpy.array copies), as
// MindSpore's Tensor.asnumpy(); a tracer gets the trace's "needs the value".
Value m_asnumpy(Interp& I, Args& a, Object*) {
  self_tensor(I, a, "asnumpy");
  method_noargs(I, a, "Tensor", "asnumpy");
  Ref<Module> numpy = I.import_module("numpy", nullptr);
  Value self = a.pos[0];
  return I.call(numpy->get(I.intern("array")), std::span<Value>(&self, 1));
}

Value m_copy(Interp& I, Args& a, Object*) {
  TensorObj* o = self_tensor(I, a, "copy");
  method_noargs(I, a, "Tensor", "copy");
  return wrap_tensor(result_class(o), kernel_call(I, [&] { return o->t.clone(); }));
}

Value m_numel(Interp& I, Args& a, Object*) {
  if (const TracerObj* tr = tracer_self(I, a)) {
    method_noargs(I, a, "Tensor", "numel");
    return Value::integer(tr->spec.shape.product());
  }
  TensorObj* o = self_tensor(I, a, "numel");
  method_noargs(I, a, "Tensor", "numel");
  return Value::integer(o->t.numel());
}

Value m_dim(Interp& I, Args& a, Object*) {
  if (const TracerObj* tr = tracer_self(I, a)) {
    method_noargs(I, a, "Tensor", "dim");
    return Value::integer(tr->spec.shape.size());
  }
  TensorObj* o = self_tensor(I, a, "dim");
  method_noargs(I, a, "Tensor", "dim");
  return Value::integer(o->t.ndim());
}

Value m_len(Interp& I, Args& a, Object*) {
  if (const TracerObj* tr = tracer_self(I, a)) {
    if (tr->spec.shape.empty()) raise_type_error(I, "len() of a 0-d tensor");
    return Value::integer(tr->spec.shape[0]);
  }
  TensorObj* o = self_tensor(I, a, "__len__");
  if (o->t.ndim() == 0) raise_type_error(I, "len() of a 0-d tensor");
  return Value::integer(o->t.dim(0));
}

// Iterates over the first axis (x[0], x[1], ...); a tracer's items are
// traced indexing.
struct TensorIter final : Iterator {
  TensorIter(Value s, int64_t len) : src(std::move(s)), n(len) {}
  Value src;
  int64_t n;
  int64_t i = 0;
  bool next(Interp& I, Value& out) override {
    if (i >= n) return false;
    Value key = Value::integer(i++);
    out = is_tracer(src) ? tracer_getitem(I, src, key) : tensor_getitem(I, src, key);
    return true;
  }
  const char* type_name() const override { return "tensor_iterator"; }
};

Value m_iter(Interp& I, Args& a, Object*) {
  const TracerObj* tr = tracer_self(I, a);
  const Dims& shape = tr ? tr->spec.shape : self_tensor(I, a, "__iter__")->t.shape();
  if (shape.empty()) raise_type_error(I, "iteration over a 0-d tensor");
  return Value::object(new TensorIter(a.pos[0], shape[0]));
}

const Tensor& one_element(Interp& I, TensorObj* o) {
  if (o->t.numel() != 1) raise_type_error(I, "only one element tensors can be converted to Python scalars");
  return o->t;
}

Value m_float(Interp& I, Args& a, Object*) {
  return Value::number(one_element(I, self_tensor(I, a, "__float__")).item_at(0));
}

Value m_int(Interp& I, Args& a, Object*) {
  const Tensor& t = one_element(I, self_tensor(I, a, "__int__"));
  Value v = element_value(t, 0);
  if (v.is_bool()) return Value::integer(v.as_bool() ? 1 : 0);
  if (v.is_int()) return v;
  double d = v.as_float();
  if (std::isnan(d)) raise_value_error(I, "cannot convert float NaN to integer");
  if (std::isinf(d)) raise_exc(I, "OverflowError", "cannot convert float infinity to integer");
  if (std::fabs(d) >= 9.2233720368547758e18) raise_exc(I, "OverflowError", "integer overflow");
  return Value::integer(static_cast<int64_t>(d));
}

Value m_index(Interp& I, Args& a, Object*) {
  const Tensor& t = self_tensor(I, a, "__index__")->t;
  if (!kernels::is_integral(t.dtype()) || t.numel() != 1)
    raise_type_error(I, "only integer tensors with one element can be converted to an index");
  return element_value(t, 0);
}

Value m_hash(Interp& I, Args& a, Object*) {
  // By identity, as for tensors (a tracer is hashable while its trace runs).
  NativeData* o = tracer_self(I, a) ? a.pos[0].as<NativeData>() : self_tensor(I, a, "__hash__");
  return Value::integer(static_cast<int64_t>(reinterpret_cast<uintptr_t>(o) >> 4));
}

Value m_repr(Interp& I, Args& a, Object*) {
  // A tracer's repr works even after its trace (it shows no values), so
  // error messages can name it.
  if (!a.pos.empty() && is_tracer(a.pos[0])) return str_value(tracer_repr(tracer_obj(a.pos[0])->spec));
  TensorObj* o = self_tensor(I, a, "__repr__");
  if (o->param)
    return str_value(fmt::format("Parameter (name={}, shape={}, dtype={}, requires_grad={})", o->param->name,
                                 o->t.shape().str(), kernels::dtype_display_name(o->t.dtype()),
                                 o->param->requires_grad ? "True" : "False"));
  return str_value(tensor_repr(o->t));
}

// str() and print() show a tensor's values, which a tracer does not have.
Value m_str(Interp& I, Args& a, Object* data) {
  if (!a.pos.empty() && is_tracer(a.pos[0])) trace::needs_value(I, a.pos[0], "str() or print() of a tensor");
  return m_repr(I, a, data);
}

Value m_getitem(Interp& I, Args& a, Object*) {
  if (!a.pos.empty() && is_tracer(a.pos[0])) {
    if (a.pos.size() != 2) raise_type_error(I, "__getitem__ takes exactly one argument");
    return tracer_getitem(I, a.pos[0], a.pos[1]);
  }
  self_tensor(I, a, "__getitem__");
  if (a.pos.size() != 2) raise_type_error(I, "__getitem__ takes exactly one argument");
  return tensor_getitem(I, a.pos[0], a.pos[1]);
}

Value m_setitem(Interp& I, Args& a, Object*) {
  self_tensor(I, a, "__setitem__");
  if (a.pos.size() != 3) raise_type_error(I, "__setitem__ takes exactly two arguments");
  tensor_setitem(I, a.pos[0], a.pos[1], a.pos[2]);
  return Value();
}

Value p_set_data(Interp& I, Args& a, Object*) {
  TensorObj* o = self_param(I, a, "set_data");
  Value v[1];
  Args rest = method_args(a);
  bind_args(I, "set_data", rest, {"data"}, 1, v);
  o->t = is_tensor(v[0]) ? tensor_of(v[0]) : tensor_from_value(I, v[0], nullptr, "set_data");
  return a.pos[0];
}

Value p_clone(Interp& I, Args& a, Object*) {
  TensorObj* o = self_param(I, a, "clone");
  method_noargs(I, a, "Parameter", "clone");
  Ref<TensorObj> c(new TensorObj(o->cls, kernel_call(I, [&] { return o->t.clone(); })));
  c->param = std::make_unique<ParamInfo>(*o->param);
  return c.value();
}

}  // namespace

void init_tensor_methods(Interp& I, TensorClass* t, TensorClass* p) {
  I.def_method(t, "__new__", tensor_new);
  I.def_method(p, "__new__", param_new);
  def_property(I, t, "shape", prop_shape);
  def_property(I, t, "dtype", prop_dtype);
  def_property(I, t, "ndim", prop_ndim);
  def_property(I, t, "size", prop_size);
  def_property(I, t, "T", prop_T);
  def_property(I, p, "data", prop_data);
  def_property(I, p, "name", prop_name, prop_set_name);
  def_property(I, p, "requires_grad", prop_requires_grad, prop_set_requires_grad);
  I.def_method(t, "astype", m_astype);
  I.def_method(t, "init_data", m_init_data);
  I.def_method(t, "reshape", m_reshape);
  I.def_method(t, "transpose", m_transpose);
  I.def_method(t, "sum", m_reduce<Prim::reduce_sum>);
  I.def_method(t, "max", m_reduce<Prim::reduce_max>);
  I.def_method(t, "min", m_reduce<Prim::reduce_min>);
  I.def_method(t, "mean", m_mean);
  I.def_method(t, "argmax", m_arg<Prim::argmax>);
  I.def_method(t, "argmin", m_arg<Prim::argmin>);
  I.def_method(t, "item", m_item);
  I.def_method(t, "tolist", m_tolist);
  I.def_method(t, "asnumpy", m_asnumpy);
  I.def_method(t, "copy", m_copy);
  I.def_method(t, "numel", m_numel);
  I.def_method(t, "dim", m_dim);
  I.def_method(t, "__len__", m_len);
  I.def_method(t, "__iter__", m_iter);
  I.def_method(t, "__float__", m_float);
  I.def_method(t, "__int__", m_int);
  I.def_method(t, "__index__", m_index);
  I.def_method(t, "__hash__", m_hash);
  I.def_method(t, "__repr__", m_repr);
  I.def_method(t, "__str__", m_str);
  I.def_method(t, "__getitem__", m_getitem);
  I.def_method(t, "__setitem__", m_setitem);
  I.def_method(p, "set_data", p_set_data);
  I.def_method(p, "clone", p_clone);
}

}  // namespace msl
