// Tensor creation functions of msl._core: zeros, ones, full, zeros_like,
// ones_like, arange, linspace, eye.
//
// They fill new contiguous tensors directly (no primitive exists for them):
// shapes are an int or a tuple/list of ints, the default dtype is float32
// except where the values decide (full: the fill value's kind; arange: int64
// for integer arguments), and integer values are stored exactly (int64
// never passes through double). Each Native's data is the Tensor class,
// which the results belong to. zeros_like/ones_like of a tracer record a
// fresh filled tensor into the trace (interp/tensor/trace.h); a shape or fill value
// taken from a tracer's values is a trace error.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"

namespace msl {

using kernels::Dims;
using kernels::DType;
using kernels::Tensor;

namespace {

Dims shape_arg(Interp& I, const Value& v, const char* fname) {
  Dims d;
  auto push = [&](const Value& x) {
    if (is_tracer(x)) trace::needs_value(I, x, fmt::format("{}'s shape argument", fname));
    if (!x.is_int() && !x.is_bool())
      raise_type_error(I, fmt::format("{}: shape must be an int or a tuple of ints, not {}", fname, I.type_name(x)));
    if (x.is_int() && x.as_int() < 0)
      raise_value_error(I, fmt::format("{}: negative dimensions are not allowed, got {}", fname, x.as_int()));
    kernel_call(I, [&] { d.push_back(x.is_int() ? x.as_int() : x.as_bool()); });
  };
  if (v.is(Kind::Tuple) || v.is(Kind::List)) {
    for (const Value& x : v.is(Kind::Tuple) ? v.as<Tuple>()->items : v.as<List>()->items) push(x);
  } else {
    push(v);
  }
  return d;
}

DType dtype_or(Interp& I, const Value& v, DType dflt, const char* fname) {
  return given_not_none(v) ? dtype_arg(I, v, fname) : dflt;
}

template <class T>
void fill_as(const Tensor& t, T value) {
  T* p = t.data<T>();
  std::fill(p, p + t.numel(), value);
}

// Fills a new contiguous tensor with a number (ints stored exactly).
void fill_number(const Tensor& t, const Value& v) {
  double d = v.is_float() ? v.as_float() : v.is_int() ? static_cast<double>(v.as_int()) : (v.as_bool() ? 1.0 : 0.0);
  switch (t.dtype()) {
    case DType::Int64: fill_as<int64_t>(t, v.is_int() ? v.as_int() : static_cast<int64_t>(d)); break;
    case DType::Float32: fill_as<float>(t, static_cast<float>(d)); break;
    case DType::Float64: fill_as<double>(t, d); break;
    default: {
      Tensor one = Tensor::scalar(t.dtype(), d);
      size_t sz = t.itemsize();
      char* p = static_cast<char*>(t.raw());
      for (int64_t i = 0, n = t.numel(); i < n; ++i) std::memcpy(p + i * static_cast<int64_t>(sz), one.raw(), sz);
    }
  }
}

// Creation functions fill a CPU tensor and copy it to the tensor's device:
// the default device, or the argument's for zeros_like / ones_like.
Value make_filled(Interp& I, TensorClass* tc, DType d, const Dims& shape, const Value& v,
                  kernels::Device* dev = kernels::default_device()) {
  return wrap_tensor(tc->tensor_cls, kernel_call(I, [&] {
                       Tensor t(d, shape);
                       fill_number(t, v);
                       return t.to_device(dev);
                     }));
}

Value f_zeros(Interp& I, Args& a, Object* data) {
  Value v[2];
  bind_args(I, "zeros", a, {"shape", "dtype"}, 1, v);
  return make_filled(I, static_cast<TensorClass*>(data), dtype_or(I, v[1], DType::Float32, "zeros"),
                     shape_arg(I, v[0], "zeros"), Value::integer(0));
}

Value f_ones(Interp& I, Args& a, Object* data) {
  Value v[2];
  bind_args(I, "ones", a, {"shape", "dtype"}, 1, v);
  return make_filled(I, static_cast<TensorClass*>(data), dtype_or(I, v[1], DType::Float32, "ones"),
                     shape_arg(I, v[0], "ones"), Value::integer(1));
}

Value f_full(Interp& I, Args& a, Object* data) {
  Value v[3];
  bind_args(I, "full", a, {"shape", "fill_value", "dtype"}, 2, v);
  Value fill = v[1];
  if (is_tracer(fill)) trace::needs_value(I, fill, "full's fill_value");
  if (is_tensor(fill) && tensor_of(fill).numel() == 1) fill = element_value(tensor_of(fill), 0);
  if (!fill.is_int() && !fill.is_float() && !fill.is_bool())
    raise_type_error(I, fmt::format("full: fill_value must be a number, not {}", I.type_name(fill)));
  DType dflt = fill.is_float() ? DType::Float32 : fill.is_int() ? DType::Int64 : DType::Bool;
  return make_filled(I, static_cast<TensorClass*>(data), dtype_or(I, v[2], dflt, "full"), shape_arg(I, v[0], "full"),
                     fill);
}

Value like(Interp& I, Args& a, Object* data, const char* fname, int64_t value) {
  Value v[2];
  bind_args(I, fname, a, {"x", "dtype"}, 1, v);
  if (is_tracer(v[0])) {
    const TracerObj& t = trace::usable(I, v[0]);
    return trace::filled_like(I, v[0], dtype_or(I, v[1], t.spec.dtype, fname), Value::integer(value));
  }
  if (!is_tensor(v[0])) raise_type_error(I, fmt::format("{}: x must be a Tensor, not {}", fname, I.type_name(v[0])));
  const Tensor& t = tensor_of(v[0]);
  return make_filled(I, static_cast<TensorClass*>(data), dtype_or(I, v[1], t.dtype(), fname), t.shape(),
                     Value::integer(value), t.device());
}

Value f_zeros_like(Interp& I, Args& a, Object* data) { return like(I, a, data, "zeros_like", 0); }

// stop_gradient(x): x itself; on a tracer, the IR operator, so a traced
// library function keeps it (graph mode lowers ops.stop_gradient to it).
Value f_stop_gradient(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_args(I, "stop_gradient", a, {"x"}, 1, v);
  return is_tracer(v[0]) ? trace::stop_gradient(I, v[0]) : v[0];
}
Value f_ones_like(Interp& I, Args& a, Object* data) { return like(I, a, data, "ones_like", 1); }

double number_arg(Interp& I, const Value& v, const char* fname, const char* what) {
  if (v.is_float()) return v.as_float();
  if (v.is_int()) return static_cast<double>(v.as_int());
  if (v.is_bool()) return v.as_bool();
  raise_type_error(I, fmt::format("{}: {} must be a number, not {}", fname, what, I.type_name(v)));
}

Value f_arange(Interp& I, Args& a, Object* data) {
  Value v[4];
  bind_args(I, "arange", a, {"start", "stop", "step", "dtype"}, 1, v);
  Value start = v[0], stop = v[1], step = given(v[2]) ? v[2] : Value::integer(1);
  number_arg(I, start, "arange", "start");
  if (given_not_none(stop)) number_arg(I, stop, "arange", "stop");
  double st = number_arg(I, step, "arange", "step");
  if (!given_not_none(stop)) {
    stop = start;
    start = Value::integer(0);
  }
  double s0 = number_arg(I, start, "arange", "start"), s1 = number_arg(I, stop, "arange", "stop");
  if (st == 0) raise_value_error(I, "arange: step must not be zero");
  bool all_int = !start.is_float() && !stop.is_float() && !step.is_float();
  DType d = dtype_or(I, v[3], all_int ? DType::Int64 : DType::Float32, "arange");
  double count = std::ceil((s1 - s0) / st);
  if (!std::isfinite(count)) raise_value_error(I, "arange: the range is not finite");
  int64_t n = count > 0 ? (count > 9e18 ? INT64_MAX : static_cast<int64_t>(count)) : 0;
  return wrap_tensor(static_cast<TensorClass*>(data)->tensor_cls, kernel_call(I, [&] {
                       Tensor t(d, Dims{n});
                       if (all_int && d == DType::Int64) {
                         int64_t b = start.is_int() ? start.as_int() : start.as_bool();
                         int64_t k = step.is_int() ? step.as_int() : step.as_bool();
                         int64_t* p = t.data<int64_t>();
                         for (int64_t i = 0; i < n; ++i) p[i] = b + i * k;
                       } else {
                         for (int64_t i = 0; i < n; ++i)
                           kernels::store_from_double(t.raw(), d, i, s0 + static_cast<double>(i) * st);
                       }
                       return t.to_device(kernels::default_device());
                     }));
}

Value f_linspace(Interp& I, Args& a, Object* data) {
  Value v[3];
  bind_args(I, "linspace", a, {"start", "stop", "num"}, 3, v);
  double s0 = number_arg(I, v[0], "linspace", "start"), s1 = number_arg(I, v[1], "linspace", "stop");
  int64_t n = arg_index(I, v[2]);
  if (n < 0) raise_value_error(I, fmt::format("linspace: num must be non-negative, got {}", n));
  return wrap_tensor(static_cast<TensorClass*>(data)->tensor_cls, kernel_call(I, [&] {
                       Tensor t(DType::Float32, Dims{n});
                       float* p = t.data<float>();
                       double step = n > 1 ? (s1 - s0) / static_cast<double>(n - 1) : 0;
                       for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(s0 + static_cast<double>(i) * step);
                       if (n > 1) p[n - 1] = static_cast<float>(s1);
                       return t.to_device(kernels::default_device());
                     }));
}

Value f_eye(Interp& I, Args& a, Object* data) {
  Value v[3];
  bind_args(I, "eye", a, {"n", "m", "dtype"}, 1, v);
  int64_t n = arg_index(I, v[0]);
  int64_t m = given_not_none(v[1]) ? arg_index(I, v[1]) : n;
  if (n < 0 || m < 0) raise_value_error(I, fmt::format("eye: negative dimensions are not allowed, got ({}, {})", n, m));
  DType d = dtype_or(I, v[2], DType::Float32, "eye");
  return wrap_tensor(static_cast<TensorClass*>(data)->tensor_cls, kernel_call(I, [&] {
                       Tensor t = Tensor::zeros(d, Dims{n, m});
                       for (int64_t i = 0; i < std::min(n, m); ++i)
                         kernels::store_from_double(t.raw(), d, i * m + i, 1);
                       return t.to_device(kernels::default_device());
                     }));
}

}  // namespace

void init_tensor_creation(Interp& I, Module& m, TensorClass* tc) {
  Ref<Object> state(tc);
  I.def_native(&m, "zeros", f_zeros, state);
  I.def_native(&m, "ones", f_ones, state);
  I.def_native(&m, "full", f_full, state);
  I.def_native(&m, "zeros_like", f_zeros_like, state);
  I.def_native(&m, "stop_gradient", f_stop_gradient, state);
  I.def_native(&m, "ones_like", f_ones_like, state);
  I.def_native(&m, "arange", f_arange, state);
  I.def_native(&m, "linspace", f_linspace, state);
  I.def_native(&m, "eye", f_eye, state);
}

}  // namespace msl
