// Elementwise fusion with broadcast operands (jit/passes/fuse_elementwise.h)
// on IR text specialized at float32 shapes: a Dense bias, an NCHW channel
// scale and shift, a row statistic [N, 1] and a tensor scalar join one
// cluster whose program reads them as (i / inner) % count, and the fused
// node computes what the op-by-op graph computes on the debug-mode
// executor (non-contiguous inputs included); two patterns or a broadcast in
// two blocks split or stop the cluster; inputs of the wrong size are a
// ShapeError, not a read out of bounds.
#include "jit/passes/fuse_elementwise.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "../specialize/spec_test_util.h"
#include "interp/graph_executor.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

using namespace msl;
using namespace msl::jit;
using jit::test::f32;
using jit::test::Parsed;
using kernels::Dims;
using kernels::DType;
using kernels::Tensor;

namespace {

Tensor random_input(std::mt19937& rng, const Dims& shape) {
  Tensor out(DType::Float32, shape);
  std::uniform_real_distribution<float> u(-2, 2);
  for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = u(rng);
  return out;
}

// The fused nodes of the root graph after fusion (shared: they outlive
// the module).
std::vector<std::shared_ptr<const FusedElementwise>> fused_nodes(const Specialized& s) {
  std::vector<std::shared_ptr<const FusedElementwise>> out;
  for (ir::Node* n : ir::topo_order(*s.graph))
    if (n->is_apply() && n->callee()->is_constant())
      if (auto h = std::get_if<ir::HostRef>(&n->callee()->value()))
        if (auto f = std::dynamic_pointer_cast<const FusedElementwise>(*h)) out.push_back(f);
  return out;
}

// Specializes `text` at `shapes`, runs it op by op, fuses; when the whole
// body became one fused node of the parameters, runs that node on the same
// inputs and checks it agrees.
struct Fusion {
  size_t clusters = 0;
  std::vector<std::shared_ptr<const FusedElementwise>> nodes;
  std::string text;
  Fusion(const std::string& ir_text, const std::vector<Dims>& shapes) {
    Parsed p(ir_text);
    std::vector<AbsValue> types;
    for (const Dims& d : shapes) types.push_back(f32(d));
    Specialized s = p.run(types);
    std::mt19937 rng(3);
    std::vector<exec::RtValue> args;
    std::vector<Tensor> tensors;
    for (const Dims& d : shapes) {
      tensors.push_back(random_input(rng, d));
      args.emplace_back(tensors.back());
    }
    Tensor before = exec::run_graph(*s.graph, args).tensor();
    clusters = run_fuse_elementwise(p.m, s);
    for (const std::string& e : ir::verify_module(p.m)) FAIL_CHECK(e);
    text = jit::test::typed_text(s);
    nodes = fused_nodes(s);
    ir::Node* out = s.graph->output();
    if (nodes.size() != 1 || !out->is_apply() || !out->callee()->is_constant()) return;
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < out->num_args(); ++i) {
      const auto& params = s.graph->params();
      auto it = std::find(params.begin(), params.end(), out->arg(i));
      if (it == params.end()) return;  // part of the body is still op by op
      inputs.push_back(tensors[static_cast<size_t>(it - params.begin())]);
    }
    std::vector<Tensor> after = nodes[0]->run(inputs);
    REQUIRE(after.size() == 1);
    REQUIRE(after[0].shape() == before.shape());
    for (int64_t i = 0; i < before.numel(); ++i) {
      INFO("element " << i);
      CHECK(after[0].item_at(i) == doctest::Approx(before.item_at(i)).epsilon(1e-6).scale(1.0));
    }
    ran_fused = true;
  }
  bool ran_fused = false;
};

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a Dense bias, a channel scale and shift, a row statistic and a scalar join one loop") {
  // relu(x + b) * g - 0.5 over [N, C] with b, g of shape [C].
  Fusion dense(R"(subgraph @f(%para1_x, %para2_b, %para3_g) {
  %0 = add(%para1_x, %para2_b)
  %1 = relu(%0)
  %2 = mul(%1, %para3_g)
  %3 = sub(%2, 0.5)
  return(%3)
}
)",
               {Dims{6, 37}, Dims{37}, Dims{37}});
  CHECK(dense.clusters == 1);
  CHECK(dense.ran_fused);
  CHECK(contains(dense.nodes.at(0)->program().text(), "input 1 at (i / 1) % 37\ninput 2 at (i / 1) % 37\n"));

  // x * s + t over NCHW with s, t of shape [1, C, 1, 1], then a scalar [].
  Fusion channels(R"(subgraph @f(%para1_x, %para2_s, %para3_t, %para4_k) {
  %0 = mul(%para1_x, %para2_s)
  %1 = add(%0, %para3_t)
  %2 = sigmoid(%1)
  %3 = mul(%2, %para4_k)
  return(%3)
}
)",
                  {Dims{2, 3, 5, 7}, Dims{1, 3, 1, 1}, Dims{1, 3, 1, 1}, Dims{}});
  CHECK(channels.clusters == 1);
  CHECK(channels.ran_fused);
  std::string program = channels.nodes.at(0)->program().text();
  CHECK(contains(program, "input 1 at (i / 35) % 3\n"));
  CHECK(contains(program, "input 3 at (i / 1) % 1\n"));

  // exp(x - m) with m = [N, 1]: one value per row of C.
  Fusion rows(R"(subgraph @f(%para1_x, %para2_m) {
  %0 = sub(%para1_x, %para2_m)
  %1 = exp(%0)
  return(%1)
}
)",
              {Dims{4, 9}, Dims{4, 1}});
  CHECK(rows.clusters == 1);
  CHECK(rows.ran_fused);
  CHECK(contains(rows.nodes.at(0)->program().text(), "input 1 at (i / 9) % 4\n"));

  // Dims of 1 in the result do not break the block: [C, 1] over [N, C, 1].
  Fusion ones(R"(subgraph @f(%para1_x, %para2_b) {
  %0 = add(%para1_x, %para2_b)
  %1 = relu(%0)
  return(%1)
}
)",
              {Dims{3, 8, 1}, Dims{8, 1}});
  CHECK(ones.ran_fused);
  CHECK(contains(ones.nodes.at(0)->program().text(), "input 1 at (i / 1) % 8\n"));
}

TEST_CASE("broadcasts one loop cannot index stay out of clusters") {
  // [N, 1] and [C] over [N, C]: two patterns; the cluster grown from the
  // output takes the [C] one and the ops up to the [N, 1] add, which stays.
  Fusion two(R"(subgraph @f(%para1_x, %para2_r, %para3_c) {
  %0 = add(%para1_x, %para2_r)
  %1 = relu(%0)
  %2 = mul(%1, %para3_c)
  %3 = neg(%2)
  return(%3)
}
)",
             {Dims{5, 8}, Dims{5, 1}, Dims{8}});
  CHECK(two.clusters == 1);
  CHECK(contains(two.text, "add("));
  CHECK(two.nodes.at(0)->program().broadcast() == codegen::EwIndexing{1, 8});

  // [C, 1, W] over [N, C, H, W] needs two divisions: its add is not fused.
  Fusion blocks(R"(subgraph @f(%para1_x, %para2_b) {
  %0 = add(%para1_x, %para2_b)
  %1 = relu(%0)
  %2 = neg(%1)
  return(%2)
}
)",
                {Dims{2, 3, 4, 5}, Dims{3, 1, 5}});
  CHECK(blocks.clusters == 1);
  CHECK(contains(blocks.text, "add("));
  CHECK(!contains(blocks.text, "relu("));

  // An outer sum [N, 1] + [1, C] has no operand of the result's shape.
  Fusion outer(R"(subgraph @f(%para1_r, %para2_c) {
  %0 = add(%para1_r, %para2_c)
  %1 = relu(%0)
  return(%1)
}
)",
               {Dims{5, 1}, Dims{1, 8}});
  CHECK(outer.clusters == 0);
}

TEST_CASE("a fused node reads non-contiguous inputs and rejects inputs of another size") {
  codegen::EwProgram p;
  p.outputs = {p.binary(codegen::EwOp::Add, p.input(0), p.input(1, codegen::EwIndexing{1, 3}))};
  FusedElementwise f(p, Dims{4, 3}, 1);
  std::mt19937 rng(5);
  // x is the transpose of a [3, 4] tensor (a view with swapped strides).
  Tensor xt = random_input(rng, Dims{3, 4}), b = random_input(rng, Dims{3});
  Tensor x = kernels::execute1(kernels::Prim::transpose, std::vector<Tensor>{xt},
                               kernels::Attrs{{"perm", std::vector<int64_t>{1, 0}}});
  REQUIRE(!x.is_contiguous());
  std::vector<Tensor> out = f.run({x, b});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      double want = static_cast<double>(xt.data<float>()[j * 4 + i]) + b.data<float>()[j];
      CHECK(out[0].item_at(i * 3 + j) == doctest::Approx(want).epsilon(1e-6));
    }
  CHECK_THROWS_AS(f.run({x, random_input(rng, Dims{4})}), kernels::ShapeError);
  CHECK_THROWS_AS(f.run({random_input(rng, Dims{4, 4}), b}), kernels::ShapeError);
  CHECK_THROWS_AS(f.run({x}), kernels::ValueError);
}

TEST_CASE("a fused loop writes its result over an input nothing else holds, and only then") {
  using msl::jit::codegen::EwOp;
  msl::jit::codegen::EwProgram p;
  int x = p.input(0);
  int y = p.input(1);
  int e = p.unary(EwOp::Exp, x);
  p.outputs.push_back(p.binary(EwOp::Sub, p.binary(EwOp::Mul, e, p.constant(2.0f)), y));
  const msl::kernels::Dims shape{3, 1000};
  msl::jit::FusedElementwise fused(p, shape, 3);
  auto make = [&](float scale) {
    msl::kernels::Tensor t(msl::kernels::DType::Float32, shape);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = scale * static_cast<float>(i % 17) - 3.0f;
    return t;
  };
  auto expect = [&](int64_t i) {
    double a = 0.1 * static_cast<double>(i % 17) - 3.0, b = 0.2 * static_cast<double>(i % 17) - 3.0;
    return std::exp(a) * 2.0 - b;
  };
  // Only `inputs` holds x's buffer: the result takes it.
  {
    std::vector<msl::kernels::Tensor> inputs{make(0.1f), make(0.2f)};
    const void* xbuf = inputs[0].raw();
    std::vector<msl::kernels::Tensor> out = fused.run(inputs);
    CHECK(out[0].raw() == xbuf);
    CHECK(out[0].shape() == shape);
    for (int64_t i = 0; i < out[0].numel(); i += 7)
      CHECK(out[0].data<float>()[i] == doctest::Approx(expect(i)).epsilon(1e-5));
  }
  // x is still held elsewhere: a new buffer, x unchanged.
  {
    msl::kernels::Tensor x_kept = make(0.1f);
    std::vector<msl::kernels::Tensor> inputs{x_kept, make(0.2f)};
    std::vector<msl::kernels::Tensor> out = fused.run(inputs);
    CHECK(out[0].raw() != x_kept.raw());
    CHECK(x_kept.data<float>()[5] == doctest::Approx(0.1f * 5 - 3.0f));
    for (int64_t i = 0; i < out[0].numel(); i += 7)
      CHECK(out[0].data<float>()[i] == doctest::Approx(expect(i)).epsilon(1e-5));
  }
  // The same buffer passed twice is not unshared.
  {
    msl::kernels::Tensor t = make(0.1f);
    std::vector<msl::kernels::Tensor> inputs{t, t};
    t = msl::kernels::Tensor();
    const void* buf = inputs[0].raw();
    std::vector<msl::kernels::Tensor> out = fused.run(inputs);
    CHECK(out[0].raw() != buf);
    CHECK(out[0].data<float>()[3] == doctest::Approx(std::exp(0.1 * 3 - 3.0) * 2.0 - (0.1 * 3 - 3.0)).epsilon(1e-5));
  }
}
