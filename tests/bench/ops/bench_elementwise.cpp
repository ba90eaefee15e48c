// Throughput of the elementwise kernels on 16M float32 elements, beside
// PyTorch's (read from the file torch_elementwise.py writes) and beside the
// machine's copy bandwidth, plus the per-op cost of eager dispatch on tiny
// tensors.
//
// Timing is best-of-N after warm-up, each iteration a fresh execute1 whose
// result is freed before the next one, as in a real program: the output
// buffer comes back from the caching allocator already faulted in. The copy
// bandwidth is (bytes read + bytes written) / s of a 64 MiB memcpy split over
// the same threads, the most an elementwise kernel could move.
//
// Usage: bench_elementwise [--torch FILE] [--threads N] [--iters N] [--level generic|avx2|avx512]
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kernels/elementwise.h"
#include "kernels/parallel.h"
#include "kernels/primitives.h"

using namespace msl::kernels;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

template <class F>
double best_of(int iters, F f) {
  for (int i = 0; i < 3; ++i) f();
  double best = 1e30;
  for (int i = 0; i < iters; ++i) {
    auto t0 = Clock::now();
    f();
    double s = seconds_since(t0);
    if (s < best) best = s;
  }
  return best;
}

std::map<std::string, double> read_torch(const char* path) {
  std::map<std::string, double> m;
  if (!path) return m;
  FILE* f = std::fopen(path, "r");
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path);
    return m;
  }
  char name[64];
  double ms;
  while (std::fscanf(f, "%63s %lf", name, &ms) == 2) m[name] = ms;
  std::fclose(f);
  return m;
}

// Bytes read + written per second by a memcpy of `bytes` split over the threads.
double copy_bandwidth(size_t bytes, int iters) {
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  int nt = num_threads();
  double s = best_of(iters, [&] {
#pragma omp parallel for num_threads(nt) schedule(static)
    for (int t = 0; t < nt; ++t) {
      size_t b = bytes * t / nt, e = bytes * (t + 1) / nt;
      std::memcpy(dst.data() + b, src.data() + b, e - b);
    }
  });
  return 2.0 * static_cast<double>(bytes) / s;
}

}  // namespace

int main(int argc, char** argv) {
  const char* torch_path = nullptr;
  int threads = 2, iters = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--torch")
      torch_path = argv[i + 1];
    else if (a == "--threads")
      threads = std::atoi(argv[i + 1]);
    else if (a == "--iters")
      iters = std::atoi(argv[i + 1]);
    else if (a == "--level") {
      std::string l = argv[i + 1];
      ew::set_simd_level(l == "generic" ? ew::SimdLevel::Generic
                         : l == "avx2"  ? ew::SimdLevel::AVX2
                                        : ew::SimdLevel::AVX512);
    }
  }
  set_num_threads(threads);
  const char* level_names[] = {"generic", "avx2", "avx512"};
  auto torch = read_torch(torch_path);

  const int64_t n = int64_t(16) << 20;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  Tensor a(DType::Float32, Dims{n}), b(DType::Float32, Dims{n});
  for (int64_t i = 0; i < n; ++i) {
    a.data<float>()[i] = u(rng);
    b.data<float>()[i] = u(rng);
  }

  double bw = copy_bandwidth(size_t(64) << 20, iters);
  std::printf("threads %d, vector level %s, copy bandwidth %.1f GB/s (read+write, 64 MiB memcpy)\n", num_threads(),
              level_names[static_cast<int>(ew::simd_level())], bw / 1e9);
  std::printf("%-8s %10s %10s %12s %12s\n", "op", "MSL ms", "torch ms", "MSL/torch", "of copy bw");

  struct Case {
    const char* name;
    Prim prim;
    int nin;
  };
  const Case cases[] = {{"add", Prim::add, 2},   {"mul", Prim::mul, 2},         {"exp", Prim::exp, 1},
                        {"tanh", Prim::tanh, 1}, {"sigmoid", Prim::sigmoid, 1}, {"relu", Prim::relu, 1},
                        {"log", Prim::log, 1},   {"sin", Prim::sin, 1},         {"erf", Prim::erf, 1}};
  for (const Case& c : cases) {
    Tensor in[2] = {a, b};
    if (c.prim == Prim::log) in[0] = execute1(Prim::abs, std::span<const Tensor>(in, 1));
    std::span<const Tensor> args(in, static_cast<size_t>(c.nin));
    double s = best_of(iters, [&] {
      Tensor y = execute1(c.prim, args);  // freed at the end of the iteration
    });
    double bytes = static_cast<double>(n) * 4.0 * (c.nin + 1);
    auto it = torch.find(c.name);
    if (it != torch.end())
      std::printf("%-8s %10.3f %10.3f %11.2fx %11.2f\n", c.name, s * 1e3, it->second, it->second / (s * 1e3),
                  bytes / s / bw);
    else
      std::printf("%-8s %10.3f %10s %12s %11.2f\n", c.name, s * 1e3, "-", "-", bytes / s / bw);
  }

  // Eager dispatch on a [4] float32 add: the whole execute1 (inference,
  // allocation, kernel, free) and the kernel entry point alone.
  Tensor x4(DType::Float32, Dims{4}), y4(DType::Float32, Dims{4}), o4(DType::Float32, Dims{4});
  for (int i = 0; i < 4; ++i) x4.data<float>()[i] = y4.data<float>()[i] = static_cast<float>(i);
  Tensor in4[2] = {x4, y4};
  const int reps = 1000000;
  double t_exec = best_of(5, [&] {
    for (int i = 0; i < reps; ++i) {
      Tensor r = execute1(Prim::add, in4);
      asm volatile("" : : "r"(r.raw()) : "memory");
    }
  });
  Attrs none;
  double t_kernel = best_of(5, [&] {
    for (int i = 0; i < reps; ++i) {
      cpu_add(KernelArgs{Prim::add, in4, none, std::span<Tensor>(&o4, 1)});
      asm volatile("" : : : "memory");
    }
  });
  std::printf("[4] float32 add: execute1 %.1f ns/op, kernel (cpu_add) %.1f ns/op\n", t_exec / reps * 1e9,
              t_kernel / reps * 1e9);
  return 0;
}
