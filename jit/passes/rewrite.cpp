// rebuild_with(): re-create the nodes of a graph nest under a substitution.
#include "jit/passes/rewrite.h"

#include <unordered_map>
#include <utility>
#include <vector>

namespace msl::jit {

using namespace msl::ir;

bool is_effect(const Node* n) {
  if (!n->is_apply()) return false;
  if (n->is_call_of(IrOp::update_state) || n->is_call_of(IrOp::print) || n->is_call_of(IrOp::depend)) return true;
  const PrimRef* p = n->callee()->as_prim();
  return p && kernels::prim_def(p->prim).kind == kernels::PrimKind::InPlace;
}

std::optional<double> uniform_constant(const Node* n, bool floating_only) {
  if (const PrimRef* p = n->is_apply() ? n->callee()->as_prim() : nullptr;
      p && p->prim == kernels::Prim::broadcast_to && n->num_args() == 1)
    n = n->arg(0);
  if (!n->is_constant()) return std::nullopt;
  const ConstValue& c = n->value();
  if (auto d = std::get_if<double>(&c)) return *d;
  if (auto i = std::get_if<int64_t>(&c)) return static_cast<double>(*i);
  auto t = std::get_if<kernels::Tensor>(&c);
  if (!t || !t->defined() || t->numel() < 1 || (floating_only && !kernels::is_floating(t->dtype())))
    return std::nullopt;
  double first = t->item_at(0);
  for (int64_t i = 1; i < t->numel(); ++i)
    if (double x = t->item_at(i); !(x == first)) return std::nullopt;
  return first;
}

namespace {

// One rebuilding walk; `all` collects every replacement made so far. A
// node's final form is made after its inputs' (an explicit post-order, so
// chains thousands of nodes long cannot overflow the stack), and that
// includes replacement nodes the walk has not reached yet: a fused node
// built from the outputs of clusters replaced before it gets its inputs'
// final forms at once, instead of one walk per level of such nesting (an
// effect chain through many levels would otherwise be re-created walk
// after walk).
bool rebuild_once(IrModule& m, FuncGraph& g, Subst& all, const RebuiltFn& rebuilt) {
  auto resolve = [&](Node* n) {
    for (auto it = all.find(n); it != all.end(); it = all.find(n)) n = it->second;
    return n;
  };
  std::unordered_map<const Node*, Node*> fixed;  // node -> its final form in this walk
  bool changed = false;
  auto fix = [&](Node* root) -> Node* {
    root = resolve(root);
    if (!root->is_apply()) return root;
    if (auto it = fixed.find(root); it != fixed.end()) return it->second;
    std::vector<std::pair<Node*, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      Node* n = stack.back().first;
      size_t i = stack.back().second;
      if (i < n->inputs().size()) {
        ++stack.back().second;
        Node* in = resolve(n->inputs()[i]);
        if (in->is_apply() && !fixed.count(in)) stack.push_back({in, 0});
        continue;
      }
      stack.pop_back();
      if (fixed.count(n)) continue;
      std::vector<Node*> ins;
      ins.reserve(n->inputs().size());
      bool diff = false;
      for (Node* in : n->inputs()) {
        Node* r = resolve(in);
        if (r->is_apply()) r = fixed.at(r);
        ins.push_back(r);
        diff |= r != in;
      }
      Node* out = n;
      if (diff) {
        out = m.new_apply(n->graph(), std::move(ins), n->name(), n->loc());
        if (rebuilt) rebuilt(n, out);
        all[n] = out;
        fixed[out] = out;
        changed = true;
      }
      fixed[n] = out;
    }
    return fixed.at(root);
  };
  for (FuncGraph* h : nested_graphs(g)) {
    for (Node* n : topo_order(*h))
      if (n->is_apply()) fix(n);
    if (Node* out = h->output()) {
      Node* r = fix(out);
      if (r != out) {
        h->set_output(r);
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace

LocalUses local_uses(const FuncGraph& g, const std::vector<Node*>& order) {
  LocalUses u;
  for (Node* n : order)
    if (n->is_apply())
      for (Node* in : n->inputs()) u.users[in].push_back(n);
  u.escapes.insert(g.output());
  for (FuncGraph* h : nested_graphs(g)) {
    if (h == &g) continue;
    for (Node* n : topo_order(*h))
      for (Node* in : n->inputs())
        if (in->graph() == &g) u.escapes.insert(in);
  }
  return u;
}

bool rebuild_with(IrModule& m, FuncGraph& g, const Subst& subst, const RebuiltFn& rebuilt) {
  // Replacement nodes may themselves name replaced nodes (a rule built them
  // from the old inputs); they only become reachable after a walk, so walk
  // until nothing reachable names a replaced node.
  Subst all = subst;
  bool changed = false;
  for (int round = 0; round < 64 && rebuild_once(m, g, all, rebuilt); ++round) changed = true;
  return changed;
}

}  // namespace msl::jit
