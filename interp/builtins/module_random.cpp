// The random module: CPython's Random class and module-level functions,
// reproducing CPython 3.11's outputs for the same seed (see
// mersenne_twister.h). As in Python, the module functions are bound methods
// of one hidden Random instance, and random.Random(seed) makes independent
// generators.
//
// Each method below is a transcription of Lib/random.py, because the exact
// sequence of calls to the generator (how many 32-bit words randbelow draws,
// where shuffle starts) is what makes results match Python's.
#include <fmt/format.h>

#include <cmath>
#include <unordered_set>

#include "interp/builtins/builtins.h"
#include "interp/builtins/conversions.h"
#include "interp/builtins/mersenne_twister.h"
#include "interp/core/native_args.h"
#include "interp/builtins/unicode.h"

namespace msl {

namespace {

struct RandomState final : NativeData {
  explicit RandomState(Ref<Class> c) : NativeData(std::move(c)) {}
  MersenneTwister mt;
  double gauss_next = 0;
  bool has_gauss_next = false;
};

RandomState* self_random(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::NativeData) || !dynamic_cast<RandomState*>(a.pos[0].obj()))
    raise_type_error(I, fmt::format("descriptor '{}' requires a 'Random' object", method));
  return static_cast<RandomState*>(a.pos[0].obj());
}

void seed_from(Interp& I, RandomState* r, const Value& a) {
  r->has_gauss_next = false;
  if (a.is_undef() || a.is_none()) {
    r->mt.seed_from_entropy();
    return;
  }
  if (a.is_int() || a.is_bool()) {
    int64_t n = a.is_int() ? a.as_int() : (a.as_bool() ? 1 : 0);
    r->mt.seed_u64(n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n));
    return;
  }
  if (a.is_float()) {
    uint64_t h = py_hash_double(a.as_float());  // hash(x), with its -1 -> -2 rule
    r->mt.seed_u64(h == static_cast<uint64_t>(-1) ? static_cast<uint64_t>(-2) : h);
    return;
  }
  if (a.is(Kind::Str)) {
    r->mt.seed_text(a.as<Str>()->s);
    return;
  }
  raise_type_error(I, "The only supported seed types are: None,\nint, float, str, bytes, and bytearray.");
}

uint64_t randbelow(Interp& I, RandomState* r, uint64_t n) {
  if (n == 0) raise_value_error(I, "empty range for randrange()");
  return r->mt.randbelow(n);
}

// ----------------------------------------------------------------- methods

Value random_new(Interp& I, Args& a, Object*) {
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "Random", rest, 0, 1, v);
  Ref<RandomState> r(new RandomState(Ref<Class>(a.pos[0].as<Class>())));
  seed_from(I, r.get(), v[0]);
  return r.value();
}

Value random_seed(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "seed");
  Value v[2];
  Args rest = method_args(a);
  bind_args(I, "seed", rest, {"a", "version"}, 0, v);
  seed_from(I, r, v[0]);
  return Value();
}

Value random_random(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "random");
  Args rest = method_args(a);
  bind_positional(I, "random", rest, 0, 0, nullptr);
  return Value::number(r->mt.random());
}

Value random_getrandbits(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "getrandbits");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "getrandbits", rest, 1, 1, v);
  int64_t k = arg_index(I, v[0]);
  if (k < 0) raise_value_error(I, "number of bits must be non-negative");
  if (k > 63) raise_exc(I, "OverflowError", "integer overflow");  // MSL ints are 64-bit signed
  return Value::integer(static_cast<int64_t>(r->mt.getrandbits(static_cast<int>(k))));
}

// randrange's integer conversion: ints pass, integral floats are accepted
// (deprecated in 3.11), anything else is rejected with Python's messages.
int64_t range_arg(Interp& I, const Value& v, const char* which) {
  if (v.is_float()) {
    double d = v.as_float();
    if (d != std::floor(d) || !std::isfinite(d))
      raise_value_error(I, fmt::format("non-integer {} for randrange()", which));
    if (std::fabs(d) >= 9.2e18) raise_exc(I, "OverflowError", "integer overflow");
    return static_cast<int64_t>(d);
  }
  return arg_index(I, v);
}

int64_t randrange_impl(Interp& I, RandomState* r, const Value& start, const Value& stop, const Value& step) {
  int64_t istart = range_arg(I, start, "arg 1");
  if (!given_not_none(stop)) {
    if (given(step) && !(step.is_int() && step.as_int() == 1)) raise_type_error(I, "Missing a non-None stop argument");
    if (istart > 0) return static_cast<int64_t>(randbelow(I, r, static_cast<uint64_t>(istart)));
    raise_value_error(I, "empty range for randrange()");
  }
  int64_t istop = range_arg(I, stop, "stop");
  __int128 width = static_cast<__int128>(istop) - istart;
  int64_t istep = given(step) ? range_arg(I, step, "step") : 1;
  if (istep == 1) {
    if (width > 0)
      return static_cast<int64_t>(istart + static_cast<__int128>(randbelow(I, r, static_cast<uint64_t>(width))));
    raise_value_error(
        I, fmt::format("empty range for randrange() ({}, {}, {})", istart, istop, static_cast<int64_t>(width)));
  }
  __int128 n;
  if (istep > 0) {
    n = (width + istep - 1) / istep;
    if ((width + istep - 1) % istep != 0 && (width + istep - 1) < 0) n -= 1;  // floor division
  } else if (istep < 0) {
    __int128 num = width + istep + 1;
    n = num / istep;
    if (num % istep != 0 && ((num < 0) != (istep < 0))) n -= 1;
  } else {
    raise_value_error(I, "zero step for randrange()");
  }
  if (n <= 0) raise_value_error(I, "empty range for randrange()");
  return static_cast<int64_t>(istart + static_cast<__int128>(istep) * randbelow(I, r, static_cast<uint64_t>(n)));
}

Value random_randrange(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "randrange");
  Value v[3];
  Args rest = method_args(a);
  bind_args(I, "randrange", rest, {"start", "stop", "step"}, 1, v);
  return Value::integer(randrange_impl(I, r, v[0], v[1], v[2]));
}

Value random_randint(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "randint");
  Value v[2];
  Args rest = method_args(a);
  bind_args(I, "randint", rest, {"a", "b"}, 2, v);
  int64_t b = range_arg(I, v[1], "stop");
  if (b == INT64_MAX) raise_exc(I, "OverflowError", "integer overflow");
  return Value::integer(randrange_impl(I, r, v[0], Value::integer(b + 1), Value::undef()));
}

Value random_uniform(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "uniform");
  Value v[2];
  Args rest = method_args(a);
  bind_args(I, "uniform", rest, {"a", "b"}, 2, v);
  double lo = arg_float(I, v[0]), hi = arg_float(I, v[1]);
  return Value::number(lo + (hi - lo) * r->mt.random());
}

Value random_choice(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "choice");
  Value v[1];
  Args rest = method_args(a);
  bind_args(I, "choice", rest, {"seq"}, 1, v);
  int64_t n = I.len(v[0]);
  if (n == 0) raise_exc(I, "IndexError", "Cannot choose from an empty sequence");
  return I.getitem(v[0], Value::integer(static_cast<int64_t>(randbelow(I, r, static_cast<uint64_t>(n)))));
}

Value random_shuffle(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "shuffle");
  Value v[1];
  Args rest = method_args(a);
  bind_args(I, "shuffle", rest, {"x"}, 1, v);
  const Value& x = v[0];
  if (x.is(Kind::List)) {
    auto& items = x.as<List>()->items;
    for (size_t i = items.size(); i-- > 1;) {
      size_t j = static_cast<size_t>(r->mt.randbelow(i + 1));
      if (j < items.size() && i < items.size()) std::swap(items[i], items[j]);
    }
    return Value();
  }
  int64_t n = I.len(x);
  for (int64_t i = n - 1; i >= 1; --i) {
    tick(I);
    auto j = static_cast<int64_t>(r->mt.randbelow(static_cast<uint64_t>(i + 1)));
    Value xi = I.getitem(x, Value::integer(i)), xj = I.getitem(x, Value::integer(j));
    I.setitem(x, Value::integer(i), xj);
    I.setitem(x, Value::integer(j), xi);
  }
  return Value();
}

bool is_sequence(Interp& I, const Value& v) {
  if (v.is(Kind::List) || v.is(Kind::Tuple) || v.is(Kind::Str) || v.is(Kind::Range)) return true;
  if (v.is(Kind::Instance) || v.is(Kind::NativeData)) {
    Class* c = I.cls_of(v);
    return c->lookup(I.names().__len__) && c->lookup(I.names().__getitem__);
  }
  return false;
}

Value random_sample(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "sample");
  Value v[3];
  Args rest = method_args(a);
  bind_args(I, "sample", rest, {"population", "k", "counts"}, 2, v, 2);
  const Value& pop = v[0];
  if (!is_sequence(I, pop)) raise_type_error(I, "Population must be a sequence.  For dicts or sets, use sorted(d).");
  if (given_not_none(v[2])) raise_type_error(I, "sample() counts= is not supported in MSL");
  int64_t n = I.len(pop);
  int64_t k = arg_index(I, v[1]);
  if (k < 0 || k > n) raise_value_error(I, "Sample larger than population or is negative");
  check_result_size(I, static_cast<uint64_t>(k), kMaxResultItems);
  std::vector<Value> result(static_cast<size_t>(k));
  int64_t setsize = 21;
  if (k > 5)
    setsize += static_cast<int64_t>(std::pow(4.0, std::ceil(std::log(static_cast<double>(k * 3)) / std::log(4.0))));
  if (n <= setsize) {
    std::vector<Value> pool = I.to_vector(pop);
    for (int64_t i = 0; i < k; ++i) {
      auto j = static_cast<size_t>(r->mt.randbelow(static_cast<uint64_t>(n - i)));
      result[static_cast<size_t>(i)] = pool[j];
      pool[j] = pool[static_cast<size_t>(n - i - 1)];
    }
  } else {
    // n may be huge (sample(range(10**18), 3)): remember picks in a hash set.
    std::unordered_set<uint64_t> selected;
    for (int64_t i = 0; i < k; ++i) {
      uint64_t j = r->mt.randbelow(static_cast<uint64_t>(n));
      while (selected.count(j)) j = r->mt.randbelow(static_cast<uint64_t>(n));
      selected.insert(j);
      result[static_cast<size_t>(i)] = I.getitem(pop, Value::integer(static_cast<int64_t>(j)));
    }
  }
  return new_list(std::move(result));
}

Value random_choices(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "choices");
  Value v[4];
  Args rest = method_args(a);
  bind_args(I, "choices", rest, {"population", "weights", "cum_weights", "k"}, 1, v, 2);
  const Value& pop = v[0];
  int64_t n = I.len(pop);
  int64_t k = given(v[3]) ? arg_index(I, v[3]) : 1;
  if (k < 0) k = 0;
  check_result_size(I, static_cast<uint64_t>(k), kMaxResultItems);
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(k));
  if (!given_not_none(v[2])) {
    if (!given_not_none(v[1])) {
      double dn = static_cast<double>(n);
      for (int64_t i = 0; i < k; ++i)
        out.push_back(I.getitem(pop, Value::integer(static_cast<int64_t>(std::floor(r->mt.random() * dn)))));
      return new_list(std::move(out));
    }
  } else if (given_not_none(v[1])) {
    raise_type_error(I, "Cannot specify both weights and cumulative weights");
  }
  std::vector<double> cum;
  if (given_not_none(v[2])) {
    for (const Value& w : I.to_vector(v[2])) cum.push_back(arg_float(I, w));
  } else {
    if (v[1].is_int())
      raise_type_error(I, fmt::format("The number of choices must be a keyword argument: k={}", v[1].as_int()));
    double acc = 0;
    bool first = true;
    for (const Value& w : I.to_vector(v[1])) {
      acc = first ? arg_float(I, w) : acc + arg_float(I, w);
      first = false;
      cum.push_back(acc);
    }
  }
  if (static_cast<int64_t>(cum.size()) != n)
    raise_value_error(I, "The number of weights does not match the population");
  double total = cum.empty() ? 0.0 : cum.back();
  if (total <= 0.0) raise_value_error(I, "Total of weights must be greater than zero");
  if (!std::isfinite(total)) raise_value_error(I, "Total of weights must be finite");
  int64_t hi = n - 1;
  for (int64_t i = 0; i < k; ++i) {
    double x = r->mt.random() * total;
    // bisect_right(cum, x, 0, hi)
    int64_t lo = 0, h = hi;
    while (lo < h) {
      int64_t mid = (lo + h) / 2;
      if (x < cum[static_cast<size_t>(mid)])
        h = mid;
      else
        lo = mid + 1;
    }
    out.push_back(I.getitem(pop, Value::integer(lo)));
  }
  return new_list(std::move(out));
}

Value random_gauss(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "gauss");
  Value v[2];
  Args rest = method_args(a);
  bind_args(I, "gauss", rest, {"mu", "sigma"}, 0, v);
  double mu = given(v[0]) ? arg_float(I, v[0]) : 0.0, sigma = given(v[1]) ? arg_float(I, v[1]) : 1.0;
  double z;
  if (r->has_gauss_next) {
    z = r->gauss_next;
    r->has_gauss_next = false;
  } else {
    double x2pi = r->mt.random() * (2 * M_PI);
    double g2rad = std::sqrt(-2.0 * std::log(1.0 - r->mt.random()));
    z = std::cos(x2pi) * g2rad;
    r->gauss_next = std::sin(x2pi) * g2rad;
    r->has_gauss_next = true;
  }
  return Value::number(mu + z * sigma);
}

double normal(RandomState* r, double mu, double sigma) {
  const double kMagic = 4 * std::exp(-0.5) / std::sqrt(2.0);
  double z;
  for (;;) {
    double u1 = r->mt.random();
    double u2 = 1.0 - r->mt.random();
    z = kMagic * (u1 - 0.5) / u2;
    double zz = z * z / 4.0;
    if (zz <= -std::log(u2)) break;
  }
  return mu + z * sigma;
}

Value random_normalvariate(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "normalvariate");
  Value v[2];
  Args rest = method_args(a);
  bind_args(I, "normalvariate", rest, {"mu", "sigma"}, 0, v);
  double mu = given(v[0]) ? arg_float(I, v[0]) : 0.0, sigma = given(v[1]) ? arg_float(I, v[1]) : 1.0;
  return Value::number(normal(r, mu, sigma));
}

Value random_lognormvariate(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "lognormvariate");
  Value v[2];
  Args rest = method_args(a);
  bind_args(I, "lognormvariate", rest, {"mu", "sigma"}, 2, v);
  return Value::number(std::exp(normal(r, arg_float(I, v[0]), arg_float(I, v[1]))));
}

Value random_expovariate(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "expovariate");
  Value v[1];
  Args rest = method_args(a);
  bind_args(I, "expovariate", rest, {"lambd"}, 1, v);
  double lambd = arg_float(I, v[0]);
  double u = 1.0 - r->mt.random();
  if (lambd == 0.0) raise_exc(I, "ZeroDivisionError", "float division by zero");
  return Value::number(-std::log(u) / lambd);
}

Value random_triangular(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "triangular");
  Value v[3];
  Args rest = method_args(a);
  bind_args(I, "triangular", rest, {"low", "high", "mode"}, 0, v);
  double low = given(v[0]) ? arg_float(I, v[0]) : 0.0, high = given(v[1]) ? arg_float(I, v[1]) : 1.0;
  double u = r->mt.random();
  double c;
  if (given_not_none(v[2])) {
    if (high == low) return Value::number(low);
    c = (arg_float(I, v[2]) - low) / (high - low);
  } else {
    c = 0.5;
  }
  if (u > c) {
    u = 1.0 - u;
    c = 1.0 - c;
    std::swap(low, high);
  }
  return Value::number(low + (high - low) * std::sqrt(u * c));
}

// getstate()/setstate(): Python's format, (3, (mt[0..623], index), gauss_next).
Value random_getstate(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "getstate");
  Args rest = method_args(a);
  bind_positional(I, "getstate", rest, 0, 0, nullptr);
  std::vector<Value> words;
  for (int i = 0; i < MersenneTwister::N; ++i) words.push_back(Value::integer(r->mt.words()[i]));
  words.push_back(Value::integer(r->mt.position()));
  Value gauss = r->has_gauss_next ? Value::number(r->gauss_next) : Value();
  return new_tuple({Value::integer(3), new_tuple(std::move(words)), gauss});
}

Value random_setstate(Interp& I, Args& a, Object*) {
  RandomState* r = self_random(I, a, "setstate");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "setstate", rest, 1, 1, v);
  auto bad = [&]() { raise_value_error(I, "state vector is the wrong size"); };
  if (!v[0].is(Kind::Tuple) || v[0].as<Tuple>()->items.size() != 3) raise_type_error(I, "state must be a tuple");
  auto& parts = v[0].as<Tuple>()->items;
  if (!parts[1].is(Kind::Tuple)) raise_type_error(I, "state vector must be a tuple");
  auto& words = parts[1].as<Tuple>()->items;
  if (words.size() != MersenneTwister::N + 1) bad();
  uint32_t raw[MersenneTwister::N];
  for (int i = 0; i < MersenneTwister::N; ++i)
    raw[i] = static_cast<uint32_t>(arg_index(I, words[static_cast<size_t>(i)]));
  int64_t mti = arg_index(I, words.back());
  if (mti < 0 || mti > MersenneTwister::N) raise_value_error(I, "invalid state");
  r->mt.set_state(raw, static_cast<int>(mti));
  r->has_gauss_next = !parts[2].is_none();
  if (r->has_gauss_next) r->gauss_next = arg_float(I, parts[2]);
  return Value();
}

}  // namespace

void init_module_random(Interp& I, Module& m) {
  Ref<Class> cls = I.new_class("Random", I.cls_object.get(), "random", true);
  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kMethods[] = {
      {"seed", random_seed},
      {"random", random_random},
      {"getrandbits", random_getrandbits},
      {"randrange", random_randrange},
      {"randint", random_randint},
      {"uniform", random_uniform},
      {"choice", random_choice},
      {"choices", random_choices},
      {"shuffle", random_shuffle},
      {"sample", random_sample},
      {"gauss", random_gauss},
      {"normalvariate", random_normalvariate},
      {"lognormvariate", random_lognormvariate},
      {"expovariate", random_expovariate},
      {"triangular", random_triangular},
      {"getstate", random_getstate},
      {"setstate", random_setstate},
  };
  for (const Entry& e : kMethods) I.def_method(cls.get(), e.name, e.fn);
  cls->dict.set(I.names().__new__, make<Native>("Random", random_new).value());
  m.set(I.intern("Random"), cls.value());

  // The module functions are methods of one shared instance, as in Python.
  Ref<RandomState> inst(new RandomState(cls));
  seed_from(I, inst.get(), Value());
  m.set(I.intern("_inst"), inst.value());
  for (const Entry& e : kMethods)
    m.set(I.intern(e.name), make<BoundMethod>(inst.value(), *cls->dict.find(I.intern(e.name))).value());
}

}  // namespace msl
