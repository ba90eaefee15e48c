// rebuild_with (jit/passes/rewrite.h): a substitution whose replacements
// name replaced nodes settles in one walk, however deep the nesting (fusion
// replaces cluster after cluster, each fused node naming the outputs of
// the clusters before it).
#include <doctest/doctest.h>

#include <vector>

#include "jit/passes/rewrite.h"
#include "lang/ir/ir_module.h"

using namespace msl;
using namespace msl::ir;
using kernels::Prim;

TEST_CASE("rebuild_with: 300 levels of replacements naming replaced nodes leave no old node alive") {
  IrModule m;
  FuncGraph* g = m.new_graph("f", nullptr, {});
  Node* x = g->add_param("x");
  // a_k = exp(a_{k-1}); each a_k is replaced by neg(a_{k-1}): the
  // replacement names the old a_{k-1}, itself replaced.
  std::vector<Node*> a{x};
  for (int k = 1; k <= 300; ++k) a.push_back(g->apply(Prim::exp, {a.back()}));
  Node* out = g->apply(Prim::add, {a.back(), a[150]});
  g->set_output(out);
  jit::Subst subst;
  for (int k = 1; k <= 300; ++k) subst[a[k]] = g->apply(Prim::neg, {a[k - 1]});
  CHECK(jit::rebuild_with(m, *g, subst));
  int exps = 0, negs = 0, adds = 0;
  for (Node* n : topo_order(*g)) {
    if (!n->is_apply()) continue;
    exps += n->is_call_of(Prim::exp);
    negs += n->is_call_of(Prim::neg);
    adds += n->is_call_of(Prim::add);
  }
  CHECK(exps == 0);
  CHECK(negs == 300);  // one chain: each level built once
  CHECK(adds == 1);
  // The chain is neg(neg(...neg(x))): follow it down from the add.
  Node* n = g->output()->arg(0);
  int depth = 0;
  while (n->is_apply() && n->is_call_of(Prim::neg)) {
    n = n->arg(0);
    ++depth;
  }
  CHECK(depth == 300);
  CHECK(n == x);
}
