// Operators on tensors: + - * / // % ** @, unary - + ~ abs, comparisons,
// & | ^ on bool tensors, and truth values. Each maps to one registry
// primitive run eagerly.
//
// Interp::binary/unary/compare call tensor_binary/... directly when an
// operand is a tensor (no dunder lookup, no argument vector), which is the
// hot path of eager code on small tensors. The dunder methods defined here
// (__add__, __radd__, ...) exist for explicit calls and for the generic
// protocol; they share the same implementation.
//
// Python numbers mix in by the scalar rule (tensor_object.h): they never
// widen the tensor's dtype, except that a float turns an integer tensor
// into float32. In-place operators (`x += y`) rebind to a new tensor, as
// MindSpore's do.
//
// Tracers (interp/tensor/trace.h) reach these operators through the dunder
// methods (the interpreter's fast path only recognizes concrete tensors) or
// as the other operand of a tensor; the operator is then recorded into the
// trace with the same operand rules, and truth values raise the trace's
// error.
#include <fmt/format.h>

#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"
#include "lang/operator_prims.h"

namespace msl {

using ast::BinOp;
using ast::CmpOp;
using ast::UnaryOp;
using kernels::Attrs;
using kernels::Dims;
using kernels::DType;
using kernels::Prim;
using kernels::Tensor;

namespace {

const Attrs kNoAttrs;

// NumPy's matmul of 1-D operands: a vector on the left is a row (1, n), on
// the right a column (n, 1), and the added dimension is removed again.
Value matmul(Interp& I, Class* cls, const Tensor& a, const Tensor& b) {
  bool row = a.ndim() == 1, col = b.ndim() == 1;
  if (!row && !col) {
    Tensor in[2] = {a, b};
    return run_prim1(I, cls, Prim::matmul, in, kNoAttrs);
  }
  Tensor in[2] = {a, b};
  if (row) in[0] = Tensor::view(a, Dims{1, a.dim(0)}, Dims{a.dim(0) * a.strides()[0], a.strides()[0]}, a.offset());
  if (col) in[1] = Tensor::view(b, Dims{b.dim(0), 1}, Dims{b.strides()[0], 1}, b.offset());
  Tensor r = kernel_call(I, [&] { return kernels::execute1(Prim::matmul, in, kNoAttrs); });
  Dims shape;
  for (int i = 0; i < r.ndim(); ++i) {
    if (row && i == r.ndim() - 2) continue;
    if (col && i == r.ndim() - 1) continue;
    shape.push_back(r.dim(i));
  }
  return wrap_tensor(cls, Tensor::view(r, shape, kernels::contiguous_strides(shape), r.offset()));
}

[[noreturn]] void bool_only(Interp& I, const char* sym, DType a, DType b) {
  raise_type_error(I, fmt::format("operator {} is only defined for bool tensors, got {} and {}", sym,
                                  kernels::dtype_display_name(a), kernels::dtype_display_name(b)));
}

// ---------------------------------------------------------------- tracers

DType dtype_of(const Value& v) { return is_tracer(v) ? tracer_obj(v)->spec.dtype : tensor_of(v).dtype(); }
const Dims& shape_of(const Value& v) { return is_tracer(v) ? tracer_obj(v)->spec.shape : tensor_of(v).shape(); }

// operand_pair() for operands at least one of which is a tracer: each as a
// tracer or a tensor, numbers and lists converted as for concrete tensors
// against the dtype of `self` (the first tracer or tensor operand). False
// when an operand cannot be one.
bool traced_operands(Interp& I, const Value& a, const Value& b, Prim p, Value in[2]) {
  const Value& self = is_tensor_or_tracer(a) ? a : b;
  const Value* v[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    if (is_tracer(*v[i])) trace::usable(I, *v[i]);
    if (is_tensor_or_tracer(*v[i])) {
      in[i] = *v[i];
      continue;
    }
    Tensor t;
    if (!operand_tensor(I, *v[i], dtype_of(self), t, kernels::prim_name(p))) return false;
    // A plain Tensor (a Parameter's class would make a Parameter without its info).
    in[i] = wrap_tensor(static_cast<TensorClass*>(self.as<NativeData>()->cls.get())->tensor_cls, std::move(t));
  }
  return true;
}

Value reshaped(Interp& I, const Value& v, const Dims& shape) {
  Attrs attrs{{"shape", shape.vec()}};
  if (is_tracer(v)) return trace::apply_prim(I, Prim::reshape, std::span<const Value>(&v, 1), attrs);
  return run_prim1(I, result_class(tensor_obj(v)), Prim::reshape, std::span<const Tensor>(&tensor_of(v), 1), attrs);
}

// matmul() above, for operands at least one of which is a tracer.
Value traced_matmul(Interp& I, Value a, Value b) {
  const bool row = shape_of(a).size() == 1, col = shape_of(b).size() == 1;
  if (row) a = reshaped(I, a, Dims{1, shape_of(a)[0]});
  if (col) b = reshaped(I, b, Dims{shape_of(b)[0], 1});
  Value in[2] = {a, b};
  Value r = trace::apply_prim(I, Prim::matmul, in, kNoAttrs);
  if (!row && !col) return r;
  const Dims& rs = tracer_obj(r)->spec.shape;
  Dims shape;
  for (int i = 0; i < rs.size(); ++i) {
    if (row && i == rs.size() - 2) continue;
    if (col && i == rs.size() - 1) continue;
    shape.push_back(rs[i]);
  }
  return reshaped(I, r, shape);
}

Value traced_binary(Interp& I, BinOp op, Prim p, const Value& a, const Value& b) {
  Value in[2];
  if (!traced_operands(I, a, b, p, in)) return Value::undef();
  switch (op) {
    case BinOp::MatMul: return traced_matmul(I, in[0], in[1]);
    case BinOp::BitAnd:
    case BinOp::BitOr:
    case BinOp::BitXor:
      if (dtype_of(in[0]) != DType::Bool || dtype_of(in[1]) != DType::Bool)
        bool_only(I, ast::to_string(op), dtype_of(in[0]), dtype_of(in[1]));
      break;
    default: break;
  }
  return trace::apply_prim(I, p, in, kNoAttrs);
}

Value traced_unary(Interp& I, UnaryOp op, const Value& v) {
  trace::usable(I, v);
  switch (op) {
    case UnaryOp::Not: trace::needs_value(I, v, "`not` of a tensor");
    case UnaryOp::Pos: return v;
    case UnaryOp::Neg: return trace::apply_prim(I, Prim::neg, std::span<const Value>(&v, 1), kNoAttrs);
    case UnaryOp::Invert:
      if (dtype_of(v) != DType::Bool)
        raise_type_error(I, fmt::format("operator ~ is only defined for bool tensors, got {}",
                                        kernels::dtype_display_name(dtype_of(v))));
      return trace::apply_prim(I, Prim::logical_not, std::span<const Value>(&v, 1), kNoAttrs);
  }
  return Value::undef();
}

}  // namespace

Value run_prim1(Interp& I, Class* tensor_cls, Prim p, std::span<const Tensor> in, const Attrs& attrs) {
  return wrap_tensor(tensor_cls, kernel_call(I, [&] { return kernels::execute1(p, in, attrs); }));
}

// Both operands of a binary operator or comparison as tensors: the tensor
// itself, or a scalar/list converted with the other tensor's dtype. False
// when an operand cannot be one (the interpreter then tries the reflected
// method or reports unsupported operand types).
static bool operand_pair(Interp& I, const Value& a, const Value& b, DType self_dtype, const char* name, Tensor in[2]) {
  const Value* v[2] = {&a, &b};
  for (int i = 0; i < 2; ++i) {
    if (is_tensor(*v[i]))
      in[i] = tensor_of(*v[i]);
    else if (!operand_tensor(I, *v[i], self_dtype, in[i], name, true))
      return false;
  }
  return true;
}

Value tensor_binary(Interp& I, BinOp op, const Value& a, const Value& b) {
  Prim p;
  if (!binary_op_prim(op, p)) return Value::undef();
  bool ta = is_tensor(a), tb = is_tensor(b);
  if (ta && tb && op != BinOp::MatMul && op < BinOp::BitOr) {
    // Two tensors and an arithmetic operator: the common case, straight through.
    const Tensor in[2] = {tensor_of(a), tensor_of(b)};
    return run_prim1(I, result_class(tensor_obj(a)), p, in, kNoAttrs);
  }
  if (is_tracer(a) || is_tracer(b)) return traced_binary(I, op, p, a, b);
  TensorObj* self = tensor_obj(ta ? a : b);
  Class* cls = result_class(self);
  Tensor in[2];
  if (!operand_pair(I, a, b, self->t.dtype(), kernels::prim_name(p), in)) return Value::undef();
  switch (op) {
    case BinOp::MatMul: return matmul(I, cls, in[0], in[1]);
    case BinOp::BitAnd:
    case BinOp::BitOr:
    case BinOp::BitXor:
      if (in[0].dtype() != DType::Bool || in[1].dtype() != DType::Bool)
        bool_only(I, ast::to_string(op), in[0].dtype(), in[1].dtype());
      break;
    default: break;
  }
  return run_prim1(I, cls, p, in, kNoAttrs);
}

Value tensor_compare(Interp& I, CmpOp op, const Value& a, const Value& b) {
  Prim p;
  if (!compare_op_prim(op, p)) return Value::undef();
  bool ta = is_tensor(a), tb = is_tensor(b);
  if (ta && tb) {
    const Tensor in[2] = {tensor_of(a), tensor_of(b)};
    return run_prim1(I, result_class(tensor_obj(a)), p, in, kNoAttrs);
  }
  if (is_tracer(a) || is_tracer(b)) {
    Value in[2];
    if (!traced_operands(I, a, b, p, in)) return Value::undef();
    return trace::apply_prim(I, p, in, kNoAttrs);
  }
  TensorObj* self = tensor_obj(ta ? a : b);
  Tensor in[2];
  if (!operand_pair(I, a, b, self->t.dtype(), kernels::prim_name(p), in)) return Value::undef();
  return run_prim1(I, result_class(self), p, in, kNoAttrs);
}

bool tensor_truthy(Interp& I, const Tensor& t) {
  int64_t n = t.numel();
  if (n > 1) raise_value_error(I, "The truth value of a Tensor with more than one element is ambiguous");
  if (n == 0) raise_value_error(I, "The truth value of an empty Tensor is ambiguous");
  return t.item_at(0) != 0;
}

Value tensor_unary(Interp& I, UnaryOp op, const Value& v) {
  if (is_tracer(v)) return traced_unary(I, op, v);
  TensorObj* self = tensor_obj(v);
  switch (op) {
    case UnaryOp::Not: return Value::boolean(!tensor_truthy(I, self->t));
    case UnaryOp::Pos: return v;
    case UnaryOp::Neg:
      return run_prim1(I, result_class(self), Prim::neg, std::span<const Tensor>(&self->t, 1), kNoAttrs);
    case UnaryOp::Invert:
      if (self->t.dtype() != DType::Bool)
        raise_type_error(I, fmt::format("operator ~ is only defined for bool tensors, got {}",
                                        kernels::dtype_display_name(self->t.dtype())));
      return run_prim1(I, result_class(self), Prim::logical_not, std::span<const Tensor>(&self->t, 1), kNoAttrs);
  }
  return Value::undef();
}

// ------------------------------------------------------------ dunder methods

namespace {

// The receiver, a tensor or a tracer (the operators take both).
void check_self(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !is_tensor_or_tracer(a.pos[0]))
    raise_type_error(I, fmt::format("descriptor '{}' requires a 'Tensor' object", method));
}

template <BinOp op, bool reflected>
Value dunder_binary(Interp& I, Args& a, Object*) {
  check_self(I, a, "operator");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "operator", rest, 1, 1, v);
  Value r = reflected ? tensor_binary(I, op, v[0], a.pos[0]) : tensor_binary(I, op, a.pos[0], v[0]);
  return r.is_undef() ? I.not_implemented : r;
}

template <CmpOp op>
Value dunder_compare(Interp& I, Args& a, Object*) {
  check_self(I, a, "comparison");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "comparison", rest, 1, 1, v);
  Value r = tensor_compare(I, op, a.pos[0], v[0]);
  return r.is_undef() ? I.not_implemented : r;
}

template <UnaryOp op>
Value dunder_unary(Interp& I, Args& a, Object*) {
  check_self(I, a, "operator");
  Args rest = method_args(a);
  bind_positional(I, "operator", rest, 0, 0, nullptr);
  return tensor_unary(I, op, a.pos[0]);
}

Value tensor_abs(Interp& I, Args& a, Object*) {
  check_self(I, a, "__abs__");
  Args rest = method_args(a);
  bind_positional(I, "__abs__", rest, 0, 0, nullptr);
  if (is_tracer(a.pos[0])) return trace::apply_prim(I, Prim::abs, a.pos.subspan(0, 1), kNoAttrs);
  TensorObj* self = tensor_obj(a.pos[0]);
  return run_prim1(I, result_class(self), Prim::abs, std::span<const Tensor>(&self->t, 1), kNoAttrs);
}

Value tensor_bool(Interp& I, Args& a, Object*) {
  check_self(I, a, "__bool__");
  if (is_tracer(a.pos[0]))
    trace::needs_value(I, a.pos[0], "the truth value of a tensor (an `if`, `while`, `and`, `or`, `not` or bool())");
  return Value::boolean(tensor_truthy(I, tensor_obj(a.pos[0])->t));
}

void def_op(Interp& I, Class* c, const char* name, NativeFn fn) { I.def_method(c, name, fn); }

}  // namespace

void init_tensor_operator_methods(Interp& I, TensorClass* c) {
#define MSL_BIN(op, name)                                        \
  def_op(I, c, "__" name "__", dunder_binary<BinOp::op, false>); \
  def_op(I, c, "__r" name "__", dunder_binary<BinOp::op, true>);
  MSL_BIN(Add, "add")
  MSL_BIN(Sub, "sub")
  MSL_BIN(Mul, "mul")
  MSL_BIN(Div, "truediv")
  MSL_BIN(FloorDiv, "floordiv")
  MSL_BIN(Mod, "mod")
  MSL_BIN(Pow, "pow")
  MSL_BIN(MatMul, "matmul")
  MSL_BIN(BitAnd, "and")
  MSL_BIN(BitOr, "or")
  MSL_BIN(BitXor, "xor")
#undef MSL_BIN
  def_op(I, c, "__lt__", dunder_compare<CmpOp::Lt>);
  def_op(I, c, "__le__", dunder_compare<CmpOp::Le>);
  def_op(I, c, "__gt__", dunder_compare<CmpOp::Gt>);
  def_op(I, c, "__ge__", dunder_compare<CmpOp::Ge>);
  def_op(I, c, "__eq__", dunder_compare<CmpOp::Eq>);
  def_op(I, c, "__ne__", dunder_compare<CmpOp::Ne>);
  def_op(I, c, "__neg__", dunder_unary<UnaryOp::Neg>);
  def_op(I, c, "__pos__", dunder_unary<UnaryOp::Pos>);
  def_op(I, c, "__invert__", dunder_unary<UnaryOp::Invert>);
  def_op(I, c, "__abs__", tensor_abs);
  def_op(I, c, "__bool__", tensor_bool);
}

}  // namespace msl
