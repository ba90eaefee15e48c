// to_blocked and from_blocked as the GPU runs them: the strided copy's text
// (copy_cuda.h) over plain_as_blocked_view (blocked_layout.h), under host
// emulation, against the CPU's kernels (a oneDNN reorder for float32, the
// same view elsewhere), bit for bit: blocks of 8 and 16, several dtypes,
// contiguous and permuted plain tensors.
#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "kernels/blocked_layout.h"
#include "kernels/cuda/copy_cuda.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/emulated_launch.h"
#include "tests/unit/cuda/host_emulation.h"
#include "tests/unit/cuda/test_tensors.h"

using namespace msl::kernels;

namespace {

constexpr DType kDTypes[] = {DType::Int8, DType::Float16, DType::Int32, DType::Float32, DType::Float64};

// dst = src (same shape and dtype, any strides) by the emulated copy
// kernel, with the geometry the GPU's strided copy passes.
void emulate_copy(const msl::test::HostModule& m, const Tensor& dst, const Tensor& src) {
  cuda::CopyGeometry g;
  g.ndim = dst.ndim();
  for (int k = 0; k < g.ndim; ++k) {
    g.shape[k] = dst.dim(k);
    g.dst[k] = dst.strides()[k];
    g.src[k] = src.strides()[k];
  }
  long long n = dst.numel();
  void* d = dst.raw();
  void* s = src.raw();
  void* args[] = {&n, &d, &s, &g};
  m.symbol<msl::test::EmulatedLaunch>("run_" + cuda::copy_kernel_name(dst.dtype(), src.dtype()))(3, 5, args);
}

}  // namespace

TEST_CASE("to_blocked and from_blocked are the copy kernel over the blocked view of the plain tensor") {
  std::string source = cuda::copy_kernel_prelude();
  for (DType t : kDTypes) {
    std::string T = cuda::cuda_type_name(t);
    source += cuda::copy_kernel(t, t) +
              msl::test::emulated_launcher(cuda::copy_kernel_name(t, t),
                                           {"long long", T + "*", "const " + T + "*", "msl_geometry"});
  }
  msl::test::HostModule module(source);
  for (DType t : kDTypes)
    for (int64_t block : {8, 16})
      for (bool permuted : {false, true}) {
        CAPTURE(dtype_name(t));
        CAPTURE(block);
        CAPTURE(permuted);
        // [2, 32, 5, 6], contiguous or a permuted view of [2, 5, 6, 32].
        Tensor x = permuted ? Tensor::view(msl::test::values_of(t, Dims{2, 5, 6, 32}, 1), Dims{2, 32, 5, 6},
                                           Dims{960, 1, 192, 32}, 0)
                            : msl::test::values_of(t, Dims{2, 32, 5, 6}, 2);
        Tensor in[] = {x};
        Tensor want = execute1(Prim::to_blocked, in, Attrs{{"block", block}});
        Tensor got(t, want.shape());
        emulate_copy(module, got, plain_as_blocked_view(x, block));
        REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
        Tensor back_in[] = {want};
        Tensor back = execute1(Prim::from_blocked, back_in);
        Tensor plain(t, back.shape());
        emulate_copy(module, plain_as_blocked_view(plain, block), want);
        REQUIRE(std::memcmp(plain.raw(), back.raw(), back.nbytes()) == 0);
      }
}
