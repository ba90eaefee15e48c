// The specializer's internals, shared by its three files:
//   specialize.cpp        instances, calls, recursion (the fixpoint)
//   specialize_ops.cpp    inference of kernel primitives and IR operators
//   specialize_build.cpp  rebuilding the reachable instances as new graphs
// See specialize.h for the algorithm.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "jit/specialize.h"

namespace msl::jit {

// One instance: a graph under a closure context and an argument signature.
struct SpecContext {
  ir::FuncGraph* graph = nullptr;
  SpecContext* parent = nullptr;  // the instance of graph->parent(); null at top level
  std::vector<AbsValue> args;
  std::vector<SpecContext*> children;  // instances whose parent is this one
  int serial = 0;                      // creation order

  // Results of the latest evaluation.
  std::unordered_map<const ir::Node*, AbsValue> values;
  // Per call node: the instances it called (several after an unknown switch).
  std::unordered_map<const ir::Node*, std::vector<SpecContext*>> calls;
  // Per graph constant of this graph: the instances its value was called as
  // (anywhere: passed to another function, bound by partial).
  std::unordered_map<const ir::Node*, std::vector<SpecContext*>> value_calls;
  AbsValue output;  // the result so far: AbsBottom until first evaluated
  // It (or something it calls) prints, updates the state, writes in place
  // or calls the host: a call of it is kept even when its value is known.
  bool effects = false;

  // Evaluation bookkeeping (Tarjan-style): `depth` is the position on the
  // evaluation stack (-1 when not on it); `low` the smallest depth of an
  // in-progress instance whose partial results this evaluation read. An
  // instance is final when it read none but its own: later calls reuse it.
  int depth = -1;
  int low = 0;
  bool final = false;
  bool read_while_running = false;  // its provisional result was read

  // The clone (specialize_build.cpp).
  ir::FuncGraph* clone = nullptr;
  std::unordered_map<const ir::Node*, ir::Node*> clone_map;
};

class Specializer {
 public:
  Specializer(ir::IrModule& m, const SpecializeOptions& opts) : m_(m), opts_(opts) {}

  // The instance of `g` for `args` under `parent` (memoized; a recursive
  // call's signature is joined with the one in progress, see specialize.h).
  SpecContext* instance(ir::FuncGraph* g, SpecContext* parent, std::vector<AbsValue> args, const ir::Node* site);
  // The instance's result: cached when final, provisional when it is being
  // evaluated (a recursive call), else evaluated now.
  AbsValue run(SpecContext* inst);
  // The abstract value of `n` seen from `inst` (free variables resolve in
  // the enclosing instances).
  AbsValue value_of(SpecContext* inst, const ir::Node* n);
  // A constant's abstract value; graph constants take their context from
  // `inst`'s chain.
  AbsValue constant_value(SpecContext* inst, const ir::Node* n);
  // The instance of `parent_graph` in `inst`'s chain (inst itself included).
  SpecContext* enclosing(SpecContext* inst, const ir::FuncGraph* parent_graph, const ir::Node* site);

  AbsValue call(SpecContext* inst, const ir::Node* site, const AbsValue& fn, const std::vector<AbsValue>& args);

  // specialize_ops.cpp
  AbsValue infer_prim(const ir::Node* site, const ir::PrimRef& p, const std::vector<AbsValue>& args);
  AbsValue infer_op(const ir::Node* site, ir::IrOp op, const std::vector<AbsValue>& args);

  [[noreturn]] void fail(const ir::Node* site, const std::string& message) const;
  // The first graph found calling itself on every path ("" if none).
  const std::string& divergent() const { return divergent_; }

  ir::IrModule& module() { return m_; }
  const std::vector<ir::Node*>& order(const ir::FuncGraph* g);

 private:
  AbsValue eval_apply(SpecContext* inst, const ir::Node* n);
  AbsValue call_callee(SpecContext* inst, const ir::Node* site, const AbsCallee& c, std::vector<AbsValue> args);
  AbsValue evaluate(SpecContext* inst);
  [[noreturn]] void fail_branches(const ir::Node* site, const std::vector<AbsCallee>& callees, size_t left,
                                  size_t right, const JoinFailure& why) const;

  ir::IrModule& m_;
  const SpecializeOptions& opts_;
  std::deque<std::unique_ptr<SpecContext>> instances_;
  std::unordered_map<std::string, SpecContext*> memo_;
  std::vector<SpecContext*> stack_;
  std::unordered_map<const ir::FuncGraph*, std::vector<ir::Node*>> orders_;
  std::string divergent_;
};

// "file:line" of a node, or "" when it has no location.
std::string line_of(const ir::Node* n);

// specialize_build.cpp: clones the instances reachable from `root` and
// fills `out` (graph and types).
void build_specialized(Specializer& s, SpecContext* root, Specialized& out);

}  // namespace msl::jit
