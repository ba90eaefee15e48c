// Tuple simplification (see tuple_elim.h).
#include "jit/passes/tuple_elim.h"

#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "jit/passes/node_rewriter.h"
#include "jit/passes/rewrite.h"

namespace msl::jit {

using namespace msl::ir;

namespace {

// `i` as an index into a tuple of `size` items, or -1 when out of range.
int64_t normalize(int64_t i, size_t size) {
  auto n = static_cast<int64_t>(size);
  if (i < 0) i += n;
  return i >= 0 && i < n ? i : -1;
}

// The nodes the graph's result keeps alive whatever this pass rewrites:
// a walk from the output of `g` (and of every graph a constant reaches)
// that, where a tuple item is taken out of a visible construction, follows
// only that item, as the rewrites below do. An effect held by a tuple item
// that is also anchored elsewhere (a Cell's output with its state chain,
// paired with its backpropagator) may then be dropped from the tuple.
class Anchors {
 public:
  explicit Anchors(const FuncGraph& g) { visit_graph(&g); }
  bool count(const Node* n) const { return whole_.count(n) > 0; }

 private:
  using Path = std::vector<int64_t>;  // the items of the value needed (empty: all of it)

  void visit_graph(const FuncGraph* g) {
    if (!graphs_.insert(g).second || !g->output()) return;
    visit(g->output(), {});
  }

  void visit(const Node* n, const Path& path) {
    if (n->is_constant()) {
      if (FuncGraph* c = n->as_graph()) visit_graph(c);
      return;
    }
    if (path.empty()) {
      if (!whole_.insert(n).second) return;
    } else if (!seen_.insert({n, path}).second) {
      return;
    }
    if (!path.empty()) {
      Path rest(path.begin() + 1, path.end());
      if (n->is_call_of(IrOp::make_tuple)) {
        int64_t i = normalize(path[0], n->num_args());
        if (i >= 0) return visit(n->arg(static_cast<size_t>(i)), rest);
      } else if (n->is_call_of(IrOp::tuple_setitem) && n->num_args() == 3) {
        std::optional<int64_t> set = const_int(n->arg(1));
        if (set && *set >= 0 && path[0] >= 0) return *set == path[0] ? visit(n->arg(2), rest) : visit(n->arg(0), path);
      } else if (n->is_call_of(IrOp::tuple_getitem) && n->num_args() == 2) {
        if (std::optional<int64_t> i = const_int(n->arg(1))) {
          Path deeper{*i};
          deeper.insert(deeper.end(), path.begin(), path.end());
          return visit(n->arg(0), deeper);
        }
      }
      // Not taken apart by this pass: the whole value is kept.
      return visit(n, {});
    }
    if (n->is_call_of(IrOp::tuple_getitem) && n->num_args() == 2)
      if (std::optional<int64_t> i = const_int(n->arg(1))) return visit(n->arg(0), {*i});
    // A length becomes a constant (or the length of the tuple before a
    // setitem): it keeps no item alive. Missing a real use only makes the
    // pass more careful.
    if (n->is_call_of(IrOp::tuple_len)) return;
    if (n->is_call_of(IrOp::tuple_setitem) && n->num_args() == 3 && n->arg(0)->is_call_of(IrOp::make_tuple)) {
      // Rewritten to the tuple with item i replaced: item i is not kept.
      const Node* tup = n->arg(0);
      std::optional<int64_t> idx = const_int(n->arg(1));
      int64_t i = idx ? normalize(*idx, tup->num_args()) : -1;
      for (size_t k = 0; k < tup->num_args(); ++k)
        if (static_cast<int64_t>(k) != i) visit(tup->arg(k), {});
      return visit(n->arg(2), {});
    }
    for (const Node* in : n->inputs()) visit(in, {});
  }

  std::set<const FuncGraph*> graphs_;
  std::unordered_set<const Node*> whole_;
  std::set<std::pair<const Node*, Path>> seen_;
};

// Whether dropping `n` from a tuple could drop an effect: an effect is
// reachable from it (within its graph) by a path no anchored node keeps
// alive. (A backpropagator built from an assign's result depends on the
// effect, but dropping it loses nothing when the assign is anchored.)
class DropCheck {
 public:
  DropCheck(const Anchors& anchors, const Rewriter& rw) : anchors_(anchors), rw_(rw) {}

  bool operator()(const Node* root) {
    if (auto it = memo_.find(root); it != memo_.end()) return it->second;
    // Iterative post-order: effect chains can be thousands of nodes long.
    std::vector<std::pair<const Node*, size_t>> stack{{root, 0}};
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (!anchored(n) && i < n->inputs().size()) {
        const Node* in = n->inputs()[i++];
        if (in->is_apply() && in->graph() == n->graph() && !memo_.count(in)) stack.push_back({in, 0});
        continue;
      }
      bool unsafe = false;
      if (!anchored(n)) {
        unsafe = is_effect(n);
        for (const Node* in : n->inputs())
          if (auto it = memo_.find(in); it != memo_.end()) unsafe |= it->second;
      }
      memo_[n] = unsafe;
      stack.pop_back();
    }
    return memo_.at(root);
  }

 private:
  // Nodes the walk re-created keep the anchoring of their originals.
  bool anchored(const Node* n) const { return anchors_.count(rw_.origin(n)); }

  const Anchors& anchors_;
  const Rewriter& rw_;
  std::unordered_map<const Node*, bool> memo_;
};

// Whether dropping the items of `tup` other than `keep` (-1: all of them)
// would drop an effect.
bool drops_effect(const Node* tup, int64_t keep, DropCheck& effect) {
  for (size_t k = 0; k < tup->num_args(); ++k)
    if (static_cast<int64_t>(k) != keep && effect(tup->arg(k))) return true;
  return false;
}

Node* getitem(FuncGraph& h, Node* n, Rewriter& rw, DropCheck& effect) {
  Node* tup = n->arg(0);
  std::optional<int64_t> idx = const_int(n->arg(1));
  if (!idx) return nullptr;
  if (tup->is_call_of(IrOp::make_tuple)) {
    int64_t i = normalize(*idx, tup->num_args());
    if (i < 0 || drops_effect(tup, i, effect)) return nullptr;
    return tup->arg(static_cast<size_t>(i));
  }
  if (tup->is_call_of(IrOp::depend) && tup->num_args() == 2 && tup->arg(0)->is_call_of(IrOp::make_tuple)) {
    // A tuple ordered after an effect (the gradients passed to one
    // optimizer updater after another's update): the item, ordered after it.
    Node* items = tup->arg(0);
    int64_t i = normalize(*idx, items->num_args());
    if (i < 0 || drops_effect(items, i, effect)) return nullptr;
    return rw.build(h, {tup->callee(), items->arg(static_cast<size_t>(i)), tup->arg(1)}, n);
  }
  if (tup->is_call_of(IrOp::tuple_setitem) && tup->num_args() == 3) {
    std::optional<int64_t> set = const_int(tup->arg(1));
    if (!set || *set < 0 || *idx < 0) return nullptr;
    if (*set == *idx) return effect(tup->arg(0)) ? nullptr : tup->arg(2);
    if (effect(tup->arg(2))) return nullptr;
    return rw.build(h, {n->callee(), tup->arg(0), n->arg(1)}, n);
  }
  return nullptr;
}

Node* setitem(FuncGraph& h, Node* n, Rewriter& rw, DropCheck& effect) {
  Node* tup = n->arg(0);
  std::optional<int64_t> idx = const_int(n->arg(1));
  if (!idx || !tup->is_call_of(IrOp::make_tuple)) return nullptr;
  int64_t i = normalize(*idx, tup->num_args());
  if (i < 0 || effect(tup->arg(static_cast<size_t>(i)))) return nullptr;
  std::vector<Node*> ins = tup->inputs();
  ins[static_cast<size_t>(i) + 1] = n->arg(2);
  return rw.build(h, std::move(ins), n);
}

Node* len(FuncGraph& h, Node* n, Rewriter& rw, DropCheck& effect) {
  Node* tup = n->arg(0);
  if (tup->is_call_of(IrOp::make_tuple)) {
    if (drops_effect(tup, -1, effect)) return nullptr;
    return h.constant(static_cast<int64_t>(tup->num_args()), n->loc());
  }
  if (tup->is_call_of(IrOp::tuple_setitem) && tup->num_args() == 3 && !effect(tup->arg(2)))
    return rw.build(h, {n->callee(), tup->arg(0)}, n);
  return nullptr;
}

}  // namespace

bool run_tuple_elim(IrModule& m, FuncGraph& g) {
  Anchors anchors(g);
  std::optional<DropCheck> check;
  return rewrite_nodes(m, g, [&](FuncGraph& h, Node* n, Rewriter& rw) -> Node* {
    if (!check) check.emplace(anchors, rw);
    DropCheck& effect = *check;
    // Malformed arities are the verifier's to report, not ours to read past.
    if (n->is_call_of(IrOp::tuple_getitem) && n->num_args() == 2) return getitem(h, n, rw, effect);
    if (n->is_call_of(IrOp::tuple_setitem) && n->num_args() == 3) return setitem(h, n, rw, effect);
    if (n->is_call_of(IrOp::tuple_len) && n->num_args() == 1) return len(h, n, rw, effect);
    return nullptr;
  });
}

}  // namespace msl::jit
