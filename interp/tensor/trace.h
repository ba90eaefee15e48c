// Tracing MSL functions into IR graphs (JAX-style), the way library
// functions (msl.ops wrappers, the gradient rules of stdlib/msl/_bprop) get
// the graphs that autodiff and graph mode need.
//
// trace_function calls an MSL function in the interpreter with TRACERS for
// its tensor arguments: values of the Tensor class (TracerObj,
// tensor_object.h) that carry only a dtype and a shape. Every primitive
// applied to a tracer — through msl._core, a tensor operator or a tensor
// method — appends an Apply node to the graph being built and returns a new
// tracer whose spec kernels::infer computed. Everything else runs
// concretely: Python logic on shapes and dtypes (`x.shape`, list
// comprehensions, `if axis is None`) is evaluated once, so the result is a
// straight-line graph specialized to the argument shapes. A primitive whose
// inputs are all concrete runs eagerly and its result enters the graph as a
// constant (constant folding for free).
//
// What a trace cannot capture is an error, never a silent divergence:
//   * needing a traced VALUE: bool()/`if`/`while` on a tracer, item(),
//     float(), int(), tolist()/asnumpy(), str()/print(), indexing
//     (TypeError naming the traced function and what it did);
//   * a random primitive without a traced input (ops.uniform(shape): its
//     draw would be a constant, replayed by every run; RuntimeError), and
//     in-place primitives (RuntimeError). A random primitive on traced
//     inputs (dropout) is recorded without seed and offset: the graph draws
//     them each time it runs;
//   * a tracer used outside the trace that made it: after its trace ended
//     (a tracer stored in a global, "leaked") or inside a nested trace
//     (closing over an outer trace's tracer) (RuntimeError).
//
// Traces nest: active traces form a per-thread stack and primitives record
// into the trace of their tracer arguments, which must be the innermost.
// Concrete tensors (globals, results of concrete computations) are captured
// by reference as tensor constants: like a closure in eager code, the graph
// sees later in-place writes to them (a Parameter updated by an optimizer).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "interp/core/interp.h"
#include "interp/core/object.h"
#include "kernels/attrs.h"
#include "kernels/primitives.h"
#include "lang/ir/ir_module.h"

namespace msl {
struct TensorClass;
struct TracerObj;
}  // namespace msl

namespace msl::trace {

// One argument of a traced call: a tensor spec (becomes a graph parameter,
// in order), a tuple of inputs (passed to fn as a tuple; its tensors become
// parameters, depth first) or a constant host value.
struct TraceInput {
  bool is_tensor = false;
  bool is_tuple = false;
  kernels::DType dtype{};         // tensor
  kernels::Dims shape;            // tensor
  kernels::DeviceType device = kernels::DeviceType::CPU;  // tensor
  std::vector<TraceInput> items;  // tuple
  Value constant;                 // otherwise: passed to fn as is

  static TraceInput tensor(kernels::DType d, kernels::Dims s, kernels::DeviceType dev = kernels::DeviceType::CPU) {
    TraceInput t;
    t.is_tensor = true;
    t.dtype = d;
    t.shape = s;
    t.device = dev;
    return t;
  }
  static TraceInput value(Value v) {
    TraceInput t;
    t.constant = std::move(v);
    return t;
  }
  static TraceInput tuple(std::vector<TraceInput> items) {
    TraceInput t;
    t.is_tuple = true;
    t.items = std::move(items);
    return t;
  }
};

// The nodes a call of a traced graph passes for argument `arg` of input
// `in` (appended to `out`): the argument itself for a tensor, its tensor
// items (tuple_getitem in `g`) for a tuple, nothing for a constant.
void tensor_leaves(ir::FuncGraph* g, ir::Node* arg, const TraceInput& in, std::vector<ir::Node*>& out);

// Calls fn(*args, **kwargs) with tracers for the tensor inputs and records a
// new graph in `m` named `name` (made unique by the module): its parameters
// are the tensor inputs in order (named after fn's parameters when fn is an
// MSL function); its output mirrors the result's structure: a tracer -> its
// node; a tuple/list -> make_tuple of the items; None/bool/int/float/str ->
// constants; a concrete tensor -> a tensor constant. Raises an MSL exception
// (MslError) when fn fails or does something a trace cannot capture; the
// graph made so far then stays in `m` (a module never deletes graphs),
// returning None and flagged trace_failed=True, so the module still verifies.
// With `freeze_parameters`, Parameters the function reads become tensor
// constants (their current values: an exported inference graph) instead of
// an error.
ir::FuncGraph* trace_function(Interp& I, ir::IrModule& m, const Value& fn, const std::vector<TraceInput>& args,
                              const std::vector<std::pair<std::string, Value>>& kwargs, const std::string& name,
                              bool freeze_parameters = false);

// --------------------------------------------------------------------------
// Hooks for the tensor binding (module_msl_core.cpp, tensor_*.cpp).

// The state of one trace, shared by its tracers.
struct TraceState {
  std::string fn_name;                // the traced function, for messages
  ir::FuncGraph* graph = nullptr;     // null once the trace has ended
  TensorClass* tensor_cls = nullptr;  // the class of the tracers
  bool freeze_parameters = false;     // Parameters read become constants (trace_function)
};

// The tracer `v` checked for use now: RuntimeError when its trace has ended
// or is not the innermost active one.
TracerObj& usable(Interp& I, const Value& v);

// True while a trace is running on this thread.
bool active();

// True when any of `values` is a tracer.
bool any_tracer(std::span<const Value> values);

// Records primitive `p` applied to `inputs` (tracers, tensors, numbers,
// lists; numbers take the dtype of the first tensor or tracer input) into
// the trace of its tracer inputs (a random primitive without one: into the
// innermost trace, drawing when the graph runs); returns the output tracer
// (a tuple of tracers for several outputs). Shape and dtype errors are
// raised now, as the eager call would raise them.
Value apply_prim(Interp& I, kernels::Prim p, std::span<const Value> inputs, const kernels::Attrs& attrs);

// A new tracer of `like`'s trace filled with `fill` (a number), of dtype
// `dtype` and `like`'s shape: zeros_like / ones_like on a tracer.
Value filled_like(Interp& I, const Value& like, kernels::DType dtype, const Value& fill);

// A new tracer of `x`'s trace with x's value through which no gradient
// flows (IrOp::stop_gradient): ops.stop_gradient inside a traced library
// function, which would otherwise trace as the identity.
Value stop_gradient(Interp& I, const Value& x);


// Raises the TypeError for an operation that needs the values of tracer
// `v`: "tracing 'f': <what> needs the value of a traced tensor ...".
[[noreturn]] void needs_value(Interp& I, const Value& v, const std::string& what);
// Raises a RuntimeError "tracing 'f': <message>" for the trace of `v`.
[[noreturn]] void cannot_trace(Interp& I, const Value& v, const std::string& message);

}  // namespace msl::trace
