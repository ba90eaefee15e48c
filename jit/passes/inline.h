// Inlining: calls of graph constants are replaced by a copy of the callee's
// body.
//
// What it does: an Apply `@c(b...)` whose callee is a graph constant, or
// `p(b...)` where p is a node partial(@c, a...) (the closure AD builds for a
// backpropagator), becomes the body of c with its parameters bound to
// (a..., b...). The algorithm, per call site in graph h:
//   1. bind c's parameters to the call's arguments;
//   2. create a copy of each graph nested in c, parents first; the copies of
//      c's direct children get h as their parent (they now close over the
//      inlined nodes, which live in h);
//   3. copy c's body into h and each nested body into its copy, in
//      topological order, mapping every input: a parameter to its argument,
//      a copied node to its copy, a reference to a nested graph to the
//      copied graph, and a free variable of c (a node of an enclosing
//      graph) to itself, since h is nested in that graph too;
//   4. replace the call by the copy of c's output.
// Nested graphs and free variables are thus handled like clone_graph()
// does (lang/ir/func_graph.h), with parameters substituted instead of
// copied. Effects are data (the state token is an argument and a result),
// so an inlined print/update_state chain keeps its order.
//
// What it does not inline:
//   * recursive graphs: a graph that can reach itself through the graph
//     constants of its body (directly, through nested graphs, or through
//     other graphs) — inlining would never end;
//   * calls with the wrong number of arguments (left to fail at run time
//     with the call's location), graphs of another module, graphs without
//     an output, and a graph whose free variables (or the parents of the
//     closures it names) are not visible from h;
//   * calls of computed closures (parameters, switch results): simplify
//     and tuple_elim expose the graph constant first.
// Every non-recursive call is inlined, however large: the clean-up of AD's
// output relies on seeing through all of them, and graph-mode programs are
// small. The callee graphs stay in the module (IrModule cannot remove
// graphs); only the references go away.
#pragma once

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// Inlining over `g` and its nested graphs (one level per run: calls inside
// the inlined bodies are inlined by the next run). Returns true when
// anything was inlined.
bool run_inline(ir::IrModule& m, ir::FuncGraph& g);

// Whether `c` can reach itself through the graph constants of its body,
// its nested graphs and the graphs those refer to.
bool is_recursive_graph(const ir::FuncGraph& c);

}  // namespace msl::jit
