// The optimizer update kernels' texts (kernels/cuda/optimizer_cuda.h) under
// host emulation against the CPU's kernels (optimizer_apply.cpp), bit for
// bit in float32 and float64 (on a CPU with FMA, see require_same_bits): momentum with and without Nesterov, Adam with
// weight decay on the gradient and decoupled, a gradient scale, several
// steps in a row (the state carries over), and one step worked out here.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cuda/optimizer_cuda.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/emulated_launch.h"
#include "tests/unit/cuda/host_emulation.h"
#include "tests/unit/cuda/test_tensors.h"
#ifdef MSL_HAVE_CUDA
#include "kernels/cuda/nvrtc_compiler.h"
#endif

using namespace msl::kernels;

namespace {

using msl::test::scalar;
using msl::test::values_of;

std::string module_source() {
  std::string s;
  for (Prim p : {Prim::apply_momentum, Prim::apply_adam})
    for (DType t : {DType::Float32, DType::Float64})
      s += cuda::optimizer_kernel_text(p, t) +
           msl::test::emulated_launcher(cuda::optimizer_kernel_name(p, t), cuda::optimizer_param_types(p, t));
  return s;
}

template <class T>
void run_momentum(const msl::test::HostModule& mod, Tensor& var, Tensor& accum, const Tensor& grad, double lr,
                  double mom, const Attrs& a) {
  long long n = var.numel();
  void* v = var.raw();
  void* acc = accum.raw();
  void* g = grad.raw();
  T l = static_cast<T>(lr), m = static_cast<T>(mom), scale = static_cast<T>(a.get_float("gradient_scale", 1.0)),
    decay = static_cast<T>(a.get_float("weight_decay", 0.0));
  int nesterov = a.get_bool("use_nesterov");
  void* args[] = {&n, &v, &acc, &g, &l, &m, &scale, &decay, &nesterov};
  mod.symbol<msl::test::EmulatedLaunch>("run_" + cuda::optimizer_kernel_name(Prim::apply_momentum, var.dtype()))(
      3, 16, args);
}

template <class T>
void run_adam(const msl::test::HostModule& mod, Tensor& var, Tensor& m, Tensor& v, const Tensor& grad,
              const double h[4], const Attrs& a) {
  long long n = var.numel();
  void* p[] = {var.raw(), m.raw(), v.raw(), grad.raw()};
  T lr = static_cast<T>(h[0]), b1 = static_cast<T>(h[1]), b2 = static_cast<T>(h[2]), eps = static_cast<T>(h[3]);
  T scale = static_cast<T>(a.get_float("gradient_scale", 1.0)), decay = static_cast<T>(a.get_float("weight_decay", 0.0));
  bool decoupled = a.get_bool("decoupled");
  T gd = decoupled ? T(0) : decay, ud = decoupled ? decay : T(0);
  void* args[] = {&n, &p[0], &p[1], &p[2], &p[3], &lr, &b1, &b2, &eps, &scale, &gd, &ud};
  mod.symbol<msl::test::EmulatedLaunch>("run_" + cuda::optimizer_kernel_name(Prim::apply_adam, var.dtype()))(
      3, 16, args);
}

// The CPU's x86-64-v3/v4 clones (AVX2 with FMA, the loops the CPU runs on
// any x86 machine of the last decade) contract as the kernel does: the
// same bits. The default clone does not contract: a rounding apart.
void require_same_bits(const Tensor& gpu, const Tensor& cpu) {
  REQUIRE(gpu.nbytes() == cpu.nbytes());
#if defined(__x86_64__)
  const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  const bool fma = false;
#endif
  if (fma) {
    REQUIRE(std::memcmp(gpu.raw(), cpu.raw(), gpu.nbytes()) == 0);
    return;
  }
  const double eps = gpu.dtype() == DType::Float32 ? 1e-6 : 1e-15;
  for (int64_t i = 0; i < gpu.numel(); ++i) {
    double a = gpu.item_at(i), b = cpu.item_at(i);
    REQUIRE(std::fabs(a - b) <= eps * (std::fabs(b) + 1e-3));
  }
}

}  // namespace

TEST_CASE("optimizer update kernels compute the CPU's bits under host emulation") {
  msl::test::HostModule mod(module_source());
  uint32_t seed = 1;
  for (DType t : {DType::Float32, DType::Float64}) {
    CAPTURE(dtype_name(t));
    for (bool nesterov : {false, true})
      for (double decay : {0.0, 1e-4}) {
        Attrs a{{"use_nesterov", nesterov}, {"gradient_scale", 0.5}, {"weight_decay", decay}};
        Tensor var = values_of(t, Dims{1000}, seed++, -1, 1), accum = values_of(t, Dims{1000}, seed++, -0.1, 0.1);
        Tensor gvar = var.clone(), gaccum = accum.clone();
        for (int step = 0; step < 3; ++step) {
          Tensor grad = values_of(t, Dims{1000}, seed++, -2, 2);
          Tensor in[] = {var, accum, scalar(0.01), grad, scalar(0.9)};
          execute1(Prim::apply_momentum, in, a);
          if (t == DType::Float32)
            run_momentum<float>(mod, gvar, gaccum, grad, 0.01f, 0.9f, a);
          else
            run_momentum<double>(mod, gvar, gaccum, grad, static_cast<double>(0.01f), static_cast<double>(0.9f), a);
          require_same_bits(gvar, var);
          require_same_bits(gaccum, accum);
        }
      }
    for (bool decoupled : {false, true}) {
      Attrs a{{"decoupled", decoupled}, {"gradient_scale", 2.0}, {"weight_decay", 0.01}};
      Tensor var = values_of(t, Dims{777}, seed++, -1, 1), m = values_of(t, Dims{777}, seed++, -0.1, 0.1);
      Tensor v = values_of(t, Dims{777}, seed++, 0, 0.01);
      Tensor gvar = var.clone(), gm = m.clone(), gv = v.clone();
      const float hf[4] = {1e-3f, 0.9f, 0.999f, 1e-8f};
      const double h[4] = {hf[0], hf[1], hf[2], hf[3]};  // the float32 scalars' values, as the CPU reads them
      for (int step = 0; step < 3; ++step) {
        Tensor grad = values_of(t, Dims{777}, seed++, -2, 2);
        Tensor in[] = {var, m, v, scalar(hf[0]), scalar(hf[1]), scalar(hf[2]), scalar(hf[3]), grad};
        execute1(Prim::apply_adam, in, a);
        if (t == DType::Float32)
          run_adam<float>(mod, gvar, gm, gv, grad, h, a);
        else
          run_adam<double>(mod, gvar, gm, gv, grad, h, a);
        require_same_bits(gvar, var);
        require_same_bits(gm, m);
        require_same_bits(gv, v);
      }
    }
  }
}

TEST_CASE("one momentum and one Adam step of the kernels, worked out by hand") {
  msl::test::HostModule mod(module_source());
  // float64: var 1, accum 0.5, grad 2, lr 0.1, momentum 0.9, no decay, scale 1:
  // accum = 0.45 + 2 = 2.45, var = 1 - 0.245 = 0.755 (Nesterov: 1 - 0.1 (2 + 2.205) = 0.5795).
  for (bool nesterov : {false, true}) {
    Tensor var(DType::Float64, Dims{1}), accum(DType::Float64, Dims{1}), grad(DType::Float64, Dims{1});
    *var.data<double>() = 1;
    *accum.data<double>() = 0.5;
    *grad.data<double>() = 2;
    run_momentum<double>(mod, var, accum, grad, 0.1, 0.9, Attrs{{"use_nesterov", nesterov}});
    CHECK(*accum.data<double>() == doctest::Approx(2.45).epsilon(1e-15));
    CHECK(*var.data<double>() == doctest::Approx(nesterov ? 0.5795 : 0.755).epsilon(1e-15));
  }
  // Adam from zero moments, grad 3: m = 0.3, v = 0.009, var = 1 - 0.1 * 0.3 / (sqrt(0.009) + 1e-8).
  Tensor var(DType::Float64, Dims{1}), m(DType::Float64, Dims{1}), v(DType::Float64, Dims{1}), g(DType::Float64, Dims{1});
  *var.data<double>() = 1;
  *m.data<double>() = 0;
  *v.data<double>() = 0;
  *g.data<double>() = 3;
  const double h[4] = {0.1, 0.9, 0.999, 1e-8};
  run_adam<double>(mod, var, m, v, g, h, Attrs{});
  CHECK(*m.data<double>() == doctest::Approx(0.3).epsilon(1e-15));
  CHECK(*v.data<double>() == doctest::Approx(0.009).epsilon(1e-15));
  CHECK(*var.data<double>() == doctest::Approx(1 - 0.03 / (std::sqrt(0.009) + 1e-8)).epsilon(1e-14));
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("the optimizer kernel texts compile with NVRTC for sm_80 and sm_90") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  std::string all;
  for (Prim p : {Prim::apply_momentum, Prim::apply_adam})
    for (DType t : {DType::Float32, DType::Float64}) all += cuda::optimizer_kernel_text(p, t);
  for (int arch : {80, 90}) {
    cuda::NvrtcOutput out = cuda::nvrtc_compile(all, "optimizer_kernels", arch);
    CHECK(out.image.compare(0, 4, "\x7f" "ELF") == 0);
  }
}
#endif
