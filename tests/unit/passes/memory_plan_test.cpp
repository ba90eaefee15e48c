// Memory planning (jit/passes/memory_plan.h): peak bytes of intermediates
// replayed over the specialized types, with release after last use, views
// keeping their base alive, and fused loops writing over a dying operand.
// Expected sizes are counted by hand from the graphs (float32: 4 bytes).
#include <doctest/doctest.h>

#include <string>

#include "jit/passes/fuse_elementwise.h"
#include "jit/passes/memory_plan.h"
#include "jit/specialize.h"
#include "lang/ir/ir_module.h"
#include "lang/ir/ir_parser.h"

using namespace msl;
using namespace msl::jit;
using kernels::DType;

namespace {

struct Planned {
  ir::IrModule m;
  Specialized sp;
};

void specialize_text(Planned& p, const std::string& text, const kernels::Dims& shape) {
  ir::IrParseResult r = ir::parse_ir(text, p.m, "t.ir");
  REQUIRE_MESSAGE(r.ok(), r.error);
  ir::FuncGraph& g = *r.graphs.front();
  std::vector<AbsValue> args(g.params().size(), abs_tensor(DType::Float32, shape));
  p.sp = specialize(p.m, g, args);
}

}  // namespace

TEST_CASE("a chain needs its operand and its result at once; without reuse, every result") {
  Planned p;
  specialize_text(p,
                  "subgraph @f(%para1_x) {\n"
                  "  %0 = exp(%para1_x)\n"
                  "  %1 = neg(%0)\n"
                  "  %2 = mul(%1, 2.0)\n"
                  "  %3 = sqrt(%2)\n"
                  "  return(%3)\n"
                  "}\n",
                  {256});
  MemoryPlan plan = plan_memory(*p.sp.graph, p.sp);
  CHECK(plan.complete);
  CHECK(plan.buffers == 4);
  CHECK(plan.total_bytes == 4 * 1024);
  CHECK(plan.peak_bytes == 2 * 1024);
  CHECK(plan.in_place == 0);
}

TEST_CASE("a value used later stays live; a view keeps its base's buffer") {
  Planned p;
  specialize_text(p,
                  "subgraph @f(%para1_x) {\n"
                  "  %0 = exp(%para1_x)\n"
                  "  %1 = reshape[shape=(16, 16)](%0)\n"
                  "  %2 = neg(%para1_x)\n"
                  "  %3 = reshape[shape=(256,)](%1)\n"
                  "  %4 = add(%3, %2)\n"
                  "  %5 = mul(%4, %0)\n"
                  "  return(%5)\n"
                  "}\n",
                  {256});
  MemoryPlan plan = plan_memory(*p.sp.graph, p.sp);
  CHECK(plan.complete);
  // exp, neg, add, mul allocate; the reshapes are views of exp's buffer.
  CHECK(plan.buffers == 4);
  CHECK(plan.total_bytes == 4 * 1024);
  // At add: exp (through the views and %0 itself), neg, add's result.
  // At mul: exp, add, mul (neg died at add).
  CHECK(plan.peak_bytes == 3 * 1024);
}

TEST_CASE("a fused loop writes its result over an operand that dies there") {
  Planned p;
  specialize_text(p,
                  "subgraph @f(%para1_x) {\n"
                  "  %0 = softmax[axis=0](%para1_x)\n"
                  "  %1 = exp(%0)\n"
                  "  %2 = mul(%1, 2.0)\n"
                  "  %3 = add(%2, 1.0)\n"
                  "  return(%3)\n"
                  "}\n",
                  {256});
  REQUIRE(run_fuse_elementwise(p.m, p.sp) == 1);
  MemoryPlan plan = plan_memory(*p.sp.graph, p.sp);
  CHECK(plan.complete);
  CHECK(plan.buffers == 2);  // softmax and the fused loop
  CHECK(plan.total_bytes == 2 * 1024);
  CHECK(plan.in_place == 1);
  CHECK(plan.in_place_bytes == 1024);
  CHECK(plan.peak_bytes == 1024);
}

TEST_CASE("an operand that is still needed is not overwritten") {
  Planned p;
  specialize_text(p,
                  "subgraph @f(%para1_x) {\n"
                  "  %0 = softmax[axis=0](%para1_x)\n"
                  "  %1 = exp(%0)\n"
                  "  %2 = mul(%1, 2.0)\n"
                  "  %3 = make_tuple(%2, %0)\n"
                  "  return(%3)\n"
                  "}\n",
                  {256});
  REQUIRE(run_fuse_elementwise(p.m, p.sp) == 1);
  MemoryPlan plan = plan_memory(*p.sp.graph, p.sp);
  CHECK(plan.in_place == 0);
  CHECK(plan.peak_bytes == 2 * 1024);
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(512) == "512 B");
  CHECK(plan.summary() == "peak 2.0 KiB of intermediates (2.0 KiB without reuse), 2 buffers, 0 written in place");
}
