// Dead-code elimination.
//
// Dead: a graph's body is, by definition (func_graph.h), the nodes it owns
// that are reachable from its output (or used by its nested graphs), so a
// node nothing reachable uses is already out of the node set and of the
// printed/topological order; this pass makes more nodes dead by removing
// uses that cannot matter:
//   * tuple_getitem(make_tuple(a0, ..., an), i) with a constant integer i
//     in range is replaced by ai, so the tuple and its other elements lose
//     that use (and vanish when it was their last one).
// Effects are kept: the forwarding is skipped when a dropped element
// carries an effect (it is, or depends within the graph on, update_state,
// print, depend or an InPlace primitive such as assign). Effects are
// threaded through the state token into the graph's output, so every
// update_state/print/assign chain stays reachable and in order.
//
// What it does not do: IrModule cannot remove graphs, so an unused nested
// graph stays in the module (print_module still prints it); the pass only
// ensures nothing reachable refers to it anymore. It does not remove unused
// parameters (that changes the calling convention) nor look into callees.
#pragma once

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// DCE over `g` and the graphs nested in it. Returns true when anything changed.
bool run_dce(ir::IrModule& m, ir::FuncGraph& g);

}  // namespace msl::jit
