// Every primitive has a GPU kernel: after the CUDA back end's register
// functions (kernels/cuda/cuda_kernels.h, the ones the device calls when
// it opens; filling the slots needs no GPU), no CUDA slot of
// PrimDef::kernels is empty. A new primitive without a GPU kernel fails
// here, named, rather than as "no kernel for device GPU:0" on a user's GPU.
#include <doctest/doctest.h>

#include <string>

#include "kernels/primitives.h"
#ifdef MSL_HAVE_CUDA
#include "kernels/cuda/cuda_kernels.h"
#endif

using namespace msl::kernels;

#ifdef MSL_HAVE_CUDA
TEST_CASE("every primitive has a CUDA kernel") {
  cuda::register_cuda_kernels();
  cuda::register_matmul_kernels();
  cuda::register_conv_kernels();
  cuda::register_pool_kernels();
  cuda::register_batch_norm_kernels();
  // Primitives that cannot exist on the GPU, each with its reason: none.
  std::string missing;
  for (int i = 0; i < kNumPrims; ++i) {
    const PrimDef& d = prim_def(static_cast<Prim>(i));
    if (!d.kernels[static_cast<int>(DeviceType::CUDA)]) missing += std::string(missing.empty() ? "" : ", ") + d.name;
  }
  INFO("primitives without a CUDA kernel: " << missing);
  CHECK(missing.empty());
}
#else
TEST_CASE("every primitive has a CUDA kernel") { MESSAGE("a build without CUDA: no CUDA kernels to count"); }
#endif
