// Graph mode's front door: turns live MSL callables into IR graphs and runs
// them with the debug-mode executor.
//
// What gets compiled (spec §6-7): functions decorated with `msl.jit`, the
// targets of GradOperation / msl.grad / msl.value_and_grad, and everything
// they call that is user code: functions, lambdas, closures, bound methods
// and Cells (a call of a Cell instance lowers its `construct` with `self`
// known). Names are resolved at compile time against the live values:
//   * primitives of msl._core       → kernel primitives;
//   * user functions and methods    → lowered graphs (shared per object);
//   * numbers, strings, tensors     → constants;
//   * Parameters                    → parameters of the root graph, so the
//     current weights are passed on every call and gradients w.r.t. them
//     are ordinary parameter sensitivities;
//   * GradOperation()(f), msl.grad(f) inside compiled code → evaluated at
//     compile time (they are marked `__msl_static__`), their graphs inlined;
//   * library code (modules under msl.) and any other object → host values
//     the executor calls through the interpreter; autodiff differentiates
//     them by tracing them at the argument shapes (interp/tensor/trace.h).
//
// Every compiled callable has a root graph R(args..., weights...) at the top
// level of one IrModule per interpreter. A gradient function's graph is
// GF(args..., weights...[, sens]) = the MindSpore result structure computed
// from J(R) (lang/ad). Compiled graphs are cached per callable object and
// argument count.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "interp/core/interp.h"

namespace msl {

// What a gradient function computes (MindSpore's GradOperation and the 2.x
// functional API, normalized).
struct GradSpec {
  enum class Inputs { None, One, Tuple, All };
  Inputs inputs = Inputs::One;
  std::vector<int64_t> positions{0};  // One: positions[0]; Tuple: all of them
  bool has_weights = false;
  std::vector<Value> weights;  // Parameters
  bool sens_param = false;
  bool has_aux = false;       // only the first output is differentiated; aux returned
  bool return_value = false;  // value_and_grad
};

// Calls `fn` compiled (msl.jit). `fn` is a user function, lambda, bound
// method or Cell.
Value graph_call(Interp& I, const Value& fn, std::span<Value> args);
// Calls the gradient of `fn` per `spec` with `args` (the sensitivity last
// when spec.sens_param). Returns MindSpore's structure.
Value grad_call(Interp& I, const Value& grad_fn, std::span<Value> args);

// Makes the callable objects msl.jit and the gradient API return.
Value make_jit_function(Interp& I, const Value& fn);
Value make_grad_function(Interp& I, const Value& fn, GradSpec spec);

// The IR of what calling `fn` with `nargs` arguments compiles (msl._graph.
// ir_text, the REPL's :ir): the graph of `fn` and the graphs nested in it;
// for a gradient function, the whole module.
std::string graph_ir_text(Interp& I, const Value& fn, size_t nargs);

}  // namespace msl
