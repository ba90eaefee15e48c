// The primitive registry: names round-trip, attribute declarations parse into
// known kinds, and execute() checks arity and attribute names before running.
#include <doctest/doctest.h>

#include <set>

#include "kernels/errors.h"
#include "reference.h"

using namespace msl::kernels;
using namespace msl::kernels::testing;

TEST_CASE("every registry entry is found by name with well-formed attributes") {
  const std::set<std::string> kinds = {"bool", "int", "float", "ints", "str", "dtype"};
  std::set<std::string> names;
  for (int i = 0; i < kNumPrims; ++i) {
    Prim p = static_cast<Prim>(i);
    const PrimDef& d = prim_def(p);
    INFO(d.name);
    CHECK(names.insert(d.name).second);  // unique
    Prim found;
    REQUIRE(find_prim(d.name, found));
    CHECK(found == p);
    CHECK(d.outputs >= 1);
    CHECK(d.inputs >= -1);
    for (const AttrSpec& a : prim_attrs(p)) {
      CHECK(!a.name.empty());
      CHECK(kinds.count(a.kind) == 1);
    }
  }
  Prim unused;
  CHECK_FALSE(find_prim("no_such_op", unused));
}

TEST_CASE("execute rejects a wrong input count and unknown attributes before computing") {
  Tensor a = from_vector(DType::Float32, Dims{2}, {1, 2});
  std::vector<Tensor> one{a};
  CHECK_THROWS_WITH_AS(execute1(Prim::add, one), "add: expected 2 inputs, got 1", ValueError);
  std::vector<Tensor> two{a, a};
  CHECK_THROWS_WITH_AS(execute1(Prim::add, two, Attrs{{"axis", int64_t{0}}}), "add: unknown attribute 'axis'",
                       ValueError);
  std::vector<Tensor> out;
  CHECK_THROWS_AS(execute(Prim::softmax_cross_entropy, one, {}, out), ValueError);
  // A multi-output primitive through execute(): both outputs come back.
  Tensor logits = from_vector(DType::Float64, Dims{1, 2}, {0, 0});
  Tensor labels = from_vector(DType::Float64, Dims{1, 2}, {1, 0});
  std::vector<Tensor> in{logits, labels};
  execute(Prim::softmax_cross_entropy, in, {}, out);
  REQUIRE(out.size() == 2);
  check_close(to_vector(out[0]), {std::log(2.0)}, 1e-12);
  check_close(to_vector(out[1]), {-0.5, 0.5}, 1e-12);
}

TEST_CASE("view primitives alias their input; compute primitives do not") {
  Tensor a = from_vector(DType::Float32, Dims{2, 3}, {0, 1, 2, 3, 4, 5});
  std::vector<Tensor> in{a};
  Tensor t = execute1(Prim::transpose, in, Attrs{{"perm", std::vector<int64_t>{1, 0}}});
  CHECK(t.shares_storage(a));
  CHECK(t.shape() == Dims{3, 2});
  Tensor n = execute1(Prim::neg, in);
  CHECK_FALSE(n.shares_storage(a));
}
