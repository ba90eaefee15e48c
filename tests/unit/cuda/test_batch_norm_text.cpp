// The batch-norm kernels' texts (kernels/cuda/batch_norm_cuda.h) under host
// emulation against the CPU's batch_norm and batch_norm_grad: float64 bit
// for bit (the same operations in the same order), float32 data within
// rounding of oneDNN's float arithmetic; training and inference, ranks 2 to
// 4, parameters in float32 and float64; and every text compiles with NVRTC.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/batch_norm_cuda.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/emulated_launch.h"
#include "tests/unit/cuda/host_emulation.h"
#ifdef MSL_HAVE_CUDA
#include "kernels/cuda/nvrtc_compiler.h"
#endif

using namespace msl::kernels;
using cuda::BnKernel;

namespace {

constexpr BnKernel kKernels[] = {BnKernel::Stats, BnKernel::Apply, BnKernel::GradSums, BnKernel::GradApply};
constexpr DType kTypes[] = {DType::Float32, DType::Float64};

Tensor random_tensor(DType t, Dims shape, uint32_t seed, double lo, double hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) d.data<double>()[i] = u(rng);
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

const char* c_type(DType t) { return t == DType::Float32 ? "float" : "double"; }

// Host-emulation callers: every kernel takes its pointers and the msl_bn by value.
std::string launcher(BnKernel k, DType x, DType p) {
  std::string X = c_type(x), P = c_type(p);
  std::string cx = "const " + X + "*", cp = "const " + P + "*";
  std::vector<std::string> types;
  switch (k) {
    case BnKernel::Stats: types = {"long long", cx, cp, cp, cp, cp, P + "*", P + "*", "double*", "msl_bn"}; break;
    case BnKernel::Apply: types = {"long long", cx, X + "*", "const double*", "msl_bn"}; break;
    case BnKernel::GradSums: types = {"long long", cx, cx, cp, cp, cp, P + "*", P + "*", "double*", "msl_bn"}; break;
    case BnKernel::GradApply: types = {"long long", cx, cx, X + "*", "const double*", "msl_bn"}; break;
  }
  return msl::test::emulated_launcher(cuda::bn_kernel_name(k, x, p), types);
}


}  // namespace

TEST_CASE("batch-norm texts compute the CPU's batch_norm and its gradient under host emulation") {
  std::string source = cuda::bn_kernel_prelude();
  for (BnKernel k : kKernels)
    for (DType x : kTypes)
      for (DType p : kTypes) source += cuda::bn_kernel(k, x, p) + launcher(k, x, p);
  msl::test::HostModule module(source);
  const Dims shapes[] = {Dims{6, 3}, Dims{2, 4, 5}, Dims{3, 2, 4, 5}};
  for (const Dims& shape : shapes)
    for (DType xt : kTypes)
      for (DType pt : kTypes)
        for (bool training : {true, false}) {
          CAPTURE(shape.str());
          CAPTURE(std::string(dtype_name(xt)));
          CAPTURE(std::string(dtype_name(pt)));
          CAPTURE(training);
          // Float64 data is exact against the CPU; float32 data goes through oneDNN there.
          double rtol = xt == DType::Float64 ? 0 : 2e-5;
          int64_t c = shape[1];
          Tensor x = random_tensor(xt, shape, 1, -3, 5);
          Tensor gamma = random_tensor(pt, Dims{c}, 2, 0.5, 2), beta = random_tensor(pt, Dims{c}, 3, -1, 1);
          Tensor mean = random_tensor(pt, Dims{c}, 4, -1, 1), var = random_tensor(pt, Dims{c}, 5, 0.5, 2);
          Attrs attrs{{"training", training}, {"epsilon", 1e-5}};
          Tensor in[] = {x, gamma, beta, mean, var};
          std::vector<Tensor> want;
          execute(Prim::batch_norm, in, attrs, want);
          cuda::BnParams g;
          g.n = shape[0];
          g.c = c;
          g.s = x.numel() / (g.n * c);
          g.training = training;
          g.eps = 1e-5;
          Tensor y(xt, shape), mo(pt, Dims{c}), vo(pt, Dims{c});
          std::vector<double> coef(static_cast<size_t>(c * cuda::kBnCoefficients));
          long long C = c, count = x.numel();
          void *xp = x.raw(), *gp = gamma.raw(), *bp = beta.raw(), *mp = mean.raw(), *vp = var.raw();
          void *mop = mo.raw(), *vop = vo.raw(), *cp = coef.data(), *yp = y.raw();
          void* sa[] = {&C, &xp, &gp, &bp, &mp, &vp, &mop, &vop, &cp, &g};
          module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::bn_kernel_name(BnKernel::Stats, xt, pt))(2, 2, sa);
          void* aa[] = {&count, &xp, &yp, &cp, &g};
          module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::bn_kernel_name(BnKernel::Apply, xt, pt))(3, 7, aa);
          msl::test::require_matches(y, want[0], rtol);
          msl::test::require_matches(mo, want[1], rtol);
          msl::test::require_matches(vo, want[2], rtol);
          if (!training) continue;
          // The gradient, with the batch statistics the forward saved.
          Tensor dy = random_tensor(xt, shape, 6, -1, 1);
          Tensor gin[] = {dy, x, gamma, want[1], want[2]};
          std::vector<Tensor> gwant;
          execute(Prim::batch_norm_grad, gin, Attrs{{"epsilon", 1e-5}}, gwant);
          Tensor dx(xt, shape), dg(pt, Dims{c}), db(pt, Dims{c});
          void *dyp = dy.raw(), *smp = want[1].raw(), *svp = want[2].raw();
          void *dgp = dg.raw(), *dbp = db.raw(), *dxp = dx.raw();
          void* ga[] = {&C, &dyp, &xp, &gp, &smp, &svp, &dgp, &dbp, &cp, &g};
          module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::bn_kernel_name(BnKernel::GradSums, xt, pt))(2, 2, ga);
          void* da[] = {&count, &dyp, &xp, &dxp, &cp, &g};
          module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::bn_kernel_name(BnKernel::GradApply, xt, pt))(3, 7, da);
          msl::test::require_matches(dx, gwant[0], rtol == 0 ? 0 : 1e-4);
          msl::test::require_matches(dg, gwant[1], rtol == 0 ? 0 : 1e-4);
          msl::test::require_matches(db, gwant[2], rtol == 0 ? 0 : 1e-4);
        }
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("batch-norm texts compile with NVRTC") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  std::string all = cuda::bn_kernel_prelude();
  for (BnKernel k : kKernels)
    for (DType x : kTypes)
      for (DType p : kTypes) all += cuda::bn_kernel(k, x, p);
  cuda::NvrtcOutput out = cuda::nvrtc_compile(all, "batch_norm_kernels", 90);
  CHECK(out.image.find(cuda::bn_kernel_name(BnKernel::GradApply, DType::Float32, DType::Float64)) != std::string::npos);
}
#endif
