// Elementwise fusion with broadcast operands (jit/passes/fuse_elementwise.h)
// on IR text specialized at float32 shapes: a Dense bias, an NCHW channel
// scale and shift, a row statistic [N, 1] and a tensor scalar join one
// cluster whose program reads them as (i / inner) % count, and the fused
// node computes what the op-by-op graph computes on the debug-mode
// executor (non-contiguous inputs included); a channel-blocked batch-norm
// gradient's per-channel operands [1, C/b, 1, 1, b] are one lane pattern
// of one loop, which also computes its per-channel sums; two patterns or a
// broadcast in three blocks split or stop the cluster; inputs of the wrong size are a ShapeError, not a read out
// of bounds.
#include "jit/passes/fuse_elementwise.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "../specialize/spec_test_util.h"
#include "jit/exec/executor.h"
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

  // [C, 1, W, 1] over [N, C, H, W, 2] is three blocks: its add is not fused.
  Fusion blocks(R"(subgraph @f(%para1_x, %para2_b) {
  %0 = add(%para1_x, %para2_b)
  %1 = relu(%0)
  %2 = neg(%1)
  return(%2)
}
)",
                {Dims{2, 3, 4, 5, 2}, Dims{3, 1, 5, 1}});
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

TEST_CASE("channel-blocked per-channel operands are a lane pattern of one loop") {
  // (x - mean) * rstd * g + dy over [N, C/8, H, W, 8], the statistics and
  // g of shape [1, C/8, 1, 1, 8]: ((i / H*W*8) % (C/8)) * 8 + i % 8.
  const std::string bn = R"(subgraph @f(%para1_x, %para2_m, %para3_r, %para4_g, %para5_dy) {
  %0 = sub(%para1_x, %para2_m)
  %1 = mul(%0, %para3_r)
  %2 = mul(%1, %para4_g)
  %3 = add(%2, %para5_dy)
  return(%3)
}
)";
  const Dims x{2, 3, 4, 5, 8}, c{1, 3, 1, 1, 8};
  Fusion blocked(bn, {x, c, c, c, x});
  CHECK(blocked.clusters == 1);
  CHECK(blocked.nodes.size() == 1);
  CHECK(blocked.ran_fused);
  CHECK(blocked.nodes.at(0)->program().broadcast() == codegen::EwIndexing{160, 3, 8});
  CHECK(contains(blocked.nodes.at(0)->program().text(), "input 1 at ((i / 160) % 3) * 8 + i % 8\n"));

  // Per-sample, per-channel operands [N, C/8, 1, 1, 8]: the first block is
  // N * C/8.
  Fusion per_sample(bn, {x, Dims{2, 3, 1, 1, 8}, Dims{2, 3, 1, 1, 8}, Dims{2, 3, 1, 1, 8}, x});
  CHECK(per_sample.ran_fused);
  CHECK(per_sample.nodes.at(0)->program().broadcast() == codegen::EwIndexing{160, 6, 8});

  // [C, 1, W] over [N, C, H, W]: a block and a trailing block of W.
  Fusion trailing(R"(subgraph @f(%para1_x, %para2_b) {
  %0 = add(%para1_x, %para2_b)
  %1 = relu(%0)
  return(%1)
}
)",
                  {Dims{2, 3, 4, 5}, Dims{3, 1, 5}});
  CHECK(trailing.ran_fused);
  CHECK(trailing.nodes.at(0)->program().broadcast() == codegen::EwIndexing{20, 3, 5});
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
  // Only `inputs` holds x's buffer, handed over as the executor does: the
  // result takes it.
  {
    std::vector<msl::kernels::Tensor> inputs{make(0.1f), make(0.2f)};
    const void* xbuf = inputs[0].raw();
    std::vector<msl::kernels::Tensor> out = fused.run(std::move(inputs));
    CHECK(out[0].raw() == xbuf);
    CHECK(out[0].shape() == shape);
    for (int64_t i = 0; i < out[0].numel(); i += 7)
      CHECK(out[0].data<float>()[i] == doctest::Approx(expect(i)).epsilon(1e-5));
  }
  // x is still held elsewhere: a new buffer, x unchanged.
  {
    msl::kernels::Tensor x_kept = make(0.1f);
    std::vector<msl::kernels::Tensor> inputs{x_kept, make(0.2f)};
    std::vector<msl::kernels::Tensor> out = fused.run(std::move(inputs));
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
    std::vector<msl::kernels::Tensor> out = fused.run(std::move(inputs));
    CHECK(out[0].raw() != buf);
    CHECK(out[0].data<float>()[3] == doctest::Approx(std::exp(0.1 * 3 - 3.0) * 2.0 - (0.1 * 3 - 3.0)).epsilon(1e-5));
  }
}

// ------------------------------------------------ sums (bias gradients)

namespace {

// Specializes `ir_text` at `inputs`' types, runs it op by op, fuses, runs
// the fused graph (fused nodes called through the executor's host hook)
// and checks every result agrees; the sums within float32 accumulation.
struct SumFusion {
  size_t clusters = 0;
  std::vector<std::shared_ptr<const FusedElementwise>> nodes;
  std::string text;
  SumFusion(const std::string& ir_text, const std::vector<std::pair<DType, Dims>>& inputs) {
    Parsed p(ir_text);
    std::vector<AbsValue> types;
    std::vector<exec::RtValue> args;
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-2, 2);
    for (const auto& [dtype, dims] : inputs) {
      types.push_back(abs_tensor(dtype, dims));
      Tensor t(dtype, dims);
      for (int64_t i = 0; i < t.numel(); ++i) {
        if (dtype == DType::Float64)
          t.data<double>()[i] = u(rng);
        else
          t.data<float>()[i] = static_cast<float>(u(rng));
      }
      args.emplace_back(t);
    }
    Specialized s = p.run(types);
    exec::RtValue before = exec::run_graph(*s.graph, args);
    clusters = run_fuse_elementwise(p.m, s);
    for (const std::string& e : ir::verify_module(p.m)) FAIL_CHECK(e);
    text = jit::test::typed_text(s);
    nodes = fused_nodes(s);
    exec::ExecOptions opts;
    opts.call_host = [](const ir::HostRef& h, std::vector<exec::RtValue> in) {
      auto f = std::dynamic_pointer_cast<const FusedElementwise>(h);
      REQUIRE(f);
      std::vector<Tensor> tensors;
      for (const exec::RtValue& a : in) tensors.push_back(a.tensor());
      std::vector<Tensor> outs = f->run(tensors);
      if (outs.size() == 1) return exec::RtValue(outs[0]);
      std::vector<exec::RtValue> items(outs.begin(), outs.end());
      return exec::make_tuple(std::move(items));
    };
    exec::RtValue after = exec::run_graph(*s.graph, args, opts);
    std::vector<Tensor> want, got;
    flatten(before, want);
    flatten(after, got);
    REQUIRE(want.size() == got.size());
    for (size_t k = 0; k < want.size(); ++k) {
      REQUIRE(got[k].shape() == want[k].shape());
      for (int64_t i = 0; i < want[k].numel(); ++i) {
        INFO("result " << k << ", element " << i);
        CHECK(got[k].item_at(i) == doctest::Approx(want[k].item_at(i)).epsilon(1e-5).scale(1.0));
      }
    }
  }
  static void flatten(const exec::RtValue& v, std::vector<Tensor>& out) {
    if (v.is<Tensor>()) return out.push_back(v.tensor());
    for (const exec::RtValue& item : v.tuple()) flatten(item, out);
  }
  // The only fused node's program.
  const codegen::EwProgram& program() const {
    REQUIRE(nodes.size() == 1);
    return nodes[0]->program();
  }
};

std::pair<DType, Dims> f32_of(Dims d) { return {DType::Float32, std::move(d)}; }

}  // namespace

TEST_CASE("a bias gradient's reduce_sum joins the loop that computes dy, which is then not stored") {
  // Dense: db = sum over rows of relu_grad(g, y) * 0.5, at several sizes
  // (a tile of 10, odd widths, rows of 300).
  for (Dims shape : {Dims{7, 10}, Dims{13, 33}, Dims{150, 300}}) {
    CAPTURE(shape.str());
    SumFusion dense(R"(subgraph @f(%para1_g, %para2_y) {
  %0 = relu_grad(%para1_g, %para2_y)
  %1 = mul(%0, 0.5)
  %2 = reduce_sum[axes=(0,), keep_dims=False](%1)
  return(%2)
}
)",
                    {f32_of(shape), f32_of(shape)});
    CHECK(dense.clusters == 1);
    CHECK(!contains(dense.text, "reduce_sum"));
    CHECK(dense.program().outputs.empty());  // dy is only summed: never written
    REQUIRE(dense.program().reductions.size() == 1);
    CHECK(dense.program().reductions[0].how == codegen::EwIndexing{1, shape[1]});
    CHECK(contains(dense.text, "fused_elementwise_3ops"));
  }
  // Conv: sum over (0, 2, 3) of NCHW, with and without keep_dims, beside a
  // per-channel scale [1, C, 1, 1] of the same pattern.
  for (bool keep : {true, false}) {
    CAPTURE(keep);
    std::string text = R"(subgraph @f(%para1_g, %para2_y, %para3_s) {
  %0 = relu_grad(%para1_g, %para2_y)
  %1 = mul(%0, %para3_s)
  %2 = reduce_sum[axes=(0, 2, 3), keep_dims=KEEP](%1)
  return(%2)
}
)";
    text.replace(text.find("KEEP"), 4, keep ? "True" : "False");
    SumFusion conv(text, {f32_of({3, 4, 9, 7}), f32_of({3, 4, 9, 7}), f32_of({1, 4, 1, 1})});
    CHECK(conv.clusters == 1);
    CHECK(!contains(conv.text, "reduce_sum"));
    CHECK(conv.program().outputs.empty());
    CHECK(conv.program().reductions.at(0).how == codegen::EwIndexing{63, 4});
    CHECK(contains(conv.text, keep ? "Tensor[Float32](1, 4, 1, 1)" : "-> Tensor[Float32](4)"));
  }
  // Everything summed (a scalar), negative axes naming every axis.
  SumFusion all(R"(subgraph @f(%para1_x, %para2_b) {
  %0 = add(%para1_x, %para2_b)
  %1 = exp(%0)
  %2 = reduce_sum[axes=(-2, -1), keep_dims=False](%1)
  %3 = reduce_sum[axes=(), keep_dims=True](%0)
  %4 = make_tuple(%2, %3)
  return(%4)
}
)",
                {f32_of({40, 50}), f32_of({50})});
  CHECK(all.clusters == 1);
  CHECK(!contains(all.text, "reduce_sum"));
  CHECK(all.program().reductions.size() == 2);
  CHECK(all.program().reductions.at(0).how.scalar());
}

TEST_CASE("a summed value used elsewhere stays an output; the sum of a matmul's result joins its reader's loop") {
  // dy = relu_grad(g @ w, y): dy is read by dW's matmul, so stored; the
  // sums of dy and of the matmul's result g @ w are both the loop's.
  SumFusion shared(R"(subgraph @f(%para1_g, %para2_y, %para3_w) {
  %0 = matmul(%para1_g, %para3_w)
  %1 = relu_grad(%0, %para2_y)
  %2 = reduce_sum[axes=(0,), keep_dims=False](%1)
  %3 = matmul[transpose_a=True](%1, %para1_g)
  %4 = reduce_sum[axes=(0,), keep_dims=False](%0)
  %5 = make_tuple(%2, %3, %4)
  return(%5)
}
)",
                   {f32_of({6, 4}), f32_of({6, 8}), f32_of({4, 8})});
  CHECK(shared.clusters == 1);
  CHECK(!contains(shared.text, "reduce_sum"));
  CHECK(shared.program().outputs.size() == 1);  // dy, read by the matmul
  CHECK(shared.program().reductions.size() == 2);
  CHECK(contains(shared.text, "fused_elementwise_3ops"));
}

TEST_CASE("sums the loop cannot compute stay kernels") {
  // Over the channel and the width ([N, 1, H, 1] kept: three blocks), and
  // a reduce_max.
  SumFusion blocks(R"(subgraph @f(%para1_x) {
  %0 = relu(%para1_x)
  %1 = mul(%0, 2.0)
  %2 = reduce_sum[axes=(1, 3), keep_dims=True](%1)
  %3 = reduce_max[axes=(0, 2, 3), keep_dims=False](%1)
  %4 = make_tuple(%2, %3)
  return(%4)
}
)",
                   {f32_of({2, 3, 4, 5})});
  CHECK(blocks.clusters == 1);
  CHECK(contains(blocks.text, "reduce_sum"));
  CHECK(contains(blocks.text, "reduce_max"));
  CHECK(blocks.program().reductions.empty());
  CHECK(blocks.program().outputs.size() == 1);

  // A row statistic [N, 1] in the loop and a column sum (1, C): two patterns.
  SumFusion two(R"(subgraph @f(%para1_x, %para2_r) {
  %0 = sub(%para1_x, %para2_r)
  %1 = exp(%0)
  %2 = reduce_sum[axes=(0,), keep_dims=False](%1)
  return(%2)
}
)",
                {f32_of({5, 8}), f32_of({5, 1})});
  CHECK(contains(two.text, "reduce_sum"));
  CHECK(two.program().reductions.empty());

  // float64: nothing fuses.
  SumFusion f64(R"(subgraph @f(%para1_x, %para2_y) {
  %0 = relu_grad(%para1_x, %para2_y)
  %1 = mul(%0, 0.5)
  %2 = reduce_sum[axes=(0,), keep_dims=False](%1)
  return(%2)
}
)",
                {{DType::Float64, Dims{4, 6}}, {DType::Float64, Dims{4, 6}}});
  CHECK(f64.clusters == 0);
  CHECK(contains(f64.text, "reduce_sum"));
}

TEST_CASE("per-channel sums of a channel-blocked tensor join its loop as lane sums") {
  // A channel-blocked batch norm gradient's sums over (0, 2, 3): of
  // (x - mean) * dy and of dy (keep_dims and not), beside a total; at
  // shapes whose loops take vectors of whole rows (lanes of 8), a tile
  // (2x1 maps) and vectors of parts of rows (lanes of 80).
  for (Dims x : {Dims{2, 3, 4, 5, 8}, Dims{4, 3, 2, 1, 8}, Dims{2, 3, 2, 1, 80}}) {
    CAPTURE(x.str());
    const Dims c{1, x[1], 1, 1, x[4]};
    SumFusion bn(R"(subgraph @f(%para1_x, %para2_m, %para3_dy) {
  %0 = sub(%para1_x, %para2_m)
  %1 = mul(%0, %para3_dy)
  %2 = reduce_sum[axes=(0, 2, 3), keep_dims=True](%1)
  %3 = reduce_sum[axes=(0, 2, 3), keep_dims=False](%para3_dy)
  %4 = reduce_sum[axes=(), keep_dims=False](%1)
  %5 = make_tuple(%2, %3, %4)
  return(%5)
}
)",
                 {f32_of(x), f32_of(c), f32_of(x)});
    CHECK(bn.clusters == 1);
    CHECK(!contains(bn.text, "reduce_sum"));
    CHECK(bn.program().outputs.empty());  // (x - mean) * dy is only summed
    REQUIRE(bn.program().reductions.size() == 3);
    const codegen::EwIndexing lanes{x[2] * x[3] * x[4], x[1], x[4]};
    CHECK(bn.program().broadcast() == lanes);
    CHECK(bn.program().reductions[0].how == lanes);
    CHECK(bn.program().reductions[2].how.scalar());
  }
  // Over the channel only: [N, 1, H, W] kept is a block and a trailing
  // block of H * W.
  SumFusion rows(R"(subgraph @f(%para1_x) {
  %0 = relu(%para1_x)
  %1 = mul(%0, 2.0)
  %2 = reduce_sum[axes=(1,), keep_dims=True](%1)
  return(%2)
}
)",
                 {f32_of({2, 3, 4, 5})});
  CHECK(!contains(rows.text, "reduce_sum"));
  CHECK(rows.program().reductions.at(0).how == codegen::EwIndexing{60, 2, 20});
}

TEST_CASE("softmax's sum, which its division reads, is computed by the loop of the exponentials") {
  SumFusion softmax(R"(subgraph @f(%para1_x) {
  %0 = exp(%para1_x)
  %1 = reduce_sum[axes=(1,), keep_dims=True](%0)
  %2 = div(%0, %1)
  %3 = mul(%2, 3.0)
  return(%3)
}
)",
                    {f32_of({6, 9})});
  CHECK(softmax.clusters == 2);
  CHECK(!contains(softmax.text, "reduce_sum"));
  REQUIRE(softmax.nodes.size() == 2);
  size_t with_sum = 0;
  for (const auto& n : softmax.nodes) {
    if (n->program().reductions.empty()) continue;
    ++with_sum;
    CHECK(n->program().reductions[0].how == codegen::EwIndexing{9, 6});
    CHECK(n->program().outputs.size() == 1);  // the exponentials, read by the division
  }
  CHECK(with_sum == 1);
}

TEST_CASE("a fused node with sums checks its sums' shapes") {
  codegen::EwProgram p;
  p.reductions = {{p.unary(codegen::EwOp::Neg, p.input(0)), codegen::EwIndexing{1, 3}}};
  std::mt19937 rng(9);
  FusedElementwise wrong(p, Dims{4, 3}, 2, {Dims{4}});
  CHECK_THROWS_AS(wrong.run({random_input(rng, Dims{4, 3})}), kernels::ShapeError);
  FusedElementwise missing(p, Dims{4, 3}, 2);
  CHECK_THROWS_AS(missing.run({random_input(rng, Dims{4, 3})}), kernels::ValueError);
  FusedElementwise right(p, Dims{4, 3}, 2, {Dims{3}});
  Tensor x = random_input(rng, Dims{4, 3});
  std::vector<Tensor> out = right.run({x});
  REQUIRE(out.size() == 1);
  for (int64_t c = 0; c < 3; ++c) {
    double want = 0;
    for (int64_t n = 0; n < 4; ++n) want -= x.data<float>()[n * 3 + c];
    CHECK(out[0].item_at(c) == doctest::Approx(want).epsilon(1e-6));
  }
}
