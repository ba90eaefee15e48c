// Master weights (jit/passes/master_weights.h): bfloat16 convolutions read
// their float32 weights without a cast node and write their weight
// gradients in float32; the graph computes what it computed before (both
// run on the executor: the weight is rounded to bfloat16 once either way,
// the gradient is rounded once less); what the pass must leave alone stays.
#include "jit/passes/master_weights.h"

#include <doctest/doctest.h>

#include "../specialize/spec_test_util.h"
#include "random_args.h"
#include "jit/exec/executor.h"

using namespace msl;
using namespace msl::jit;
using jit::test::f32;
using jit::test::Parsed;
using jit::test::collect;
using kernels::DType;
using kernels::Tensor;

namespace {

AbsValue bf16(kernels::Dims shape) { return abs_tensor(DType::BFloat16, shape); }

// The step's convolutions as AD and O2 write them: x and dy bfloat16, the
// weight float32 cast at use, the weight gradient cast back.
const char* kStep = R"(subgraph @f(%para1_x, %para2_w, %para3_dy) {
  %0 = cast[dtype=BFloat16](%para2_w)
  %1 = conv2d[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %0)
  %2 = conv2d_backprop_input[input_shape=(2, 16, 5, 5), stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para3_dy, %0)
  %3 = conv2d_backprop_filter[filter_shape=(16, 16, 3, 3), stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para3_dy, %para1_x)
  %4 = cast[dtype=Float32](%3)
  %5 = make_tuple(%1, %2, %4)
  return(%5)
}
)";

}  // namespace

TEST_CASE("master_weights: bfloat16 convolutions read the float32 weight and write a float32 gradient") {
  Parsed p(kStep);
  std::vector<AbsValue> types{bf16({2, 16, 5, 5}), f32({16, 16, 3, 3}), bf16({2, 16, 5, 5})};
  Specialized s = p.run(types);
  std::vector<exec::RtValue> args = jit::test::random_args(types, {}, 5);
  std::vector<double> before, after;
  collect(exec::run_graph(*s.graph, args), before);
  CHECK(run_master_weights(p.m, s) == 3);
  for (const std::string& e : ir::verify_module(p.m)) FAIL_CHECK(e);
  CHECK(jit::test::untyped_nodes(s) == 0);
  std::string text = ir::print_graph(*s.graph);
  CHECK(text.find("cast[") == std::string::npos);
  CHECK(text.find("(%para1_x, %para2_w)") != std::string::npos);
  CHECK(text.find("(%para3_dy, %para2_w)") != std::string::npos);
  CHECK(text.find("dtype=Float32](%para3_dy, %para1_x)") != std::string::npos);
  collect(exec::run_graph(*s.graph, args), after);
  REQUIRE(after.size() == before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    INFO("element " << i);
    // The gradient's float32 value differs from its bfloat16 rounding by
    // at most half a bfloat16 ulp (2**-9 relative).
    CHECK(after[i] == doctest::Approx(before[i]).epsilon(1.0 / 256).scale(1.0));
  }
}

TEST_CASE("master_weights: float32 convolutions, other casts and a gradient used twice stay") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_w, %para3_dy) {
  %0 = cast[dtype=Float32](%para2_w)
  %1 = conv2d[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %0)
  %2 = conv2d_backprop_filter[filter_shape=(16, 16, 3, 3), stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para3_dy, %para3_dy)
  %3 = cast[dtype=Float64](%2)
  %4 = make_tuple(%1, %3, %2)
  return(%4)
}
)");
  Specialized s = p.run({f32({2, 16, 5, 5}), f32({16, 16, 3, 3}), f32({2, 16, 5, 5})});
  CHECK(run_master_weights(p.m, s) == 0);
}
