// rewrite_nodes() and the shared pattern queries (see node_rewriter.h).
#include "jit/passes/node_rewriter.h"

#include <utility>
#include <vector>

#include "jit/passes/rewrite.h"

namespace msl::jit {

using namespace msl::ir;

Node* Rewriter::resolve(Node* n) const {
  // Chains arise when a replacement is itself replaced later (a node built
  // by a rule of one graph and rewritten again in a nested graph's walk).
  for (auto it = replaced_.find(n); it != replaced_.end(); it = replaced_.find(n)) n = it->second;
  return n;
}

const Node* Rewriter::origin(const Node* n) const {
  auto it = origin_.find(n);
  return it == origin_.end() ? n : it->second;
}

Node* Rewriter::settle(FuncGraph& h, Node* n) {
  if (depth_ >= kMaxBuildDepth) return n;  // the next run goes on from here
  ++depth_;
  for (int k = 0; k < kMaxRuleChain && n->is_apply() && n->graph() == &h; ++k) {
    Node* r = rule_(h, n, *this);
    if (!r || r == n) break;
    n = r;
    fired_ = true;
  }
  --depth_;
  return n;
}

Node* Rewriter::build(FuncGraph& h, std::vector<Node*> inputs, const Node* like) {
  return settle(h, m_.new_apply(&h, std::move(inputs), like->name(), like->loc()));
}
Node* Rewriter::build(FuncGraph& h, IrOp op, std::vector<Node*> args, const Node* like) {
  args.insert(args.begin(), h.constant(op));
  return build(h, std::move(args), like);
}
Node* Rewriter::build(FuncGraph& h, kernels::Prim p, std::vector<Node*> args, const Node* like) {
  args.insert(args.begin(), h.constant(PrimRef{p, {}}));
  return build(h, std::move(args), like);
}

namespace {

// `g` and the graphs nested in it, depth first: each graph before its
// children, and a graph's whole nest before the next sibling's. Inlining
// copies a callee with its closures; walked this way, the walk has either
// rewritten all of them or none (a callee rewritten but its closure not,
// as a breadth-first walk allows, would be copied with the closure's
// references to the callee's replaced nodes, and compute their values a
// second time).
std::vector<FuncGraph*> nest_depth_first(FuncGraph& g) {
  std::unordered_map<const FuncGraph*, std::vector<FuncGraph*>> children;
  for (FuncGraph* h : g.module().graphs())
    if (h->parent() && h != &g) children[h->parent()].push_back(h);
  std::vector<FuncGraph*> out;
  std::vector<FuncGraph*> stack{&g};
  while (!stack.empty()) {
    FuncGraph* h = stack.back();
    stack.pop_back();
    out.push_back(h);
    auto it = children.find(h);
    if (it != children.end()) stack.insert(stack.end(), it->second.rbegin(), it->second.rend());
  }
  return out;
}

}  // namespace

bool rewrite_nodes(IrModule& m, FuncGraph& g, const NodeRule& rule) {
  Rewriter rw(m, rule);
  // The graph list is fixed before the walk: graphs a rule creates (inlined
  // closures) are built from final nodes already.
  for (FuncGraph* h : nest_depth_first(g)) {
    for (Node* n : topo_order(*h)) {
      if (!n->is_apply()) continue;
      std::vector<Node*> ins;
      ins.reserve(n->inputs().size());
      bool diff = false;
      for (Node* in : n->inputs()) {
        ins.push_back(rw.resolve(in));
        diff |= ins.back() != in;
      }
      Node* copy = n;
      if (diff) {
        copy = m.new_apply(h, std::move(ins), n->name(), n->loc());
        rw.origin_[copy] = rw.origin(n);
      }
      Node* cur = rw.settle(*h, copy);
      if (cur != n) rw.replaced_[n] = cur;
    }
    if (Node* out = h->output()) h->set_output(rw.resolve(out));
  }
  // A rule may have copied a reference to a node the walk had not reached
  // yet (an inlined closure naming a value of its enclosing graph that only
  // closures use): re-point every such reference to the node's replacement,
  // so the old node (and what it computes) does not stay alive twice.
  if (rw.fired_) rebuild_with(m, g, rw.replaced_);
  return rw.fired_;
}

int64_t tuple_index(int64_t i, size_t size) {
  auto n = static_cast<int64_t>(size);
  if (i < 0) i += n;
  return i >= 0 && i < n ? i : -1;
}

std::optional<int64_t> const_int(const Node* n) {
  if (!n->is_constant()) return std::nullopt;
  if (auto i = std::get_if<int64_t>(&n->value())) return *i;
  return std::nullopt;
}

const PrimRef* called_prim(const Node* n) { return n->is_apply() ? n->callee()->as_prim() : nullptr; }

bool is_known_tensor(const Node* n) {
  if (n->is_constant()) return std::holds_alternative<kernels::Tensor>(n->value());
  const PrimRef* p = called_prim(n);
  return p && kernels::prim_def(p->prim).outputs == 1;
}

bool EffectQuery::operator()(const Node* root) {
  if (auto it = memo_.find(root); it != memo_.end()) return it->second;
  // Iterative post-order within the root's graph: effect chains can be
  // thousands of nodes long.
  std::vector<std::pair<const Node*, size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    bool kept = kept_ && kept_(n);
    if (!kept && i < n->inputs().size()) {
      const Node* in = n->inputs()[i++];
      if (in->is_apply() && in->graph() == n->graph() && !memo_.count(in)) stack.push_back({in, 0});
      continue;
    }
    bool e = false;
    if (!kept) {
      e = is_effect(n);
      for (const Node* in : n->inputs())
        if (auto it = memo_.find(in); it != memo_.end()) e |= it->second;
    }
    memo_[n] = e;
    stack.pop_back();
  }
  return memo_.at(root);
}

}  // namespace msl::jit
