// Inlining of graph-constant calls (see inline.h).
#include "jit/passes/inline.h"

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "jit/passes/node_rewriter.h"

namespace msl::jit {

using namespace msl::ir;

namespace {

// The graphs referenced by constants anywhere in `c`'s nest.
std::vector<const FuncGraph*> referenced_graphs(const FuncGraph& c) {
  std::vector<const FuncGraph*> out;
  std::unordered_set<const FuncGraph*> seen;
  auto note = [&](const Node* n) {
    if (const FuncGraph* r = n->as_graph(); r && seen.insert(r).second) out.push_back(r);
  };
  for (FuncGraph* h : nested_graphs(c)) {
    for (Node* n : topo_order(*h))
      for (Node* in : n->inputs()) note(in);
    if (h->output()) note(h->output());
  }
  return out;
}

// Copies `c`'s body into `h` with its parameters bound to `args`, and
// returns the copy of c's output (steps 1-4 of inline.h).
// Copied nodes without a location (shared graphs such as a primitive's J
// graph have none) take the call site's, so errors name a source line;
// nodes without a Cell scope (a library helper's) take the call site's.
Node* inline_body(IrModule& m, FuncGraph& h, const FuncGraph& c, const std::vector<Node*>& args, const Rewriter& rw,
                  const Loc& site) {
  std::unordered_map<const FuncGraph*, FuncGraph*> gmap{{&c, &h}};
  std::unordered_map<const Node*, Node*> nmap;
  for (size_t i = 0; i < args.size(); ++i) nmap[c.params()[i]] = args[i];
  std::vector<FuncGraph*> nest = nested_graphs(c);
  for (size_t i = 1; i < nest.size(); ++i) {
    const FuncGraph* old = nest[i];
    FuncGraph* copy = m.new_graph(old->name(), gmap.at(old->parent()), old->loc());
    copy->flags() = old->flags();
    gmap[old] = copy;
    for (Node* p : old->params()) nmap[p] = m.new_param(copy, p->name(), p->loc());
  }
  auto map_node = [&](Node* n) -> Node* {
    if (auto it = nmap.find(n); it != nmap.end()) return it->second;
    if (!n->is_constant()) return rw.resolve(n);  // a free variable of c: visible from h
    FuncGraph* ref = n->as_graph();
    auto ref_copy = ref ? gmap.find(ref) : gmap.end();
    auto owner_copy = n->graph() ? gmap.find(n->graph()) : gmap.end();
    if (ref_copy == gmap.end() && owner_copy == gmap.end()) return n;  // a shared constant stays shared
    ConstValue v = ref_copy != gmap.end() ? ConstValue(ref_copy->second) : n->value();
    Node* copy = m.new_constant(std::move(v), owner_copy != gmap.end() ? owner_copy->second : nullptr, n->loc());
    nmap[n] = copy;
    return copy;
  };
  for (const FuncGraph* old : nest) {
    FuncGraph* copy = gmap.at(old);
    for (Node* n : topo_order(*old)) {
      if (!n->is_apply()) continue;
      std::vector<Node*> ins;
      ins.reserve(n->inputs().size());
      for (Node* in : n->inputs()) ins.push_back(map_node(in));
      Loc l = n->loc().valid() ? n->loc() : site;
      if (!l.scope) l.scope = site.scope;  // a helper's nodes belong to the Cell that called it
      nmap[n] = m.new_apply(copy, std::move(ins), n->name(), l);
    }
    if (old != &c && old->output()) copy->set_output(map_node(old->output()));
  }
  return map_node(c.output());
}

class Inliner {
 public:
  explicit Inliner(IrModule& m) : m_(m) {}

  Node* operator()(FuncGraph& h, Node* n, Rewriter& rw) {
    const FuncGraph* c = n->callee()->as_graph();
    std::vector<Node*> args;
    if (n->callee()->is_call_of(IrOp::partial) && n->callee()->num_args() >= 1) {
      const Node* part = n->callee();
      c = part->arg(0)->as_graph();
      args.assign(part->inputs().begin() + 2, part->inputs().end());
    }
    if (!c) return nullptr;
    args.insert(args.end(), n->inputs().begin() + 1, n->inputs().end());
    if (!can_inline(*c, h, args.size())) return nullptr;
    return inline_body(m_, h, *c, args, rw, n->loc());
  }

 private:
  bool can_inline(const FuncGraph& c, const FuncGraph& h, size_t num_args) {
    if (!m_.owns(&c) || !c.output() || c.params().size() != num_args || h.is_nested_in(&c)) return false;
    auto [it, fresh] = facts_.try_emplace(&c);
    CalleeFacts& facts = it->second;
    if (fresh) {
      facts.recursive = is_recursive_graph(c);
      for (const Node* fv : free_variables(c)) facts.must_enclose.insert(fv->graph());
      // A closure of another nest that c's body names (a loop body naming
      // its loop) is only legal where that closure's parent is visible.
      for (const FuncGraph* r : referenced_graphs(c))
        if (r->parent() && !r->is_nested_in(&c)) facts.must_enclose.insert(r->parent());
    }
    if (facts.recursive) return false;
    for (const FuncGraph* owner : facts.must_enclose)
      if (!owner || !h.is_nested_in(owner)) return false;
    return true;
  }

  // What a walk learns once per callee (bodies do not change during a walk
  // in ways that matter here: rewrites keep each node's owner graph).
  struct CalleeFacts {
    bool recursive = false;
    // Graphs h must be nested in: owners of c's free variables, parents of
    // the closures c refers to.
    std::unordered_set<const FuncGraph*> must_enclose;
  };

  IrModule& m_;
  std::unordered_map<const FuncGraph*, CalleeFacts> facts_;
};

}  // namespace

bool is_recursive_graph(const FuncGraph& c) {
  std::vector<const FuncGraph*> todo = referenced_graphs(c);
  std::unordered_set<const FuncGraph*> seen(todo.begin(), todo.end());
  while (!todo.empty()) {
    const FuncGraph* g = todo.back();
    todo.pop_back();
    // Reaching c, or a graph c is nested in (whose body contains c's), is a cycle.
    if (c.is_nested_in(g)) return true;
    for (const FuncGraph* r : referenced_graphs(*g))
      if (seen.insert(r).second) todo.push_back(r);
  }
  return false;
}

bool run_inline(IrModule& m, FuncGraph& g) { return rewrite_nodes(m, g, Inliner(m)); }

}  // namespace msl::jit
