// Partial-application elimination: calls through partial(...) become direct
// calls.
//
// What it does (a..., b... are argument lists, f any callee node):
//   * partial(f, a...)(b...)             -> f(a..., b...)
//     also when the partial node belongs to an enclosing graph (a closure
//     calling a captured partial: AD's bprop calling the backpropagators
//     that the forward pass built);
//   * partial(partial(f, a...), b...)    -> partial(f, a..., b...)
//   * partial(f)                         -> f (nothing bound)
// Direct calls of graph constants are then candidates for inlining
// (inline.h), which is how AD's partial(@B_p, x, y, out) closures vanish.
//
// What it does not do: it does not look through tuples, switches or
// parameters to find a partial (tuple_elim, simplify and inlining expose
// those first), and it does not check arities (a call with the wrong
// number of arguments fails at run time as before, at the same node).
#pragma once

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// Partial elimination over `g` and its nested graphs. Returns true when
// anything changed.
bool run_partial_elim(ir::IrModule& m, ir::FuncGraph& g);

}  // namespace msl::jit
