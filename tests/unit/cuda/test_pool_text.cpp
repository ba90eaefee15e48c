// The pooling kernels' texts (kernels/cuda/pool_cuda.h) under host
// emulation against the CPU's pooling (kernels/dnnl_pool.cpp): max forward
// and backward bit for bit (the same first maximum, the gradient summed in
// the CPU's window order), averages within rounding of their different
// summation order; padded, strided, overlapping, "same" (asymmetric) and
// count_include_pad windows; float32 and float64; and every text compiles
// with NVRTC.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/pool_cuda.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/emulated_launch.h"
#include "tests/unit/cuda/host_emulation.h"
#ifdef MSL_HAVE_CUDA
#include "kernels/cuda/nvrtc_compiler.h"
#endif

using namespace msl::kernels;
using cuda::PoolKernel;

namespace {

constexpr PoolKernel kKernels[] = {PoolKernel::MaxForward, PoolKernel::MaxBackward, PoolKernel::AvgForward,
                                   PoolKernel::AvgBackward};
constexpr DType kTypes[] = {DType::Float32, DType::Float64};

Tensor random_tensor(DType t, Dims shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-10.0, 10.0);
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) d.data<double>()[i] = i % 5 == 2 ? 1.0 : u(rng);  // ties among maxima
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

// The host-emulation caller of a pool kernel.
std::string launcher(PoolKernel k, DType t) {
  std::string T = t == DType::Float32 ? "float" : "double";
  if (k == PoolKernel::MaxBackward)
    return msl::test::emulated_launcher(cuda::pool_kernel_name(k, t),
                                        {"long long", "const " + T + "*", "const " + T + "*", T + "*", "msl_pool"});
  return msl::test::emulated_launcher(cuda::pool_kernel_name(k, t), {"long long", "const " + T + "*", T + "*", "msl_pool"});
}


}  // namespace

TEST_CASE("pooling texts compute the CPU's pooling under host emulation") {
  std::string source = cuda::pool_kernel_prelude();
  for (PoolKernel k : kKernels)
    for (DType t : kTypes) source += cuda::pool_kernel(k, t) + launcher(k, t);
  msl::test::HostModule module(source);
  struct Case {
    const char* what;
    Dims x;
    Attrs attrs;
  };
  const Case cases[] = {
      {"2x2 stride 2", Dims{2, 3, 8, 8},
       Attrs{{"kernel_size", std::vector<int64_t>{2}}, {"stride", std::vector<int64_t>{2}}}},
      {"3x3 stride 2 padded 1, overlapping", Dims{1, 2, 9, 7},
       Attrs{{"kernel_size", std::vector<int64_t>{3}},
             {"stride", std::vector<int64_t>{2}},
             {"pad_mode", std::string("pad")},
             {"padding", std::vector<int64_t>{1}}}},
      {"same 3x2 stride 2 (asymmetric)", Dims{2, 1, 6, 5},
       Attrs{{"kernel_size", std::vector<int64_t>{3, 2}},
             {"stride", std::vector<int64_t>{2}},
             {"pad_mode", std::string("same")}}},
      {"3x3 stride 1 padded, count_include_pad", Dims{1, 2, 5, 5},
       Attrs{{"kernel_size", std::vector<int64_t>{3}},
             {"stride", std::vector<int64_t>{1}},
             {"pad_mode", std::string("pad")},
             {"padding", std::vector<int64_t>{1}},
             {"count_include_pad", true}}},
  };
  for (const Case& c : cases)
    for (DType t : kTypes) {
      CAPTURE(std::string(c.what));
      CAPTURE(std::string(dtype_name(t)));
      Tensor x = random_tensor(t, c.x, 1);
      for (bool avg : {false, true}) {
        CAPTURE(avg);
        Attrs attrs = c.attrs;
        if (!avg) attrs = Attrs{};
        for (auto& [k, v] : c.attrs.items())
          if (avg || k != "count_include_pad") attrs.set(k, v);
        PoolGeom g = pool_geometry(avg ? "avg_pool2d" : "max_pool2d", x.shape(), attrs, avg);
        cuda::PoolParams p = cuda::pool_params(g);
        Tensor in[] = {x};
        Tensor want = execute1(avg ? Prim::avg_pool2d : Prim::max_pool2d, in, attrs);
        Tensor got(t, want.shape());
        long long count = got.numel();
        void* xp = x.raw();
        void* yp = got.raw();
        void* fa[] = {&count, &xp, &yp, &p};
        module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::pool_kernel_name(avg ? PoolKernel::AvgForward : PoolKernel::MaxForward, t))(
            3, 32, fa);
        msl::test::require_matches(got, want, avg ? (t == DType::Float32 ? 1e-6 : 1e-14) : 0);
        // The gradient of a random dy.
        Tensor dy = random_tensor(t, want.shape(), 2);
        Tensor dx_want, dx(t, x.shape());
        long long xcount = dx.numel();
        void* dyp = dy.raw();
        void* dxp = dx.raw();
        if (avg) {
          Attrs ga = attrs;
          ga.set("input_shape", std::vector<int64_t>(c.x.begin(), c.x.end()));
          Tensor gin[] = {dy};
          dx_want = execute1(Prim::avg_pool2d_grad, gin, ga);
          void* ba[] = {&xcount, &dyp, &dxp, &p};
          module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::pool_kernel_name(PoolKernel::AvgBackward, t))(2, 40, ba);
        } else {
          Tensor gin[] = {x, dy};
          dx_want = execute1(Prim::max_pool2d_grad, gin, attrs);
          void* ba[] = {&xcount, &xp, &dyp, &dxp, &p};
          module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::pool_kernel_name(PoolKernel::MaxBackward, t))(2, 40, ba);
        }
        msl::test::require_matches(dx, dx_want, avg ? (t == DType::Float32 ? 1e-6 : 1e-14) : 0);
      }
    }
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("pooling texts compile with NVRTC") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  std::string all = cuda::pool_kernel_prelude();
  for (PoolKernel k : kKernels)
    for (DType t : kTypes) all += cuda::pool_kernel(k, t);
  cuda::NvrtcOutput out = cuda::nvrtc_compile(all, "pool_kernels", 90);
  for (PoolKernel k : kKernels)
    for (DType t : kTypes) CHECK(out.image.find(cuda::pool_kernel_name(k, t)) != std::string::npos);
}
#endif
