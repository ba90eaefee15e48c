// Throughput of the oneDNN-backed primitives through the eager dispatch
// path (execute1/execute: inference, output allocation, the cached plan),
// as a model's step would call them. Run by run_dnnl.sh beside
// torch_dnnl.py, which times the same problems in PyTorch.
//
// Each problem runs a few warm-up calls (plan creation, JIT, first touch of
// the allocator's blocks), then `reps` timed calls (fewer when one call
// takes more than 3 s / reps, at least 3); the best and the median
// are printed, because the machine is shared and the best is the least
// disturbed. Lines starting with RESULT are what run_dnnl.sh parses:
//   RESULT <name> <best GFLOP/s> <median GFLOP/s>
// Usage: bench_dnnl [threads=2] [reps=15] [--check]
// --check also compares the float32 convolutions of the benchmark shape
// (Winograd where oneDNN picks it) with the float64 path, reporting the
// largest error relative to sum |x_i w_i|, the dot-product error scale.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kernels/parallel.h"
#include "kernels/primitives.h"

using namespace msl::kernels;

namespace {

Tensor random(DType dt, const Dims& shape, uint32_t seed) {
  Tensor t(dt, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) store_from_double(t.raw(), dt, i, u(rng));
  return t;
}

void bench(const char* name, double flops, int reps, const std::function<void()>& f) {
  for (int i = 0; i < 2; ++i) f();
  auto w0 = std::chrono::steady_clock::now();
  f();
  // Slow problems get fewer repetitions, at least 3.
  double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  reps = std::max(3, std::min(reps, static_cast<int>(3.0 / std::max(once, 1e-9))));
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  double best = t.front(), median = t[t.size() / 2];
  std::printf("%-28s best %9.3f ms  median %9.3f ms  %8.1f GFLOP/s\n", name, best * 1e3, median * 1e3,
              flops / best / 1e9);
  std::printf("RESULT %s %.2f %.2f\n", name, flops / best / 1e9, flops / median / 1e9);
  std::fflush(stdout);
}

Attrs conv_attrs() {
  return Attrs{{"stride", std::vector<int64_t>{1, 1}},
               {"padding", std::vector<int64_t>{1}},
               {"dilation", std::vector<int64_t>{1, 1}},
               {"groups", int64_t{1}},
               {"pad_mode", std::string("pad")}};
}

// Largest |a - b| / s over elements, s the float64 sum of |terms|.
double max_rel(const Tensor& a, const Tensor& b, const Tensor& s) {
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double scale = s.item_at(i);
    if (scale > 0) m = std::max(m, std::fabs(a.item_at(i) - b.item_at(i)) / scale);
  }
  return m;
}

Tensor abs64(const Tensor& t) {
  Tensor r(DType::Float64, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) r.data<double>()[i] = std::fabs(t.item_at(i));
  return r;
}

Tensor to64(const Tensor& t) {
  Tensor r(DType::Float64, t.shape());
  copy_strided(t, r);
  return r;
}

void accuracy_check(const Tensor& x, const Tensor& w, const Tensor& dy, const Attrs& a, const Attrs& ai,
                    const Attrs& af) {
  Tensor x64 = to64(x), w64 = to64(w), dy64 = to64(dy);
  Tensor xa = abs64(x), wa = abs64(w), dya = abs64(dy);
  Tensor in[2];
  in[0] = x, in[1] = w;
  Tensor y = execute1(Prim::conv2d, in, a);
  in[0] = x64, in[1] = w64;
  Tensor y64 = execute1(Prim::conv2d, in, a);
  in[0] = xa, in[1] = wa;
  Tensor ys = execute1(Prim::conv2d, in, a);
  std::printf("check conv2d forward:          max error / sum|terms| = %.2e\n", max_rel(y, y64, ys));
  in[0] = dy, in[1] = w;
  Tensor dx = execute1(Prim::conv2d_backprop_input, in, ai);
  in[0] = dy64, in[1] = w64;
  Tensor dx64 = execute1(Prim::conv2d_backprop_input, in, ai);
  in[0] = dya, in[1] = wa;
  Tensor dxs = execute1(Prim::conv2d_backprop_input, in, ai);
  std::printf("check conv2d_backprop_input:   max error / sum|terms| = %.2e\n", max_rel(dx, dx64, dxs));
  in[0] = dy, in[1] = x;
  Tensor dw = execute1(Prim::conv2d_backprop_filter, in, af);
  in[0] = dy64, in[1] = x64;
  Tensor dw64 = execute1(Prim::conv2d_backprop_filter, in, af);
  in[0] = dya, in[1] = xa;
  Tensor dws = execute1(Prim::conv2d_backprop_filter, in, af);
  std::printf("check conv2d_backprop_filter:  max error / sum|terms| = %.2e\n", max_rel(dw, dw64, dws));
}

}  // namespace

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  int reps = argc > 2 ? std::atoi(argv[2]) : 15;
  bool check = argc > 3 && std::strcmp(argv[3], "--check") == 0;
  set_num_threads(threads);
  std::printf("threads %d, reps %d\n", num_threads(), reps);

  {
    const int64_t n = 1024;
    Tensor in[2] = {random(DType::Float32, {n, n}, 1), random(DType::Float32, {n, n}, 2)};
    bench("matmul_f32_1024", 2.0 * n * n * n, reps, [&] { execute1(Prim::matmul, in); });
    Tensor bf[2] = {random(DType::BFloat16, {n, n}, 1), random(DType::BFloat16, {n, n}, 2)};
    bench("matmul_bf16_1024", 2.0 * n * n * n, reps, [&] { execute1(Prim::matmul, bf); });
    Tensor tr[2] = {in[0], in[1]};
    Attrs t{{"transpose_a", true}, {"transpose_b", true}};
    bench("matmul_f32_1024_tt", 2.0 * n * n * n, reps, [&] { execute1(Prim::matmul, tr, t); });
    Tensor d[2] = {random(DType::Float64, {n, n}, 1), random(DType::Float64, {n, n}, 2)};
    bench("matmul_f64_1024", 2.0 * n * n * n, std::max(3, reps / 3), [&] { execute1(Prim::matmul, d); });
  }

  {
    const int64_t N = 32, C = 64, O = 64, H = 56, W = 56, K = 3;
    const double flops = 2.0 * N * C * O * K * K * H * W;
    Tensor x = random(DType::Float32, {N, C, H, W}, 3), w = random(DType::Float32, {O, C, K, K}, 4);
    Tensor dy = random(DType::Float32, {N, O, H, W}, 5);
    Attrs a = conv_attrs(), ai = conv_attrs(), af = conv_attrs();
    ai.set("input_shape", std::vector<int64_t>{N, C, H, W});
    af.set("filter_shape", std::vector<int64_t>{O, C, K, K});
    Tensor fwd_in[2] = {x, w}, bi_in[2] = {dy, w}, bf_in[2] = {dy, x};
    bench("conv2d_fwd", flops, reps, [&] { execute1(Prim::conv2d, fwd_in, a); });
    bench("conv2d_bwd_input", flops, reps, [&] { execute1(Prim::conv2d_backprop_input, bi_in, ai); });
    bench("conv2d_bwd_filter", flops, reps, [&] { execute1(Prim::conv2d_backprop_filter, bf_in, af); });
    bench("conv2d_fwd_bwd", 3 * flops, reps, [&] {
      execute1(Prim::conv2d, fwd_in, a);
      execute1(Prim::conv2d_backprop_input, bi_in, ai);
      execute1(Prim::conv2d_backprop_filter, bf_in, af);
    });
    Tensor xb = random(DType::BFloat16, {N, C, H, W}, 3), wb = random(DType::BFloat16, {O, C, K, K}, 4);
    Tensor bin[2] = {xb, wb};
    bench("conv2d_fwd_bf16", flops, reps, [&] { execute1(Prim::conv2d, bin, a); });

    // Memory-bound neighbours of the convolution in a ResNet block, in
    // GB/s-equivalent "GFLOP/s" of one operation per input element.
    Attrs pool{{"kernel_size", int64_t{3}}, {"stride", int64_t{2}}, {"padding", int64_t{1}}};
    Tensor pin[1] = {x};
    bench("max_pool2d_3x3s2", double(x.numel()), reps, [&] { execute1(Prim::max_pool2d, pin, pool); });
    Tensor c = random(DType::Float32, {C}, 6), v = random(DType::Float32, {C}, 7);
    std::vector<Tensor> bn_in{x, c, c, c, v}, bn_out;
    Attrs bn{{"training", true}, {"epsilon", 1e-5}};
    bench("batch_norm_train", double(x.numel()), reps, [&] { execute(Prim::batch_norm, bn_in, bn, bn_out); });

    std::vector<Tensor> bng_in{dy, x, c, c, v};
    Attrs eps{{"epsilon", 1e-5}};
    bench("batch_norm_grad", double(x.numel()), reps, [&] { execute(Prim::batch_norm_grad, bng_in, eps, bn_out); });
    Tensor x2 = random(DType::Float32, {256, 1024}, 8), c2 = random(DType::Float32, {1024}, 9);
    std::vector<Tensor> bn2_in{x2, c2, c2, c2, c2};
    bench("batch_norm_train_2d", double(x2.numel()), reps, [&] { execute(Prim::batch_norm, bn2_in, bn, bn_out); });

    if (check) accuracy_check(x, w, dy, a, ai, af);
  }
  return 0;
}
