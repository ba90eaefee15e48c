// Liveness: where each value of a graph is used for the last time, so an
// executor can drop it there and its buffer can be reused (by the caching
// allocator, or in place by the op that consumes it last).
//
// The analysis follows the order an executor runs a graph in: topo_order(g)
// (inputs before users). A value owned by g (a parameter or an Apply) dies
// after the last node of that order that uses it (the output node counts:
// an executor that runs the output as a tail call simply ignores its
// releases). Some values must live to the end of the call and are never
// released:
//   * the free variables of graphs nested in g (a closure captures them when
//     it is made, possibly after their last direct use) and every value of g
//     they are computed from (an executor computes a node that only a closure
//     uses on demand, from its inputs);
//   * whatever no node of the order uses (a parameter nothing reads dies
//     with the frame).
#pragma once

#include <vector>

#include "lang/ir/func_graph.h"

namespace msl::ir {

struct Liveness {
  std::vector<Node*> order;  // topo_order(g)
  // release[k]: the values whose last use is order[k]; drop them once
  // order[k] has its arguments (an operand that dies there may then be
  // overwritten by it).
  std::vector<std::vector<const Node*>> release;
};

Liveness liveness(const FuncGraph& g);

}  // namespace msl::ir
