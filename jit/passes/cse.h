// Common-subexpression elimination.
//
// What it does: within each graph of a nest, processed node by node in
// topological order,
//   * constants with equal values are merged (the first one met in the graph
//     is kept): equal means the same alternative of ConstValue and, for
//     floats, the same bits; for strings, primitives (name and attributes),
//     IR operators, graphs (the same FuncGraph) and tensors (dtype, shape
//     and elements), the same printed form — the form the IR parser reads
//     back, so two constants that print alike are one IR value;
//   * two Apply nodes with the same callee and the same input nodes (after
//     the merges above) are merged: the later one's users are re-pointed to
//     the first. Callees compare as nodes, so the same primitive with equal
//     attributes, the same IR operator or the same graph constant count as
//     one callee once their constants are merged.
//
// What it does not do:
//   * it never merges nodes of different graphs: a node of a closure and an
//     equal node of its enclosing graph stay apart (hoisting is a separate,
//     later pass), and each graph keeps its own constant nodes;
//   * it never merges effectful operations (update_state, print, depend,
//     InPlace primitives such as assign): two prints of the same value are
//     two outputs, and the effect chain must keep both; nor random
//     primitives (random_uniform, random_normal, dropout), whose results are
//     different draws even for equal inputs and attributes;
//   * it merges calls of a graph constant only when the graph is pure (no
//     effect or random primitive in it, its nested graphs or the graphs it
//     calls, and no call of a computed function), and never merges calls of
//     a computed callee (a closure value: its body is unknown here);
//   * it does not use algebra (e.g. commutativity): only identical inputs
//     count.
#pragma once

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// CSE over `g` and the graphs nested in it. Returns true when anything merged.
bool run_cse(ir::IrModule& m, ir::FuncGraph& g);

}  // namespace msl::jit
