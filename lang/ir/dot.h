// Graphviz rendering of a graph nest (`set_context(save_graphs=True)` writes
// one next to each .ir file): one cluster per FuncGraph, one box per Apply
// node labelled like the printer's line, parameters as ellipses, constants
// inline in their users' labels, edges from inputs to users (dashed when
// the input belongs to an enclosing graph: a free variable), and a dotted
// edge from a graph-constant use to the graph's cluster.
#pragma once

#include <string>

#include "lang/ir/func_graph.h"

namespace msl::ir {

std::string to_dot(const FuncGraph& g);

}  // namespace msl::ir
