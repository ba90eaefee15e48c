// The fused contractions of graph mode's epilogue fusion against the
// op-by-op primitives they replace, through the eager dispatch path:
//   dense:   matmul(x[64, 784], w[256, 784]^T) + bias -> relu   vs matmul_bias
//   conv_bn: conv2d(x[32, 64, 32, 32], w[64, 64, 3, 3], pad 1)
//            -> batch_norm (inference) -> relu                  vs conv2d_bn
//   conv_bna: the same conv2d -> batch_norm -> + residual -> relu vs conv2d_bn_add
//   conv_b:  the same conv2d + (1, C, 1, 1) bias -> relu        vs conv2d_bias
// Each runs a few warm-up calls, then `reps` timed calls; the best and the
// median are printed (the machine is shared: the best is the least
// disturbed), with the largest difference between the two results.
// Usage: bench_fused_contraction [threads=2] [reps=30]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/primitives.h"

using namespace msl::kernels;

namespace {

Tensor random(const Dims& shape, uint32_t seed, double lo = -1, double hi = 1) {
  Tensor t(DType::Float32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(static_cast<float>(lo), static_cast<float>(hi));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// (best, median) milliseconds of `reps` calls of f after 3 warm-up calls.
std::pair<double, double> time_ms(const std::function<Tensor()>& f, int reps) {
  for (int i = 0; i < 3; ++i) f();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2]};
}

double max_diff(const Tensor& a, const Tensor& b) {
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    d = std::max(d, std::fabs(double(a.data<float>()[i]) - double(b.data<float>()[i])));
  return d;
}

void compare(const char* name, const std::function<Tensor()>& op_by_op, const std::function<Tensor()>& fused,
             int reps) {
  auto [ob, om] = time_ms(op_by_op, reps);
  auto [fb, fm] = time_ms(fused, reps);
  std::printf(
      "%-8s op-by-op best %7.3f ms median %7.3f ms | fused best %7.3f ms median %7.3f ms | x%.2f (best) "
      "| max |diff| %.2e\n",
      name, ob, om, fb, fm, ob / fb, max_diff(op_by_op(), fused()));
}

Tensor call(Prim p, std::vector<Tensor> in, const Attrs& attrs = {}) { return execute1(p, in, attrs); }

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int reps = argc > 2 ? std::atoi(argv[2]) : 30;
  set_num_threads(threads);
  std::printf("threads %d, reps %d\n", threads, reps);

  Tensor x = random({64, 784}, 1), w = random({256, 784}, 2), b = random({256}, 3);
  Attrs mm{{"transpose_a", false}, {"transpose_b", true}};
  Attrs mm_fused{{"transpose_a", false}, {"transpose_b", true}, {"activation", std::string("relu")}};
  compare(
      "dense",
      [&] {
        return call(Prim::relu, {call(Prim::add, {call(Prim::matmul, {x, w}, mm), b})});
      },
      [&] {
        return call(Prim::matmul_bias, {x, w, b}, mm_fused);
      },
      reps);

  Tensor cx = random({32, 64, 32, 32}, 4), cw = random({64, 64, 3, 3}, 5, -0.1, 0.1);
  Tensor gamma = random({64}, 6), beta = random({64}, 7), mean = random({64}, 8), var = random({64}, 9, 0.5, 2);
  Tensor cb = call(Prim::reshape, {random({64}, 10)}, Attrs{{"shape", std::vector<int64_t>{1, 64, 1, 1}}});
  Attrs conv{{"stride", std::vector<int64_t>{1, 1}},
             {"padding", std::vector<int64_t>{1}},
             {"dilation", std::vector<int64_t>{1, 1}},
             {"groups", int64_t{1}},
             {"pad_mode", std::string("pad")}};
  Attrs bn{{"training", false}, {"epsilon", 1e-5}};
  Attrs conv_bn = conv, conv_bias = conv;
  conv_bn.set("epsilon", 1e-5);
  conv_bn.set("activation", std::string("relu"));
  conv_bias.set("activation", std::string("relu"));
  compare(
      "conv_bn",
      [&] {
        std::vector<Tensor> in{call(Prim::conv2d, {cx, cw}, conv), gamma, beta, mean, var}, out;
        execute(Prim::batch_norm, in, bn, out);
        return call(Prim::relu, {out[0]});
      },
      [&] {
        return call(Prim::conv2d_bn, {cx, cw, gamma, beta, mean, var}, conv_bn);
      },
      reps);
  Tensor residual = random({32, 64, 32, 32}, 11);
  compare(
      "conv_bna",
      [&] {
        std::vector<Tensor> in{call(Prim::conv2d, {cx, cw}, conv), gamma, beta, mean, var}, out;
        execute(Prim::batch_norm, in, bn, out);
        return call(Prim::relu, {call(Prim::add, {out[0], residual})});
      },
      [&] {
        return call(Prim::conv2d_bn_add, {cx, cw, gamma, beta, mean, var, residual}, conv_bn);
      },
      reps);
  compare(
      "conv_b",
      [&] {
        return call(Prim::relu, {call(Prim::add, {call(Prim::conv2d, {cx, cw}, conv), cb})});
      },
      [&] {
        return call(Prim::conv2d_bias, {cx, cw, cb}, conv_bias);
      },
      reps);
  return 0;
}
