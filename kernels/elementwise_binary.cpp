// Binary elementwise primitives (NumPy broadcasting) and select.
//
// Dtype rules: arithmetic gives promote_types(a, b) and computes in it (half
// formats in float32); div of integers or Bools is true division in Float32
// (PyTorch, MindSpore); comparisons and logical ops give Bool, comparing in
// the promoted dtype; on two Bools add/mul/maximum/minimum are or/and/or/and
// (NumPy) while sub, floordiv, mod and pow reject Bool. Integer floordiv/mod
// by zero raises ZeroDivisionError (as Python's ints) and integer pow with a
// negative exponent ValueError: the divisor (exponent) is scanned before
// anything is computed, because a trap in the loop would kill the process
// and NumPy's silent 0 hides bugs.
#include <fmt/format.h>

#include "kernels/elementwise.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/shape_util.h"

namespace msl::kernels {

namespace {

using ew::BOp;

bool is_comparison(BOp op) { return op >= BOp::Equal && op <= BOp::GreaterEqual; }
bool is_logical(BOp op) { return op == BOp::LogicalAnd || op == BOp::LogicalOr; }

DType binary_out_dtype(Prim p, BOp op, DType a, DType b) {
  if (is_comparison(op) || is_logical(op)) return DType::Bool;
  DType t = promote_types(a, b);
  if (op == BOp::Div) return is_floating(t) ? t : DType::Float32;
  if (t == DType::Bool && (op == BOp::Sub || op == BOp::FloorDiv || op == BOp::Mod || op == BOp::Pow))
    throw DTypeError(fmt::format("{}: unsupported dtype {}", prim_name(p), dtype_display_name(t)));
  return t;
}

void infer_binary(const InferArgs& a, BOp op) {
  const TensorSpec &x = a.in[0], &y = a.in[1];
  Dims shape = broadcast_shapes(prim_name(a.prim), x.shape, y.shape);
  a.out[0] = TensorSpec{binary_out_dtype(a.prim, op, x.dtype, y.dtype), shape};
}

// True when some element of `t` satisfies pred(value) (integer dtypes and
// Bool only), walking the tensor's own geometry.
template <class T, class Pred>
bool any_typed(const Tensor& t, Pred pred) {
  const T* base = static_cast<const T*>(t.raw());
  const int nd = t.ndim();
  if (t.is_contiguous() || nd == 0) {
    const int64_t n = t.numel();
    for (int64_t i = 0; i < n; ++i)
      if (pred(static_cast<int64_t>(base[i]))) return true;
    return false;
  }
  const Dims& shape = t.shape();
  const Dims& st = t.strides();
  int64_t idx[kMaxDims] = {};
  for (int64_t d = 0; d < nd; ++d)
    if (shape[static_cast<int>(d)] == 0) return false;
  const int last = nd - 1;
  int64_t off = 0;
  while (true) {
    for (int64_t i = 0; i < shape[last]; ++i)
      if (pred(static_cast<int64_t>(base[off + i * st[last]]))) return true;
    int d = last - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        off += st[d];
        break;
      }
      off -= (shape[d] - 1) * st[d];
      idx[d] = 0;
    }
    if (d < 0) return false;
  }
}

template <class Pred>
bool any_element(const Tensor& t, Pred pred) {
  switch (t.dtype()) {
    case DType::Bool:
    case DType::UInt8: return any_typed<uint8_t>(t, pred);
    case DType::Int8: return any_typed<int8_t>(t, pred);
    case DType::Int32: return any_typed<int32_t>(t, pred);
    case DType::Int64: return any_typed<int64_t>(t, pred);
    default: return false;  // float divisors never trap
  }
}

void run_binary(const KernelArgs& a, BOp op) {
  const Tensor &x = a.in[0], &y = a.in[1];
  const Tensor& out = a.out[0];
  DType t = promote_types(x.dtype(), y.dtype());
  DType ct = is_logical(op) ? DType::Bool : ew::compute_dtype(t);
  if (op == BOp::Div && !is_floating(t)) ct = DType::Float32;
  DType kt = is_comparison(op) || is_logical(op) ? DType::Bool : ct;
  const bool int_compute = !is_floating(ct) && ct != DType::Bool;
  if (out.numel() > 0 && int_compute) {
    if ((op == BOp::FloorDiv || op == BOp::Mod) && any_element(y, [](int64_t v) { return v == 0; }))
      throw ZeroDivisionError(
          fmt::format("{}: integer {} by zero", prim_name(a.prim), op == BOp::Mod ? "modulo" : "division"));
    if (op == BOp::Pow && any_element(y, [](int64_t v) { return v < 0; }))
      throw ValueError("pow: integers to negative integer powers are not allowed");
  }
  const ew::LoopTable& lt = ew::loops();
  ew::LoopFn fn = lt.binary[static_cast<int>(op)][static_cast<int>(ct)];
  if (!fn) throw DTypeError(fmt::format("{}: unsupported dtype {}", prim_name(a.prim), dtype_display_name(t)));
  // Libm and integer-division loops cost tens of cycles per element.
  const ew::Cost cost = op == BOp::Pow || op == BOp::FloorDiv || op == BOp::Mod ? ew::Cost::Libm : ew::Cost::Memory;
  const Tensor* in[2] = {&x, &y};
  const DType cts[2] = {ct, ct};
  ew::run_loop(fn, ew::kScalar0 | ew::kScalar1, 2, in, cts, out, kt, cost);
}

}  // namespace

#define MSL_BINARY(name, Op)                                          \
  void infer_##name(const InferArgs& a) { infer_binary(a, BOp::Op); } \
  void cpu_##name(const KernelArgs& a) { run_binary(a, BOp::Op); }
MSL_BINARY(add, Add)
MSL_BINARY(sub, Sub)
MSL_BINARY(mul, Mul)
MSL_BINARY(div, Div)
MSL_BINARY(floordiv, FloorDiv)
MSL_BINARY(mod, Mod)
MSL_BINARY(pow, Pow)
MSL_BINARY(maximum, Maximum)
MSL_BINARY(minimum, Minimum)
MSL_BINARY(equal, Equal)
MSL_BINARY(not_equal, NotEqual)
MSL_BINARY(less, Less)
MSL_BINARY(less_equal, LessEqual)
MSL_BINARY(greater, Greater)
MSL_BINARY(greater_equal, GreaterEqual)
MSL_BINARY(logical_and, LogicalAnd)
MSL_BINARY(logical_or, LogicalOr)
#undef MSL_BINARY

// select(cond, x, y): x where cond is nonzero (NaN counts as true), else y.
void infer_select(const InferArgs& a) {
  const TensorSpec &c = a.in[0], &x = a.in[1], &y = a.in[2];
  Dims xy = broadcast_shapes("select", x.shape, y.shape);
  Dims shape = broadcast_shapes("select", c.shape, xy);
  a.out[0] = TensorSpec{promote_types(x.dtype, y.dtype), shape};
}

void cpu_select(const KernelArgs& a) {
  const Tensor& out = a.out[0];
  DType t = out.dtype();
  size_t sz = dtype_size(t);
  int lg = sz == 1 ? 0 : sz == 2 ? 1 : sz == 4 ? 2 : 3;
  const Tensor* in[3] = {&a.in[0], &a.in[1], &a.in[2]};
  const DType cts[3] = {DType::Bool, t, t};
  ew::run_loop(ew::loops().select[lg], 0, 3, in, cts, out, t, ew::Cost::Memory);
}

}  // namespace msl::kernels
