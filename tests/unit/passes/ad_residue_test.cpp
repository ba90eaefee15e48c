// AD residue queries: what must not survive the clean-up of a gradient.
#include "jit/passes/ad_residue.h"

#include <set>

#include "pass_test_util.h"

using namespace msl;

namespace {

struct Parsed {
  ir::IrModule m;
  ir::FuncGraph* g = nullptr;
  explicit Parsed(const std::string& text) {
    ir::IrParseResult r = ir::parse_ir(text, m, "t.ir");
    REQUIRE_MESSAGE(r.ok(), r.error);
    g = r.graphs.front();
  }
};

// The residue as printed operands/operators, for readable checks.
std::multiset<std::string> residue_names(const ir::FuncGraph& g) {
  std::multiset<std::string> out;
  for (const ir::Node* n : jit::ad_residue(g))
    out.insert(n->is_constant() ? ir::const_value_str(n->value()) : ir::const_value_str(n->callee()->value()));
  return out;
}

}  // namespace

TEST_CASE("ad_residue: J, env_*, partial and graph constants are reported, in nested graphs too") {
  Parsed p(R"(subgraph @f(%para1_x) {
  %0 = J(@g)
  %1 = env_new()
  %2 = env_setitem(%1, 3, %para1_x)
  %3 = env_getitem(%2, 3, %para1_x)
  %4 = env_add(%2, %1)
  %5 = partial(mul, %para1_x)
  %6 = @g(%3)
  %7 = make_tuple(%0, %4, %5, %6, @c, env_new)
  return(%7)
}

subgraph @c(%para1_y) parent=@f {
  %0 = partial(add, %para1_y)
  return(%0)
}

subgraph @g(%para1_a) {
  %0 = partial(add, %para1_a)
  return(%0)
}
)");
  // @g's own partial is not in @f's nest: only references to @g count.
  CHECK(residue_names(*p.g) == std::multiset<std::string>{"J", "@g", "env_new", "env_setitem", "env_getitem",
                                                          "env_add", "partial", "@g", "@c", "env_new", "partial"});
}

TEST_CASE("ad_residue: plain primitive code has none; primitive applications are counted across the nest") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_y) {
  %0 = mul(%para1_x, %para2_y)
  %1 = reduce_sum[axes=(0,), keep_dims=False](%0)
  %2 = tuple_getitem(%para1_x, 0)
  %3 = zeros_like(%2)
  %4 = grad_add(%3, %1)
  %5 = make_tuple(%1, %4)
  return(%5)
}
)");
  CHECK(jit::ad_residue(*p.g).empty());
  CHECK(jit::count_primitive_applies(*p.g) == 2);

  Parsed q(R"(subgraph @f(%para1_x) {
  %0 = exp(%para1_x)
  %1 = partial(@k, %0)
  return(%1)
}

subgraph @k(%para1_y) parent=@f {
  %0 = sin(%para1_y)
  %1 = add(%0, @f.%0)
  return(%1)
}
)");
  CHECK(jit::count_primitive_applies(*q.g) == 3);
  CHECK(residue_names(*q.g) == std::multiset<std::string>{"partial", "@k"});
}
