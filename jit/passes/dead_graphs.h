// Dead nested graphs: retiring closures nothing can call any more.
//
// Why: a graph's body includes the nodes its nested graphs use (a closure's
// captured values, func_graph.h), and IrModule cannot remove a graph. So
// once inlining has copied a closure's body to its call site, the closure
// graph, now unreferenced, would still keep its captured nodes in its
// parent's body (AD's backpropagator partials, env chains), and every
// query over the nest (printing, ad_residue.h, later passes) would still
// see it.
//
// What it does: it finds the graphs of `g`'s nest that are live — reachable
// from g's output through node inputs and through the outputs of the graphs
// that graph constants on the way refer to, or referred to by any graph
// outside the nest — and retires each other nested graph by setting its
// output to the constant None. Its body is then empty, so it captures
// nothing and keeps nothing of its parent alive; the graph itself (name,
// parameters) stays in the module and prints as `return(None)`.
//
// What it does not do: retire g itself or top-level graphs (callers outside
// this compilation may hold them), or change any live graph.
#pragma once

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// Retires the dead graphs nested in `g`. Returns true when any was retired.
bool run_dead_graphs(ir::IrModule& m, ir::FuncGraph& g);

}  // namespace msl::jit
