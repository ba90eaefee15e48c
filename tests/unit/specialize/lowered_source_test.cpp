// End to end: MSL source lowered to ANF (lang/ir/lower), specialized, and
// run against the primal graphs on the debug-mode executor.
#include "../lower/lower_test_util.h"
#include "jit/exec/executor.h"
#include "spec_test_util.h"

using namespace msl;
using namespace msl::jit;
using exec::RtValue;
using jit::test::f32;
using kernels::DType;

namespace {

lower_test::Lowered lower(const std::string& src) {
  lower_test::Lowered r = lower_test::lower_source(src);
  REQUIRE_MESSAGE(r.errors.empty(), r.error_text());
  return r;
}

std::string specialize_error(lower_test::Lowered& r, const std::string& name, const std::vector<AbsValue>& args) {
  try {
    specialize(*r.module, *r.graph(name), args);
  } catch (const SpecializeError& e) {
    return e.what();
  }
  return "";
}

std::vector<double> numbers(const RtValue& v) {
  std::vector<double> out;
  if (auto t = v.get_if<kernels::Tensor>()) {
    for (int64_t i = 0; i < t->numel(); ++i) out.push_back(t->item_at(i));
  } else if (auto i = v.get_if<int64_t>()) {
    out.push_back(static_cast<double>(*i));
  } else if (v.is<exec::RtTuple>()) {
    for (const RtValue& x : v.tuple())
      for (double d : numbers(x)) out.push_back(d);
  }
  return out;
}

}  // namespace

TEST_CASE("lowered source: an if whose branches assign different shapes names both lines") {
  lower_test::Lowered r = lower(
      "def pick(c, x, y):\n"
      "    if c:\n"
      "        z = x + 1.0\n"
      "    else:\n"
      "        z = y * 2.0\n"
      "    return z\n");
  CHECK(specialize_error(r, "pick", {abs_tensor(DType::Bool, {}), f32({2}), f32({3})}) ==
        "t.msl:2: the branches of the if at t.msl:2 return different types: Tensor[Float32](2) (line 3) and "
        "Tensor[Float32](3) (line 5)");
  Specialized s = specialize(*r.module, *r.graph("pick"), {abs_tensor(DType::Bool, {}), f32({2}), f32({2})});
  CHECK(s.output == f32({2}));
  Specialized t = specialize(*r.module, *r.graph("pick"), {abs_const(false), f32({2}), f32({3})});
  CHECK(t.output == f32({3}));
  CHECK(ir::verify_module(*r.module).empty());
}

TEST_CASE("lowered source: a while loop with a counter and a carried tensor") {
  lower_test::Lowered r = lower(
      "def count(n, x):\n"
      "    i = 0\n"
      "    while i < n:\n"
      "        x = x * 2.0\n"
      "        i = i + 1\n"
      "    return i, x\n");
  ir::FuncGraph* g = r.graph("count");
  Specialized s = specialize(*r.module, *g, {abs_scalar(ScalarKind::Int), f32({2, 2})});
  CHECK(to_string(s.output) == "(Int64, Tensor[Float32](2, 2))");
  CHECK(ir::verify_module(*r.module).empty());
  std::vector<RtValue> args{RtValue(int64_t{3}), ir::tensor_from_values(DType::Float32, {2, 2}, {1, 2, 3, 4})};
  std::vector<double> expect{3, 8, 16, 24, 32};
  CHECK(numbers(exec::run_graph(*g, args)) == expect);
  CHECK(numbers(exec::run_graph(*s.graph, args)) == expect);

  lower_test::Lowered grow = lower(
      "def grow(n, x):\n"
      "    i = 0\n"
      "    while i < n:\n"
      "        x = concat((x, x))\n"
      "        i = i + 1\n"
      "    return x\n");
  std::string e = specialize_error(grow, "grow", {abs_scalar(ScalarKind::Int), f32({2})});
  INFO(e);
  CHECK(e.find("where it had Tensor[Float32](2): a value carried around a loop must keep its dtype and shape") !=
        std::string::npos);
  CHECK(e.find("of type Tensor[Float32](4)") != std::string::npos);
}

TEST_CASE("lowered source: a nested function reading the outer one's tensor") {
  lower_test::Lowered r = lower(
      "def outer(x, w):\n"
      "    h = matmul(x, w)\n"
      "    def inner(b):\n"
      "        return h + b\n"
      "    return inner(1.0), inner(x)\n");
  Specialized s = specialize(*r.module, *r.graph("outer"), {f32({3, 3}), f32({3, 3})});
  CHECK(to_string(s.output) == "(Tensor[Float32](3, 3), Tensor[Float32](3, 3))");
  CHECK(ir::verify_module(*r.module).empty());
  // Two clones of inner: b is Float32=1.0 in one and a tensor in the other.
  CHECK(r.module->find_graph("inner_1"));
  CHECK(r.module->find_graph("inner_2"));
}
