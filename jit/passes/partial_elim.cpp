// Partial-application elimination (see partial_elim.h).
#include "jit/passes/partial_elim.h"

#include <cstddef>
#include <vector>

#include "jit/passes/node_rewriter.h"

namespace msl::jit {

using namespace msl::ir;

namespace {

bool is_partial(const Node* n) { return n->is_call_of(IrOp::partial) && n->num_args() >= 1; }

// A constant that surely is callable: partial(c) may then stand for c (for
// anything else the run-time "not callable" error of partial is kept).
bool is_callable_constant(const Node* n) {
  return n->is_constant() && (n->as_graph() || n->as_prim() || n->as_ir_op() || n->as_host());
}

// The function and bound arguments of `part`, then inputs `from`.. of `n`.
std::vector<Node*> splice(const Node* part, const Node* n, size_t from) {
  std::vector<Node*> ins(part->inputs().begin() + 1, part->inputs().end());
  ins.insert(ins.end(), n->inputs().begin() + static_cast<std::ptrdiff_t>(from), n->inputs().end());
  return ins;
}

}  // namespace

bool run_partial_elim(IrModule& m, FuncGraph& g) {
  return rewrite_nodes(m, g, [&](FuncGraph& h, Node* n, Rewriter& rw) -> Node* {
    if (is_partial(n)) {
      Node* inner = n->arg(0);
      if (n->num_args() == 1 && (is_callable_constant(inner) || is_partial(inner))) return inner;  // nothing bound
      if (!is_partial(inner)) return nullptr;
      std::vector<Node*> ins = splice(inner, n, 2);
      ins.insert(ins.begin(), n->callee());
      return rw.build(h, std::move(ins), n);
    }
    if (!is_partial(n->callee())) return nullptr;
    return rw.build(h, splice(n->callee(), n, 1), n);
  });
}

}  // namespace msl::jit
