// jit/passes/typed_simplify: the zeros of an unused output's sensitivity
// fold through the gradient terms they feed (the softmax that
// sparse_softmax_cross_entropy's gradient computes for its second output
// disappears, and the graph computes the same values on the debug-mode
// executor), products with zeros that would broadcast stay; multiplications
// by an all-ones tensor constant go only where nothing broadcasts or
// promotes.
#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include "../specialize/spec_test_util.h"
#include "jit/exec/executor.h"
#include "jit/passes/dce.h"
#include "jit/passes/typed_simplify.h"

using namespace msl;
using namespace msl::jit;
using jit::test::f32;
using jit::test::Parsed;
using kernels::Dims;
using kernels::DType;
using kernels::Tensor;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

Tensor random_f32(const Dims& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2, 2);
  Tensor t(DType::Float32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Every tensor of a (possibly nested) result, flattened in order.
void tensors_of(const exec::RtValue& v, std::vector<Tensor>& out) {
  if (v.is<Tensor>()) {
    out.push_back(v.tensor());
    return;
  }
  for (const exec::RtValue& item : v.tuple()) tensors_of(item, out);
}

void check_same_values(const exec::RtValue& before, const exec::RtValue& after) {
  std::vector<Tensor> a, b;
  tensors_of(before, a);
  tensors_of(after, b);
  REQUIRE(a.size() == b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    REQUIRE(a[k].shape() == b[k].shape());
    for (int64_t i = 0; i < a[k].numel(); ++i) {
      INFO("result " << k << ", element " << i);
      CHECK(b[k].item_at(i) == doctest::Approx(a[k].item_at(i)).epsilon(1e-6));
    }
  }
}

}  // namespace

TEST_CASE("typed_simplify: the zero sensitivity of sparse_softmax_cross_entropy's second output folds away") {
  // The shape of the expanded gradient of SoftmaxCrossEntropyWithLogits
  // (sparse): the loss's backward adds softmax_grad(softmax(x), zeros) for
  // the second output nobody used.
  Parsed p(R"(subgraph @f(%para1_x, %para2_label, %para3_w) {
  %0 = sparse_softmax_cross_entropy(%para1_x, %para2_label)
  %1 = tuple_getitem(%0, 0)
  %2 = tuple_getitem(%0, 1)
  %3 = mul(%2, %para3_w)
  %4 = softmax[axis=1](%para1_x)
  %5 = zeros_like(%0)
  %6 = tuple_getitem(%5, 1)
  %7 = softmax_grad[axis=1](%4, %6)
  %8 = neg(%7)
  %9 = mul(%para3_w, %8)
  %10 = add(%3, %9)
  %11 = make_tuple(%1, %10)
  return(%11)
}
)");
  Specialized sp = p.run({f32({4, 5}), abs_tensor(DType::Int32, {4}), f32({4, 5})});
  Tensor labels(DType::Int32, Dims{4});
  for (int i = 0; i < 4; ++i) labels.data<int32_t>()[i] = (3 * i + 1) % 5;
  std::vector<exec::RtValue> args{exec::RtValue(random_f32({4, 5}, 1)), exec::RtValue(labels),
                                  exec::RtValue(random_f32({4, 5}, 2))};
  exec::RtValue before = exec::run_graph(*sp.graph, args);
  CHECK(run_typed_simplify(p.m, sp));
  run_dce(p.m, *sp.graph);
  for (const std::string& e : ir::verify_module(p.m)) FAIL_CHECK(e);
  std::string text = ir::print_graph(*sp.graph);
  CHECK_FALSE(contains(text, "softmax["));
  CHECK_FALSE(contains(text, "softmax_grad"));
  CHECK_FALSE(contains(text, "neg("));
  CHECK_FALSE(contains(text, "zeros_like"));
  CHECK_FALSE(contains(text, "add("));
  CHECK(contains(text, "mul("));  // the live product stays
  check_same_values(before, exec::run_graph(*sp.graph, args));
}

TEST_CASE("typed_simplify: products with zeros that broadcast stay") {
  // zeros [1, 3] times x [2, 3] is zeros of [2, 3], not the [1, 3] operand;
  // x times the number 0 is not that number: both kept.
  Parsed p(R"(subgraph @f(%para1_x, %para2_row) {
  %0 = zeros_like(%para2_row)
  %1 = mul(%0, %para1_x)
  %2 = mul(%para1_x, 0.0)
  %3 = make_tuple(%1, %2)
  return(%3)
}
)");
  Specialized sp = p.run({f32({2, 3}), f32({1, 3})});
  CHECK_FALSE(run_typed_simplify(p.m, sp));
  CHECK(contains(ir::print_graph(*sp.graph), "mul(%0, %para1_x)"));
}

TEST_CASE("typed_simplify: a product with an all-ones tensor constant of its type is the other operand") {
  Parsed p(R"(subgraph @f(%para1_x, %para2_r) {
  %0 = mul(%para1_x, Tensor[Float32](2, 3)[1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
  %1 = mul(Tensor[Float32](2, 3)[1.0, 1.0, 1.0, 1.0, 1.0, 1.0], %0)
  %2 = mul(%para2_r, Tensor[Float32](2, 3)[1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
  %3 = mul(%para1_x, Tensor[Float32](2, 3)[1.0, 1.0, 1.0, 1.0, 1.0, 2.0])
  %4 = mul(%para1_x, Tensor[Float64](2, 3)[1.0, 1.0, 1.0, 1.0, 1.0, 1.0])
  %5 = make_tuple(%1, %2, %3, %4)
  return(%5)
}
)");
  // x [2, 3]: both products by ones go. r [1, 3] broadcast to [2, 3] by the
  // ones: kept. Not all ones: kept. Float64 ones promote x: kept.
  Specialized sp = p.run({f32({2, 3}), f32({1, 3})});
  std::vector<exec::RtValue> args{exec::RtValue(random_f32({2, 3}, 3)), exec::RtValue(random_f32({1, 3}, 4))};
  exec::RtValue before = exec::run_graph(*sp.graph, args);
  CHECK(run_typed_simplify(p.m, sp));
  run_dce(p.m, *sp.graph);
  std::string text = ir::print_graph(*sp.graph);
  CHECK(contains(text, "make_tuple(%para1_x, %0, %1, %2)"));
  CHECK(contains(text, "mul(%para2_r, Tensor[Float32](2, 3)"));
  CHECK(contains(text, "Tensor[Float64](2, 3)"));
  check_same_values(before, exec::run_graph(*sp.graph, args));
}

TEST_CASE("typed_simplify: mixed-precision zeros fold through reshapes, promotions, cast round trips and grad_add") {
  // The shape of a bfloat16 BatchNorm's expanded gradient when the batch
  // statistics' sensitivities are zero: zeros reshaped and scaled, times
  // (x - mean) promoted to float32, added to the bfloat16 dx (promoting it)
  // and cast back, then summed with a zero sensitivity of another use.
  Parsed p(R"(subgraph @f(%para1_dx, %para2_x, %para3_mean) {
  %0 = zeros_like(%para3_mean)
  %1 = reshape[shape=(1, 4)](%0)
  %2 = mul(%1, 0.5)
  %3 = sub(%para2_x, %para3_mean)
  %4 = mul(%2, %3)
  %5 = add(%para1_dx, %4)
  %6 = cast[dtype=BFloat16](%5)
  %7 = zeros_like(%para1_dx)
  %8 = grad_add(%7, %6)
  return(%8)
}
)");
  Specialized sp = p.run({abs_tensor(DType::BFloat16, {2, 4}), abs_tensor(DType::BFloat16, {2, 4}), f32({1, 4})});
  auto bf16 = [](const Tensor& f) {
    Tensor t(DType::BFloat16, f.shape());
    for (int64_t i = 0; i < f.numel(); ++i) {
      uint32_t bits;
      float v = f.data<float>()[i];
      std::memcpy(&bits, &v, 4);
      t.data<uint16_t>()[i] = static_cast<uint16_t>(bits >> 16);
    }
    return t;
  };
  std::vector<exec::RtValue> args{exec::RtValue(bf16(random_f32({2, 4}, 5))), exec::RtValue(bf16(random_f32({2, 4}, 6))),
                                  exec::RtValue(random_f32({1, 4}, 7))};
  exec::RtValue before = exec::run_graph(*sp.graph, args);
  CHECK(run_typed_simplify(p.m, sp));
  run_dce(p.m, *sp.graph);
  for (const std::string& e : ir::verify_module(p.m)) FAIL_CHECK(e);
  std::string text = ir::print_graph(*sp.graph);
  CHECK(contains(text, "return(%para1_dx)"));
  CHECK_FALSE(contains(text, "sub("));
  CHECK_FALSE(contains(text, "cast["));
  CHECK_FALSE(contains(text, "grad_add("));
  check_same_values(before, exec::run_graph(*sp.graph, args));
}

TEST_CASE("typed_simplify: grad_add of two tensors of its type is an add, which fusion takes") {
  Parsed p(R"(subgraph @f(%para1_a, %para2_b) {
  %0 = grad_add(%para1_a, %para2_b)
  %1 = relu(%0)
  return(%1)
}
)");
  Specialized sp = p.run({f32({2, 3}), f32({2, 3})});
  std::vector<exec::RtValue> args{exec::RtValue(random_f32({2, 3}, 8)), exec::RtValue(random_f32({2, 3}, 9))};
  exec::RtValue before = exec::run_graph(*sp.graph, args);
  CHECK(run_typed_simplify(p.m, sp));
  std::string text = ir::print_graph(*sp.graph);
  CHECK(contains(text, "add(%para1_a, %para2_b)"));
  CHECK_FALSE(contains(text, "grad_add"));
  check_same_values(before, exec::run_graph(*sp.graph, args));
}
