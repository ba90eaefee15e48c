// Inner loops of the elementwise primitives: one contiguous run per call,
// compiled once per instruction set like elementwise_ops.h (same inclusion
// rules; it comes after that header and vec_math.h).
//
// Most loops are plain C++ over one element type, which GCC vectorizes for
// whatever width the target region allows. Hand-written vector code
// (vec_math.h) is used where the compiler cannot do it alone: the float32
// transcendental functions, NaN-propagating max/min and the other float32
// arithmetic and unary loops (all with the same masked tails), and float64
// exp, log and sigmoid. Nothing here streams or fences: the driver decides
// how outputs reach memory.

namespace msl::kernels::MSL_SIMD_NS {

// ------------------------------------------------------------ plain loops

template <class Op, DType D, DType R>
void binary_loop(const void* const* in, void* out, int64_t n, unsigned flags) {
  using T = CT<D>;
  const T* __restrict a = static_cast<const T*>(in[0]);
  const T* __restrict b = static_cast<const T*>(in[1]);
  CT<R>* __restrict o = static_cast<CT<R>*>(out);
  if (flags & kScalar1) {
    const T bv = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = Op::template f<D>(a[i], bv);
  } else if (flags & kScalar0) {
    const T av = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = Op::template f<D>(av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = Op::template f<D>(a[i], b[i]);
  }
}

template <class Op, DType D, DType R>
void unary_loop(const void* const* in, void* out, int64_t n, unsigned) {
  const CT<D>* __restrict a = static_cast<const CT<D>*>(in[0]);
  CT<R>* __restrict o = static_cast<CT<R>*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = Op::template f<D>(a[i]);
}

template <class T>
void select_loop(const void* const* in, void* out, int64_t n, unsigned) {
  const uint8_t* __restrict c = static_cast<const uint8_t*>(in[0]);
  const T* __restrict x = static_cast<const T*>(in[1]);
  const T* __restrict y = static_cast<const T*>(in[2]);
  T* __restrict o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i] : y[i];
}

// Arithmetic loops write their compute dtype; comparisons and logical ops Bool.
template <class Op, DType... Ds>
void set_binary(LoopTable& t, BOp op) {
  ((t.binary[static_cast<int>(op)][static_cast<int>(Ds)] = &binary_loop<Op, Ds, Ds>), ...);
}
template <class Op, DType... Ds>
void set_compare(LoopTable& t, BOp op) {
  ((t.binary[static_cast<int>(op)][static_cast<int>(Ds)] = &binary_loop<Op, Ds, DType::Bool>), ...);
}
template <class Op, DType... Ds>
void set_unary(LoopTable& t, UOp op) {
  ((t.unary[static_cast<int>(op)][static_cast<int>(Ds)] = &unary_loop<Op, Ds, Ds>), ...);
}

inline void fill_plain(LoopTable& t) {
  using enum DType;
  set_converts<Bool, Int8, UInt8, Int32, Int64, Float16, BFloat16, Float32, Float64>(t);

  set_binary<OpAdd, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Add);
  set_binary<OpSub, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Sub);
  set_binary<OpMul, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Mul);
  set_binary<OpDiv, Float32, Float64>(t, BOp::Div);
  set_binary<OpFloorDiv, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::FloorDiv);
  set_binary<OpMod, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Mod);
  set_binary<OpPow, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Pow);
  set_binary<OpMaximum, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Maximum);
  set_binary<OpMinimum, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Minimum);
  set_compare<OpEqual, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Equal);
  set_compare<OpNotEqual, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::NotEqual);
  set_compare<OpLess, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Less);
  set_compare<OpLessEqual, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::LessEqual);
  set_compare<OpGreater, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::Greater);
  set_compare<OpGreaterEqual, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, BOp::GreaterEqual);
  set_compare<OpLogicalAnd, Bool>(t, BOp::LogicalAnd);
  set_compare<OpLogicalOr, Bool>(t, BOp::LogicalOr);

  set_unary<OpNeg, Int8, UInt8, Int32, Int64, Float32, Float64>(t, UOp::Neg);
  set_unary<OpAbs, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, UOp::Abs);
  set_unary<OpSign, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, UOp::Sign);
  set_unary<OpRelu, Int8, UInt8, Int32, Int64, Float32, Float64>(t, UOp::Relu);
  set_unary<OpFloor, Bool, Int8, UInt8, Int32, Int64, Float32, Float64>(t, UOp::Floor);
  set_unary<OpLogicalNot, Bool>(t, UOp::LogicalNot);
  set_unary<OpExp, Float32, Float64>(t, UOp::Exp);
  set_unary<OpLog, Float32, Float64>(t, UOp::Log);
  set_unary<OpSqrt, Float32, Float64>(t, UOp::Sqrt);
  set_unary<OpRsqrt, Float32, Float64>(t, UOp::Rsqrt);
  set_unary<OpReciprocal, Float32, Float64>(t, UOp::Reciprocal);
  set_unary<OpSin, Float32, Float64>(t, UOp::Sin);
  set_unary<OpCos, Float32, Float64>(t, UOp::Cos);
  set_unary<OpTanh, Float32, Float64>(t, UOp::Tanh);
  set_unary<OpSigmoid, Float32, Float64>(t, UOp::Sigmoid);
  set_unary<OpErf, Float32, Float64>(t, UOp::Erf);

  t.select[0] = &select_loop<uint8_t>;
  t.select[1] = &select_loop<uint16_t>;
  t.select[2] = &select_loop<uint32_t>;
  t.select[3] = &select_loop<uint64_t>;
}

#if MSL_SIMD_WIDTH

// --------------------------------------------------------- hand-vectorized

// Writes n outputs produced by full(i) (kW lanes at i) and part(i, m) (the
// first m lanes at i), two vectors per iteration so that independent work
// overlaps in the pipeline.
template <class Full, class Part>
inline void vdrive(float* o, int64_t n, Full full, Part part) {
  int64_t i = 0;
  for (; i + 2 * kW <= n; i += 2 * kW) {
    Vf v0 = full(i), v1 = full(i + kW);
    store(o + i, v0);
    store(o + i + kW, v1);
  }
  for (; i + kW <= n; i += kW) store(o + i, full(i));
  if (i < n) store_partial(o + i, part(i, n - i), n - i);
}

template <class VOp>
void vunary_loop(const void* const* in, void* out, int64_t n, unsigned) {
  const float* a = static_cast<const float*>(in[0]);
  vdrive(
      static_cast<float*>(out), n, [a](int64_t i) { return VOp::f(load(a + i)); },
      [a](int64_t i, int64_t m) { return VOp::f(load_partial(a + i, m)); });
}

template <class VOp>
void vbinary_loop(const void* const* in, void* out, int64_t n, unsigned flags) {
  const float* a = static_cast<const float*>(in[0]);
  const float* b = static_cast<const float*>(in[1]);
  float* o = static_cast<float*>(out);
  if (flags & kScalar1) {
    const Vf bv = set1(b[0]);
    vdrive(
        o, n, [a, bv](int64_t i) { return VOp::f(load(a + i), bv); },
        [a, bv](int64_t i, int64_t m) { return VOp::f(load_partial(a + i, m), bv); });
  } else if (flags & kScalar0) {
    const Vf av = set1(a[0]);
    vdrive(
        o, n, [b, av](int64_t i) { return VOp::f(av, load(b + i)); },
        [b, av](int64_t i, int64_t m) { return VOp::f(av, load_partial(b + i, m)); });
  } else {
    vdrive(
        o, n, [a, b](int64_t i) { return VOp::f(load(a + i), load(b + i)); },
        [a, b](int64_t i, int64_t m) { return VOp::f(load_partial(a + i, m), load_partial(b + i, m)); });
  }
}

// Lanes outside the fast sin/cos range (huge, infinite, NaN) go to libm.
template <int kCos>
inline Vf vsincos_full(Vf x) {
  Mf ok = le(vabs(x), set1(1048576.0f));
  Vf r = vsincos<kCos>(select(ok, x, set1(0.0f)));
  if (!all(ok)) [[unlikely]] {
    alignas(64) float xs[kW], rs[kW];
    store(xs, x);
    store(rs, r);
    for (int j = 0; j < kW; ++j) {
      float ax = xs[j] < 0 ? -xs[j] : xs[j];
      if (!(ax <= 1048576.0f))
        rs[j] = static_cast<float>(kCos ? std::cos(static_cast<double>(xs[j])) : std::sin(static_cast<double>(xs[j])));
    }
    r = load(rs);
  }
  return r;
}

#define MSL_VOP1(Name, expr)           \
  struct Name {                        \
    static Vf f(Vf x) { return expr; } \
  };
MSL_VOP1(VNeg, vneg(x))
MSL_VOP1(VAbs, vabs(x))
MSL_VOP1(VExp, vexp(x))
MSL_VOP1(VLog, vlog(x))
MSL_VOP1(VSqrt, vsqrt(x))
MSL_VOP1(VRsqrt, set1(1.0f) / vsqrt(x))
MSL_VOP1(VReciprocal, set1(1.0f) / x)
MSL_VOP1(VSin, vsincos_full<0>(x))
MSL_VOP1(VCos, vsincos_full<1>(x))
MSL_VOP1(VTanh, vtanh(x))
MSL_VOP1(VSigmoid, vsigmoid(x))
MSL_VOP1(VRelu, vmax(set1(0.0f), x))  // NaN is operand 2, so it propagates
MSL_VOP1(VErf, verf(x))
MSL_VOP1(VFloor, vfloor(x))
#undef MSL_VOP1

#define MSL_VOP2(Name, expr)                 \
  struct Name {                              \
    static Vf f(Vf a, Vf b) { return expr; } \
  };
MSL_VOP2(VAdd, a + b)
MSL_VOP2(VSub, a - b)
MSL_VOP2(VMul, a* b)
MSL_VOP2(VDiv, a / b)
MSL_VOP2(VMaximum, select(isnan(a), a, vmax(a, b)))  // vmax returns b when either is NaN
MSL_VOP2(VMinimum, select(isnan(a), a, vmin(a, b)))
#undef MSL_VOP2

// float64 exp/log/sigmoid (the other float64 functions stay with libm).
template <Vd (*F)(Vd)>
void vunary_loopd(const void* const* in, void* out, int64_t n, unsigned) {
  const double* a = static_cast<const double*>(in[0]);
  double* o = static_cast<double*>(out);
  int64_t i = 0;
  for (; i + 2 * kWd <= n; i += 2 * kWd) {
    Vd v0 = F(loadd(a + i)), v1 = F(loadd(a + i + kWd));
    stored(o + i, v0);
    stored(o + i + kWd, v1);
  }
  for (; i + kWd <= n; i += kWd) stored(o + i, F(loadd(a + i)));
  if (i < n) stored_partial(o + i, F(loadd_partial(a + i, n - i)), n - i);
}

// Half <-> float32 with the F16C instructions (round to nearest even, as
// float_to_half; NaN payloads may differ, NaN stays NaN).
inline void half_to_f32_loop(const void* const* in, void* out, int64_t n, unsigned) {
  const uint16_t* a = static_cast<const uint16_t*>(in[0]);
  float* o = static_cast<float*>(out);
  int64_t i = 0;
#if MSL_SIMD_WIDTH == 512
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(o + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i))));
#else
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(o + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i))));
#endif
  for (; i < n; ++i) o[i] = _cvtsh_ss(a[i]);
}
inline void f32_to_half_loop(const void* const* in, void* out, int64_t n, unsigned) {
  const float* a = static_cast<const float*>(in[0]);
  uint16_t* o = static_cast<uint16_t*>(out);
  int64_t i = 0;
#if MSL_SIMD_WIDTH == 512
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT));
#else
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(a + i), _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i) o[i] = _cvtss_sh(a[i], _MM_FROUND_TO_NEAREST_INT);
}

inline void fill_vector(LoopTable& t) {
  constexpr int f32 = static_cast<int>(DType::Float32);
  auto u = [&](UOp op) -> LoopFn& { return t.unary[static_cast<int>(op)][f32]; };
  auto b = [&](BOp op) -> LoopFn& { return t.binary[static_cast<int>(op)][f32]; };
  u(UOp::Neg) = &vunary_loop<VNeg>;
  u(UOp::Abs) = &vunary_loop<VAbs>;
  u(UOp::Exp) = &vunary_loop<VExp>;
  u(UOp::Log) = &vunary_loop<VLog>;
  u(UOp::Sqrt) = &vunary_loop<VSqrt>;
  u(UOp::Rsqrt) = &vunary_loop<VRsqrt>;
  u(UOp::Reciprocal) = &vunary_loop<VReciprocal>;
  u(UOp::Sin) = &vunary_loop<VSin>;
  u(UOp::Cos) = &vunary_loop<VCos>;
  u(UOp::Tanh) = &vunary_loop<VTanh>;
  u(UOp::Sigmoid) = &vunary_loop<VSigmoid>;
  u(UOp::Relu) = &vunary_loop<VRelu>;
  u(UOp::Erf) = &vunary_loop<VErf>;
  u(UOp::Floor) = &vunary_loop<VFloor>;
  b(BOp::Add) = &vbinary_loop<VAdd>;
  b(BOp::Sub) = &vbinary_loop<VSub>;
  b(BOp::Mul) = &vbinary_loop<VMul>;
  b(BOp::Div) = &vbinary_loop<VDiv>;
  b(BOp::Maximum) = &vbinary_loop<VMaximum>;
  b(BOp::Minimum) = &vbinary_loop<VMinimum>;
  constexpr int f64 = static_cast<int>(DType::Float64);
  t.unary[static_cast<int>(UOp::Exp)][f64] = &vunary_loopd<vexpd>;
  t.unary[static_cast<int>(UOp::Log)][f64] = &vunary_loopd<vlogd>;
  t.unary[static_cast<int>(UOp::Sigmoid)][f64] = &vunary_loopd<vsigmoidd>;
  t.convert[static_cast<int>(DType::Float16)][f32] = &half_to_f32_loop;
  t.convert[f32][static_cast<int>(DType::Float16)] = &f32_to_half_loop;
}

#endif  // MSL_SIMD_WIDTH

inline void fill(LoopTable& t) {
  fill_plain(t);
#if MSL_SIMD_WIDTH
  fill_vector(t);
#endif
}

}  // namespace msl::kernels::MSL_SIMD_NS
