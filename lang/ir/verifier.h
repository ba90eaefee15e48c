// The IR verifier: checks the structural invariants every pass must keep,
// and reports each violation as one message (run after every pass in debug
// builds; a non-empty list is a compiler bug, not a user error).
//
// Invariants checked, per graph:
//   1. the graph belongs to the module and has an output;
//   2. its parameters are Parameter nodes owned by it, each listed once;
//   3. every input of every Apply in its body is non-null and is a
//      constant, a node of this graph, or a free variable: a node owned by
//      a graph that encloses this one (parent chain);
//   4. the body has no cycle (impossible through the builder, since inputs
//      are fixed at construction, but cheap to confirm);
//   5. an Apply whose callee is a kernel primitive has the registry's
//      number of arguments (InPlace primitives such as `assign` take the
//      state token as one extra last argument, see node.h); an IR operator
//      has its declared arity;
//   6. graph constants refer to graphs of the same module;
//   7. the parent chain is acyclic and stays within the module.
// What it does not check: types, shapes and attribute values (the job of
// specialization), or whether the state token is threaded correctly.
#pragma once

#include <string>
#include <vector>

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::ir {

// Violations in `g` alone (not its nested graphs); empty when valid.
std::vector<std::string> verify_graph(const FuncGraph& g);
// Violations in every graph of the module.
std::vector<std::string> verify_module(const IrModule& m);

}  // namespace msl::ir
