// The random kernels' texts (kernels/cuda/random_cuda.h) under host
// emulation against the CPU's kernels (random_ops.cpp), bit for bit: the
// same Philox stream gives the same uniform, normal and dropout values for
// every float dtype, seed, offset and size (sizes that are not multiples of
// the elements per counter included). Independently of the CPU: Random123's
// known answer for Philox4x32-10 at counter 0, key 0, and the moments of
// 2^17 normals.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/random_cuda.h"
#include "kernels/primitives.h"
#include "kernels/random_ops.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/emulated_launch.h"
#include "tests/unit/cuda/host_emulation.h"
#ifdef MSL_HAVE_CUDA
#include "kernels/cuda/nvrtc_compiler.h"
#endif

using namespace msl::kernels;

namespace {

constexpr DType kFloats[] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
constexpr Prim kPrims[] = {Prim::random_uniform, Prim::random_normal, Prim::dropout};

std::string module_source() {
  std::string s = cuda::random_prelude();
  for (Prim p : kPrims)
    for (DType t : kFloats)
      s += cuda::random_kernel_text(p, t) +
           msl::test::emulated_launcher(cuda::random_kernel_name(p, t), cuda::random_param_types(p, t));
  return s;
}

Tensor emulate_random(const msl::test::HostModule& m, Prim p, DType t, int64_t n, uint64_t seed, uint64_t offset) {
  Tensor out(t, Dims{n});
  std::memset(out.raw(), 0x7f, out.nbytes());
  long long counters = static_cast<long long>(random_blocks_used(p, n, t)), nn = n;
  unsigned long long s = seed, o = offset;
  void* op = out.raw();
  void* args[] = {&counters, &nn, &op, &s, &o};
  m.symbol<msl::test::EmulatedLaunch>("run_" + cuda::random_kernel_name(p, t))(3, 8, args);
  return out;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0;
}

}  // namespace

TEST_CASE("random kernels draw the CPU's Philox values bit for bit under host emulation") {
  msl::test::HostModule m(module_source());
  for (DType t : kFloats)
    for (Prim p : {Prim::random_uniform, Prim::random_normal})
      for (int64_t n : {1, 3, 6, 1001, 4099})
        for (uint64_t seed : {uint64_t{0}, uint64_t{42}, uint64_t{0x123456789abcdefull}})
          for (uint64_t offset : {uint64_t{0}, uint64_t{7}, uint64_t{1} << 33}) {
            CAPTURE(prim_name(p));
            CAPTURE(dtype_name(t));
            CAPTURE(n);
            CAPTURE(seed);
            CAPTURE(offset);
            Attrs a{{"shape", std::vector<int64_t>{n}},
                    {"dtype", t},
                    {"seed", static_cast<int64_t>(seed)},
                    {"offset", static_cast<int64_t>(offset)}};
            Tensor want = execute1(p, {}, a);
            REQUIRE(same_bits(emulate_random(m, p, t, n, seed, offset), want));
          }
}

TEST_CASE("the dropout kernel keeps and scales as the CPU's, bit for bit") {
  msl::test::HostModule m(module_source());
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-10.0, 10.0);
  for (DType t : kFloats)
    for (double keep : {0.3, 0.5, 0.9, 1.0})
      for (int64_t n : {5, 1003}) {
        CAPTURE(dtype_name(t));
        CAPTURE(keep);
        CAPTURE(n);
        Tensor d(DType::Float64, Dims{n});
        for (int64_t i = 0; i < n; ++i) d.data<double>()[i] = u(rng);
        d.data<double>()[0] = std::nan("");
        d.data<double>()[1] = std::numeric_limits<double>::infinity();
        d.data<double>()[2] = -0.0;
        Tensor x(t, Dims{n});
        copy_tensor(d, x);
        Attrs a{{"keep_prob", keep}, {"seed", int64_t{99}}, {"offset", int64_t{5}}};
        Tensor in[] = {x};
        std::vector<Tensor> want;
        execute(Prim::dropout, in, a, want);
        Tensor y(t, Dims{n}), mask(t, Dims{n});
        long long counters = static_cast<long long>(random_blocks_used(Prim::dropout, n, t)), nn = n;
        unsigned long long seed = 99, offset = 5;
        auto threshold = static_cast<unsigned>(std::ceil(keep * 16777216.0));
        double s64 = 1.0 / keep;
        float s32 = static_cast<float>(s64);
        void* yp = y.raw();
        void* mp = mask.raw();
        void* xp = x.raw();
        void* args[] = {&counters, &nn, &yp, &mp, &xp, &seed, &offset, &threshold,
                        t == DType::Float64 ? static_cast<void*>(&s64) : static_cast<void*>(&s32)};
        m.symbol<msl::test::EmulatedLaunch>("run_" + cuda::random_kernel_name(Prim::dropout, t))(2, 16, args);
        REQUIRE(same_bits(y, want[0]));
        REQUIRE(same_bits(mask, want[1]));
      }
}

TEST_CASE("the random kernels' Philox gives Random123's known answer; normals have mean 0 and variance 1") {
  msl::test::HostModule m(module_source());
  // Philox4x32-10, counter 0, key 0: lanes 0x6627e8d5 0xe169c58d 0xbc57ac4c 0x9b00dbd8.
  Tensor u = emulate_random(m, Prim::random_uniform, DType::Float32, 4, 0, 0);
  const uint32_t kat[] = {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u};
  for (int j = 0; j < 4; ++j) CHECK(u.data<float>()[j] == static_cast<float>(kat[j] >> 8) / 16777216.0f);
  for (DType t : {DType::Float32, DType::Float64}) {
    const int64_t n = int64_t{1} << 17;
    Tensor z = emulate_random(m, Prim::random_normal, t, n, 7, 0);
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = z.item_at(i);
      sum += v;
      sq += v * v;
    }
    double mean = sum / n, var = sq / n - mean * mean;
    CHECK(std::fabs(mean) < 0.015);  // 5 standard errors of 2^17 draws
    CHECK(std::fabs(var - 1.0) < 0.02);
  }
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("every random kernel text compiles with NVRTC for sm_80 and sm_90") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  std::string all = cuda::random_prelude();
  for (Prim p : kPrims)
    for (DType t : kFloats) all += cuda::random_kernel_text(p, t);
  for (int arch : {80, 90}) {
    cuda::NvrtcOutput out = cuda::nvrtc_compile(all, "random_kernels", arch);
    CHECK(out.image.compare(0, 4, "\x7f" "ELF") == 0);
  }
}
#endif
