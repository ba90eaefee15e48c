// Unary elementwise primitives and cast: dtype rules and kernel entry points.
//
// Dtype rules (PyTorch's where MindSpore is silent): the float functions
// (exp log sqrt rsqrt reciprocal sin cos tanh sigmoid erf) return Float32 for
// integer and Bool inputs and keep a float input's dtype, computing half
// formats in float32 and rounding once on the way out; floor is the identity
// on integers and Bool; abs and sign accept every dtype (Bool and uint8 are
// their own abs); neg and relu reject Bool (NumPy rejects boolean negation);
// logical_not gives Bool. cast converts with store_from_double's rules.
#include <fmt/format.h>

#include "kernels/elementwise.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels {

namespace {

using ew::UOp;

bool is_float_fn(UOp op) {
  switch (op) {
    case UOp::Exp:
    case UOp::Log:
    case UOp::Sqrt:
    case UOp::Rsqrt:
    case UOp::Reciprocal:
    case UOp::Sin:
    case UOp::Cos:
    case UOp::Tanh:
    case UOp::Sigmoid:
    case UOp::Erf: return true;
    default: return false;
  }
}

DType unary_out_dtype(Prim p, UOp op, DType dt) {
  if ((op == UOp::Neg || op == UOp::Relu) && dt == DType::Bool)
    throw DTypeError(fmt::format("{}: unsupported dtype {}", prim_name(p), dtype_display_name(dt)));
  if (op == UOp::LogicalNot) return DType::Bool;
  if (is_float_fn(op) && !is_floating(dt)) return DType::Float32;
  return dt;
}

void infer_unary(const InferArgs& a, UOp op) {
  a.out[0] = TensorSpec{unary_out_dtype(a.prim, op, a.in[0].dtype), a.in[0].shape};
}

void run_unary(const KernelArgs& a, UOp op) {
  const Tensor& x = a.in[0];
  DType ct = op == UOp::LogicalNot ? DType::Bool : ew::compute_dtype(a.out[0].dtype());
  DType kt = op == UOp::LogicalNot ? DType::Bool : ct;
  const ew::LoopTable& lt = ew::loops();
  ew::LoopFn fn = lt.unary[static_cast<int>(op)][static_cast<int>(ct)];
  if (!fn) throw DTypeError(fmt::format("{}: unsupported dtype {}", prim_name(a.prim), dtype_display_name(x.dtype())));
  // Float functions are vector code for float32 (and float64 exp, log and
  // sigmoid) in the vector builds, libm otherwise.
  ew::Cost cost = ew::Cost::Memory;
  if (is_float_fn(op) && op != UOp::Sqrt && op != UOp::Reciprocal) {
    bool vector = ew::simd_level() != ew::SimdLevel::Generic &&
                  (ct == DType::Float32 || op == UOp::Exp || op == UOp::Log || op == UOp::Sigmoid);
    cost = vector ? ew::Cost::Compute : ew::Cost::Libm;
  }
  const Tensor* in[1] = {&x};
  ew::run_loop(fn, 0, 1, in, &ct, a.out[0], kt, cost);
}

}  // namespace

#define MSL_UNARY(name, Op)                                          \
  void infer_##name(const InferArgs& a) { infer_unary(a, UOp::Op); } \
  void cpu_##name(const KernelArgs& a) { run_unary(a, UOp::Op); }
MSL_UNARY(neg, Neg)
MSL_UNARY(abs, Abs)
MSL_UNARY(sign, Sign)
MSL_UNARY(exp, Exp)
MSL_UNARY(log, Log)
MSL_UNARY(sqrt, Sqrt)
MSL_UNARY(rsqrt, Rsqrt)
MSL_UNARY(reciprocal, Reciprocal)
MSL_UNARY(sin, Sin)
MSL_UNARY(cos, Cos)
MSL_UNARY(tanh, Tanh)
MSL_UNARY(sigmoid, Sigmoid)
MSL_UNARY(relu, Relu)
MSL_UNARY(erf, Erf)
MSL_UNARY(floor, Floor)
MSL_UNARY(logical_not, LogicalNot)
#undef MSL_UNARY

void infer_cast(const InferArgs& a) {
  if (!a.attrs.has("dtype")) throw ValueError("cast: missing attribute 'dtype'");
  a.out[0] = TensorSpec{a.attrs.get_dtype("dtype"), a.in[0].shape};
}

void cpu_cast(const KernelArgs& a) {
  DType from = a.in[0].dtype(), to = a.out[0].dtype();
  ew::LoopFn fn = ew::loops().convert[static_cast<int>(from)][static_cast<int>(to)];
  const Tensor* in[1] = {&a.in[0]};
  ew::run_loop(fn, 0, 1, in, &from, a.out[0], to, ew::Cost::Memory);
}

}  // namespace msl::kernels
