// The J transform's internal state, shared by its files:
//   grad.cpp          the driver: nests, forward (JG) and backward (BG) passes
//   ir_op_grads.cpp   the inline derivatives of the IR operators
//   prim_grads.cpp    J_p of kernel primitives, the partial wrappers and
//                     grad_graph
// The design is described in grad.h.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "lang/ad/grad.h"
#include "lang/ir/func_graph.h"

namespace msl::ad {

// "file:line" of a location ("" when it has none).
std::string loc_str(const ir::Loc& loc);
[[noreturn]] void fail(const std::string& message, const ir::Loc& loc);
// An Apply of operator `op` in `g`, the callee constant included carrying
// `loc` (FuncGraph::apply(IrOp, ...) leaves the callee without one).
inline ir::Node* op_apply(ir::FuncGraph* g, ir::IrOp op, std::vector<ir::Node*> args, const ir::Loc& loc,
                          std::string name = "") {
  args.insert(args.begin(), g->constant(op, loc));
  return g->apply(std::move(args), std::move(name), loc);
}
// The env key of a partial value's function (i = 0) or bound argument i.
inline int64_t partial_key(size_t i) { return -1 - static_cast<int64_t>(i); }

// The transform of one primal graph G: JG, BG, and while BG is built, the
// sensitivity contributions of every node G reads.
struct GraphCtx {
  ir::FuncGraph* g = nullptr;   // primal
  ir::FuncGraph* jg = nullptr;  // J of g
  ir::FuncGraph* bg = nullptr;  // the backpropagator, nested in jg
  // Call nodes of g -> the backpropagator node (pair[1]) in jg.
  std::unordered_map<const ir::Node*, ir::Node*> bprop_of;
  // Backward state: sensitivity contributions (nodes of bg) per primal node
  // (nodes of g and free variables of g), and the free variables that got
  // any, in first-contribution order (the env's order).
  std::unordered_map<const ir::Node*, std::vector<ir::Node*>> contribs;
  std::vector<ir::Node*> fv_order;
};

struct GradTransformer::Impl {
  Impl(ir::IrModule& m, RuleFor rule_for) : m(m), rule_for(std::move(rule_for)) {}

  ir::IrModule& m;
  RuleFor rule_for;
  std::unordered_map<const ir::FuncGraph*, ir::FuncGraph*> jgraphs;  // primal -> J
  std::unordered_set<const ir::FuncGraph*> building;                 // J graphs under construction
  std::vector<const ir::FuncGraph*> added;              // primal graphs cached, in order (undone on failure)
  int depth = 0;                                        // nesting of j_graph calls
  std::unordered_map<const ir::Node*, ir::Node*> jval;  // non-constant primal node -> J-value
  std::unordered_map<const ir::FuncGraph*, std::vector<ir::Node*>> fv_cache;
  std::vector<std::tuple<ir::PrimRef, int, ir::FuncGraph*>> jprims;  // (p, inputs, J_p)
  std::map<std::pair<size_t, size_t>, ir::FuncGraph*> partial_wrappers;
  std::map<std::pair<const ir::FuncGraph*, bool>, ir::FuncGraph*> grad_graphs;

  // grad.cpp
  ir::FuncGraph* j_graph(ir::FuncGraph* g);
  void transform_nest(ir::FuncGraph* root);
  void build_forward(GraphCtx& c);
  void build_backward(GraphCtx& c);
  std::vector<ir::Node*> backward_order(const GraphCtx& c);
  const std::vector<ir::Node*>& fvs(const ir::FuncGraph* g);
  // The J-value of primal node `x` as a node usable in graph `where` (a J
  // graph or its backpropagator); constants are created there. `nargs` >= 0
  // when x is a callee called with that many arguments (it picks J_p of a
  // variadic primitive).
  ir::Node* jvalue(ir::FuncGraph* where, ir::Node* x, const ir::Loc& loc, int nargs = -1);
  // False for constants whose sensitivity is dropped (all but graphs with
  // free variables), so no node is built for it.
  bool wants_sens(const ir::Node* x);
  // Adds a sensitivity contribution to primal node x (see grad.h for the
  // split of closures' envs; contributions to other constants are dropped).
  void add_sens(GraphCtx& c, ir::Node* x, ir::Node* contrib, const ir::Loc& loc);
  // The accumulated sensitivity of x (grad_add of its contributions), or
  // null when it has none.
  ir::Node* sens_sum(GraphCtx& c, const ir::Node* x, const ir::Loc& loc);
  ir::Node* key_of(GraphCtx& c, const ir::Node* m, const ir::Loc& loc);

  // ir_op_grads.cpp
  ir::Node* forward_ir_op(GraphCtx& c, ir::Node* n, ir::IrOp op);
  void backward_ir_op(GraphCtx& c, ir::Node* n, ir::IrOp op, ir::Node* s);

  // prim_grads.cpp
  ir::FuncGraph* j_prim(const ir::PrimRef& p, int num_inputs, const ir::Loc& loc);
  ir::FuncGraph* partial_wrapper(size_t k, size_t m);
  // How many arguments a call of the function `f` takes (for partial), or
  // -1 when it is not known statically.
  int static_arity(const ir::Node* f);
  ir::FuncGraph* grad_graph(ir::FuncGraph* g, bool sens_param);
};

}  // namespace msl::ad
