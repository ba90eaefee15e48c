// The native module `numpy._native`: what the numpy module (stdlib/numpy)
// needs from C++.
//
//   array2string(t, separator, prefix_len, linewidth) -> str
//       NumPy's array2string of a tensor's values (tensor_format.cpp), for
//       ndarray's repr ("array([1. , 2.5])") and str.
//   on_host(fn, *args, **kwargs)
//       fn(*args, **kwargs) with the CPU as the default device.
//   scalar_str(t) -> str
//       NumPy's str() of a scalar (0-d tensor): "0.1", "1e+16", "True".
//   RandomState(seed=None)
//       NumPy 1.x's legacy generator (numpy.random.seed / RandomState), bit
//       for bit: MT19937 seeded by init_genrand for an int (init_by_array for
//       a sequence), doubles from 53 bits of two words, normals by the polar
//       method with the second value kept, bounded integers by masked
//       rejection, shuffles by Fisher-Yates from the end. `np.random.seed(0);
//       np.random.rand()` gives 0.5488135039273248 here as in NumPy, so a
//       ported script draws the same data. Each method fills a flat tensor
//       of `n` values; the numpy module shapes it:
//         random_sample(n) -> float64, standard_normal(n) -> float64,
//         randint(low, high, n) -> int64 in [low, high),
//         shuffled_indices(n) -> int64: the permutation shuffle(arange(n))
//         leaves, so shuffling any array is x[...] = x[indices].
#include <fmt/format.h>

#include <cmath>

#include "interp/builtins/builtins.h"
#include "interp/builtins/mersenne_twister.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"
#include "kernels/device.h"

namespace msl {

namespace {

using kernels::DType;
using kernels::Tensor;

struct LegacyRandomState final : NativeData {
  LegacyRandomState(Ref<Class> c, Class* tensor) : NativeData(std::move(c)), tensor_cls(tensor) {}
  MersenneTwister mt;
  bool has_gauss = false;
  double gauss = 0;
  Class* tensor_cls;  // kept alive by the module, which outlives its generators

  uint64_t next_u64() {
    uint64_t hi = mt.next_u32();
    return hi << 32 | mt.next_u32();
  }
  double next_double() { return mt.random(); }
  double next_gauss() {
    if (has_gauss) {
      has_gauss = false;
      return gauss;
    }
    double x1, x2, r2;
    do {
      x1 = 2.0 * next_double() - 1.0;
      x2 = 2.0 * next_double() - 1.0;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    double f = std::sqrt(-2.0 * std::log(r2) / r2);
    gauss = f * x1;
    has_gauss = true;
    return f * x2;
  }
  // A value in [0, max] by masked rejection (NumPy's random_interval).
  uint64_t interval(uint64_t max) {
    if (max == 0) return 0;
    uint64_t mask = max;
    for (int s = 1; s < 64; s <<= 1) mask |= mask >> s;
    uint64_t v;
    if (max <= 0xffffffffu) {
      while ((v = (mt.next_u32() & mask)) > max) {
      }
    } else {
      while ((v = (next_u64() & mask)) > max) {
      }
    }
    return v;
  }
};

LegacyRandomState* self_state(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::NativeData) || !dynamic_cast<LegacyRandomState*>(a.pos[0].obj()))
    raise_type_error(I, fmt::format("descriptor '{}' requires a 'RandomState' object", method));
  return static_cast<LegacyRandomState*>(a.pos[0].obj());
}

void seed_state(Interp& I, LegacyRandomState* r, const Value& s) {
  r->has_gauss = false;
  r->gauss = 0;
  if (s.is_undef() || s.is_none()) {
    r->mt.seed_from_entropy();
    return;
  }
  if (s.is_int() || s.is_bool()) {
    int64_t n = s.is_int() ? s.as_int() : s.as_bool();
    if (n < 0 || n > int64_t(0xffffffff)) raise_value_error(I, "Seed must be between 0 and 2**32 - 1");
    r->mt.seed_u32(static_cast<uint32_t>(n));
    return;
  }
  if (!s.is(Kind::List) && !s.is(Kind::Tuple))
    raise_type_error(I, fmt::format("Cannot cast seed of type {} to an integer or a sequence", I.type_name(s)));
  std::vector<uint32_t> key;
  for (const Value& w : s.is(Kind::List) ? s.as<List>()->items : s.as<Tuple>()->items) {
    int64_t n = arg_index(I, w);
    if (n < 0 || n > int64_t(0xffffffff)) raise_value_error(I, "Seed must be between 0 and 2**32 - 1");
    key.push_back(static_cast<uint32_t>(n));
  }
  if (key.empty()) raise_value_error(I, "Seed must be non-empty");
  r->mt.seed_by_array(key);
}

int64_t count_arg(Interp& I, const Value& v) {
  int64_t n = arg_index(I, v);
  if (n < 0) raise_value_error(I, "negative dimensions are not allowed");
  if (n > (int64_t(1) << 36)) raise_exc(I, "MemoryError", fmt::format("cannot draw {} random values", n));
  return n;
}

Value wrap(LegacyRandomState* r, Tensor&& t) { return wrap_tensor(r->tensor_cls, std::move(t)); }

Value rs_new(Interp& I, Args& a, Object* data) {
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "RandomState", rest, 0, 1, v);
  Ref<LegacyRandomState> r(new LegacyRandomState(Ref<Class>(a.pos[0].as<Class>()), static_cast<Class*>(data)));
  seed_state(I, r.get(), v[0]);
  return r.value();
}

Value rs_seed(Interp& I, Args& a, Object*) {
  LegacyRandomState* r = self_state(I, a, "seed");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "seed", rest, 0, 1, v);
  seed_state(I, r, v[0]);
  return Value::none();
}

// n float64 values of `draw` (a method of the generator), as a flat tensor.
Value draw_doubles(Interp& I, Args& a, const char* method, double (LegacyRandomState::*draw)()) {
  LegacyRandomState* r = self_state(I, a, method);
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, method, rest, 1, 1, v);
  Tensor t(DType::Float64, kernels::Dims{count_arg(I, v[0])});
  double* p = static_cast<double*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = (r->*draw)();
  return wrap(r, std::move(t));
}

Value rs_random_sample(Interp& I, Args& a, Object*) {
  return draw_doubles(I, a, "random_sample", &LegacyRandomState::next_double);
}

Value rs_standard_normal(Interp& I, Args& a, Object*) {
  return draw_doubles(I, a, "standard_normal", &LegacyRandomState::next_gauss);
}

// NumPy's legacy randint for int64: values low + [0, rng] with
// rng = high - 1 - low, 32-bit draws while rng fits in 32 bits.
Value rs_randint(Interp& I, Args& a, Object*) {
  LegacyRandomState* r = self_state(I, a, "randint");
  Value v[3];
  Args rest = method_args(a);
  bind_positional(I, "randint", rest, 3, 3, v);
  int64_t low = arg_index(I, v[0]), high = arg_index(I, v[1]);
  if (low >= high) raise_value_error(I, "low >= high");
  Tensor t(DType::Int64, kernels::Dims{count_arg(I, v[2])});
  int64_t* p = static_cast<int64_t*>(t.raw());
  uint64_t rng = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1;
  uint64_t mask = rng;
  for (int s = 1; s < 64; s <<= 1) mask |= mask >> s;
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t x = 0;
    if (rng == 0) {
      x = 0;
    } else if (rng <= 0xffffffffu) {
      if (rng == 0xffffffffu) x = r->mt.next_u32();
      else
        while ((x = (r->mt.next_u32() & mask)) > rng) {
        }
    } else if (rng == ~uint64_t(0)) {
      x = r->next_u64();
    } else {
      while ((x = (r->next_u64() & mask)) > rng) {
      }
    }
    p[i] = static_cast<int64_t>(static_cast<uint64_t>(low) + x);
  }
  return wrap(r, std::move(t));
}

Value rs_shuffled_indices(Interp& I, Args& a, Object*) {
  LegacyRandomState* r = self_state(I, a, "shuffled_indices");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "shuffled_indices", rest, 1, 1, v);
  Tensor t(DType::Int64, kernels::Dims{count_arg(I, v[0])});
  int64_t* p = static_cast<int64_t*>(t.raw());
  int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) p[i] = i;
  for (int64_t i = n - 1; i >= 1; --i) {
    int64_t j = static_cast<int64_t>(r->interval(static_cast<uint64_t>(i)));
    std::swap(p[i], p[j]);
  }
  return wrap(r, std::move(t));
}

Value f_array2string(Interp& I, Args& a, Object*) {
  Value v[4];
  bind_positional(I, "array2string", a, 4, 4, v);
  if (!is_tensor(v[0])) raise_type_error(I, fmt::format("array2string: expected a Tensor, not {}", I.type_name(v[0])));
  if (!v[1].is(Kind::Str)) raise_type_error(I, "array2string: separator must be a str");
  int64_t prefix = arg_index(I, v[2]), width = arg_index(I, v[3]);
  if (prefix < 0 || width < 1) raise_value_error(I, "array2string: bad prefix length or line width");
  return str_value(array_to_string(tensor_of(v[0]), v[1].as<Str>()->s, static_cast<size_t>(prefix),
                                   static_cast<size_t>(width)));
}

// on_host(fn, *args, **kwargs): fn's result, computed with the CPU as the
// default device, so MSL functions that make tensors (constants, indices)
// make them beside the host arrays they combine with, whatever
// set_context(device_target=) chose. The previous device is restored on
// return and on an exception.
Value f_on_host(Interp& I, Args& a, Object*) {
  if (a.pos.empty()) raise_type_error(I, "on_host() missing the function to call");
  struct Restore {
    kernels::Device* device;
    ~Restore() { kernels::set_default_device(device); }
  } restore{kernels::default_device()};
  kernels::set_default_device(kernels::cpu_device());
  return I.call(a.pos[0], a.pos.subspan(1), a.kw);
}

Value f_scalar_str(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "scalar_str", a, 1, 1, v);
  if (!is_tensor(v[0]) || tensor_of(v[0]).ndim() != 0)
    raise_type_error(I, fmt::format("scalar_str: expected a 0-d Tensor, not {}", I.type_name(v[0])));
  return str_value(tensor_values_str(tensor_of(v[0])));
}

}  // namespace

void init_module_numpy_native(Interp& I, Module& m) {
  Ref<Module> core = I.import_module("msl._core", nullptr);
  Value tensor = core->get(I.intern("Tensor"));
  if (!tensor.is(Kind::Class)) raise_type_error(I, "numpy._native: msl._core.Tensor is not a class");
  m.set(I.intern("_Tensor"), tensor);  // keeps the class alive for the generators
  Ref<Object> tensor_cls(tensor.obj());
  Ref<Class> cls = I.new_class("RandomState", I.cls_object.get(), "numpy._native", true);
  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kMethods[] = {
      {"seed", rs_seed},
      {"random_sample", rs_random_sample},
      {"standard_normal", rs_standard_normal},
      {"randint", rs_randint},
      {"shuffled_indices", rs_shuffled_indices},
  };
  for (const Entry& e : kMethods) I.def_method(cls.get(), e.name, e.fn);
  cls->dict.set(I.names().__new__, make<Native>("RandomState", rs_new, tensor_cls).value());
  m.set(I.intern("RandomState"), cls.value());
  I.def_native(&m, "array2string", f_array2string);
  I.def_native(&m, "scalar_str", f_scalar_str);
  I.def_native(&m, "on_host", f_on_host);
}

}  // namespace msl
