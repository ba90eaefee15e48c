// Tensors as MSL values: the binding between kernels::Tensor and the
// interpreter, shared by the files that implement the `msl._core` module
// (tensor_*.cpp, module_msl_core.cpp) and by the operator fast path in
// ops.cpp.
//
// Design choices:
//  - A tensor value is a TensorObj (NativeData) holding a kernels::Tensor by
//    value. Parameter is the same C++ type with a ParamInfo attached, so one
//    exact-type test (is_tensor) recognizes both, and every tensor path
//    (operators, indexing, printing) serves parameters unchanged.
//  - The Tensor and Parameter classes are TensorClass objects: besides the
//    methods, they carry the per-interpreter state the binding needs (the
//    dtype objects, the Tensor class for results), so any tensor reaches it
//    through its class pointer without a global registry.
//  - TensorObj blocks are recycled through a small per-thread free list:
//    eager code makes and drops one wrapper per operation.
//  - Kernel errors are C++ exceptions (kernels/errors.h); every call into
//    kernels/ goes through kernel_call, which turns them into the MSL
//    exceptions of the same meaning at the current MSL line.
//  - A tracer (interp/tensor/trace.h) is a different C++ type, TracerObj, of the
//    same Tensor class: `isinstance(x, Tensor)`, `x.shape` and the methods
//    find it like a tensor, but is_tensor() is false, so no path that reads
//    tensor data can receive one by accident. The paths that accept tracers
//    test is_tracer() explicitly and hand over to the trace; every other path
//    rejects it as a non-tensor or with the trace's clear error.
#pragma once

#include <memory>
#include <string>
#include <typeinfo>

#include "interp/core/interp.h"
#include "interp/core/object.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"

namespace msl::ir {
class Node;
}
namespace msl::trace {
struct TraceState;
}

namespace msl {

// Attributes that make a tensor a Parameter.
struct ParamInfo {
  std::string name = "Parameter";
  bool requires_grad = true;
};

struct TensorObj final : NativeData {
  TensorObj(Ref<Class> c, kernels::Tensor&& v) : NativeData(std::move(c)), t(std::move(v)) {}
  TensorObj(Ref<Class> c, const kernels::Tensor& v) : NativeData(std::move(c)), t(v) {}
  kernels::Tensor t;
  std::unique_ptr<ParamInfo> param;  // set for Parameters only

  static void* operator new(size_t n);
  static void operator delete(void* p, size_t n);
};

// A dtype as an MSL value (class `Type`): msl.float32 and friends.
struct DTypeObj final : NativeData {
  DTypeObj(Ref<Class> c, kernels::DType d) : NativeData(std::move(c)), dtype(d) {}
  kernels::DType dtype;
};

// The class of tensors (and of parameters, whose `tensor_cls` is the base).
struct TensorClass final : Class {
  Class* tensor_cls = nullptr;  // the Tensor class: results of operations are plain tensors
  bool parameter = false;
  Ref<Class> type_cls;                // the Type class of dtype objects
  Value dtypes[kernels::kNumDTypes];  // one DTypeObj per dtype, shared by both classes
};

// A tensor being traced: its dtype and shape, the graph node that computes
// it, and the trace it belongs to (kept alive by the tracer so that using a
// tracer after its trace has ended is a clear error, not a dangling pointer).
struct TracerObj final : NativeData {
  TracerObj(Ref<Class> c, kernels::TensorSpec s, ir::Node* n, std::shared_ptr<trace::TraceState> tr)
      : NativeData(std::move(c)), spec(std::move(s)), node(n), trace(std::move(tr)) {}
  kernels::TensorSpec spec;
  ir::Node* node;
  std::shared_ptr<trace::TraceState> trace;
};

// ------------------------------------------------------------- recognizing

inline bool is_tensor(const Value& v) { return v.is(Kind::NativeData) && typeid(*v.obj()) == typeid(TensorObj); }
inline TensorObj* tensor_obj(const Value& v) { return static_cast<TensorObj*>(v.obj()); }
inline const kernels::Tensor& tensor_of(const Value& v) { return tensor_obj(v)->t; }
inline bool is_tracer(const Value& v) { return v.is(Kind::NativeData) && typeid(*v.obj()) == typeid(TracerObj); }
inline TracerObj* tracer_obj(const Value& v) { return static_cast<TracerObj*>(v.obj()); }
// A tensor or a tracer: what tensor operators and primitives take.
inline bool is_tensor_or_tracer(const Value& v) { return is_tensor(v) || is_tracer(v); }
inline bool is_dtype_obj(const Value& v) { return v.is(Kind::NativeData) && typeid(*v.obj()) == typeid(DTypeObj); }

inline TensorClass* tensor_class_of(const NativeData* o) { return static_cast<TensorClass*>(o->cls.get()); }
// The Tensor class of the interpreter that made `o`, for results.
inline Class* result_class(const TensorObj* o) { return tensor_class_of(o)->tensor_cls; }

// Wraps a tensor as a new MSL Tensor value (moves the tensor in).
inline Value wrap_tensor(Class* tensor_cls, kernels::Tensor&& t) {
  return Value::object(new TensorObj(Ref<Class>(tensor_cls), std::move(t)));
}

// The dtype object for `d`.
inline const Value& dtype_value(TensorClass* c, kernels::DType d) { return c->dtypes[static_cast<int>(d)]; }

// ------------------------------------------------------------------ errors

// Raises the MSL exception for the C++ exception being handled: kernel
// ShapeError -> ShapeError, DTypeError -> TypeError, ValueError ->
// ValueError, IndexError -> IndexError, std::bad_alloc -> MemoryError; an
// MslError passes through unchanged. Call only from inside a catch block.
[[noreturn]] void raise_current_kernel_error(Interp& I);

// Runs f() (a call into kernels/) translating its exceptions.
template <class F>
inline auto kernel_call(Interp& I, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (...) {
    raise_current_kernel_error(I);
  }
}

// ------------------------------------------------------------- conversions

// A dtype given as a Type object or a dtype name ("float32"); TypeError otherwise.
kernels::DType dtype_arg(Interp& I, const Value& v, const char* fname);

// The tensor an object stands for: an instance whose class defines
// `__tensor__()` (numpy's ndarray) gives that method's Tensor, sharing its
// data, as NumPy's __array__ protocol lets foreign arrays into NumPy.
// False for anything else.
bool tensor_of_protocol(Interp& I, const Value& v, kernels::Tensor& out);

// Builds a tensor from nested lists/tuples of numbers, a number or a tensor.
// An object with __tensor__ (above) gives its tensor: shared when the dtype
// matches and it is on the default device (msl.Tensor(ndarray) copies no
// data), converted otherwise.
// With `dtype` null the dtype is inferred (any float: float32; all ints:
// int64; all bools: bool_; tensor elements promote); else values convert.
kernels::Tensor tensor_from_value(Interp& I, const Value& v, const kernels::DType* dtype, const char* fname);

// The 0-d tensor for a Python number mixed into an operation with a tensor
// of dtype `like` (the scalar rule: an int or bool takes the tensor's dtype,
// except that an int with a bool tensor gives int64; a float takes the
// tensor's dtype when that is floating, float32 otherwise).
kernels::Tensor scalar_operand(const Value& v, kernels::DType like);

// An operand of an operator or primitive: the tensor itself, a number by the
// scalar rule against `like`, or a list/tuple converted by inference. Returns
// false for anything else (the operator then reports unsupported types).
// With `shared_scalars`, a number may come back as a 0-d tensor shared with
// earlier calls (a small per-thread cache, so `y * 0.5` in a loop allocates
// nothing for the constant): only for Compute primitives, which neither
// write nor alias their inputs.
bool operand_tensor(Interp& I, const Value& v, kernels::DType like, kernels::Tensor& out, const char* fname,
                    bool shared_scalars = false);

// tolist(): nested lists of Python scalars (a scalar for a 0-d tensor).
Value tensor_to_list(Interp& I, const kernels::Tensor& t);
// item(): the Python scalar of a one-element tensor.
Value tensor_item(Interp& I, const kernels::Tensor& t);
// Element `flat` (row-major) of `t` as a Python scalar of its dtype's kind.
Value element_value(const kernels::Tensor& t, int64_t flat);

// ------------------------------------------------------- operators (ops.cpp)

// The tensor implementations of the operators, called by Interp::binary,
// unary and compare when an operand is a tensor. They return Undef when the
// other operand cannot take part (a str, None, ...), so the generic protocol
// can report the usual TypeError.
Value tensor_binary(Interp& I, ast::BinOp op, const Value& a, const Value& b);
Value tensor_unary(Interp& I, ast::UnaryOp op, const Value& v);
Value tensor_compare(Interp& I, ast::CmpOp op, const Value& a, const Value& b);
// Truth value of a one-element tensor (ValueError for more elements).
bool tensor_truthy(Interp& I, const kernels::Tensor& t);

// Runs primitive `p` on `in` and wraps its single output.
Value run_prim1(Interp& I, Class* tensor_cls, kernels::Prim p, std::span<const kernels::Tensor> in,
                const kernels::Attrs& attrs);

// ------------------------------------------------------------ other pieces

// print(x) / repr(x): "Tensor(shape=[2], dtype=Float32, value=\n[1. 2.])".
std::string tensor_repr(const kernels::Tensor& t);
// NumPy's str() of the values alone.
std::string tensor_values_str(const kernels::Tensor& t);
// NumPy's array2string: elements joined by `separator` (" " for str, ", "
// for repr), continuation lines indented to follow a prefix of `prefix_len`
// characters ("array(" is 6), wrapped at `line_width`. A 0-d tensor gives
// its element as an array element prints (repr's "1."), an empty one "[]".
std::string array_to_string(const kernels::Tensor& t, std::string_view separator, size_t prefix_len,
                            size_t line_width);
// repr of a tracer: "Tracer(shape=[2, 3], dtype=Float32)".
std::string tracer_repr(const kernels::TensorSpec& s);

// x[key] and x[key] = v.
Value tensor_getitem(Interp& I, const Value& self, const Value& key);
void tensor_setitem(Interp& I, const Value& self, const Value& key, const Value& v);
// x[key] on a tracer (tensor_index.cpp).
Value tracer_getitem(Interp& I, const Value& self, const Value& key);
// The functional x[key] = v of graph mode: x (a tensor or a tracer) with
// the write applied, as a new value; x itself is left alone.
Value tensor_setitem_functional(Interp& I, const Value& self, const Value& key, const Value& v);

// Class setup (tensor_methods.cpp, tensor_ops.cpp): defines the methods of
// Tensor and Parameter.
void init_tensor_methods(Interp& I, TensorClass* tensor, TensorClass* param);
void init_tensor_operator_methods(Interp& I, TensorClass* tensor);
// zeros, ones, full, arange, ... (tensor_creation.cpp), added to msl._core.
void init_tensor_creation(Interp& I, Module& m, TensorClass* tensor);

}  // namespace msl
