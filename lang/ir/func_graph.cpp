// FuncGraph builders and the on-demand graph analyses: topological order,
// nesting, free variables, users and deep copy.
#include "lang/ir/func_graph.h"

#include <unordered_set>

#include "lang/ir/ir_module.h"

namespace msl::ir {

bool FuncGraph::is_nested_in(const FuncGraph* anc) const {
  // The parent chain is bounded by the number of graphs so a (malformed)
  // parent cycle cannot loop forever; the verifier reports such cycles.
  size_t limit = module_->graphs().size() + 1;
  for (const FuncGraph* g = this; g && limit--; g = g->parent_)
    if (g == anc) return true;
  return false;
}

Node* FuncGraph::add_param(std::string name, Loc loc) { return module_->new_param(this, std::move(name), loc); }
Node* FuncGraph::apply(std::vector<Node*> inputs, std::string name, Loc loc) {
  return module_->new_apply(this, std::move(inputs), std::move(name), loc);
}
Node* FuncGraph::apply(kernels::Prim p, std::vector<Node*> args, std::string name, Loc loc, kernels::Attrs attrs) {
  args.insert(args.begin(), constant(PrimRef{p, std::move(attrs)}));
  return apply(std::move(args), std::move(name), loc);
}
Node* FuncGraph::apply(IrOp op, std::vector<Node*> args, std::string name, Loc loc) {
  args.insert(args.begin(), constant(op));
  return apply(std::move(args), std::move(name), loc);
}
Node* FuncGraph::constant(ConstValue v, Loc loc) { return module_->new_constant(std::move(v), this, loc); }

namespace {
// Iterative post-order DFS from `root` over nodes whose owner satisfies
// `owned`: graphs of thousands of nodes (unrolled training steps) must not
// overflow the C++ stack.
template <class Owned, class Emit>
void post_order(Node* root, std::unordered_set<const Node*>& seen, Owned owned, Emit emit) {
  std::vector<std::pair<Node*, size_t>> stack;
  auto visit = [&](Node* n) {
    if (owned(n) && seen.insert(n).second) stack.push_back({n, 0});
  };
  visit(root);
  while (!stack.empty()) {
    auto& [n, i] = stack.back();
    if (i < n->inputs().size()) {
      Node* in = n->inputs()[i++];
      visit(in);
    } else {
      Node* done = n;
      stack.pop_back();
      emit(done);
    }
  }
}
}  // namespace

std::vector<Node*> topo_order(const FuncGraph& g) {
  std::vector<Node*> order(g.params().begin(), g.params().end());
  std::unordered_set<const Node*> seen(order.begin(), order.end());
  auto mine = [&](Node* n) { return n->graph() == &g; };
  auto emit = [&](Node* n) { order.push_back(n); };
  if (g.output()) post_order(g.output(), seen, mine, emit);
  // Nodes of g that only nested graphs use (a value computed in f and
  // captured by a closure, but not part of f's own result) are still g's
  // body: find them by walking the nested graphs' bodies.
  std::vector<FuncGraph*> nest = nested_graphs(g);
  if (nest.size() > 1) {
    std::unordered_set<const FuncGraph*> inner(nest.begin() + 1, nest.end());
    std::unordered_set<const Node*> seen_inner;
    auto in_inner = [&](Node* n) { return inner.count(n->graph()) > 0; };
    auto scan = [&](Node* n) {
      for (Node* in : n->inputs())
        if (in->graph() == &g) post_order(in, seen, mine, emit);
    };
    for (size_t i = 1; i < nest.size(); ++i) {
      Node* out = nest[i]->output();
      if (!out) continue;
      if (out->graph() == &g) post_order(out, seen, mine, emit);
      post_order(out, seen_inner, in_inner, scan);
    }
  }
  return order;
}

std::vector<FuncGraph*> children(const FuncGraph& g) {
  std::vector<FuncGraph*> out;
  for (FuncGraph* h : g.module().graphs())
    if (h->parent() == &g) out.push_back(h);
  return out;
}

std::vector<FuncGraph*> nested_graphs(const FuncGraph& g) {
  std::vector<FuncGraph*> out{const_cast<FuncGraph*>(&g)};
  for (size_t i = 0; i < out.size(); ++i)  // breadth-first is also parents-first
    for (FuncGraph* c : children(*out[i]))
      if (c != &g) out.push_back(c);
  return out;
}

namespace {

// free_variables with a guard: graphs on `active` are being computed
// further up (mutually referring closures); their contribution is already
// being collected there.
std::vector<Node*> free_variables_of(const FuncGraph& g, std::unordered_set<const FuncGraph*>& active) {
  std::vector<Node*> out;
  std::unordered_set<const Node*> seen;
  auto use = [&](Node* in) {
    FuncGraph* owner = in->graph();
    if (in->is_constant() || !owner || owner == &g) return;
    if (g.is_nested_in(owner) && seen.insert(in).second) out.push_back(in);
  };
  active.insert(&g);
  std::vector<FuncGraph*> nest = nested_graphs(g);
  for (FuncGraph* h : nest) {
    for (Node* n : topo_order(*h))
      for (Node* in : n->inputs()) {
        use(in);
        // Making a closure of a graph outside g's nest (a loop body naming
        // its loop graph, a closure calling a sibling) needs that graph's
        // captured values: those from outside g are g's too.
        FuncGraph* ref = in->as_graph();
        if (ref && ref->parent() && !ref->is_nested_in(&g) && !active.count(ref))
          for (Node* fv : free_variables_of(*ref, active)) use(fv);
      }
    // A graph whose output is itself a free variable (`lambda: x`).
    if (Node* o = h->output()) use(o);
  }
  active.erase(&g);
  return out;
}

}  // namespace

std::vector<Node*> free_variables(const FuncGraph& g) {
  std::unordered_set<const FuncGraph*> active;
  return free_variables_of(g, active);
}

UsersMap compute_users(const FuncGraph& g) {
  UsersMap users;
  for (FuncGraph* h : nested_graphs(g))
    for (Node* n : topo_order(*h))
      for (size_t i = 0; i < n->inputs().size(); ++i) users[n->inputs()[i]].push_back({n, static_cast<int>(i)});
  return users;
}

FuncGraph* clone_graph(const FuncGraph& g, std::string name) {
  IrModule& m = g.module();
  std::vector<FuncGraph*> olds = nested_graphs(g);
  std::unordered_map<const FuncGraph*, FuncGraph*> gmap;
  std::unordered_map<const Node*, Node*> nmap;
  // 1. Graphs and parameters first: bodies may refer to any cloned graph.
  for (FuncGraph* old : olds) {
    FuncGraph* parent = old == &g ? g.parent() : gmap.at(old->parent());
    FuncGraph* ng = m.new_graph(old == &g && !name.empty() ? name : old->name(), parent, old->loc());
    ng->flags() = old->flags();
    gmap[old] = ng;
    for (Node* p : old->params()) nmap[p] = m.new_param(ng, p->name(), p->loc());
  }
  auto map_node = [&](Node* n, FuncGraph* ng) -> Node* {
    if (auto it = nmap.find(n); it != nmap.end()) return it->second;
    if (n->is_constant()) {
      FuncGraph* ref = n->as_graph();
      auto git = ref ? gmap.find(ref) : gmap.end();
      bool owned = n->graph() && gmap.count(n->graph());
      if (git == gmap.end() && !owned) return n;  // a shared constant stays shared
      ConstValue v = git != gmap.end() ? ConstValue(git->second) : n->value();
      Node* c = m.new_constant(std::move(v), owned ? ng : n->graph(), n->loc());
      nmap[n] = c;
      return c;
    }
    return n;  // a free variable from outside the cloned nest: shared
  };
  // 2. Bodies, parents before children, so a child's free variables that
  // live in a cloned ancestor are already mapped.
  for (FuncGraph* old : olds) {
    FuncGraph* ng = gmap[old];
    for (Node* n : topo_order(*old)) {
      if (!n->is_apply()) continue;
      std::vector<Node*> ins;
      for (Node* in : n->inputs()) ins.push_back(map_node(in, ng));
      nmap[n] = m.new_apply(ng, std::move(ins), n->name(), n->loc());
    }
    if (old->output()) ng->set_output(map_node(old->output(), ng));
  }
  return gmap[&g];
}

}  // namespace msl::ir
