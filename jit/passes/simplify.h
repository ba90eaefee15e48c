// Algebraic and zero simplification, mostly of AD's sensitivity sums.
//
// What it does:
//   * grad_add(z, y) -> y and grad_add(y, z) -> y when z is a zero: None,
//     zeros_like(...) or env_new() (AD's zero sensitivities);
//   * grad_add(a, b) -> add(a, b) when both are known tensors (a tensor
//     constant, or a call of a kernel primitive with one output): the
//     generic sum becomes a kernel later passes can fuse;
//   * grad_add(make_tuple(a...), make_tuple(b...)) -> make_tuple(grad_add(ai,
//     bi)...) for tuples of equal length, and zeros_like(make_tuple(a...)) ->
//     make_tuple(zeros_like(ai)...), so tuple sensitivities reach tuple_elim;
//   * mul(x, 1), mul(1, x), add(x, 0), add(0, x) -> x, only where neither
//     the shape nor the dtype can change: the constant must be a Python
//     scalar (an int or float constant node, which the kernels convert to a
//     0-d tensor of x's dtype, so it broadcasts to x's shape) and x a call of
//     a kernel primitive with one output (surely a tensor). A tensor 1 could
//     broadcast x to a larger shape or promote its dtype, so it is left;
//   * switch(True, a, b) -> a and switch(False, a, b) -> b (bool constants).
//
// Effects are kept: a rewrite that would drop a value that is, or depends
// on, an effect (print, update_state, depend, assign) is skipped, and depend
// and update_state chains are never touched.
//
// What it does not do: stop_gradient(x) -> x (it must survive until AD has
// run), mul(x, 0) -> zeros (x may hold inf or nan), or any rewrite that
// needs shapes or dtypes the IR does not carry yet.
#pragma once

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// Simplification over `g` and its nested graphs. Returns true when anything
// changed.
bool run_simplify(ir::IrModule& m, ir::FuncGraph& g);

}  // namespace msl::jit
