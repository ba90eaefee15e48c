// jit/passes/typed_simplify: no-op reshapes, additions of zeros,
// multiplications by ones and reshapes before a broadcast disappear only
// where the specialization proves the types unchanged.
#include "jit/passes/dce.h"
#include "jit/passes/typed_simplify.h"
#include "lang/ir/printer.h"
#include "spec_test_util.h"

using namespace msl;
using namespace msl::jit;
using namespace msl::jit::test;

namespace {
std::string text(const ir::FuncGraph& g) {
  ir::PrintOptions o;
  o.locations = false;
  return ir::print_graph(g, o);
}
}  // namespace

TEST_CASE("typed_simplify: type-preserving no-ops go, broadcasting ones stay") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_s) {
  %0 = reshape[shape=(2, 3)](%para1_x)
  %1 = zeros_like(%para1_x)
  %2 = add(%0, %1)
  %3 = ones_like(%2)
  %4 = mul(%3, %2)
  %5 = reshape[shape=(1, 1)](%para2_s)
  %6 = broadcast_to[shape=(2, 3)](%5)
  %7 = add(%4, %6)
  %8 = zeros_like(%para1_x)
  %9 = reduce_sum[axes=(0,), keep_dims=True](%8)
  %10 = add(%para2_s, %9)
  %11 = make_tuple(%7, %10)
  return(%11)
}
)");
  Specialized sp = specialize(p.m, *p.g, {f32({2, 3}), f32({})});
  CHECK(run_typed_simplify(p.m, sp));
  run_dce(p.m, *sp.graph);
  // add(s, zeros of shape (1, 3)) broadcasts s to (1, 3): kept.
  CHECK(text(*sp.graph) == R"(# IR of: f_1
subgraph @f_1(%para1_x, %para2_s) {
  %0 = broadcast_to[shape=(2, 3)](%para2_s)
  %1 = add(%para1_x, %0)
  %2 = zeros_like(%para1_x)
  %3 = reduce_sum[axes=(0,), keep_dims=True](%2)
  %4 = add(%para2_s, %3)
  %5 = make_tuple(%1, %4)
  return(%5)
}
)");
  // Nothing left to do: no change.
  Specialized again = specialize(p.m, *sp.graph, {f32({2, 3}), f32({})});
  CHECK_FALSE(run_typed_simplify(p.m, again));
}
