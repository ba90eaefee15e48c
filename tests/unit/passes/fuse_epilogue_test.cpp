// Epilogue fusion (jit/passes/fuse_epilogue.h): each pattern on IR text,
// specialized at float32 shapes, is rewritten into its fused primitive and
// computes what the op-by-op graph computes (both run on the debug-mode
// executor); a second user of an intermediate, a training batch norm, a
// broadcasting add and float64 leave the graph alone; the types table
// covers every node afterwards.
#include "jit/passes/fuse_epilogue.h"

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
using kernels::Dims;
using kernels::DType;
using kernels::Tensor;

namespace {

std::vector<double> values(const exec::RtValue& v) {
  const Tensor& t = v.tensor();
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.item_at(i));
  return out;
}

// Specializes `text` at `types`, runs it, fuses, runs it again on the same
// inputs and checks both results agree; returns the fused typed text.
struct Fused {
  size_t count = 0;
  std::string text;
  Fused(const std::string& ir_text, const std::vector<AbsValue>& types, std::vector<int> positive = {}) {
    Parsed p(ir_text);
    Specialized s = p.run(types);
    std::vector<exec::RtValue> args = jit::test::random_args(types, positive, 7);
    std::vector<double> before = values(exec::run_graph(*s.graph, args));
    count = run_fuse_epilogue(p.m, s);
    for (const std::string& e : ir::verify_module(p.m)) FAIL_CHECK(e);
    CHECK(jit::test::untyped_nodes(s) == 0);
    std::vector<double> after = values(exec::run_graph(*s.graph, args));
    REQUIRE(after.size() == before.size());
    for (size_t i = 0; i < after.size(); ++i) {
      INFO("element " << i);
      CHECK(after[i] == doctest::Approx(before[i]).epsilon(1e-5).scale(1.0));
    }
    text = jit::test::typed_text(s);
  }
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

const char* kDense = R"(subgraph @f(%para1_x, %para2_w, %para3_b) {
  %0 = matmul[transpose_a=False, transpose_b=True](%para1_x, %para2_w)
  %1 = add(%0, %para3_b)
  %2 = relu(%1)
  return(%2)
}
)";

const char* kConvBias = R"(subgraph @f(%para1_x, %para2_w, %para3_b) {
  %0 = conv2d[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = reshape[shape=(1, 6, 1, 1)](%para3_b)
  %2 = add(%1, %0)
  %3 = relu(%2)
  return(%3)
}
)";

// Two conv -> batch_norm -> relu blocks: the second reads the first's result.
const char* kConvBn = R"(subgraph @f(%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v, %para7_w2) {
  %0 = conv2d[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = batch_norm[training=False, epsilon=0.001](%0, %para3_g, %para4_b, %para5_m, %para6_v)
  %2 = tuple_getitem(%1, 0)
  %3 = relu(%2)
  %4 = conv2d[stride=(2, 2), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad"](%3, %para7_w2)
  %5 = batch_norm[training=False, epsilon=0.001](%4, %para3_g, %para4_b, %para5_m, %para6_v)
  %6 = tuple_getitem(%5, 0)
  return(%6)
}
)";

}  // namespace

TEST_CASE("fuse_epilogue: Dense (matmul, bias add, relu) becomes one matmul_bias") {
  Fused f(kDense, {f32({4, 6}), f32({5, 6}), f32({5})});
  CHECK(f.count == 1);
  CHECK(contains(
      f.text, R"(matmul_bias[transpose_a=False, transpose_b=True, activation="relu"](%para1_x, %para2_w, %para3_b))"));
  CHECK_FALSE(contains(f.text, "relu("));
  CHECK_FALSE(contains(f.text, "add("));
}

TEST_CASE("fuse_epilogue: conv2d plus a (1, C, 1, 1) bias and relu becomes conv2d_bias") {
  Fused f(kConvBias, {f32({2, 4, 6, 6}), f32({6, 4, 3, 3}), f32({6})});
  CHECK(f.count == 1);
  CHECK(contains(f.text, R"(pad_mode="pad", activation="relu"](%para1_x, %para2_w, %0))"));
  CHECK(contains(f.text, "conv2d_bias["));
  CHECK_FALSE(contains(f.text, "add("));
}

TEST_CASE("fuse_epilogue: inference batch norms fold into their convolutions, one after the other") {
  // var (input 5) positive.
  Fused f(kConvBn, {f32({2, 4, 7, 7}), f32({4, 4, 3, 3}), f32({4}), f32({4}), f32({4}), f32({4}), f32({4, 4, 3, 3})},
          {5});
  CHECK(f.count == 2);
  CHECK(f.text == R"(# IR of: f_1
subgraph @f_1(%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v, %para7_w2) {
  %0 = conv2d_bn[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad", epsilon=0.001, activation="relu"](%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v) : (Tensor[Float32](2, 4, 7, 7), Tensor[Float32](4, 4, 3, 3), Tensor[Float32](4), Tensor[Float32](4), Tensor[Float32](4), Tensor[Float32](4)) -> Tensor[Float32](2, 4, 7, 7)
  %1 = conv2d_bn[stride=(2, 2), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad", epsilon=0.001, activation="none"](%0, %para7_w2, %para3_g, %para4_b, %para5_m, %para6_v) : (Tensor[Float32](2, 4, 7, 7), Tensor[Float32](4, 4, 3, 3), Tensor[Float32](4), Tensor[Float32](4), Tensor[Float32](4), Tensor[Float32](4)) -> Tensor[Float32](2, 4, 3, 3)
  return(%1)
}
)");
}

TEST_CASE("fuse_epilogue: an intermediate with another user stays op by op") {
  // The product is also returned (a training graph keeps it for backward).
  Fused product(R"(subgraph @f(%para1_x, %para2_w, %para3_b) {
  %0 = matmul[transpose_a=False, transpose_b=False](%para1_x, %para2_w)
  %1 = add(%0, %para3_b)
  %2 = relu(%1)
  %3 = make_tuple(%2, %0)
  %4 = tuple_getitem(%3, 0)
  %5 = tuple_getitem(%3, 1)
  %6 = add(%4, %5)
  return(%6)
}
)",
                {f32({3, 4}), f32({4, 5}), f32({1, 5})});
  CHECK(product.count == 0);
  CHECK(contains(product.text, "relu("));
  // The add's result has a second user: the bias fuses, the relu stays.
  Fused sum(R"(subgraph @f(%para1_x, %para2_w, %para3_b) {
  %0 = matmul[transpose_a=False, transpose_b=False](%para1_x, %para2_w)
  %1 = add(%para3_b, %0)
  %2 = relu(%1)
  %3 = mul(%2, %1)
  return(%3)
}
)",
            {f32({3, 4}), f32({4, 5}), f32({1, 5})});
  CHECK(sum.count == 1);
  CHECK(contains(sum.text, R"(activation="none"](%para1_x, %para2_w, %para3_b))"));
  CHECK(contains(sum.text, "relu("));
  // The batch norm's statistics are used: not an inference-only use.
  Fused stats(R"(subgraph @f(%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v) {
  %0 = conv2d[stride=(1, 1), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = batch_norm[training=False, epsilon=0.001](%0, %para3_g, %para4_b, %para5_m, %para6_v)
  %2 = tuple_getitem(%1, 0)
  %3 = tuple_getitem(%1, 1)
  %4 = reduce_sum[axes=(), keep_dims=False](%2)
  %5 = reduce_sum[axes=(), keep_dims=False](%3)
  %6 = add(%4, %5)
  return(%6)
}
)",
              {f32({1, 2, 3, 3}), f32({2, 2, 1, 1}), f32({2}), f32({2}), f32({2}), f32({2})}, {5});
  CHECK(stats.count == 0);
}

TEST_CASE("fuse_epilogue: training batch norm, broadcasting adds and float64 are left alone") {
  Fused training(R"(subgraph @f(%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v) {
  %0 = conv2d[stride=(1, 1), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = batch_norm[training=True, epsilon=0.001](%0, %para3_g, %para4_b, %para5_m, %para6_v)
  %2 = tuple_getitem(%1, 0)
  return(%2)
}
)",
                 {f32({2, 2, 3, 3}), f32({2, 2, 1, 1}), f32({2}), f32({2}), f32({2}), f32({2})}, {5});
  CHECK(training.count == 0);
  // A (C,) operand broadcasts along W, not the channels; a (4, 5) bias is a
  // full tensor; an add that broadcasts the product to a larger shape.
  Fused no_reshape(R"(subgraph @f(%para1_x, %para2_w, %para3_b) {
  %0 = conv2d[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = add(%0, %para3_b)
  return(%1)
}
)",
                   {f32({1, 6, 6, 6}), f32({6, 6, 3, 3}), f32({6})});
  CHECK(no_reshape.count == 0);
  const char* dense_no_relu = R"(subgraph @f(%para1_x, %para2_w, %para3_b) {
  %0 = matmul[transpose_a=False, transpose_b=False](%para1_x, %para2_w)
  %1 = add(%0, %para3_b)
  return(%1)
}
)";
  CHECK(Fused(dense_no_relu, {f32({4, 3}), f32({3, 5}), f32({4, 5})}).count == 0);
  CHECK(Fused(dense_no_relu, {f32({1, 3}), f32({3, 5}), f32({4, 5})}).count == 0);
  CHECK(Fused(dense_no_relu, {f32({4, 3}), f32({3, 5}), f32({5})}).count == 1);
  CHECK(Fused(dense_no_relu,
              {abs_tensor(DType::Float64, {4, 3}), abs_tensor(DType::Float64, {3, 5}), abs_tensor(DType::Float64, {5})})
            .count == 0);
}

TEST_CASE(
    "fuse_epilogue: the primitive graph of a small inference network (conv-bn-relu, conv-bias-relu, Dense-relu)") {
  // As graph mode expands nn.Conv2d/BatchNorm2d/ReLU/Flatten/Dense with
  // set_train(False), before elementwise fusion.
  Fused f(
      R"(subgraph @net(%para1_x, %para2_g, %para3_b, %para4_m, %para5_v, %para6_w, %para7_w2, %para8_b2, %para9_fw, %para10_fb) {
  %0 = conv2d[stride=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para6_w)
  %1 = batch_norm[training=False, epsilon=1e-05](%0, %para2_g, %para3_b, %para4_m, %para5_v)
  %2 = tuple_getitem(%1, 0)
  %3 = relu(%2)
  %4 = conv2d[stride=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1), groups=1, pad_mode="pad"](%3, %para7_w2)
  %5 = reshape[shape=(1, 8, 1, 1)](%para8_b2)
  %6 = add(%4, %5)
  %7 = relu(%6)
  %8 = reshape[shape=(2, -1)](%7)
  %9 = matmul[transpose_b=True](%8, %para9_fw)
  %10 = add(%9, %para10_fb)
  %11 = relu(%10)
  return(%11)
}
)",
      {f32({2, 4, 6, 6}), f32({8}), f32({8}), f32({8}), f32({8}), f32({8, 4, 3, 3}), f32({8, 8, 3, 3}), f32({8}),
       f32({10, 288}), f32({10})},
      {4});
  CHECK(f.count == 3);
  CHECK(contains(f.text, "conv2d_bn["));
  CHECK(contains(f.text, "conv2d_bias["));
  CHECK(contains(f.text, R"(matmul_bias[transpose_b=True, activation="relu"])"));
  for (const char* gone : {"relu(", "add(", "batch_norm[", "tuple_getitem(", "conv2d[", "matmul["})
    CHECK_FALSE(contains(f.text, gone));
}

TEST_CASE("fuse_epilogue: a ResNet block's end (conv, batch norm, residual add, relu) becomes conv2d_bn_add") {
  // The shortcut is itself a 1x1 conv + batch norm. The chain of the add's
  // first operand comes first in topological order and takes the add; the
  // shortcut fuses alone and is its residual.
  Fused f(R"(subgraph @block(%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v, %para7_wd) {
  %0 = conv2d[stride=(1, 1), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para7_wd)
  %1 = batch_norm[training=False, epsilon=1e-05](%0, %para3_g, %para4_b, %para5_m, %para6_v)
  %2 = tuple_getitem(%1, 0)
  %3 = conv2d[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %4 = batch_norm[training=False, epsilon=1e-05](%3, %para3_g, %para4_b, %para5_m, %para6_v)
  %5 = tuple_getitem(%4, 0)
  %6 = add(%5, %2)
  %7 = relu(%6)
  return(%7)
}
)",
          {f32({2, 4, 5, 5}), f32({6, 4, 3, 3}), f32({6}), f32({6}), f32({6}), f32({6}), f32({6, 4, 1, 1})}, {5});
  CHECK(f.count == 2);
  CHECK(contains(
      f.text,
      R"(%0 = conv2d_bn[stride=(1, 1), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad", epsilon=1e-05, activation="none"](%para1_x, %para7_wd)"));
  CHECK(contains(
      f.text,
      R"(%1 = conv2d_bn_add[stride=(1, 1), padding=(1,), dilation=(1, 1), groups=1, pad_mode="pad", epsilon=1e-05, activation="relu"](%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v, %0))"));
  CHECK_FALSE(contains(f.text, "add("));
  // A residual that broadcasts is not the sum post-op's: the add stays.
  Fused broadcast(R"(subgraph @f(%para1_x, %para2_w, %para3_g, %para4_b, %para5_m, %para6_v, %para7_r) {
  %0 = conv2d[stride=(1, 1), padding=(0,), dilation=(1, 1), groups=1, pad_mode="pad"](%para1_x, %para2_w)
  %1 = batch_norm[training=False, epsilon=1e-05](%0, %para3_g, %para4_b, %para5_m, %para6_v)
  %2 = tuple_getitem(%1, 0)
  %3 = add(%2, %para7_r)
  return(%3)
}
)",
                  {f32({2, 4, 5, 5}), f32({6, 4, 1, 1}), f32({6}), f32({6}), f32({6}), f32({6}), f32({1, 6, 5, 5})},
                  {5});
  CHECK(broadcast.count == 1);
  CHECK(contains(broadcast.text, "conv2d_bn["));
  CHECK(contains(broadcast.text, "add("));
}
