// Dead nested graphs: removing closures nothing can call any more.
//
// Why: a graph's body includes the nodes its nested graphs use (a closure's
// captured values, func_graph.h). So
// once inlining has copied a closure's body to its call site, the closure
// graph, now unreferenced, would still keep its captured nodes in its
// parent's body (AD's backpropagator partials, env chains), and every
// query over the nest (printing, ad_residue.h, later passes) would still
// see it.
//
// What it does: it finds the graphs of `g`'s nest that are live — reachable
// from g's output through node inputs and through the outputs of the graphs
// that graph constants on the way refer to, or referred to by any graph
// in the same top-level nest — and retires each other nested graph: its
// output becomes the constant None (so it captures nothing and keeps nothing
// of its parent alive) and it is removed from the module's graph list
// (IrModule::remove_graph; pointers to it stay valid).
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
