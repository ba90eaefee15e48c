// The anchors of a graph's result and the drop check (see anchors.h).
#include "jit/passes/anchors.h"

#include "jit/passes/rewrite.h"

namespace msl::jit {

using namespace msl::ir;

void Anchors::visit_graph(const FuncGraph* g) {
  if (!graphs_.insert(g).second || !g->output()) return;
  visit(g->output(), {});
}

// Follows item path[0] of `n` when `n` builds it visibly; false when the
// walk has to keep the whole value instead.
bool Anchors::visit_item(const Node* n, const Path& path) {
  Path rest(path.begin() + 1, path.end());
  int64_t want = path[0];
  if (is_env_key(want)) {
    if (n->is_call_of(IrOp::env_new)) return true;  // no slot: the reader's default
    if (n->is_call_of(IrOp::env_setitem) && n->num_args() == 3) {
      std::optional<int64_t> set = const_int(n->arg(1));
      if (!set) return false;
      if (env_key(*set) == want)
        visit(n->arg(2), rest);
      else
        visit(n->arg(0), path);
      return true;
    }
    return false;
  }
  if (n->is_call_of(IrOp::make_tuple)) {
    int64_t i = tuple_index(want, n->num_args());
    if (i < 0) return false;
    visit(n->arg(static_cast<size_t>(i)), rest);
    return true;
  }
  if (n->is_call_of(IrOp::tuple_setitem) && n->num_args() == 3) {
    std::optional<int64_t> set = const_int(n->arg(1));
    if (!set || *set < 0 || want < 0) return false;
    if (*set == want)
      visit(n->arg(2), rest);
    else
      visit(n->arg(0), path);
    return true;
  }
  return false;
}

void Anchors::visit(const Node* n, const Path& path) {
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
    if (visit_item(n, path)) return;
    if (n->is_call_of(IrOp::tuple_getitem) && n->num_args() == 2) {
      if (std::optional<int64_t> i = const_int(n->arg(1))) {
        Path deeper{*i};
        deeper.insert(deeper.end(), path.begin(), path.end());
        return visit(n->arg(0), deeper);
      }
    }
    // Not taken apart by the rewrites: the whole value is kept.
    return visit(n, {});
  }
  if (n->is_call_of(IrOp::tuple_getitem) && n->num_args() == 2)
    if (std::optional<int64_t> i = const_int(n->arg(1))) return visit(n->arg(0), {*i});
  if (n->is_call_of(IrOp::env_getitem) && n->num_args() == 3) {
    if (std::optional<int64_t> k = const_int(n->arg(1))) {
      // The slot k of the environment, or the default when it has none.
      visit(n->arg(0), {env_key(*k)});
      return visit(n->arg(2), {});
    }
  }
  // A length becomes a constant (or the length of the tuple before a
  // setitem): it keeps no item alive. Missing a real use only makes the
  // passes more careful.
  if (n->is_call_of(IrOp::tuple_len)) return;
  if (n->is_call_of(IrOp::tuple_setitem) && n->num_args() == 3 && n->arg(0)->is_call_of(IrOp::make_tuple)) {
    // Rewritten to the tuple with item i replaced: item i is not kept.
    const Node* tup = n->arg(0);
    std::optional<int64_t> idx = const_int(n->arg(1));
    int64_t i = idx ? tuple_index(*idx, tup->num_args()) : -1;
    for (size_t k = 0; k < tup->num_args(); ++k)
      if (static_cast<int64_t>(k) != i) visit(tup->arg(k), {});
    return visit(n->arg(2), {});
  }
  for (const Node* in : n->inputs()) visit(in, {});
}

EffectQuery drop_check(const Anchors& anchors, const Rewriter& rw) {
  return EffectQuery([&anchors, &rw](const Node* n) { return anchors.count(rw.origin(n)); });
}

}  // namespace msl::jit
