// The math module, following CPython's Modules/mathmodule.c: the same error
// policy (a nan from a non-nan argument is "math domain error", an infinite
// result from a finite argument is "math range error" or a domain error),
// the same special cases for pow and fmod, and ports of the algorithms whose
// last bit users can see: fsum (Shewchuk's exact partials, with CPython's
// half-even fix-up) and hypot/dist (CPython's vector_norm).
//
// Integers are MSL's 64-bit ints, so factorial, comb, perm and lcm raise
// OverflowError where Python would return a big integer.
#include <fmt/format.h>

#include <cerrno>
#include <cfloat>
#include <cmath>

#include "interp/builtins/builtins.h"
#include "interp/builtins/conversions.h"
#include "interp/core/native_args.h"

namespace msl {

namespace {

[[noreturn]] void domain_error(Interp& I) { raise_value_error(I, "math domain error"); }
[[noreturn]] void range_error(Interp& I) { raise_exc(I, "OverflowError", "math range error"); }
[[noreturn]] void int_overflow(Interp& I) { raise_exc(I, "OverflowError", "integer overflow"); }

double one_float(Interp& I, Args& a, const char* name) {
  if (!a.kw.empty()) raise_type_error(I, fmt::format("math.{}() takes no keyword arguments", name));
  if (a.pos.size() != 1)
    raise_type_error(I, fmt::format("math.{}() takes exactly one argument ({} given)", name, a.pos.size()));
  return arg_float(I, a.pos[0]);
}

void two_args(Interp& I, Args& a, const char* name, Value* out) { bind_positional(I, name, a, 2, 2, out); }

// CPython's math_1: applies f and turns nan/inf results into exceptions.
Value math_1(Interp& I, Args& a, const char* name, double (*f)(double), bool can_overflow) {
  double x = one_float(I, a, name);
  errno = 0;
  double r = f(x);
  if (std::isnan(r) && !std::isnan(x)) domain_error(I);
  if (std::isinf(r) && std::isfinite(x)) {
    if (can_overflow) range_error(I);
    domain_error(I);
  }
  return Value::number(r);
}

#define MATH_FUNC1(pyname, cfunc, can_overflow)                          \
  Value math_##pyname(Interp& I, Args& a, Object*) {                     \
    return math_1(                                                       \
        I, a, #pyname, [](double x) { return cfunc(x); }, can_overflow); \
  }

MATH_FUNC1(sqrt, std::sqrt, false)
MATH_FUNC1(exp, std::exp, true)
MATH_FUNC1(exp2, std::exp2, true)
MATH_FUNC1(expm1, std::expm1, true)
MATH_FUNC1(log1p, std::log1p, false)
MATH_FUNC1(sin, std::sin, false)
MATH_FUNC1(cos, std::cos, false)
MATH_FUNC1(tan, std::tan, false)
MATH_FUNC1(asin, std::asin, false)
MATH_FUNC1(acos, std::acos, false)
MATH_FUNC1(atan, std::atan, false)
MATH_FUNC1(sinh, std::sinh, true)
MATH_FUNC1(cosh, std::cosh, true)
MATH_FUNC1(tanh, std::tanh, false)
MATH_FUNC1(asinh, std::asinh, false)
MATH_FUNC1(acosh, std::acosh, false)
MATH_FUNC1(atanh, std::atanh, false)
MATH_FUNC1(fabs, std::fabs, false)
MATH_FUNC1(erf, std::erf, false)
MATH_FUNC1(erfc, std::erfc, false)
MATH_FUNC1(cbrt, std::cbrt, false)
#undef MATH_FUNC1

// CPython's own gamma and lgamma (Lanczos approximation, mathmodule.c), so
// results agree with Python to the last bit rather than with the C library.
constexpr int kLanczosN = 13;
constexpr double kLanczosG = 6.024680040776729583740234375;
constexpr double kLanczosGMinusHalf = 5.524680040776729583740234375;
constexpr double kLanczosNum[kLanczosN] = {
    23531376880.410759688572007674451636754734846804940, 42919803642.649098768957899047001988850926355848959,
    35711959237.355668049440185451547166705960488635843, 17921034426.037209699919755754458931112671403265390,
    6039542586.3520280050642916443072979210699388420708, 1439720407.3117216736632230727949123939715485786772,
    248874557.86205415651146038641322942321632125127801, 31426415.585400194380614231628318205362874684987640,
    2876370.6289353724412254090516208496135991145378768, 186056.26539522349504029498971604569928220784236328,
    8071.6720023658162106380029022722506138218516325024, 210.82427775157934587250973392071336271166969580291,
    2.5066282746310002701649081771338373386264310793408};
constexpr double kLanczosDen[kLanczosN] = {0.0,        39916800.0, 120543840.0, 150917976.0, 105258076.0,
                                           45995730.0, 13339535.0, 2637558.0,   357423.0,    32670.0,
                                           1925.0,     66.0,       1.0};
constexpr double kGammaIntegral[23] = {1.0,
                                       1.0,
                                       2.0,
                                       6.0,
                                       24.0,
                                       120.0,
                                       720.0,
                                       5040.0,
                                       40320.0,
                                       362880.0,
                                       3628800.0,
                                       39916800.0,
                                       479001600.0,
                                       6227020800.0,
                                       87178291200.0,
                                       1307674368000.0,
                                       20922789888000.0,
                                       355687428096000.0,
                                       6402373705728000.0,
                                       121645100408832000.0,
                                       2432902008176640000.0,
                                       51090942171709440000.0,
                                       1124000727777607680000.0};
constexpr double kPi = 3.141592653589793238462643383279502884197;
constexpr double kLogPi = 1.144729885849400174143427351353058711647;

double lanczos_sum(double x) {
  double num = 0.0, den = 0.0;
  if (x < 5.0) {
    for (int i = kLanczosN; --i >= 0;) {
      num = num * x + kLanczosNum[i];
      den = den * x + kLanczosDen[i];
    }
  } else {
    for (int i = 0; i < kLanczosN; i++) {
      num = num / x + kLanczosNum[i];
      den = den / x + kLanczosDen[i];
    }
  }
  return num / den;
}

double sinpi(double x) {
  double y = std::fmod(std::fabs(x), 2.0);
  int n = static_cast<int>(std::round(2.0 * y));
  double r;
  switch (n) {
    case 0: r = std::sin(kPi * y); break;
    case 1: r = std::cos(kPi * (y - 0.5)); break;
    case 2: r = std::sin(kPi * (1.0 - y)); break;
    case 3: r = -std::cos(kPi * (y - 1.5)); break;
    default: r = std::sin(kPi * (y - 2.0)); break;
  }
  return std::copysign(1.0, x) * r;
}

// errno-style outcome of the special functions: 0, EDOM or ERANGE.
double tgamma_py(double x, int& err) {
  err = 0;
  if (!std::isfinite(x)) {
    if (std::isnan(x) || x > 0.0) return x;
    err = EDOM;
    return NAN;
  }
  if (x == 0.0) {
    err = EDOM;
    return std::copysign(HUGE_VAL, x);
  }
  if (x == std::floor(x)) {
    if (x < 0.0) {
      err = EDOM;
      return NAN;
    }
    if (x <= 23) return kGammaIntegral[static_cast<int>(x) - 1];
  }
  double absx = std::fabs(x);
  if (absx < 1e-20) {
    double r = 1.0 / x;
    if (std::isinf(r)) err = ERANGE;
    return r;
  }
  if (absx > 200.0) {
    if (x < 0.0) return 0.0 / sinpi(x);
    err = ERANGE;
    return HUGE_VAL;
  }
  double y = absx + kLanczosGMinusHalf;
  double z;
  if (absx > kLanczosGMinusHalf) {
    double q = y - absx;
    z = q - kLanczosGMinusHalf;
  } else {
    double q = y - kLanczosGMinusHalf;
    z = q - absx;
  }
  z = z * kLanczosG / y;
  double r;
  if (x < 0.0) {
    r = -kPi / sinpi(absx) / absx * std::exp(y) / lanczos_sum(absx);
    r -= z * r;
    if (absx < 140.0) {
      r /= std::pow(y, absx - 0.5);
    } else {
      double sqrtpow = std::pow(y, absx / 2.0 - 0.25);
      r /= sqrtpow;
      r /= sqrtpow;
    }
  } else {
    r = lanczos_sum(absx) / std::exp(y);
    r += z * r;
    if (absx < 140.0) {
      r *= std::pow(y, absx - 0.5);
    } else {
      double sqrtpow = std::pow(y, absx / 2.0 - 0.25);
      r *= sqrtpow;
      r *= sqrtpow;
    }
  }
  if (std::isinf(r)) err = ERANGE;
  return r;
}

double lgamma_py(double x, int& err) {
  err = 0;
  if (!std::isfinite(x)) return std::isnan(x) ? x : HUGE_VAL;
  if (x == std::floor(x) && x <= 2.0) {
    if (x <= 0.0) {
      err = EDOM;
      return HUGE_VAL;
    }
    return 0.0;
  }
  double absx = std::fabs(x);
  if (absx < 1e-20) return -std::log(absx);
  double r = std::log(lanczos_sum(absx)) - kLanczosG;
  r += (absx - 0.5) * (std::log(absx + kLanczosG - 0.5) - 1);
  if (x < 0.0) r = kLogPi - std::log(std::fabs(sinpi(absx))) - std::log(absx) - r;
  if (std::isinf(r)) err = ERANGE;
  return r;
}

// CPython's math_1a/is_error: EDOM is a domain error; ERANGE is an overflow
// unless the result is tiny (an underflow, which is not an error).
Value special_result(Interp& I, double r, int err) {
  if (err == EDOM) domain_error(I);
  if (err == ERANGE && std::fabs(r) >= 1.5) range_error(I);
  return Value::number(r);
}

Value math_gamma(Interp& I, Args& a, Object*) {
  int err;
  double r = tgamma_py(one_float(I, a, "gamma"), err);
  return special_result(I, r, err);
}

Value math_lgamma(Interp& I, Args& a, Object*) {
  int err;
  double r = lgamma_py(one_float(I, a, "lgamma"), err);
  return special_result(I, r, err);
}

// log of a positive finite value, with CPython's domain errors.
double checked_log(Interp& I, double x, double (*f)(double)) {
  if (std::isnan(x)) return x;
  if (x <= 0) domain_error(I);
  return f(x);
}

Value math_log(Interp& I, Args& a, Object*) {
  if (!a.kw.empty()) raise_type_error(I, "math.log() takes no keyword arguments");
  if (a.pos.empty() || a.pos.size() > 2) raise_type_error(I, "math.log requires 1 to 2 arguments");
  double num = checked_log(I, arg_float(I, a.pos[0]), [](double x) { return std::log(x); });
  if (a.pos.size() == 1) return Value::number(num);
  double den = checked_log(I, arg_float(I, a.pos[1]), [](double x) { return std::log(x); });
  if (den == 0.0) raise_exc(I, "ZeroDivisionError", "float division by zero");
  return Value::number(num / den);
}

Value math_log2(Interp& I, Args& a, Object*) {
  return Value::number(checked_log(I, one_float(I, a, "log2"), [](double x) { return std::log2(x); }));
}

Value math_log10(Interp& I, Args& a, Object*) {
  return Value::number(checked_log(I, one_float(I, a, "log10"), [](double x) { return std::log10(x); }));
}

Value math_pow(Interp& I, Args& a, Object*) {
  Value v[2];
  two_args(I, a, "pow", v);
  double x = arg_float(I, v[0]), y = arg_float(I, v[1]);
  double r;
  if (!std::isfinite(x) || !std::isfinite(y)) {
    if (std::isnan(x)) {
      r = y == 0. ? 1. : x;
    } else if (std::isnan(y)) {
      r = x == 1. ? 1. : y;
    } else if (std::isinf(x)) {
      bool odd_y = std::isfinite(y) && std::fmod(std::fabs(y), 2.0) == 1.0;
      if (y > 0.)
        r = odd_y ? x : std::fabs(x);
      else if (y == 0.)
        r = 1.;
      else
        r = odd_y ? std::copysign(0., x) : 0.;
    } else {  // y infinite
      if (std::fabs(x) == 1.0)
        r = 1.;
      else if (y > 0. && std::fabs(x) > 1.0)
        r = y;
      else if (y < 0. && std::fabs(x) < 1.0)
        r = -y;
      else
        r = 0.;
    }
    return Value::number(r);
  }
  r = std::pow(x, y);
  if (std::isnan(r)) domain_error(I);
  if (std::isinf(r)) {
    if (x == 0.) domain_error(I);
    range_error(I);
  }
  return Value::number(r);
}

Value math_atan2(Interp& I, Args& a, Object*) {
  Value v[2];
  two_args(I, a, "atan2", v);
  return Value::number(std::atan2(arg_float(I, v[0]), arg_float(I, v[1])));
}

Value math_copysign(Interp& I, Args& a, Object*) {
  Value v[2];
  two_args(I, a, "copysign", v);
  return Value::number(std::copysign(arg_float(I, v[0]), arg_float(I, v[1])));
}

Value math_fmod(Interp& I, Args& a, Object*) {
  Value v[2];
  two_args(I, a, "fmod", v);
  double x = arg_float(I, v[0]), y = arg_float(I, v[1]);
  if (std::isinf(y) && std::isfinite(x)) return Value::number(x);
  double r = std::fmod(x, y);
  if (std::isnan(r) && !std::isnan(x) && !std::isnan(y)) domain_error(I);
  return Value::number(r);
}

Value math_remainder(Interp& I, Args& a, Object*) {
  Value v[2];
  two_args(I, a, "remainder", v);
  double x = arg_float(I, v[0]), y = arg_float(I, v[1]);
  if (std::isnan(x) || std::isnan(y)) return Value::number(NAN);
  if (std::isinf(x) || y == 0) domain_error(I);
  return Value::number(std::remainder(x, y));
}

Value math_ldexp(Interp& I, Args& a, Object*) {
  Value v[2];
  two_args(I, a, "ldexp", v);
  double x = arg_float(I, v[0]);
  int64_t e = arg_index(I, v[1]);
  if (x == 0 || !std::isfinite(x)) return Value::number(x);
  int ei = e > 100000 ? 100000 : e < -100000 ? -100000 : static_cast<int>(e);
  double r = std::ldexp(x, ei);
  if (std::isinf(r)) range_error(I);
  return Value::number(r);
}

Value math_frexp(Interp& I, Args& a, Object*) {
  double x = one_float(I, a, "frexp");
  if (std::isnan(x) || std::isinf(x) || x == 0) return new_tuple({Value::number(x), Value::integer(0)});
  int e;
  double m = std::frexp(x, &e);
  return new_tuple({Value::number(m), Value::integer(e)});
}

Value math_modf(Interp& I, Args& a, Object*) {
  double x = one_float(I, a, "modf");
  if (std::isinf(x)) return new_tuple({Value::number(std::copysign(0.0, x)), Value::number(x)});
  double ip;
  double frac = std::modf(x, &ip);
  return new_tuple({Value::number(frac), Value::number(ip)});
}

Value math_degrees(Interp& I, Args& a, Object*) { return Value::number(one_float(I, a, "degrees") * (180.0 / M_PI)); }

Value math_radians(Interp& I, Args& a, Object*) { return Value::number(one_float(I, a, "radians") * (M_PI / 180.0)); }

// floor/ceil/trunc: ints stay ints, floats become ints, objects may define
// __floor__/__ceil__/__trunc__.
Value round_to_int(Interp& I, Args& a, const char* name, double (*f)(double)) {
  if (!a.kw.empty() || a.pos.size() != 1)
    raise_type_error(I, fmt::format("math.{}() takes exactly one argument ({} given)", name, a.pos.size()));
  const Value& x = a.pos[0];
  if (x.is_int()) return x;
  if (x.is_bool()) return Value::integer(x.as_bool() ? 1 : 0);
  if (x.is_float()) return Value::integer(float_to_int(I, f(x.as_float())));
  if (x.is(Kind::Instance) || x.is(Kind::NativeData)) {
    Str* dunder = I.intern(fmt::format("__{}__", name));
    if (I.cls_of(x)->lookup(dunder)) return I.call_method(x, dunder, {});
  }
  if (std::string_view(name) == "trunc")
    raise_type_error(I, fmt::format("type {} doesn't define __trunc__ method", I.type_name(x)));
  return Value::integer(float_to_int(I, f(arg_float(I, x))));
}

Value math_floor(Interp& I, Args& a, Object*) {
  return round_to_int(I, a, "floor", [](double x) { return std::floor(x); });
}
Value math_ceil(Interp& I, Args& a, Object*) {
  return round_to_int(I, a, "ceil", [](double x) { return std::ceil(x); });
}
Value math_trunc(Interp& I, Args& a, Object*) {
  return round_to_int(I, a, "trunc", [](double x) { return std::trunc(x); });
}

Value math_isnan(Interp& I, Args& a, Object*) { return Value::boolean(std::isnan(one_float(I, a, "isnan"))); }
Value math_isinf(Interp& I, Args& a, Object*) { return Value::boolean(std::isinf(one_float(I, a, "isinf"))); }
Value math_isfinite(Interp& I, Args& a, Object*) { return Value::boolean(std::isfinite(one_float(I, a, "isfinite"))); }

Value math_isclose(Interp& I, Args& a, Object*) {
  if (a.pos.size() > 2)
    raise_type_error(I, fmt::format("isclose() takes exactly 2 positional arguments ({} given)", a.pos.size()));
  Value v[4];
  bind_args(I, "isclose", a, {"a", "b", "rel_tol", "abs_tol"}, 2, v, 2);
  double x = arg_float(I, v[0]), y = arg_float(I, v[1]);
  double rel_tol = given(v[2]) ? arg_float(I, v[2]) : 1e-09;
  double abs_tol = given(v[3]) ? arg_float(I, v[3]) : 0.0;
  if (rel_tol < 0.0 || abs_tol < 0.0) raise_value_error(I, "tolerances must be non-negative");
  if (x == y) return Value::boolean(true);
  if (std::isinf(x) || std::isinf(y)) return Value::boolean(false);
  double diff = std::fabs(y - x);
  return Value::boolean(diff <= std::fabs(rel_tol * y) || diff <= std::fabs(rel_tol * x) || diff <= abs_tol);
}

uint64_t magnitude(int64_t x) { return x < 0 ? 0 - static_cast<uint64_t>(x) : static_cast<uint64_t>(x); }

uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

Value math_gcd(Interp& I, Args& a, Object*) {
  if (!a.kw.empty()) raise_type_error(I, "math.gcd() takes no keyword arguments");
  uint64_t g = 0;
  for (const Value& x : a.pos) g = gcd_u64(g, magnitude(arg_index(I, x)));
  if (g > static_cast<uint64_t>(INT64_MAX)) int_overflow(I);
  return Value::integer(static_cast<int64_t>(g));
}

Value math_lcm(Interp& I, Args& a, Object*) {
  if (!a.kw.empty()) raise_type_error(I, "math.lcm() takes no keyword arguments");
  uint64_t l = 1;
  for (const Value& x : a.pos) {
    uint64_t m = magnitude(arg_index(I, x));
    if (m == 0 || l == 0) {
      l = 0;
      continue;
    }
    uint64_t g = gcd_u64(l, m);
    if (__builtin_mul_overflow(l / g, m, &l)) int_overflow(I);
  }
  if (l > static_cast<uint64_t>(INT64_MAX)) int_overflow(I);
  return Value::integer(static_cast<int64_t>(l));
}

Value math_factorial(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "factorial", a, 1, 1, v);
  int64_t n = arg_index(I, v[0]);
  if (n < 0) raise_value_error(I, "factorial() not defined for negative values");
  int64_t r = 1;
  for (int64_t i = 2; i <= n; ++i)
    if (__builtin_mul_overflow(r, i, &r)) int_overflow(I);
  return Value::integer(r);
}

Value math_comb(Interp& I, Args& a, Object*) {
  Value v[2];
  two_args(I, a, "comb", v);
  int64_t n = arg_index(I, v[0]), k = arg_index(I, v[1]);
  if (n < 0) raise_value_error(I, "n must be a non-negative integer");
  if (k < 0) raise_value_error(I, "k must be a non-negative integer");
  if (k > n) return Value::integer(0);
  if (k > n - k) k = n - k;
  unsigned __int128 r = 1;
  for (int64_t i = 1; i <= k; ++i) {
    // r * (n - k + i) / i stays an integer at every step (it is C(n-k+i, i)).
    r = r * static_cast<unsigned __int128>(n - k + i) / static_cast<unsigned __int128>(i);
    if (r > static_cast<unsigned __int128>(INT64_MAX)) int_overflow(I);
  }
  return Value::integer(static_cast<int64_t>(r));
}

Value math_perm(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "perm", a, 1, 2, v);
  int64_t n = arg_index(I, v[0]);
  if (n < 0) raise_value_error(I, "n must be a non-negative integer");
  int64_t k = given_not_none(v[1]) ? arg_index(I, v[1]) : n;
  if (k < 0) raise_value_error(I, "k must be a non-negative integer");
  if (k > n) return Value::integer(0);
  int64_t r = 1;
  for (int64_t i = 0; i < k; ++i)
    if (__builtin_mul_overflow(r, n - i, &r)) int_overflow(I);
  return Value::integer(r);
}

Value math_isqrt(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "isqrt", a, 1, 1, v);
  int64_t n = arg_index(I, v[0]);
  if (n < 0) raise_value_error(I, "isqrt() argument must be nonnegative");
  auto r = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (r > 0 && static_cast<__int128>(r) * r > n) --r;
  while (static_cast<__int128>(r + 1) * (r + 1) <= n) ++r;
  return Value::integer(r);
}

// CPython's vector_norm: the Euclidean norm of `vec` (absolute values,
// `max` their maximum) with a correction step that makes it correctly
// rounded in almost all cases.
double vector_norm(std::vector<double>& vec, double max, bool found_nan) {
  if (std::isinf(max)) return max;
  if (found_nan) return NAN;
  size_t n = vec.size();
  if (max == 0.0 || n <= 1) return max;
  int max_e;
  std::frexp(max, &max_e);
  if (max_e < -1023) {
    for (double& x : vec) x /= DBL_MIN;
    return DBL_MIN * vector_norm(vec, max / DBL_MIN, found_nan);
  }
  double scale = std::ldexp(1.0, -max_e);
  double csum = 1.0, frac1 = 0.0, frac2 = 0.0;
  auto fast_sum = [](double a, double b, double& lo) {
    double x = a + b;
    double z = x - a;
    lo = b - z;
    return x;
  };
  for (double x : vec) {
    x *= scale;
    double hi = x * x;
    double lo = std::fma(x, x, -hi);
    double sm_lo;
    csum = fast_sum(csum, hi, sm_lo);
    frac1 += lo;
    frac2 += sm_lo;
  }
  double h = std::sqrt(csum - 1.0 + (frac1 + frac2));
  double pr_hi = -h * h;
  double pr_lo = std::fma(-h, h, -pr_hi);
  double sm_lo;
  csum = fast_sum(csum, pr_hi, sm_lo);
  frac1 += pr_lo;
  frac2 += sm_lo;
  double x = csum - 1.0 + (frac1 + frac2);
  h += x / (2.0 * h);
  return h / scale;
}

Value math_hypot(Interp& I, Args& a, Object*) {
  if (!a.kw.empty()) raise_type_error(I, "math.hypot() takes no keyword arguments");
  std::vector<double> vec;
  double max = 0.0;
  bool found_nan = false;
  for (const Value& x : a.pos) {
    double d = std::fabs(arg_float(I, x));
    found_nan |= std::isnan(d);
    if (d > max) max = d;
    vec.push_back(d);
  }
  return Value::number(vector_norm(vec, max, found_nan));
}

Value math_dist(Interp& I, Args& a, Object*) {
  Value v[2];
  two_args(I, a, "dist", v);
  std::vector<Value> p = I.to_vector(v[0]), q = I.to_vector(v[1]);
  if (p.size() != q.size()) raise_value_error(I, "both points must have the same number of dimensions");
  std::vector<double> vec;
  double max = 0.0;
  bool found_nan = false;
  for (size_t i = 0; i < p.size(); ++i) {
    double d = std::fabs(arg_float(I, p[i]) - arg_float(I, q[i]));
    found_nan |= std::isnan(d);
    if (d > max) max = d;
    vec.push_back(d);
  }
  return Value::number(vector_norm(vec, max, found_nan));
}

// fsum: Shewchuk's algorithm as CPython implements it (msum).
Value math_fsum(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "fsum", a, 1, 1, v);
  std::vector<double> p;
  double special_sum = 0.0, inf_sum = 0.0, lo = 0.0;
  Value it = I.iter(v[0]);
  Value item;
  while (I.next(it, item)) {
    tick(I);
    double x = arg_float(I, item);
    double xsave = x;
    size_t i = 0;
    for (size_t j = 0; j < p.size(); ++j) {
      double y = p[j];
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      double hi = x + y;
      double yr = hi - x;
      lo = y - yr;
      if (lo != 0.0) p[i++] = lo;
      x = hi;
    }
    p.resize(i);
    if (x != 0.0) {
      if (!std::isfinite(x)) {
        if (std::isfinite(xsave)) raise_exc(I, "OverflowError", "intermediate overflow in fsum");
        if (std::isinf(xsave)) inf_sum += xsave;
        special_sum += xsave;
        p.clear();
      } else {
        p.push_back(x);
      }
    }
  }
  if (special_sum != 0.0) {
    if (std::isnan(inf_sum)) raise_value_error(I, "-inf + inf in fsum");
    return Value::number(special_sum);
  }
  double hi = 0.0;
  size_t n = p.size();
  if (n > 0) {
    hi = p[--n];
    while (n > 0) {
      double x = hi;
      double y = p[--n];
      hi = x + y;
      double yr = hi - x;
      lo = y - yr;
      if (lo != 0.0) break;
    }
    if (n > 0 && ((lo < 0.0 && p[n - 1] < 0.0) || (lo > 0.0 && p[n - 1] > 0.0))) {
      double y = lo * 2.0;
      double x = hi + y;
      double yr = x - hi;
      if (y == yr) hi = x;
    }
  }
  return Value::number(hi);
}

Value math_prod(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_args(I, "prod", a, {"iterable", "start"}, 1, v, 1);
  Value acc = given(v[1]) ? v[1] : Value::integer(1);
  Value it = I.iter(v[0]);
  Value x;
  while (I.next(it, x)) {
    tick(I);
    acc = I.binary(ast::BinOp::Mul, acc, x);
  }
  return acc;
}

Value math_nextafter(Interp& I, Args& a, Object*) {
  Value v[2];
  two_args(I, a, "nextafter", v);
  return Value::number(std::nextafter(arg_float(I, v[0]), arg_float(I, v[1])));
}

Value math_ulp(Interp& I, Args& a, Object*) {
  double x = one_float(I, a, "ulp");
  if (std::isnan(x)) return Value::number(x);
  x = std::fabs(x);
  if (std::isinf(x)) return Value::number(x);
  double x2 = std::nextafter(x, INFINITY);
  if (std::isinf(x2)) {
    x2 = std::nextafter(x, -INFINITY);
    return Value::number(x - x2);
  }
  return Value::number(x2 - x);
}

}  // namespace

void init_module_math(Interp& I, Module& m) {
  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kFunctions[] = {
      {"sqrt", math_sqrt},       {"exp", math_exp},
      {"exp2", math_exp2},       {"expm1", math_expm1},
      {"log", math_log},         {"log2", math_log2},
      {"log10", math_log10},     {"log1p", math_log1p},
      {"pow", math_pow},         {"sin", math_sin},
      {"cos", math_cos},         {"tan", math_tan},
      {"asin", math_asin},       {"acos", math_acos},
      {"atan", math_atan},       {"atan2", math_atan2},
      {"sinh", math_sinh},       {"cosh", math_cosh},
      {"tanh", math_tanh},       {"asinh", math_asinh},
      {"acosh", math_acosh},     {"atanh", math_atanh},
      {"fabs", math_fabs},       {"erf", math_erf},
      {"erfc", math_erfc},       {"gamma", math_gamma},
      {"lgamma", math_lgamma},   {"cbrt", math_cbrt},
      {"floor", math_floor},     {"ceil", math_ceil},
      {"trunc", math_trunc},     {"isnan", math_isnan},
      {"isinf", math_isinf},     {"isfinite", math_isfinite},
      {"isclose", math_isclose}, {"gcd", math_gcd},
      {"lcm", math_lcm},         {"factorial", math_factorial},
      {"comb", math_comb},       {"perm", math_perm},
      {"isqrt", math_isqrt},     {"hypot", math_hypot},
      {"dist", math_dist},       {"degrees", math_degrees},
      {"radians", math_radians}, {"copysign", math_copysign},
      {"fmod", math_fmod},       {"remainder", math_remainder},
      {"ldexp", math_ldexp},     {"frexp", math_frexp},
      {"modf", math_modf},       {"fsum", math_fsum},
      {"prod", math_prod},       {"nextafter", math_nextafter},
      {"ulp", math_ulp},
  };
  for (const Entry& e : kFunctions) I.def_native(&m, e.name, e.fn);
  m.set(I.intern("pi"), Value::number(M_PI));
  m.set(I.intern("e"), Value::number(M_E));
  m.set(I.intern("tau"), Value::number(2 * M_PI));
  m.set(I.intern("inf"), Value::number(INFINITY));
  m.set(I.intern("nan"), Value::number(NAN));
}

}  // namespace msl
