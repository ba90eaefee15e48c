// Element types, conversions and the scalar operators of the elementwise
// primitives, compiled once per instruction set.
//
// Same rules as vec_math.h: the includer defines MSL_SIMD_NS and
// MSL_SIMD_WIDTH (0 for the generic build), wraps the include in a target
// region and includes the standard headers first, hence no include guard.
// The operators are written per element; elementwise_loops.h runs them over
// contiguous arrays, where GCC vectorizes them for the region's width.
// Standard-library templates are avoided here and in the loops: an
// instantiation first made inside a target region could be emitted with
// AVX-512 code and chosen by the linker for the whole program.
//
// Semantics fixed here (NumPy's where PyTorch and NumPy differ only in
// corner cases): integer arithmetic wraps (two's complement, no UB); integer
// floordiv/mod floor toward -inf with the divisor's sign for mod (the driver
// rejects zero divisors before any loop runs; a zero that slips through gives
// 0 rather than a trap, and x // -1 wraps); float floordiv/mod follow NumPy's
// npy_divmod; maximum/minimum propagate NaN; sign(NaN) is NaN; relu(NaN) is
// NaN; conversions follow store_from_double (dtype.cpp).

namespace msl::kernels::MSL_SIMD_NS {

using ew::BOp;
using ew::kScalar0;
using ew::kScalar1;
using ew::LoopFn;
using ew::LoopTable;
using ew::UOp;

// The C type a loop sees for each dtype. Bool is read as bytes (any nonzero
// byte is true); the half formats are their bit patterns.
// clang-format off
template <DType D> struct CTypeOf;
template <> struct CTypeOf<DType::Bool> { using T = uint8_t; };
template <> struct CTypeOf<DType::Int8> { using T = int8_t; };
template <> struct CTypeOf<DType::UInt8> { using T = uint8_t; };
template <> struct CTypeOf<DType::Int32> { using T = int32_t; };
template <> struct CTypeOf<DType::Int64> { using T = int64_t; };
template <> struct CTypeOf<DType::Float16> { using T = uint16_t; };
template <> struct CTypeOf<DType::BFloat16> { using T = uint16_t; };
template <> struct CTypeOf<DType::Float32> { using T = float; };
template <> struct CTypeOf<DType::Float64> { using T = double; };
// clang-format on
template <DType D>
using CT = typename CTypeOf<D>::T;

constexpr bool is_fp(DType d) { return d == DType::Float32 || d == DType::Float64; }
constexpr bool is_sint(DType d) { return d == DType::Int8 || d == DType::Int32 || d == DType::Int64; }

template <class T>
inline T wrap_add(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
}
template <class T>
inline T wrap_sub(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
}
template <class T>
inline T wrap_mul(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
}

inline float bf16_bits_to_float(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
// Branch-free twin of float_to_bf16 (dtype.h), so conversion loops vectorize.
inline uint16_t float_to_bf16_bits(float f) {
  uint32_t u;
  __builtin_memcpy(&u, &f, 4);
  uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  uint32_t quiet = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
}

// ----------------------------------------------------------- conversions

// Float to integer: truncate toward zero, saturate, NaN to 0. The bounds are
// compared in the source's own type; for every float value this picks the
// same result as the double comparison in store_from_double.
template <class I, class F>
inline I saturate_fp(F v) {
  constexpr I lo = std::numeric_limits<I>::min(), hi = std::numeric_limits<I>::max();
  return v != v ? I(0) : v <= static_cast<F>(lo) ? lo : v >= static_cast<F>(hi) ? hi : static_cast<I>(v);
}
template <class I, class S>
inline I saturate_int(S v) {
  constexpr I lo = std::numeric_limits<I>::min(), hi = std::numeric_limits<I>::max();
  if constexpr (static_cast<int64_t>(std::numeric_limits<S>::min()) < static_cast<int64_t>(lo))
    if (v < static_cast<S>(lo)) return lo;
  if constexpr (static_cast<uint64_t>(std::numeric_limits<S>::max()) > static_cast<uint64_t>(hi))
    if (v > static_cast<S>(hi)) return hi;
  return static_cast<I>(v);
}

template <DType F, DType T>
inline CT<T> cvt(CT<F> x) {
  using To = CT<T>;
  if constexpr (F == T && F != DType::Bool) {
    return x;  // bit-exact copy (NaN payloads included)
  } else if constexpr (F == DType::Float16) {
    return cvt<DType::Float32, T>(half_to_float(x));
  } else if constexpr (F == DType::BFloat16) {
    return cvt<DType::Float32, T>(bf16_bits_to_float(x));
  } else if constexpr (F == DType::Bool) {
    return static_cast<To>(x != 0 ? 1 : 0);  // 1 converts exactly into every dtype, half bits included below
  } else if constexpr (T == DType::Bool) {
    return static_cast<To>(x != 0);
  } else if constexpr (T == DType::Float16) {
    return float_to_half(static_cast<float>(static_cast<double>(x)));
  } else if constexpr (T == DType::BFloat16) {
    return float_to_bf16_bits(static_cast<float>(static_cast<double>(x)));
  } else if constexpr (is_fp(T)) {
    return static_cast<To>(static_cast<double>(x));  // int64 to float32 rounds twice, as store_from_double does
  } else if constexpr (is_fp(F)) {
    return saturate_fp<To>(x);
  } else {
    return saturate_int<To>(x);
  }
}
// Bool into half formats: the bit patterns of 0 and 1, not the integers.
template <>
inline uint16_t cvt<DType::Bool, DType::Float16>(uint8_t x) {
  return x ? 0x3c00 : 0;
}
template <>
inline uint16_t cvt<DType::Bool, DType::BFloat16>(uint8_t x) {
  return x ? 0x3f80 : 0;
}

template <DType F, DType T>
void convert_loop(const void* const* in, void* out, int64_t n, unsigned) {
  const CT<F>* __restrict a = static_cast<const CT<F>*>(in[0]);
  CT<T>* __restrict o = static_cast<CT<T>*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = cvt<F, T>(a[i]);
}

template <DType F, DType... Ts>
void set_converts_from(LoopTable& t) {
  ((t.convert[static_cast<int>(F)][static_cast<int>(Ts)] = &convert_loop<F, Ts>), ...);
}
template <DType... Fs>
void set_converts(LoopTable& t) {
  (set_converts_from<Fs, DType::Bool, DType::Int8, DType::UInt8, DType::Int32, DType::Int64, DType::Float16,
                     DType::BFloat16, DType::Float32, DType::Float64>(t),
   ...);
}

// ------------------------------------------------------- scalar operators

template <class T>
inline T fp_floordiv(T a, T b) {
  if (b == 0) return a / b;
  T mod = std::fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return std::copysign(T(0), a / b);
  T fl = std::floor(div);
  return div - fl > T(0.5) ? fl + 1 : fl;
}
template <class T>
inline T fp_mod(T a, T b) {
  T mod = std::fmod(a, b);
  if (b == 0) return mod;
  if (mod == 0) return std::copysign(T(0), b);
  return (b < 0) != (mod < 0) ? mod + b : mod;
}

// Operators on one element of compute dtype D (C type T). Bool is uint8_t.
struct OpAdd {
  template <DType D, class T>
  static T f(T a, T b) {
    if constexpr (D == DType::Bool)
      return static_cast<T>(a | b);
    else if constexpr (is_fp(D))
      return a + b;
    else
      return wrap_add(a, b);
  }
};
struct OpSub {
  template <DType D, class T>
  static T f(T a, T b) {
    if constexpr (is_fp(D))
      return a - b;
    else
      return wrap_sub(a, b);
  }
};
struct OpMul {
  template <DType D, class T>
  static T f(T a, T b) {
    if constexpr (D == DType::Bool)
      return static_cast<T>(a & b);
    else if constexpr (is_fp(D))
      return a * b;
    else
      return wrap_mul(a, b);
  }
};
struct OpDiv {
  template <DType D, class T>
  static T f(T a, T b) {
    return a / b;
  }
};
struct OpFloorDiv {
  template <DType D, class T>
  static T f(T a, T b) {
    if constexpr (is_fp(D)) {
      return fp_floordiv(a, b);
    } else if constexpr (!is_sint(D)) {
      return static_cast<T>(b == 0 ? 0 : a / b);
    } else {
      if (b == 0) return T(0);
      if (b == T(-1)) return wrap_sub(T(0), a);
      T q = static_cast<T>(a / b);
      T r = static_cast<T>(a % b);
      return r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(q - 1) : q;
    }
  }
};
struct OpMod {
  template <DType D, class T>
  static T f(T a, T b) {
    if constexpr (is_fp(D)) {
      return fp_mod(a, b);
    } else if constexpr (!is_sint(D)) {
      return static_cast<T>(b == 0 ? 0 : a % b);
    } else {
      if (b == 0 || b == T(-1)) return T(0);
      T r = static_cast<T>(a % b);
      return r != 0 && ((r < 0) != (b < 0)) ? static_cast<T>(r + b) : r;
    }
  }
};
struct OpPow {
  template <DType D, class T>
  static T f(T a, T b) {
    if constexpr (D == DType::Float32) {
      return static_cast<float>(std::pow(static_cast<double>(a), static_cast<double>(b)));
    } else if constexpr (D == DType::Float64) {
      return std::pow(a, b);
    } else {
      if constexpr (is_sint(D))
        if (b < 0) return T(0);  // rejected before the loop runs
      T r = 1, base = a;
      for (T e = b; e != 0; e = static_cast<T>(e >> 1)) {
        if (e & 1) r = wrap_mul(r, base);
        base = wrap_mul(base, base);
      }
      return r;
    }
  }
};
struct OpMaximum {
  template <DType D, class T>
  static T f(T a, T b) {
    if constexpr (D == DType::Bool)
      return static_cast<T>(a | b);
    else if constexpr (is_fp(D))
      return (a > b || a != a) ? a : b;
    else
      return a > b ? a : b;
  }
};
struct OpMinimum {
  template <DType D, class T>
  static T f(T a, T b) {
    if constexpr (D == DType::Bool)
      return static_cast<T>(a & b);
    else if constexpr (is_fp(D))
      return (a < b || a != a) ? a : b;
    else
      return a < b ? a : b;
  }
};
struct OpEqual {
  template <DType D, class T>
  static uint8_t f(T a, T b) {
    return a == b;
  }
};
struct OpNotEqual {
  template <DType D, class T>
  static uint8_t f(T a, T b) {
    return a != b;
  }
};
struct OpLess {
  template <DType D, class T>
  static uint8_t f(T a, T b) {
    return a < b;
  }
};
struct OpLessEqual {
  template <DType D, class T>
  static uint8_t f(T a, T b) {
    return a <= b;
  }
};
struct OpGreater {
  template <DType D, class T>
  static uint8_t f(T a, T b) {
    return a > b;
  }
};
struct OpGreaterEqual {
  template <DType D, class T>
  static uint8_t f(T a, T b) {
    return a >= b;
  }
};
struct OpLogicalAnd {
  template <DType D, class T>
  static uint8_t f(T a, T b) {
    return (a != 0) & (b != 0);
  }
};
struct OpLogicalOr {
  template <DType D, class T>
  static uint8_t f(T a, T b) {
    return (a != 0) | (b != 0);
  }
};

struct OpNeg {
  template <DType D, class T>
  static T f(T a) {
    if constexpr (is_fp(D))
      return -a;
    else
      return wrap_sub(T(0), a);
  }
};
struct OpAbs {
  template <DType D, class T>
  static T f(T a) {
    if constexpr (is_fp(D))
      return std::fabs(a);
    else if constexpr (is_sint(D))
      return a < 0 ? wrap_sub(T(0), a) : a;
    else
      return a;
  }
};
struct OpSign {
  template <DType D, class T>
  static T f(T a) {
    if constexpr (is_fp(D))
      return a > 0 ? T(1) : a < 0 ? T(-1) : a;  // NaN and zeros map to themselves
    else if constexpr (is_sint(D))
      return static_cast<T>((a > 0) - (a < 0));
    else
      return static_cast<T>(a != 0);
  }
};
struct OpRelu {
  template <DType D, class T>
  static T f(T a) {
    if constexpr (is_fp(D) || is_sint(D))
      return a < 0 ? T(0) : a;
    else
      return a;
  }
};
struct OpFloor {
  template <DType D, class T>
  static T f(T a) {
    if constexpr (is_fp(D))
      return std::floor(a);
    else
      return a;
  }
};
struct OpLogicalNot {
  template <DType D, class T>
  static uint8_t f(T a) {
    return a == 0;
  }
};
struct OpReciprocal {
  template <DType D, class T>
  static T f(T a) {
    return T(1) / a;
  }
};
struct OpSqrt {
  template <DType D, class T>
  static T f(T a) {
    return std::sqrt(a);
  }
};

inline double sigmoid_d(double x) {
  double e = std::exp(-std::fabs(x));
  return (x < 0 ? e : 1.0) / (1.0 + e);
}
inline double rsqrt_d(double x) { return 1.0 / std::sqrt(x); }
inline double exp_d(double x) { return std::exp(x); }
inline double log_d(double x) { return std::log(x); }
inline double sin_d(double x) { return std::sin(x); }
inline double cos_d(double x) { return std::cos(x); }
inline double tanh_d(double x) { return std::tanh(x); }
inline double erf_d(double x) { return std::erf(x); }

// Float math through libm in double; float32 results are rounded once. The
// vector builds replace the float32 entries.
template <double (*Fn)(double)>
struct OpLibm {
  template <DType D, class T>
  static T f(T a) {
    return static_cast<T>(Fn(static_cast<double>(a)));
  }
};
using OpExp = OpLibm<exp_d>;
using OpLog = OpLibm<log_d>;
using OpRsqrt = OpLibm<rsqrt_d>;
using OpSin = OpLibm<sin_d>;
using OpCos = OpLibm<cos_d>;
using OpTanh = OpLibm<tanh_d>;
using OpSigmoid = OpLibm<sigmoid_d>;
using OpErf = OpLibm<erf_d>;

}  // namespace msl::kernels::MSL_SIMD_NS
