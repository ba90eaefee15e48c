// Liveness: where each value of a graph is used for the last time, so an
// executor can drop it there and its buffer can be reused (by the caching
// allocator, or in place by the op that consumes it last).
//
// The order an executor runs a graph in is chosen here too: topo_order(g)
// (inputs before users, in first-use order), except that a primitive that
// writes into its operand (assign, apply_momentum, apply_adam: PrimKind
// InPlace) waits while anything else is ready. A training step compiled as
// one graph reads each weight in the backward pass and updates it in the
// optimizer, linked by no data dependency; running every ready read
// first is program order (gradients, then the update), whatever order the
// optimizer lists its parameters in. A read meant to see a write depends on
// it (depend / the write's result), so it still runs after it.
//
// A value owned by g (a parameter or an Apply) dies
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
  std::vector<Node*> order;  // the execution order (see above)
  // release[k]: the values whose last use is order[k]; drop them once
  // order[k] has its arguments (an operand that dies there may then be
  // overwritten by it).
  std::vector<std::vector<const Node*>> release;
};

Liveness liveness(const FuncGraph& g);

}  // namespace msl::ir
