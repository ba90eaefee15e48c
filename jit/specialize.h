// Specialization by abstract interpretation: MindSpore's "static analysis +
// specialize" step (Myia's abstract inference), the first step of graph
// mode. Given a graph and the abstract values of its arguments, it infers
// an abstract value (abstract.h) for every node and produces specialized
// copies of the graphs:
//
//   * a graph is cloned once per (closure context, argument signature) it is
//     called with, so a function called with two shapes becomes two graphs;
//   * a switch whose condition is a constant is replaced by the taken
//     branch, and the other branch is never analysed;
//   * nodes whose abstract value is a constant scalar become constants;
//   * calls whose callee is one known graph call that graph's clone
//     directly;
//   * every node of the clones has its abstract value in Specialized::types.
// The primal graphs are left untouched.
//
// The algorithm (specialize.cpp):
//   1. An *instance* is one graph under one closure context (the instance
//      of its parent graph, where its free variables resolve) and one
//      argument signature. Instances are memoized on that triple.
//   2. An instance is evaluated by walking its graph's nodes in topological
//      order. A node of an enclosing graph (a free variable) reads the
//      value from the enclosing instance. A graph constant evaluates to a
//      function with the enclosing instance as its context.
//   3. Kernel primitives are inferred with kernels::infer; Python scalars
//      take the first tensor input's dtype. Arithmetic and comparisons of
//      Python numbers only (neg, + - * / // %, ==, <, ...) stay Python
//      numbers, computed when constant — the executor's rules
//      (jit/exec/exec_ops.cpp), so a loop counter `i = i + 1` stays an
//      Int64 and loops converge; other primitives give tensors.
//   4. Recursion (loops are tail-recursive graphs) is solved by fixpoint
//      iteration: a call of an instance that is being evaluated returns its
//      result so far, AbsBottom ("pending") at first; the join at a switch
//      drops pending values, so the exit branch gives the first
//      approximation; the instance is then re-evaluated until its result is
//      stable. A recursive call whose signature differs from the instance in
//      progress is joined with it (constants broaden to their kind, so an
//      int counter 0, 1, 2... becomes Int64 instead of unrolling); a tensor
//      whose dtype or shape changes from one iteration to the next is an
//      error (loop-carried values keep their type and shape).
//   5. The instances reachable from the root are then rebuilt as new graphs
//      (specialize_build.cpp), parents before nested graphs, since a nested
//      clone's free variables are nodes of its parent's clone.
//
// Each graph constant is its own function value (MindSpore's tracking id):
// a constant whose value was called as exactly one instance (a branch, a
// function passed on or bound by partial) refers to that clone. Nodes with
// effects (print, update_state, in-place primitives, host calls) are never
// folded away, even when their value is a constant.
//
// Not handled: a graph constant whose value is never called, or is called
// with several signatures, stays a reference to the primal graph (right
// for top-level graphs; a nested one then reads its primal parent's
// nodes); the backpropagator of J(f) is AbsAny.
#pragma once

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/abstract.h"
#include "lang/ir/ir_module.h"
#include "lang/ir/printer.h"
#include "lang/ir/python_scalar.h"

namespace msl::jit {

// The abstract result of calling a host object with abstract arguments;
// nullopt when the host cannot tell (the result is then AbsAny).
using HostCall = std::function<std::optional<AbsValue>(const ir::HostRef&, const std::vector<AbsValue>&)>;

struct SpecializeOptions {
  HostCall host_call;  // may be null
  // Bounds the distinct signatures one graph may be in progress with at
  // once (nested recursion that never repeats a signature).
  int max_recursion_signatures = 16;
  // Bounds the re-evaluations of one recursive instance.
  int max_fixpoint_iterations = 32;
};

// Node id -> abstract value.
using AbsTable = std::unordered_map<uint32_t, AbsValue>;

struct Specialized {
  ir::FuncGraph* graph = nullptr;  // the clone of the root graph
  AbsTable types;                  // every node of the specialized graphs (parameters,
                                   // applies and their constants)
  AbsValue output;                 // the root graph's result

  // The printed abstract value of `n`, or "" when the table has none.
  std::string type_of(const ir::Node* n) const;
  // `n`'s tensor type, or null when the table has none or `n` is no tensor.
  const AbsTensor* tensor_type(const ir::Node* n) const;
  // Printer options whose Apply lines end in ` : (arg types) -> type`
  // (they refer to this object, which must outlive them).
  ir::PrintOptions print_options() const;
  // For rebuild_with() (jit/passes/rewrite.h): a node re-created with new
  // inputs gets the type of the node it replaces (refers to this object).
  std::function<void(const ir::Node* old, const ir::Node* rebuilt)> keep_types();
};

// what() is "file:line: message" (just the message without a location).
class SpecializeError : public std::runtime_error {
 public:
  explicit SpecializeError(const std::string& what) : std::runtime_error(what), message(what) {}
  // `what` is "file:line: message" where the failing node has a location.
  SpecializeError(const std::string& what, const ir::Loc& where, std::string message)
      : std::runtime_error(what), loc(where), message(std::move(message)) {}
  ir::Loc loc;          // the failing node's, when it has one
  std::string message;  // without the location
};

// `args` has one abstract value per parameter of `g`.
Specialized specialize(ir::IrModule& m, ir::FuncGraph& g, const std::vector<AbsValue>& args,
                       const SpecializeOptions& opts = {});

// The abstract value of a constant: a scalar with its value, a tensor's
// dtype and shape, a function for graphs, primitives, operators and host
// objects (top-level graph context).
AbsValue abstract_of_constant(const ir::ConstValue& v);

// Python arithmetic on numbers: ir::is_scalar_arithmetic (lang/ir/python_scalar.h).
using ir::is_scalar_arithmetic;

}  // namespace msl::jit
