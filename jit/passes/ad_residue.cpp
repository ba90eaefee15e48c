// AD residue queries (see ad_residue.h).
#include "jit/passes/ad_residue.h"

namespace msl::jit {

using namespace msl::ir;

namespace {

bool is_residue_op(IrOp op) {
  switch (op) {
    case IrOp::J:
    case IrOp::env_new:
    case IrOp::env_getitem:
    case IrOp::env_setitem:
    case IrOp::env_add:
    case IrOp::partial: return true;
    default: return false;
  }
}

// A constant that is residue wherever it appears as a value (not a callee).
bool is_residue_value(const Node* n) {
  if (!n->is_constant()) return false;
  if (n->as_graph()) return true;
  const IrOp* op = n->as_ir_op();
  return op && is_residue_op(*op);
}

}  // namespace

std::vector<const Node*> ad_residue(const FuncGraph& g) {
  std::vector<const Node*> out;
  for (FuncGraph* h : nested_graphs(g)) {
    for (Node* n : topo_order(*h)) {
      if (!n->is_apply()) continue;
      const IrOp* op = n->callee()->as_ir_op();
      if (op && is_residue_op(*op)) out.push_back(n);
      // A graph callee is a closure call; an IrOp callee was judged above.
      if (n->callee()->as_graph()) out.push_back(n->callee());
      for (size_t i = 0; i < n->num_args(); ++i)
        if (is_residue_value(n->arg(i))) out.push_back(n->arg(i));
    }
    if (h->output() && is_residue_value(h->output())) out.push_back(h->output());
  }
  return out;
}

size_t count_primitive_applies(const FuncGraph& g) {
  size_t count = 0;
  for (FuncGraph* h : nested_graphs(g))
    for (Node* n : topo_order(*h))
      if (n->is_apply() && n->callee()->as_prim()) ++count;
  return count;
}

}  // namespace msl::jit
