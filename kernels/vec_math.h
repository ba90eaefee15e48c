// SIMD wrappers and vectorized transcendental functions: float32 exp, log,
// tanh, sigmoid, erf, sin, cos; float64 exp, log, sigmoid.
//
// This header is compiled once per instruction set: the file that includes it
// defines MSL_SIMD_NS (the namespace to define everything in) and
// MSL_SIMD_WIDTH (512 for AVX-512, 256 for AVX2+FMA) and wraps the include in
// a `#pragma GCC target` region, so one algorithm serves every vector width
// without -march flags; the library picks a width at run time. That is why it
// has no include guard and includes nothing itself: the includer brings
// <immintrin.h> and <cstdint> in at file scope first. Every symbol lives in
// MSL_SIMD_NS, so the differently compiled copies never collide at link time.
//
// The wrappers are a thin layer (Vf: float lanes, Vi: int32 lanes, Mf: a lane
// mask; Vd/Md for double) with free functions, enough for the math below and
// the elementwise loops. min/max keep the x86 rule (the second operand is
// returned when either is NaN), which the callers use on purpose to keep NaN.
//
// Accuracy, measured by tests/unit/kernels/test_elementwise_math.cpp over
// dense sweeps (every 1021st float32 bit pattern, so denormal, huge, infinite
// and NaN inputs too, plus [-12, 12] and the neighbours of multiples of pi/2),
// in ulps of the correctly rounded result: float32 exp, log, tanh <= 1;
// sigmoid, erf, sin, cos <= 2 (against libm in double); float64 exp, log <= 1
// and sigmoid <= 2 (against long double). sin/cos reduce the argument in
// double, so the bound holds up to |x| = 2^20; larger arguments go to libm.
// Algorithms: Cody-Waite reduction and Cephes polynomials for float32 exp,
// log, sin, cos; tanh as an odd polynomial below 0.625 and 1 - 2/(e^2|x| + 1)
// above; sigmoid as (x < 0 ? e : 1) / (1 + e) with e = exp(-|x|), which never
// overflows and gives sigmoid(-100) ~ 3.7e-44 (a float32 denormal) to 1 ulp;
// erf as x * P(x^2) below 0.921875 and 1 - exp(Q(|x|)) above, Q a fit of
// log(erfc) (coefficients fitted for this file by weighted least squares);
// float64 exp with a degree-13 Taylor polynomial, float64 log as fdlibm.
// Exponents are scaled in two factors so results in the denormal range are
// rounded once and overflow gives inf.

namespace msl::kernels::MSL_SIMD_NS {

#if MSL_SIMD_WIDTH == 512

constexpr int kW = 16;  // float lanes
struct Vf {
  __m512 v;
};
struct Vi {
  __m512i v;
};
using Mf = __mmask16;

inline Vf load(const float* p) { return {_mm512_loadu_ps(p)}; }
inline void store(float* p, Vf a) { _mm512_storeu_ps(p, a.v); }
inline void stream(float* p, Vf a) { _mm512_stream_ps(p, a.v); }  // p 64-byte aligned
inline Mf tail_mask(int64_t n) { return static_cast<Mf>((1u << n) - 1u); }
inline Vf load_partial(const float* p, int64_t n) { return {_mm512_maskz_loadu_ps(tail_mask(n), p)}; }
inline void store_partial(float* p, Vf a, int64_t n) { _mm512_mask_storeu_ps(p, tail_mask(n), a.v); }
inline Vf set1(float x) { return {_mm512_set1_ps(x)}; }
inline Vf operator+(Vf a, Vf b) { return {_mm512_add_ps(a.v, b.v)}; }
inline Vf operator-(Vf a, Vf b) { return {_mm512_sub_ps(a.v, b.v)}; }
inline Vf operator*(Vf a, Vf b) { return {_mm512_mul_ps(a.v, b.v)}; }
inline Vf operator/(Vf a, Vf b) { return {_mm512_div_ps(a.v, b.v)}; }
inline Vf fma(Vf a, Vf b, Vf c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }    // a * b + c
inline Vf fnma(Vf a, Vf b, Vf c) { return {_mm512_fnmadd_ps(a.v, b.v, c.v)}; }  // c - a * b
inline Vf vmin(Vf a, Vf b) { return {_mm512_min_ps(a.v, b.v)}; }
inline Vf vmax(Vf a, Vf b) { return {_mm512_max_ps(a.v, b.v)}; }
inline Vf vsqrt(Vf a) { return {_mm512_sqrt_ps(a.v)}; }
inline Vf vfloor(Vf a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline Vf vround(Vf a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
inline Vf vand(Vf a, Vf b) { return {_mm512_and_ps(a.v, b.v)}; }
inline Vf vor(Vf a, Vf b) { return {_mm512_or_ps(a.v, b.v)}; }
inline Vf vxor(Vf a, Vf b) { return {_mm512_xor_ps(a.v, b.v)}; }
inline Mf lt(Vf a, Vf b) { return _mm512_cmp_ps_mask(a.v, b.v, _CMP_LT_OQ); }
inline Mf le(Vf a, Vf b) { return _mm512_cmp_ps_mask(a.v, b.v, _CMP_LE_OQ); }
inline Mf eq(Vf a, Vf b) { return _mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ); }
inline Mf isnan(Vf a) { return _mm512_cmp_ps_mask(a.v, a.v, _CMP_UNORD_Q); }
inline Mf mand(Mf a, Mf b) { return a & b; }
inline Mf mor(Mf a, Mf b) { return a | b; }
inline bool any(Mf m) { return m != 0; }
inline bool all(Mf m) { return m == 0xffff; }
inline Vf select(Mf m, Vf t, Vf f) { return {_mm512_mask_blend_ps(m, f.v, t.v)}; }

inline Vi set1i(int32_t x) { return {_mm512_set1_epi32(x)}; }
inline Vi operator+(Vi a, Vi b) { return {_mm512_add_epi32(a.v, b.v)}; }
inline Vi operator-(Vi a, Vi b) { return {_mm512_sub_epi32(a.v, b.v)}; }
inline Vi operator&(Vi a, Vi b) { return {_mm512_and_si512(a.v, b.v)}; }
inline Vi operator|(Vi a, Vi b) { return {_mm512_or_si512(a.v, b.v)}; }
template <int N>
inline Vi sll(Vi a) {
  return {_mm512_slli_epi32(a.v, N)};
}
template <int N>
inline Vi srl(Vi a) {
  return {_mm512_srli_epi32(a.v, N)};
}
template <int N>
inline Vi sra(Vi a) {
  return {_mm512_srai_epi32(a.v, N)};
}
inline Vi to_int_trunc(Vf a) { return {_mm512_cvttps_epi32(a.v)}; }
inline Vf to_float(Vi a) { return {_mm512_cvtepi32_ps(a.v)}; }
inline Vi bits(Vf a) { return {_mm512_castps_si512(a.v)}; }
inline Vf from_bits(Vi a) { return {_mm512_castsi512_ps(a.v)}; }
inline Mf nonzero(Vi a) { return _mm512_test_epi32_mask(a.v, a.v); }

// Argument reduction of sin/cos in double: x = q * pi/2 + r with |r| <= pi/4.
// Both halves of the register are widened to double so that no precision is
// lost to cancellation near multiples of pi/2.
inline void reduce_pio2(Vf x, Vf& r, Vi& q) {
  const __m512d inv = _mm512_set1_pd(0.63661977236758134308), p1 = _mm512_set1_pd(1.5707963267341256141),
                p2 = _mm512_set1_pd(6.0771005065061922e-11);
  __m512d lo = _mm512_cvtps_pd(_mm512_castps512_ps256(x.v));
  __m512d hi = _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x.v), 1)));
  __m512d nlo = _mm512_roundscale_pd(_mm512_mul_pd(lo, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512d nhi = _mm512_roundscale_pd(_mm512_mul_pd(hi, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  lo = _mm512_fnmadd_pd(nlo, p2, _mm512_fnmadd_pd(nlo, p1, lo));
  hi = _mm512_fnmadd_pd(nhi, p2, _mm512_fnmadd_pd(nhi, p1, hi));
  r.v = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(lo)), _mm512_cvtpd_ps(hi), 1);
  q.v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvttpd_epi32(nlo)), _mm512_cvttpd_epi32(nhi), 1);
}

// float64 lanes: only what exp/log/sigmoid in double need.
constexpr int kWd = 8;
struct Vd {
  __m512d v;
};
using Md = __mmask8;
inline Vd loadd(const double* p) { return {_mm512_loadu_pd(p)}; }
inline void stored(double* p, Vd a) { _mm512_storeu_pd(p, a.v); }
inline Md tail_maskd(int64_t n) { return static_cast<Md>((1u << n) - 1u); }
inline Vd loadd_partial(const double* p, int64_t n) { return {_mm512_maskz_loadu_pd(tail_maskd(n), p)}; }
inline void stored_partial(double* p, Vd a, int64_t n) { _mm512_mask_storeu_pd(p, tail_maskd(n), a.v); }
inline Vd set1d(double x) { return {_mm512_set1_pd(x)}; }
inline Vd operator+(Vd a, Vd b) { return {_mm512_add_pd(a.v, b.v)}; }
inline Vd operator-(Vd a, Vd b) { return {_mm512_sub_pd(a.v, b.v)}; }
inline Vd operator*(Vd a, Vd b) { return {_mm512_mul_pd(a.v, b.v)}; }
inline Vd operator/(Vd a, Vd b) { return {_mm512_div_pd(a.v, b.v)}; }
inline Vd fma(Vd a, Vd b, Vd c) { return {_mm512_fmadd_pd(a.v, b.v, c.v)}; }
inline Vd fnma(Vd a, Vd b, Vd c) { return {_mm512_fnmadd_pd(a.v, b.v, c.v)}; }
inline Vd vmin(Vd a, Vd b) { return {_mm512_min_pd(a.v, b.v)}; }
inline Vd vmax(Vd a, Vd b) { return {_mm512_max_pd(a.v, b.v)}; }
inline Vd vfloor(Vd a) { return {_mm512_roundscale_pd(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline Vd vand(Vd a, Vd b) { return {_mm512_and_pd(a.v, b.v)}; }
inline Md lt(Vd a, Vd b) { return _mm512_cmp_pd_mask(a.v, b.v, _CMP_LT_OQ); }
inline Md eq(Vd a, Vd b) { return _mm512_cmp_pd_mask(a.v, b.v, _CMP_EQ_OQ); }
inline Md isnan(Vd a) { return _mm512_cmp_pd_mask(a.v, a.v, _CMP_UNORD_Q); }
inline Vd select(Md m, Vd t, Vd f) { return {_mm512_mask_blend_pd(m, f.v, t.v)}; }
// 64-bit integer views of double lanes.
inline Vd add_bits(Vd a, int64_t k) {
  return {_mm512_castsi512_pd(_mm512_add_epi64(_mm512_castpd_si512(a.v), _mm512_set1_epi64(k)))};
}
inline Vd sub_bits(Vd a, Vd b) {
  return {_mm512_castsi512_pd(_mm512_sub_epi64(_mm512_castpd_si512(a.v), _mm512_castpd_si512(b.v)))};
}
template <int N>
inline Vd sll_bits(Vd a) {
  return {_mm512_castsi512_pd(_mm512_slli_epi64(_mm512_castpd_si512(a.v), N))};
}
template <int N>
inline Vd srl_bits(Vd a) {
  return {_mm512_castsi512_pd(_mm512_srli_epi64(_mm512_castpd_si512(a.v), N))};
}
inline Vd and_bits(Vd a, int64_t m) {
  return {_mm512_castsi512_pd(_mm512_and_si512(_mm512_castpd_si512(a.v), _mm512_set1_epi64(m)))};
}
inline Vd or_bits(Vd a, int64_t m) {
  return {_mm512_castsi512_pd(_mm512_or_si512(_mm512_castpd_si512(a.v), _mm512_set1_epi64(m)))};
}

#elif MSL_SIMD_WIDTH == 256

constexpr int kW = 8;
struct Vf {
  __m256 v;
};
struct Vi {
  __m256i v;
};
struct Mf {
  __m256 v;  // all-ones lanes where true
};

inline Vf load(const float* p) { return {_mm256_loadu_ps(p)}; }
inline void store(float* p, Vf a) { _mm256_storeu_ps(p, a.v); }
inline void stream(float* p, Vf a) { _mm256_stream_ps(p, a.v); }  // p 32-byte aligned
inline __m256i tail_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
inline Vf load_partial(const float* p, int64_t n) { return {_mm256_maskload_ps(p, tail_mask(n))}; }
inline void store_partial(float* p, Vf a, int64_t n) { _mm256_maskstore_ps(p, tail_mask(n), a.v); }
inline Vf set1(float x) { return {_mm256_set1_ps(x)}; }
inline Vf operator+(Vf a, Vf b) { return {_mm256_add_ps(a.v, b.v)}; }
inline Vf operator-(Vf a, Vf b) { return {_mm256_sub_ps(a.v, b.v)}; }
inline Vf operator*(Vf a, Vf b) { return {_mm256_mul_ps(a.v, b.v)}; }
inline Vf operator/(Vf a, Vf b) { return {_mm256_div_ps(a.v, b.v)}; }
inline Vf fma(Vf a, Vf b, Vf c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
inline Vf fnma(Vf a, Vf b, Vf c) { return {_mm256_fnmadd_ps(a.v, b.v, c.v)}; }
inline Vf vmin(Vf a, Vf b) { return {_mm256_min_ps(a.v, b.v)}; }
inline Vf vmax(Vf a, Vf b) { return {_mm256_max_ps(a.v, b.v)}; }
inline Vf vsqrt(Vf a) { return {_mm256_sqrt_ps(a.v)}; }
inline Vf vfloor(Vf a) { return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline Vf vround(Vf a) { return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)}; }
inline Vf vand(Vf a, Vf b) { return {_mm256_and_ps(a.v, b.v)}; }
inline Vf vor(Vf a, Vf b) { return {_mm256_or_ps(a.v, b.v)}; }
inline Vf vxor(Vf a, Vf b) { return {_mm256_xor_ps(a.v, b.v)}; }
inline Mf lt(Vf a, Vf b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LT_OQ)}; }
inline Mf le(Vf a, Vf b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_LE_OQ)}; }
inline Mf eq(Vf a, Vf b) { return {_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ)}; }
inline Mf isnan(Vf a) { return {_mm256_cmp_ps(a.v, a.v, _CMP_UNORD_Q)}; }
inline Mf mand(Mf a, Mf b) { return {_mm256_and_ps(a.v, b.v)}; }
inline Mf mor(Mf a, Mf b) { return {_mm256_or_ps(a.v, b.v)}; }
inline bool any(Mf m) { return _mm256_movemask_ps(m.v) != 0; }
inline bool all(Mf m) { return _mm256_movemask_ps(m.v) == 0xff; }
inline Vf select(Mf m, Vf t, Vf f) { return {_mm256_blendv_ps(f.v, t.v, m.v)}; }

inline Vi set1i(int32_t x) { return {_mm256_set1_epi32(x)}; }
inline Vi operator+(Vi a, Vi b) { return {_mm256_add_epi32(a.v, b.v)}; }
inline Vi operator-(Vi a, Vi b) { return {_mm256_sub_epi32(a.v, b.v)}; }
inline Vi operator&(Vi a, Vi b) { return {_mm256_and_si256(a.v, b.v)}; }
inline Vi operator|(Vi a, Vi b) { return {_mm256_or_si256(a.v, b.v)}; }
template <int N>
inline Vi sll(Vi a) {
  return {_mm256_slli_epi32(a.v, N)};
}
template <int N>
inline Vi srl(Vi a) {
  return {_mm256_srli_epi32(a.v, N)};
}
template <int N>
inline Vi sra(Vi a) {
  return {_mm256_srai_epi32(a.v, N)};
}
inline Vi to_int_trunc(Vf a) { return {_mm256_cvttps_epi32(a.v)}; }
inline Vf to_float(Vi a) { return {_mm256_cvtepi32_ps(a.v)}; }
inline Vi bits(Vf a) { return {_mm256_castps_si256(a.v)}; }
inline Vf from_bits(Vi a) { return {_mm256_castsi256_ps(a.v)}; }
inline Mf nonzero(Vi a) {
  return {
      _mm256_castsi256_ps(_mm256_xor_si256(_mm256_cmpeq_epi32(a.v, _mm256_setzero_si256()), _mm256_set1_epi32(-1)))};
}

inline void reduce_pio2(Vf x, Vf& r, Vi& q) {
  const __m256d inv = _mm256_set1_pd(0.63661977236758134308), p1 = _mm256_set1_pd(1.5707963267341256141),
                p2 = _mm256_set1_pd(6.0771005065061922e-11);
  __m256d lo = _mm256_cvtps_pd(_mm256_castps256_ps128(x.v));
  __m256d hi = _mm256_cvtps_pd(_mm256_extractf128_ps(x.v, 1));
  __m256d nlo = _mm256_round_pd(_mm256_mul_pd(lo, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256d nhi = _mm256_round_pd(_mm256_mul_pd(hi, inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  lo = _mm256_fnmadd_pd(nlo, p2, _mm256_fnmadd_pd(nlo, p1, lo));
  hi = _mm256_fnmadd_pd(nhi, p2, _mm256_fnmadd_pd(nhi, p1, hi));
  r.v = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
  q.v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm256_cvttpd_epi32(nlo)), _mm256_cvttpd_epi32(nhi), 1);
}

constexpr int kWd = 4;
struct Vd {
  __m256d v;
};
struct Md {
  __m256d v;
};
inline Vd loadd(const double* p) { return {_mm256_loadu_pd(p)}; }
inline void stored(double* p, Vd a) { _mm256_storeu_pd(p, a.v); }
inline __m256i tail_maskd(int64_t n) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
}
inline Vd loadd_partial(const double* p, int64_t n) { return {_mm256_maskload_pd(p, tail_maskd(n))}; }
inline void stored_partial(double* p, Vd a, int64_t n) { _mm256_maskstore_pd(p, tail_maskd(n), a.v); }
inline Vd set1d(double x) { return {_mm256_set1_pd(x)}; }
inline Vd operator+(Vd a, Vd b) { return {_mm256_add_pd(a.v, b.v)}; }
inline Vd operator-(Vd a, Vd b) { return {_mm256_sub_pd(a.v, b.v)}; }
inline Vd operator*(Vd a, Vd b) { return {_mm256_mul_pd(a.v, b.v)}; }
inline Vd operator/(Vd a, Vd b) { return {_mm256_div_pd(a.v, b.v)}; }
inline Vd fma(Vd a, Vd b, Vd c) { return {_mm256_fmadd_pd(a.v, b.v, c.v)}; }
inline Vd fnma(Vd a, Vd b, Vd c) { return {_mm256_fnmadd_pd(a.v, b.v, c.v)}; }
inline Vd vmin(Vd a, Vd b) { return {_mm256_min_pd(a.v, b.v)}; }
inline Vd vmax(Vd a, Vd b) { return {_mm256_max_pd(a.v, b.v)}; }
inline Vd vfloor(Vd a) { return {_mm256_round_pd(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
inline Vd vand(Vd a, Vd b) { return {_mm256_and_pd(a.v, b.v)}; }
inline Md lt(Vd a, Vd b) { return {_mm256_cmp_pd(a.v, b.v, _CMP_LT_OQ)}; }
inline Md eq(Vd a, Vd b) { return {_mm256_cmp_pd(a.v, b.v, _CMP_EQ_OQ)}; }
inline Md isnan(Vd a) { return {_mm256_cmp_pd(a.v, a.v, _CMP_UNORD_Q)}; }
inline Vd select(Md m, Vd t, Vd f) { return {_mm256_blendv_pd(f.v, t.v, m.v)}; }
inline Vd add_bits(Vd a, int64_t k) {
  return {_mm256_castsi256_pd(_mm256_add_epi64(_mm256_castpd_si256(a.v), _mm256_set1_epi64x(k)))};
}
inline Vd sub_bits(Vd a, Vd b) {
  return {_mm256_castsi256_pd(_mm256_sub_epi64(_mm256_castpd_si256(a.v), _mm256_castpd_si256(b.v)))};
}
template <int N>
inline Vd sll_bits(Vd a) {
  return {_mm256_castsi256_pd(_mm256_slli_epi64(_mm256_castpd_si256(a.v), N))};
}
template <int N>
inline Vd srl_bits(Vd a) {
  return {_mm256_castsi256_pd(_mm256_srli_epi64(_mm256_castpd_si256(a.v), N))};
}
inline Vd and_bits(Vd a, int64_t m) {
  return {_mm256_castsi256_pd(_mm256_and_si256(_mm256_castpd_si256(a.v), _mm256_set1_epi64x(m)))};
}
inline Vd or_bits(Vd a, int64_t m) {
  return {_mm256_castsi256_pd(_mm256_or_si256(_mm256_castpd_si256(a.v), _mm256_set1_epi64x(m)))};
}

#else
#error "MSL_SIMD_WIDTH must be 512 or 256"
#endif

// ------------------------------------------------------------ float32 math

inline Vf vabs(Vf a) { return from_bits(bits(a) & set1i(0x7fffffff)); }
inline Vf vneg(Vf a) { return vxor(a, set1(-0.0f)); }
inline Vf sign_of(Vf a) { return vand(a, set1(-0.0f)); }

inline Vf vexp(Vf x) {
  // Clamping with the constant first keeps NaN (x86 min/max return operand 2).
  x = vmin(set1(89.0f), vmax(set1(-104.0f), x));
  Vf n = vround(x * set1(1.44269504088896341f));
  Vf r = fnma(n, set1(0.693359375f), x);
  r = fnma(n, set1(-2.12194440e-4f), r);
  Vf p = set1(1.9875691500e-4f);
  p = fma(p, r, set1(1.3981999507e-3f));
  p = fma(p, r, set1(8.3334519073e-3f));
  p = fma(p, r, set1(4.1665795894e-2f));
  p = fma(p, r, set1(1.6666665459e-1f));
  p = fma(p, r, set1(5.0000001201e-1f));
  p = fma(p, r * r, r) + set1(1.0f);
  // 2^n in two factors, each a normal float.
  Vi ni = to_int_trunc(n);
  Vi n1 = sra<1>(ni);
  Vi n2 = ni - n1;
  Vf s1 = from_bits(sll<23>(n1 + set1i(127)));
  Vf s2 = from_bits(sll<23>(n2 + set1i(127)));
  return p * s1 * s2;
}

inline Vf vlog(Vf x) {
  const Vf one = set1(1.0f);
  Mf denorm = lt(x, set1(1.17549435e-38f));  // includes zero and negatives, fixed up below
  Vf xs = select(denorm, x * set1(8388608.0f), x);
  Vi b = bits(xs);
  Vi e = (srl<23>(b) & set1i(0xff)) - set1i(126);
  Vf m = from_bits((b & set1i(0x007fffff)) | set1i(0x3f000000));  // [0.5, 1)
  Vf ef = to_float(e) - select(denorm, set1(23.0f), set1(0.0f));
  Mf small = lt(m, set1(0.707106781186547524f));
  Vf f = select(small, m + m, m) - one;
  ef = ef - select(small, one, set1(0.0f));
  Vf z = f * f;
  Vf p = set1(7.0376836292e-2f);
  p = fma(p, f, set1(-1.1514610310e-1f));
  p = fma(p, f, set1(1.1676998740e-1f));
  p = fma(p, f, set1(-1.2420140846e-1f));
  p = fma(p, f, set1(1.4249322787e-1f));
  p = fma(p, f, set1(-1.6668057665e-1f));
  p = fma(p, f, set1(2.0000714765e-1f));
  p = fma(p, f, set1(-2.4999993993e-1f));
  p = fma(p, f, set1(3.3333331174e-1f));
  Vf y = p * f * z;
  y = fma(ef, set1(-2.12194440e-4f), y);
  y = fnma(set1(0.5f), z, y);
  Vf r = fma(ef, set1(0.693359375f), f + y);
  const Vf zero = set1(0.0f), inf = set1(__builtin_inff());
  r = select(eq(x, inf), inf, r);
  r = select(eq(x, zero), vneg(inf), r);
  r = select(lt(x, zero), set1(__builtin_nanf("")), r);
  return select(isnan(x), x, r);
}

inline Vf vtanh(Vf x) {
  // Odd: computed on |x|, the sign put back last (which keeps tanh(-0) = -0).
  Vf ax = vabs(x);
  Vf z = x * x;
  Vf p = set1(-5.70498872745e-3f);
  p = fma(p, z, set1(2.06390887954e-2f));
  p = fma(p, z, set1(-5.37397155531e-2f));
  p = fma(p, z, set1(1.33314422036e-1f));
  p = fma(p, z, set1(-3.33332819422e-1f));
  Vf small = fma(p * z, ax, ax);
  // e^(2|x|) overflows to inf beyond |x| ~ 44, and 1 - 2/inf = 1: saturation.
  Vf e = vexp(ax + ax);
  Vf big = set1(1.0f) - set1(2.0f) / (e + set1(1.0f));
  return vor(select(lt(ax, set1(0.625f)), small, big), sign_of(x));
}

inline Vf vsigmoid(Vf x) {
  Vf e = vexp(vneg(vabs(x)));
  return select(lt(x, set1(0.0f)), e, set1(1.0f)) / (set1(1.0f) + e);
}

inline Vf verf(Vf x) {
  Vf ax = vabs(x);
  Vf s = x * x;
  Vf p = set1(-5.99085062e-4f);
  p = fma(p, s, set1(4.99317935e-3f));
  p = fma(p, s, set1(-2.67666150e-2f));
  p = fma(p, s, set1(1.12818159e-1f));
  p = fma(p, s, set1(-3.76124948e-1f));
  p = fma(p, s, set1(1.12837911e+0f));
  Vf small = p * x;
  // log(erfc(t)) on [0.921875, 4]; erf rounds to 1 beyond 4.
  Vf t = vmin(set1(4.0f), ax);
  Vf q = set1(1.60249443e-6f);
  q = fma(q, t, set1(-4.53546727e-5f));
  q = fma(q, t, set1(5.90716038e-4f));
  q = fma(q, t, set1(-4.73028591e-3f));
  q = fma(q, t, set1(2.63355518e-2f));
  q = fma(q, t, set1(-1.09925207e-1f));
  q = fma(q, t, set1(-6.31995301e-1f));
  q = fma(q, t, set1(-1.13013151e+0f));
  q = fma(q, t, set1(2.94280055e-4f));
  Vf big = set1(1.0f) - vexp(q);
  big = vor(big, sign_of(x));
  return select(lt(ax, set1(0.921875f)), small, big);  // NaN takes the second branch and stays NaN
}

// sin (cos_shift = 0) or cos (cos_shift = 1) of arguments with |x| <= 2^20;
// the caller sends other lanes to libm.
template <int kCosShift>
inline Vf vsincos(Vf x) {
  // sin is odd: reduced from |x| with the sign restored last, so sin(-0) = -0.
  Vf r;
  Vi q;
  reduce_pio2(kCosShift ? x : vabs(x), r, q);
  q = q + set1i(kCosShift);
  Vf z = r * r;
  Vf ps = set1(-1.9515295891e-4f);
  ps = fma(ps, z, set1(8.3321608736e-3f));
  ps = fma(ps, z, set1(-1.6666654611e-1f));
  ps = fma(ps * z, r, r);
  Vf pc = set1(2.443315711809948e-5f);
  pc = fma(pc, z, set1(-1.388731625493765e-3f));
  pc = fma(pc, z, set1(4.166664568298827e-2f));
  pc = fma(pc * z, z, fnma(set1(0.5f), z, set1(1.0f)));
  Vf v = select(nonzero(q & set1i(1)), pc, ps);
  v = vxor(v, from_bits(sll<30>(q & set1i(2))));  // quadrants 2 and 3 flip the sign
  return kCosShift ? v : vxor(v, sign_of(x));
}

// ------------------------------------------------------------ float64 math

// exp in double: the same reduction with a degree-13 Taylor polynomial
// (|r| <= ln2/2: the next term is below 2^-57) and the exponent built from
// the integer bits of n + 1.5 * 2^52, which needs no 64-bit conversions.
inline Vd vexpd(Vd x) {
  const Vd magic = set1d(6755399441055744.0);  // 1.5 * 2^52
  x = vmin(set1d(710.0), vmax(set1d(-746.0), x));
  Vd t = fma(x, set1d(1.4426950408889634074), magic);
  Vd n = t - magic;
  Vd r = fnma(n, set1d(6.93147180369123816490e-01), x);
  r = fnma(n, set1d(1.90821492927058770002e-10), r);
  Vd q = set1d(1.0 / 6227020800.0);
  const double c[] = {1.0 / 479001600.0,
                      1.0 / 39916800.0,
                      1.0 / 3628800.0,
                      1.0 / 362880.0,
                      1.0 / 40320.0,
                      1.0 / 5040.0,
                      1.0 / 720.0,
                      1.0 / 120.0,
                      1.0 / 24.0,
                      1.0 / 6.0,
                      0.5};
  for (double ck : c) q = fma(q, r, set1d(ck));
  Vd p = fma(q, r * r, r) + set1d(1.0);
  Vd n1 = vfloor(n * set1d(0.5));
  Vd n2 = n - n1;
  Vd s1 = sll_bits<52>(add_bits(sub_bits(n1 + magic, magic), 1023));
  Vd s2 = sll_bits<52>(add_bits(sub_bits(n2 + magic, magic), 1023));
  return p * s1 * s2;
}

// log in double: fdlibm's e_log.c algorithm (log(1 + f) = f - f^2/2 + s(f^2/2
// + R(s^2)), s = f / (2 + f)) on vectors.
inline Vd vlogd(Vd x) {
  const Vd magic = set1d(6755399441055744.0), one = set1d(1.0), zero = set1d(0.0);
  Md denorm = lt(x, set1d(2.2250738585072014e-308));
  Vd xs = select(denorm, x * set1d(18014398509481984.0), x);  // 2^54
  Vd k = (or_bits(srl_bits<52>(xs), 0x4338000000000000) - magic) - set1d(1022.0);
  k = k - select(denorm, set1d(54.0), zero);
  Vd m = or_bits(and_bits(xs, 0x000fffffffffffff), 0x3fe0000000000000);  // [0.5, 1)
  Md small = lt(m, set1d(0.70710678118654752440));
  Vd f = select(small, m + m, m) - one;
  k = k - select(small, one, zero);
  Vd s = f / (set1d(2.0) + f);
  Vd z = s * s;
  Vd w = z * z;
  Vd t1 = w * fma(w, fma(w, set1d(1.531383769920937332e-01), set1d(2.222219843214978396e-01)),
                  set1d(3.999999999940941908e-01));
  Vd t2 = z * fma(w,
                  fma(w, fma(w, set1d(1.479819860511658591e-01), set1d(1.818357216161805012e-01)),
                      set1d(2.857142874366239149e-01)),
                  set1d(6.666666666666735130e-01));
  Vd R = t1 + t2;
  Vd hfsq = set1d(0.5) * f * f;
  Vd r =
      k * set1d(6.93147180369123816490e-01) - ((hfsq - (s * (hfsq + R) + k * set1d(1.90821492927058770002e-10))) - f);
  const Vd inf = set1d(__builtin_inf());
  r = select(eq(x, inf), inf, r);
  r = select(eq(x, zero), set1d(-__builtin_inf()), r);
  r = select(lt(x, zero), set1d(__builtin_nan("")), r);
  return select(isnan(x), x, r);
}

inline Vd vsigmoidd(Vd x) {
  Vd ax = vand(x, set1d(__builtin_bit_cast(double, int64_t{0x7fffffffffffffff})));
  Vd e = vexpd(set1d(0.0) - ax);
  return select(lt(x, set1d(0.0)), e, set1d(1.0)) / (set1d(1.0) + e);
}

}  // namespace msl::kernels::MSL_SIMD_NS
