// Graph mode's fused kernels on a GPU (the CUDA target: jit/target_cuda.cpp)
// against the same fused nodes on the CPU (the LLVM loops): a chain with a
// broadcast bias and every operation of the program representation, and a
// loss-gradient cluster with two sums (a scalar and a per-column one), as
// one unit compiled for the graph. Outputs are bit-identical (the renderer
// computes the CPU loop's operations in its order without FMA contraction);
// sums agree within float32 rounding of their different order of
// additions. A node given no unit compiles one of its own on first use.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "jit/codegen/cuda_unit.h"
#include "jit/fused_elementwise.h"
#include "kernels/device.h"
#include "kernels/tensor.h"

using namespace msl;
using kernels::Dims;
using kernels::DType;
using kernels::EwIndexing;
using kernels::EwOp;
using kernels::EwProgram;
using kernels::Tensor;

namespace {

Tensor uniform(const Dims& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  Tensor t(DType::Float32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Every operation: relu(x * 2 + b) * sigmoid(x) - tanh(x) / 2, max/min/exp/neg
// of it, relu_grad against x; b is [C] broadcast over [N, C].
EwProgram all_ops(int64_t c) {
  EwProgram p;
  p.num_inputs = 2;
  int x = p.input(0);
  int b = p.input(1, EwIndexing{1, c, 1});
  int r = p.unary(EwOp::Relu, p.binary(EwOp::Add, p.binary(EwOp::Mul, x, p.constant(2.0f)), b));
  int s = p.binary(EwOp::Mul, r, p.unary(EwOp::Sigmoid, x));
  int y = p.binary(EwOp::Sub, s, p.binary(EwOp::Div, p.unary(EwOp::Tanh, x), p.constant(2.0f)));
  int m = p.binary(EwOp::Max, p.unary(EwOp::Exp, p.unary(EwOp::Neg, y)), p.binary(EwOp::Min, x, b));
  p.outputs = {y, m, p.binary(EwOp::ReluGrad, m, x)};
  return p;
}

// d = (x - t) * k; the sums: d * d over everything and d per column.
EwProgram loss_grad(int64_t c) {
  EwProgram p;
  p.num_inputs = 2;
  int d = p.binary(EwOp::Mul, p.binary(EwOp::Sub, p.input(0), p.input(1)), p.constant(0.25f));
  p.outputs = {d};
  p.reductions.push_back({p.binary(EwOp::Mul, d, d), EwIndexing{1, 1, 1}});
  p.reductions.push_back({d, EwIndexing{1, c, 1}});
  return p;
}

std::vector<Tensor> run_on(const jit::FusedElementwise& f, const std::vector<Tensor>& host, kernels::Device* dev) {
  std::vector<Tensor> in;
  for (const Tensor& t : host) in.push_back(dev == kernels::cpu_device() ? t.clone() : t.to_device(dev));
  std::vector<Tensor> out = f.run(std::move(in));
  for (Tensor& t : out) t = t.to_host();
  return out;
}

void require_bits(const Tensor& got, const Tensor& want) {
  REQUIRE(got.shape() == want.shape());
  REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
}

void require_close(const Tensor& got, const Tensor& want, double rtol) {
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < want.numel(); ++i) {
    double g = got.data<float>()[i], w = want.data<float>()[i];
    INFO("element " << i << ": GPU " << g << ", CPU " << w);
    REQUIRE(std::fabs(g - w) <= rtol * std::fabs(w) + 1e-6);
  }
}

}  // namespace

TEST_CASE("fused kernels of one unit on the GPU give the CPU loops' results") {
  kernels::Device* gpu = kernels::cuda_device(0);
  const int64_t n = 1000, c = 37;  // not a multiple of a block
  Dims shape{n, c};
  jit::FusedElementwise ops(all_ops(c), shape, 9);
  jit::FusedElementwise grad(loss_grad(c), shape, 4, {Dims{}, Dims{c}});
  std::vector<const EwProgram*> programs{&ops.program(), &grad.program()};
  auto unit = jit::codegen::compile_cuda_unit(jit::codegen::render_cuda_unit(programs), "@test");
  ops.use_unit(unit);
  grad.use_unit(unit);

  std::vector<Tensor> in{uniform(shape, 1), uniform(Dims{c}, 2)};
  std::vector<Tensor> cpu = run_on(ops, in, kernels::cpu_device());
  std::vector<Tensor> dev = run_on(ops, in, gpu);
  REQUIRE(dev.size() == 3);
  for (size_t k = 0; k < dev.size(); ++k) require_bits(dev[k], cpu[k]);

  std::vector<Tensor> in2{uniform(shape, 3), uniform(shape, 4)};
  cpu = run_on(grad, in2, kernels::cpu_device());
  dev = run_on(grad, in2, gpu);
  REQUIRE(dev.size() == 3);
  require_bits(dev[0], cpu[0]);
  require_close(dev[1], cpu[1], 1e-5);
  require_close(dev[2], cpu[2], 1e-5);
  // Run twice: the sums are zeroed before each launch, not accumulated.
  dev = run_on(grad, in2, gpu);
  require_close(dev[2], cpu[2], 1e-5);
}

TEST_CASE("a fused node without a unit compiles its own on the GPU") {
  kernels::Device* gpu = kernels::cuda_device(0);
  Dims shape{3, 5, 7};
  jit::FusedElementwise f(all_ops(1), shape, 9);
  CHECK_FALSE(f.unit());
  std::vector<Tensor> in{uniform(shape, 5), uniform(Dims{1}, 6)};
  std::vector<Tensor> cpu = run_on(f, in, kernels::cpu_device());
  std::vector<Tensor> dev = run_on(f, in, gpu);
  CHECK(f.unit());
  for (size_t k = 0; k < dev.size(); ++k) require_bits(dev[k], cpu[k]);
}
