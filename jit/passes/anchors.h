// What a graph's result keeps alive whatever the structure passes rewrite,
// shared by tuple_elim and env_elim: may a rewrite drop a value that is,
// or depends on, an effect from the path it sits on?
//
// Anchors walks from the output of a graph (and of every graph a constant
// reaches). Where an item is taken out of a visible construction it follows
// only that item, as the rewrites do: tuple_getitem(make_tuple(..), i)
// item i, tuple_getitem(tuple_setitem(t, i, v), j) v or t's item j,
// env_getitem(env_setitem(e, k, v), k2, d) v when k2 == k, else e's key k2
// (and d, which a missing key reads). Everything else keeps its whole
// value. An effect held by a tuple item or an environment slot that is
// also anchored elsewhere (a Cell's output with its state chain, paired
// with its backpropagator; a weight's gradient computed from activations
// that waited for a BatchNorm's statistics update) may then be dropped
// from that tuple or environment.
//
// drop_check answers, for a node a rewrite would drop from one path,
// whether an effect is reachable from it (within its graph) by a path no
// anchored node keeps alive.
#pragma once

#include <cstdint>
#include <set>
#include <unordered_set>
#include <utility>
#include <vector>

#include "jit/passes/node_rewriter.h"
#include "lang/ir/func_graph.h"

namespace msl::jit {

class Anchors {
 public:
  explicit Anchors(const ir::FuncGraph& g) { visit_graph(&g); }
  bool count(const ir::Node* n) const { return whole_.count(n) > 0; }

 private:
  // The items of the value needed, outermost first (empty: all of it): a
  // tuple index (>= 0) or an environment key (env_key()).
  using Path = std::vector<int64_t>;
  static constexpr int64_t kEnvKeyBase = INT64_MIN / 2;
  static int64_t env_key(int64_t k) { return kEnvKeyBase + k; }
  static bool is_env_key(int64_t p) { return p < kEnvKeyBase / 2; }

  void visit_graph(const ir::FuncGraph* g);
  void visit(const ir::Node* n, const Path& path);
  bool visit_item(const ir::Node* n, const Path& path);

  std::set<const ir::FuncGraph*> graphs_;
  std::unordered_set<const ir::Node*> whole_;
  std::set<std::pair<const ir::Node*, Path>> seen_;
};

// The EffectQuery for a rewrite walk: nodes the anchors keep (a node the
// walk re-created keeps the anchoring of its original) hold no effect a
// rewrite could drop.
EffectQuery drop_check(const Anchors& anchors, const Rewriter& rw);

}  // namespace msl::jit
