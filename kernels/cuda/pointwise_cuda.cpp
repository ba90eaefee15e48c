// The strided pointwise kernels' CUDA C (pointwise_cuda.h).
#include "kernels/cuda/pointwise_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/cuda/copy_cuda.h"
#include "kernels/errors.h"

namespace msl::kernels::cuda {

namespace {

// The helpers of the operators that are more than an expression, each the
// CPU's (elementwise_ops.h): NumPy's float floordiv/mod, Python's integer
// floordiv/mod (S: signed) and integer pow by squaring, all wrapping as
// two's complement through unsigned long long; sigmoid in double without
// overflow.
constexpr const char* kPrelude = R"(typedef unsigned long long msl_u64;
struct msl_pw_geometry {
  int ndim;
  msl_i64 shape[8], in[3][8];
};
template <class T>
__device__ __forceinline__ T msl_fp_floordiv(T a, T b) {
  if (b == 0) return a / b;
  T mod = fmod(a, b);
  T div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1;
  if (div == 0) return copysign((T)0, a / b);
  T fl = floor(div);
  return div - fl > (T)0.5 ? fl + 1 : fl;
}
template <class T>
__device__ __forceinline__ T msl_fp_mod(T a, T b) {
  T mod = fmod(a, b);
  if (b == 0) return mod;
  if (mod == 0) return copysign((T)0, b);
  return (b < 0) != (mod < 0) ? mod + b : mod;
}
template <class T, bool S>
__device__ __forceinline__ T msl_int_floordiv(T a, T b, int* err) {
  if (b == 0) {
    *err = 1;
    return 0;
  }
  if (S && b == (T)-1) return (T)(0ull - (msl_u64)a);
  T q = (T)(a / b), r = (T)(a % b);
  return S && r != 0 && ((r < 0) != (b < 0)) ? (T)(q - 1) : q;
}
template <class T, bool S>
__device__ __forceinline__ T msl_int_mod(T a, T b, int* err) {
  if (b == 0) {
    *err = 1;
    return 0;
  }
  if (S && b == (T)-1) return 0;
  T r = (T)(a % b);
  return S && r != 0 && ((r < 0) != (b < 0)) ? (T)(r + b) : r;
}
template <class T, bool S>
__device__ __forceinline__ T msl_int_pow(T a, T b, int* err) {
  if (S && b < 0) {
    *err = 1;
    return 0;
  }
  T r = 1, base = a;
  for (T e = b; e != 0; e = (T)(e >> 1)) {
    if (e & 1) r = (T)((msl_u64)r * (msl_u64)base);
    base = (T)((msl_u64)base * (msl_u64)base);
  }
  return r;
}
__device__ __forceinline__ double msl_sigmoid_d(double x) {
  double e = exp(-fabs(x));
  return (x < 0 ? e : 1.0) / (1.0 + e);
}
// float32 exp, log, tanh, sigmoid and erf as the CPU's vector loops compute
// them (vec_math.h), lane for lane: the same polynomials and the same
// explicit fused multiply-adds, x86 min/max (the second operand when
// unordered) and bit operations.
__device__ __forceinline__ float msl_vexp(float x) {
  const float lo = -104.0f > x ? -104.0f : x;
  x = 89.0f < lo ? 89.0f : lo;
  const float n = rintf(x * 1.44269504088896341f);
  float r = fmaf(-n, 0.693359375f, x);
  r = fmaf(-n, -2.12194440e-4f, r);
  float p = 1.9875691500e-4f;
  p = fmaf(p, r, 1.3981999507e-3f);
  p = fmaf(p, r, 8.3334519073e-3f);
  p = fmaf(p, r, 4.1665795894e-2f);
  p = fmaf(p, r, 1.6666665459e-1f);
  p = fmaf(p, r, 5.0000001201e-1f);
  p = fmaf(p, r * r, r) + 1.0f;
  const int ni = n != n ? (int)0x80000000u : (int)n, n1 = ni >> 1, n2 = ni - n1;
  return p * __int_as_float((int)((unsigned)(n1 + 127) << 23)) * __int_as_float((int)((unsigned)(n2 + 127) << 23));
}
__device__ __forceinline__ float msl_vlog(float x) {
  const bool denorm = x < 1.17549435e-38f;
  const unsigned b = __float_as_uint(denorm ? x * 8388608.0f : x);
  const int e = (int)((b >> 23) & 0xffu) - 126;
  const float m = __uint_as_float((b & 0x007fffffu) | 0x3f000000u);
  float ef = (float)e - (denorm ? 23.0f : 0.0f);
  const bool small = m < 0.707106781186547524f;
  const float f = (small ? m + m : m) - 1.0f;
  ef = ef - (small ? 1.0f : 0.0f);
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = fmaf(p, f, -1.1514610310e-1f);
  p = fmaf(p, f, 1.1676998740e-1f);
  p = fmaf(p, f, -1.2420140846e-1f);
  p = fmaf(p, f, 1.4249322787e-1f);
  p = fmaf(p, f, -1.6668057665e-1f);
  p = fmaf(p, f, 2.0000714765e-1f);
  p = fmaf(p, f, -2.4999993993e-1f);
  p = fmaf(p, f, 3.3333331174e-1f);
  float y = p * f * z;
  y = fmaf(ef, -2.12194440e-4f, y);
  y = fmaf(-0.5f, z, y);
  float r = fmaf(ef, 0.693359375f, f + y);
  if (x == __int_as_float(0x7f800000)) r = x;
  if (x == 0.0f) r = __int_as_float(0xff800000);
  if (x < 0.0f) r = __int_as_float(0x7fc00000);
  return x != x ? x : r;
}
__device__ __forceinline__ float msl_vtanh(float x) {
  const float ax = fabsf(x), z = x * x;
  float p = -5.70498872745e-3f;
  p = fmaf(p, z, 2.06390887954e-2f);
  p = fmaf(p, z, -5.37397155531e-2f);
  p = fmaf(p, z, 1.33314422036e-1f);
  p = fmaf(p, z, -3.33332819422e-1f);
  const float small = fmaf(p * z, ax, ax);
  const float big = 1.0f - 2.0f / (msl_vexp(ax + ax) + 1.0f);
  return __uint_as_float(__float_as_uint(ax < 0.625f ? small : big) | (__float_as_uint(x) & 0x80000000u));
}
__device__ __forceinline__ float msl_vsigmoid(float x) {
  const float e = msl_vexp(-fabsf(x));
  return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}
__device__ __forceinline__ float msl_verf(float x) {
  const float ax = fabsf(x), s = x * x;
  float p = -5.99085062e-4f;
  p = fmaf(p, s, 4.99317935e-3f);
  p = fmaf(p, s, -2.67666150e-2f);
  p = fmaf(p, s, 1.12818159e-1f);
  p = fmaf(p, s, -3.76124948e-1f);
  p = fmaf(p, s, 1.12837911e+0f);
  const float small = p * x;
  const float t = 4.0f < ax ? 4.0f : ax;
  float q = 1.60249443e-6f;
  q = fmaf(q, t, -4.53546727e-5f);
  q = fmaf(q, t, 5.90716038e-4f);
  q = fmaf(q, t, -4.73028591e-3f);
  q = fmaf(q, t, 2.63355518e-2f);
  q = fmaf(q, t, -1.09925207e-1f);
  q = fmaf(q, t, -6.31995301e-1f);
  q = fmaf(q, t, -1.13013151e+0f);
  q = fmaf(q, t, 2.94280055e-4f);
  const float big = __uint_as_float(__float_as_uint(1.0f - msl_vexp(q)) | (__float_as_uint(x) & 0x80000000u));
  return ax < 0.921875f ? small : big;
}
)";

enum class Kind { Bool, Unsigned, Signed, Float, Double };

Kind kind_of(DType t) {
  switch (t) {
    case DType::Bool: return Kind::Bool;
    case DType::UInt8: return Kind::Unsigned;
    case DType::Int8:
    case DType::Int32:
    case DType::Int64: return Kind::Signed;
    case DType::Float32: return Kind::Float;
    case DType::Float64: return Kind::Double;
    default: throw std::invalid_argument("pointwise: 16-bit floats are not a compute dtype");
  }
}

// The C type of an element; Bool is a byte, read as true when nonzero.
std::string ctype(DType t) { return t == DType::Bool ? "unsigned char" : cuda_type_name(t); }

// `v` (of dtype `from`) converted to `to` as the CPU's cvt: only the
// widening conversions of dtype promotion and to Bool are needed.
std::string convert(DType from, DType to, const std::string& v) {
  if (from == to) return v;
  if (from == DType::Float16) return convert(DType::Float32, to, "msl_h2f(" + v + ")");
  if (from == DType::BFloat16) return convert(DType::Float32, to, "msl_b2f(" + v + ")");
  if (to == DType::Bool) return fmt::format("(unsigned char)({} != 0)", v);
  if (from == DType::Bool) {
    if (to == DType::Float16) return fmt::format("(msl_half)({} ? 0x3c00 : 0)", v);
    if (to == DType::BFloat16) return fmt::format("(msl_bf16)({} ? 0x3f80 : 0)", v);
    return fmt::format("({})({} ? 1 : 0)", ctype(to), v);
  }
  if (to == DType::Float16) return fmt::format("msl_f2h((float)(double){})", v);
  if (to == DType::BFloat16) return fmt::format("msl_f2b((float)(double){})", v);
  if (to == DType::Float32) return fmt::format("(float)(double){}", v);
  if (to == DType::Float64) return fmt::format("(double){}", v);
  if (is_floating(from) || dtype_size(from) > dtype_size(to) || (from == DType::Int8 && to == DType::UInt8))
    throw std::invalid_argument(fmt::format("pointwise: no narrowing conversion from {} to {}", dtype_name(from),
                                            dtype_name(to)));
  return fmt::format("({})({})", ctype(to), v);
}

// Two's complement arithmetic on integers, computed in 64-bit unsigned.
std::string wrap(const std::string& c, const std::string& a, char op, const std::string& b) {
  return fmt::format("({})((msl_u64){} {} (msl_u64){})", c, a, op, b);
}

// The double-precision libm function `fn` of `a`, rounded once to float32.
std::string libm(DType ct, const char* fn, const std::string& a) {
  return ct == DType::Float32 ? fmt::format("(float){}((double){})", fn, a) : fmt::format("{}({})", fn, a);
}

// The CPU scalar operator of `p` on a and b (and c) of compute dtype ct.
std::string op_expr(Prim p, DType ct, const std::string& a, const std::string& b, const std::string& c) {
  if (p == Prim::select) return fmt::format("{} ? {} : {}", a, b, c);  // any dtype: it moves elements
  const Kind k = kind_of(ct);
  const std::string t = ctype(ct);
  const bool fp = k == Kind::Float || k == Kind::Double;
  const bool sint = k == Kind::Signed;
  const std::string sgn = sint ? "true" : "false";
  auto cmp = [&](const char* o) { return fmt::format("(unsigned char)({} {} {})", a, o, b); };
  switch (p) {
    case Prim::add:
      return k == Kind::Bool ? fmt::format("(unsigned char)({} | {})", a, b) : fp ? a + " + " + b : wrap(t, a, '+', b);
    case Prim::sub: return fp ? a + " - " + b : wrap(t, a, '-', b);
    case Prim::mul:
      return k == Kind::Bool ? fmt::format("(unsigned char)({} & {})", a, b) : fp ? a + " * " + b : wrap(t, a, '*', b);
    case Prim::div: return a + " / " + b;
    case Prim::floordiv:
      return fp ? fmt::format("msl_fp_floordiv<{}>({}, {})", t, a, b)
                : fmt::format("msl_int_floordiv<{}, {}>({}, {}, err)", t, sgn, a, b);
    case Prim::mod:
      return fp ? fmt::format("msl_fp_mod<{}>({}, {})", t, a, b)
                : fmt::format("msl_int_mod<{}, {}>({}, {}, err)", t, sgn, a, b);
    case Prim::pow:
      if (fp) return ct == DType::Float32 ? fmt::format("(float)pow((double){}, (double){})", a, b)
                                          : fmt::format("pow({}, {})", a, b);
      return fmt::format("msl_int_pow<{}, {}>({}, {}, err)", t, sgn, a, b);
    case Prim::maximum:
      if (k == Kind::Bool) return fmt::format("(unsigned char)({} | {})", a, b);
      return fp ? fmt::format("({0} > {1} || {0} != {0}) ? {0} : {1}", a, b) : fmt::format("{0} > {1} ? {0} : {1}", a, b);
    case Prim::minimum:
      if (k == Kind::Bool) return fmt::format("(unsigned char)({} & {})", a, b);
      return fp ? fmt::format("({0} < {1} || {0} != {0}) ? {0} : {1}", a, b) : fmt::format("{0} < {1} ? {0} : {1}", a, b);
    case Prim::equal: return cmp("==");
    case Prim::not_equal: return cmp("!=");
    case Prim::less: return cmp("<");
    case Prim::less_equal: return cmp("<=");
    case Prim::greater: return cmp(">");
    case Prim::greater_equal: return cmp(">=");
    case Prim::logical_and: return fmt::format("(unsigned char)(({} != 0) & ({} != 0))", a, b);
    case Prim::logical_or: return fmt::format("(unsigned char)(({} != 0) | ({} != 0))", a, b);
    case Prim::relu_grad: return fmt::format("{} > ({})0 ? {} : ({})0", b, t, a, t);
    case Prim::neg: return fp ? "-" + a : wrap(t, "0", '-', a);
    case Prim::abs:
      if (fp) return fmt::format("fabs({})", a);
      return sint ? fmt::format("{} < 0 ? {} : {}", a, wrap(t, "0", '-', a), a) : a;
    case Prim::sign:
      if (fp) return fmt::format("{0} > 0 ? ({1})1 : {0} < 0 ? ({1})-1 : {0}", a, t);
      return sint ? fmt::format("({})(({} > 0) - ({} < 0))", t, a, a) : fmt::format("({})({} != 0)", t, a);
    case Prim::relu: return k == Kind::Unsigned ? a : fmt::format("{} < 0 ? ({})0 : {}", a, t, a);
    case Prim::floor: return fp ? fmt::format("floor({})", a) : a;
    case Prim::logical_not: return fmt::format("(unsigned char)({} == 0)", a);
    case Prim::reciprocal: return fmt::format("({})1 / {}", t, a);
    case Prim::sqrt: return fmt::format("sqrt({})", a);
    case Prim::rsqrt: return fmt::format("({})1 / sqrt({})", t, a);
    // float32: the CPU's vector functions; float64: libm (the CPU's vector
    // exp, log and sigmoid are within 1 ulp of it).
    case Prim::exp: return k == Kind::Float ? "msl_vexp(" + a + ")" : libm(ct, "exp", a);
    case Prim::log: return k == Kind::Float ? "msl_vlog(" + a + ")" : libm(ct, "log", a);
    case Prim::tanh: return k == Kind::Float ? "msl_vtanh(" + a + ")" : libm(ct, "tanh", a);
    case Prim::erf: return k == Kind::Float ? "msl_verf(" + a + ")" : libm(ct, "erf", a);
    case Prim::sigmoid: return k == Kind::Float ? "msl_vsigmoid(" + a + ")" : libm(ct, "msl_sigmoid_d", a);
    case Prim::sin: return libm(ct, "sin", a);
    case Prim::cos: return libm(ct, "cos", a);
    default: break;
  }
  throw std::invalid_argument(fmt::format("pointwise: {} is not a pointwise operation", prim_name(p)));
}

bool is_comparison(Prim p) { return p >= Prim::equal && p <= Prim::greater_equal; }

}  // namespace

bool is_pointwise(Prim p) {
  switch (p) {
#define MSL_X(name, arity) case Prim::name:
    MSL_PW_OPS(MSL_X)
#undef MSL_X
    return true;
    default: return false;
  }
}

PointwiseKernel pointwise_kernel(Prim p, std::span<const DType> in, DType out, uint32_t by_value) {
  if (!is_pointwise(p)) throw std::invalid_argument(fmt::format("pointwise: {} is not pointwise", prim_name(p)));
  PointwiseKernel k;
  k.prim = p;
  k.arity = static_cast<int>(in.size());
  for (size_t i = 0; i < in.size() && i < 3; ++i) k.in[i] = in[i];
  k.out = out;
  k.by_value = by_value;
  auto compute = [](DType t) { return is_half(t) ? DType::Float32 : t; };
  if (p == Prim::select) {
    k.compute = out;  // select moves elements: x and y convert to the output dtype itself
  } else if (p == Prim::logical_not || p == Prim::logical_and || p == Prim::logical_or) {
    k.compute = DType::Bool;
  } else if (k.arity == 2 && p != Prim::relu_grad) {
    DType t = promote_types(in[0], in[1]);
    k.compute = compute(t);
    if (p == Prim::div && !is_floating(t)) k.compute = DType::Float32;
  } else {
    k.compute = compute(out);
  }
  if (k.arity != prim_def(p).inputs) throw std::invalid_argument("pointwise: wrong number of inputs");
  // The CPU's loop table has no entry for these (inference rejects most).
  const bool bool_ct = k.compute == DType::Bool && p != Prim::select && !is_comparison(p);
  if (bool_ct && (p == Prim::sub || p == Prim::neg || p == Prim::relu || p == Prim::floordiv || p == Prim::mod ||
                  p == Prim::pow))
    throw DTypeError(fmt::format("{}: unsupported dtype {}", prim_name(p), dtype_display_name(DType::Bool)));
  if (!is_floating(k.compute) && p == Prim::relu_grad)
    throw DTypeError(fmt::format("relu_grad: unsupported dtype {}", dtype_display_name(k.compute)));
  return k;
}

bool pointwise_may_fail(const PointwiseKernel& k) {
  return !is_floating(k.compute) && (k.prim == Prim::floordiv || k.prim == Prim::mod || k.prim == Prim::pow);
}

std::string pointwise_kernel_name(const PointwiseKernel& k) {
  std::string s = fmt::format("msl_pw_{}", prim_name(k.prim));
  for (int i = 0; i < k.arity; ++i) s += fmt::format("_{}", dtype_name(k.in[i]));
  return s + fmt::format("_to_{}_v{}", dtype_name(k.out), k.by_value);
}

std::string pointwise_prelude() { return copy_kernel_prelude() + kPrelude; }

std::vector<std::string> pointwise_param_types(const PointwiseKernel& k) {
  std::vector<std::string> t{"msl_i64", ctype(k.out) + "*"};
  for (int i = 0; i < k.arity; ++i) t.push_back(k.by_value >> i & 1 ? ctype(k.in[i]) : "const " + ctype(k.in[i]) + "*");
  t.push_back("msl_pw_geometry");
  t.push_back("int*");
  return t;
}

std::string pointwise_kernel_text(const PointwiseKernel& k) {
  std::string s = fmt::format("extern \"C\" __global__ void {}(msl_i64 n, {}* __restrict__ out",
                              pointwise_kernel_name(k), ctype(k.out));
  for (int i = 0; i < k.arity; ++i)
    s += k.by_value >> i & 1 ? fmt::format(", const {} in{}", ctype(k.in[i]), i)
                             : fmt::format(", const {}* __restrict__ in{}", ctype(k.in[i]), i);
  s += ", msl_pw_geometry g, int* err) {\n";
  s += "  for (msl_i64 i = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (msl_i64)gridDim.x * "
       "blockDim.x) {\n";
  // The inputs' offsets from the output's row-major index.
  s += "    msl_i64 rest = i, at0 = 0, at1 = 0, at2 = 0;\n"
       "    for (int d = g.ndim - 1; d >= 0; --d) {\n"
       "      const msl_i64 q = rest % g.shape[d];\n"
       "      rest /= g.shape[d];\n"
       "      at0 += q * g.in[0][d];\n"
       "      at1 += q * g.in[1][d];\n"
       "      at2 += q * g.in[2][d];\n"
       "    }\n";
  std::string names[3];
  for (int i = 0; i < k.arity; ++i) {
    // select's condition is Bool (nonzero, NaN included, is true); the
    // other inputs convert to the compute dtype.
    DType to = k.prim == Prim::select && i == 0 ? DType::Bool : k.compute;
    std::string v = k.by_value >> i & 1 ? fmt::format("in{}", i) : fmt::format("in{}[at{}]", i, i);
    s += fmt::format("    const {} x{} = {};\n", ctype(to), i, convert(k.in[i], to, v));
    names[i] = fmt::format("x{}", i);
  }
  const bool to_bool = is_comparison(k.prim) || k.prim == Prim::logical_and || k.prim == Prim::logical_or ||
                       k.prim == Prim::logical_not;
  const DType result = to_bool ? DType::Bool : k.compute;
  s += fmt::format("    const {} r = {};\n", ctype(result), op_expr(k.prim, k.compute, names[0], names[1], names[2]));
  s += fmt::format("    out[i] = {};\n  }}\n}}\n", convert(result, k.out, "r"));
  return s;
}

std::string pointwise_source(const PointwiseKernel& k) { return pointwise_prelude() + pointwise_kernel_text(k); }

PointwiseGeometry pointwise_geometry(const Dims& shape, std::span<const Dims> strides) {
  PointwiseGeometry g;
  const int nin = static_cast<int>(strides.size());
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (g.ndim > 0) {
      // Merge into the previous dimension when every input steps through
      // both as through one (the output is contiguous, so it always does).
      const int p = g.ndim - 1;
      bool merge = true;
      for (int k = 0; k < nin; ++k) merge = merge && g.in[k][p] == strides[k][d] * shape[d];
      if (merge) {
        g.shape[p] *= shape[d];
        for (int k = 0; k < nin; ++k) g.in[k][p] = strides[k][d];
        continue;
      }
    }
    g.shape[g.ndim] = shape[d];
    for (int k = 0; k < nin; ++k) g.in[k][g.ndim] = strides[k][d];
    ++g.ndim;
  }
  return g;
}

}  // namespace msl::kernels::cuda
