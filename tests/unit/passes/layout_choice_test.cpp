// Layout choice (jit/passes/layout_choice.h): graphs of oneDNN ops and the
// elementwise ops between them, specialized at float32 shapes, run on
// channel-blocked 5-D tensors after the pass, with reorders only where an
// NCHW consumer (the output) needs them, and compute what the
// NCHW graph computes (both run on the debug-mode executor); what the pass
// leaves alone stays as it was; the types table covers every node.
#include "jit/passes/layout_choice.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>

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

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

// Specializes `text` at `types`, runs it, chooses layouts for `block`, runs
// it again on the same inputs and checks both agree; keeps the typed text.
struct Chosen {
  LayoutReport report;
  std::string text;
  Chosen(const std::string& ir_text, const std::vector<AbsValue>& types, int block, std::vector<int> positive = {}) {
    Parsed p(ir_text);
    Specialized s = p.run(types);
    std::vector<exec::RtValue> args = jit::test::random_args(types, positive, 11);
    std::vector<double> before, after;
    collect(exec::run_graph(*s.graph, args), before);
    report = run_layout_choice(p.m, s, block);
    for (const std::string& e : ir::verify_module(p.m)) FAIL_CHECK(e);
    CHECK(jit::test::untyped_nodes(s) == 0);
    text = jit::test::typed_text(s);
    collect(exec::run_graph(*s.graph, args), after);
    REQUIRE(after.size() == before.size());
    for (size_t i = 0; i < after.size(); ++i) {
      INFO("element " << i);
      CHECK(after[i] == doctest::Approx(before[i]).epsilon(1e-4).scale(1.0));
    }
  }
};

// A training block: conv -> batch norm -> relu -> conv, a residual add, a
// per-channel scale, and the global average pool of a ResNet's end.
const char* kBlock = R"(subgraph @f(%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v, %para7_w2, %para8_s) {
  %0 = conv2d[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = batch_norm[training=True, epsilon=0.001](%0, %para3_g, %para4_b, %para5_m, %para6_v)
  %2 = tuple_getitem(%1, 0)
  %3 = relu(%2)
  %4 = conv2d[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%3, %para7_w2)
  %5 = add(%4, %3)
  %6 = mul(%5, %para8_s)
  %7 = reduce_sum[axes=(2, 3), keep_dims=False](%6)
  %8 = tuple_getitem(%1, 1)
  %9 = make_tuple(%7, %8, %6)
  return(%9)
}
)";

std::vector<AbsValue> block_types(int64_t c) {
  return {f32({2, 3, 6, 6}), f32({c, 3, 3, 3}), f32({c}), f32({c}), f32({c}), f32({c}), f32({c, c, 3, 3}),
          f32({1, c, 1, 1})};
}

// The backward of a conv -> batch norm -> relu block, as AD writes it.
const char* kBackward = R"(subgraph @f(%para1_dy, %para2_y, %para3_x, %para4_g, %para5_m, %para6_v, %para7_w, %para8_a) {
  %0 = relu_grad(%para1_dy, %para2_y)
  %3 = batch_norm_grad[epsilon=0.001](%0, %para3_x, %para4_g, %para5_m, %para6_v)
  %4 = tuple_getitem(%3, 0)
  %5 = conv2d_backprop_input[input_shape=(2, 16, 5, 5), stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%4, %para7_w)
  %6 = conv2d_backprop_filter[filter_shape=(16, 16, 3, 3), stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%4, %para8_a)
  %7 = tuple_getitem(%3, 1)
  %8 = make_tuple(%5, %6, %7)
  return(%8)
}
)";

}  // namespace

TEST_CASE("layout_choice: a conv/batch-norm block runs blocked, reordered once at the output") {
  Chosen c(kBlock, block_types(32), 16, {5});
  CHECK(c.report.blocked >= 8);
  CHECK(c.report.to_blocked == 0);
  CHECK(c.report.from_blocked == 1);  // %6 is returned in NCHW
  CHECK(count(c.text, R"(layout="nChw16c")") == 3);  // two conv2d, one batch_norm
  CHECK(count(c.text, "from_blocked(") == 1);
  // relu, add and mul run on the 5-D tensors; the scale is reshaped, the
  // pool sums H and W of the blocked tensor and reshapes [N, C/b, b].
  CHECK(count(c.text, "-> Tensor[Float32](2, 2, 6, 6, 16)") >= 6);
  CHECK(count(c.text, "reshape[shape=(1, 2, 1, 1, 16)](%para8_s)") == 1);
  CHECK(count(c.text, "reduce_sum[axes=(2, 3), keep_dims=False]") == 1);
  CHECK(count(c.text, "-> Tensor[Float32](2, 2, 16)") == 1);
}

TEST_CASE("layout_choice: AVX2's 8-channel block") {
  Chosen c(kBlock, block_types(16), 8, {5});
  CHECK(count(c.text, R"(layout="nChw8c")") == 3);
  CHECK(count(c.text, "-> Tensor[Float32](2, 2, 6, 6, 8)") >= 6);
  CHECK(c.report.from_blocked == 1);
}

TEST_CASE("layout_choice: channels that fill no whole block, block 0 and nested graphs stay NCHW") {
  Chosen partial(kBlock, block_types(24), 16, {5});
  CHECK(partial.report.blocked == 0);
  CHECK(count(partial.text, "layout=") == 0);
  Chosen off(kBlock, block_types(32), 0, {5});
  CHECK(off.report.blocked == 0);
  Chosen nested(R"(subgraph @f(%para1_x, %para2_w) {
  %0 = conv2d[stride=(1, 1), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = @g(%0)
  return(%1)
}

subgraph @g(%para1_y) parent=@f {
  %2 = relu(@f.%0)
  return(%2)
}
)",
                {f32({1, 16, 3, 3}), f32({16, 16, 1, 1})}, 16);
  CHECK(nested.report.blocked == 0);
}

TEST_CASE("layout_choice: gradients of a block read and produce blocked data") {
  // dy and y arrive in NCHW (parameters): relu_grad stays NCHW (no operand
  // is blocked), the batch-norm gradient takes its operands blocked.
  Chosen c(kBackward,
           {f32({2, 16, 5, 5}), f32({2, 16, 5, 5}), f32({2, 16, 5, 5}), f32({16}), f32({16}), f32({16}),
            f32({16, 16, 3, 3}), f32({2, 16, 5, 5})},
           16, {5});
  CHECK(count(c.text, R"(batch_norm_grad[epsilon=0.001, layout="nChw16c"])") == 1);
  CHECK(count(c.text, R"(pad_mode="pad", layout="nChw16c"](%)") == 2);  // both conv gradients
  CHECK(count(c.text, "conv2d_backprop_filter[") == 1);
  CHECK(c.report.to_blocked == 2);    // dy and x of the batch-norm gradient
  CHECK(c.report.from_blocked == 1);  // dx of the conv, returned
}

TEST_CASE("layout_choice: elementwise ops follow the majority of their operands' layouts") {
  // add: one blocked operand (the conv) and one NCHW: blocked, the
  // parameter reordered in; mul: no blocked operand, stays NCHW.
  Chosen c(R"(subgraph @f(%para1_x, %para2_w, %para3_a, %para4_b) {
  %0 = conv2d[stride=(1, 1), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = mul(%para3_a, %para4_b)
  %2 = add(%0, %1)
  %3 = sub(%2, 0.5)
  return(%3)
}
)",
           {f32({1, 4, 3, 3}), f32({16, 4, 1, 1}), f32({1, 16, 3, 3}), f32({1, 16, 3, 3})}, 16);
  CHECK(count(c.text, "mul(%para3_a, %para4_b) : (Tensor[Float32](1, 16, 3, 3)") == 1);
  CHECK(count(c.text, "to_blocked[block=16](%1)") == 1);
  CHECK(count(c.text, "sub(") == 1);
  CHECK(count(c.text, "-> Tensor[Float32](1, 1, 3, 3, 16)") == 4);  // conv, to_blocked, add, sub
  CHECK(c.report.to_blocked == 1);
  CHECK(c.report.from_blocked == 1);
}

TEST_CASE("layout_choice: a per-channel broadcast feeding elementwise ops becomes a blocked view") {
  // A global mean's gradient: [N, C, 1, 1] broadcast over the activations.
  Chosen c(R"(subgraph @f(%para1_x, %para2_w, %para3_d) {
  %0 = conv2d[stride=(1, 1), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = broadcast_to[shape=(2, 32, 3, 3)](%para3_d)
  %2 = relu_grad(%1, %0)
  %3 = broadcast_to[shape=(2, 32, 3, 3)](%para3_d)
  %4 = make_tuple(%2, %3)
  return(%4)
}
)",
           {f32({2, 4, 3, 3}), f32({32, 4, 1, 1}), f32({2, 32, 1, 1})}, 16);
  CHECK(count(c.text, "reshape[shape=(2, 2, 1, 1, 16)](%para3_d)") == 1);
  CHECK(count(c.text, "broadcast_to[shape=(2, 2, 3, 3, 16)](") == 1);
  CHECK(count(c.text, "relu_grad(") == 1);
  CHECK(c.report.to_blocked == 0);
  // relu_grad's result is returned: its one reorder; the second
  // broadcast_to is CSE's business, here it is returned and stays NCHW.
  CHECK(c.report.from_blocked == 1);
  CHECK(count(c.text, "broadcast_to[shape=(2, 32, 3, 3)](%para3_d)") == 1);
}

TEST_CASE("layout_choice: max pooling and its gradient run blocked when an operand is") {
  Chosen c(R"(subgraph @f(%para1_x, %para2_w, %para3_dy) {
  %0 = conv2d[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = max_pool2d[kernel_size=(3, 3), stride=(2, 2), padding=(0, 0, 0, 0), pad_mode="same"](%0)
  %2 = max_pool2d_grad[kernel_size=(3, 3), stride=(2, 2), padding=(0, 0, 0, 0), pad_mode="same"](%0, %para3_dy)
  %3 = make_tuple(%1, %2)
  return(%3)
}
)",
           {f32({2, 3, 7, 7}), f32({16, 3, 3, 3}), f32({2, 16, 4, 4})}, 16);
  CHECK(count(c.text, R"(pad_mode="same", layout="nChw16c"](%)") == 2);
  CHECK(c.report.to_blocked == 1);    // dy
  CHECK(c.report.from_blocked == 2);  // both results are returned
  // Without a blocked operand the pool stays NCHW.
  Chosen plain(R"(subgraph @f(%para1_x) {
  %0 = max_pool2d[kernel_size=(2, 2), stride=(2, 2), padding=(0, 0, 0, 0), pad_mode="valid"](%para1_x)
  return(%0)
}
)",
               {f32({1, 16, 4, 4})}, 16);
  CHECK(plain.report.blocked == 0);
}

TEST_CASE("layout_choice: an inference ResNet block of fused contractions runs blocked") {
  // What fuse_epilogue makes of conv -> bn -> relu -> conv -> bn + x -> relu
  // at inference (var, inputs 5 and 10, positive).
  Chosen c(R"(subgraph @f(%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v, %para7_w2, %para8_g2, %para9_b2, %para10_m2, %para11_v2, %para12_w0, %para13_c) {
  %0 = conv2d_bias[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad", activation="relu"](%para1_x, %para12_w0, %para13_c)
  %1 = conv2d_bn[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad", epsilon=0.001, activation="relu"](%0, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v)
  %2 = conv2d_bn_add[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad", epsilon=0.001, activation="relu"](%1, %para7_w2, %para8_g2, %para9_b2, %para10_m2, %para11_v2, %0)
  %3 = reduce_sum[axes=(2, 3), keep_dims=False](%2)
  return(%3)
}
)",
           {f32({2, 3, 5, 5}), f32({16, 16, 3, 3}), f32({16}), f32({16}), f32({16}), f32({16}), f32({16, 16, 3, 3}),
            f32({16}), f32({16}), f32({16}), f32({16}), f32({16, 3, 3, 3}), f32({1, 16, 1, 1})},
           16, {5, 10});
  CHECK(count(c.text, R"(activation="relu", layout="nChw16c"])") == 3);
  CHECK(count(c.text, "-> Tensor[Float32](2, 1, 5, 5, 16)") == 3);
  CHECK(c.report.to_blocked == 0);
  CHECK(c.report.from_blocked == 0);  // the pool reduces the blocked tensor
}
