// The gather and one_hot kernel texts (kernels/cuda/movement_cuda.h) under
// host emulation against the CPU's kernels (movement_index.cpp), bit for
// bit: every element size, both index dtypes of gather (every integer one
// of one_hot), every axis, 0-d and 2-d indices, indices outside the range
// (one_hot: all-off rows; gather: the error flag), every output dtype of
// one_hot with on/off values that need its conversion.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "kernels/cuda/movement_cuda.h"
#include "kernels/errors.h"
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

using msl::test::int_tensor;
using msl::test::values_of;

constexpr size_t kSizes[] = {1, 2, 4, 8};
constexpr DType kIndexDTypes[] = {DType::Int8, DType::UInt8, DType::Int32, DType::Int64};

std::string module_source() {
  std::string s = cuda::movement_prelude();
  for (size_t size : kSizes)
    for (DType t : kIndexDTypes) {
      s += cuda::one_hot_kernel_text(size, t) +
           msl::test::emulated_launcher(cuda::one_hot_kernel_name(size, t), cuda::one_hot_param_types(size, t));
      if (t == DType::Int32 || t == DType::Int64)
        s += cuda::gather_kernel_text(size, t) +
             msl::test::emulated_launcher(cuda::gather_kernel_name(size, t), cuda::gather_param_types(size, t));
    }
  return s;
}

// gather of contiguous params along `axis` under emulation; returns the flag.
int32_t emulate_gather(const msl::test::HostModule& m, const Tensor& params, const Tensor& indices, int axis,
                       const Tensor& out) {
  long long n = out.numel(), k = indices.numel(), size = params.dim(axis), inner = 1;
  for (int i = axis + 1; i < params.ndim(); ++i) inner *= params.dim(i);
  int32_t err = 0;
  int32_t* e = &err;
  void* o = out.raw();
  void* p = params.raw();
  void* idx = indices.raw();
  void* args[] = {&n, &o, &p, &idx, &k, &size, &inner, &e};
  m.symbol<msl::test::EmulatedLaunch>("run_" + cuda::gather_kernel_name(out.itemsize(), indices.dtype()))(2, 7,
                                                                                                          args);
  return err;
}

}  // namespace

TEST_CASE("gather and one_hot kernels move the CPU's bits under host emulation") {
  msl::test::HostModule m(module_source());
  uint32_t seed = 1;
  int checked = 0;
  // gather: every element size, index dtype and axis; 1-d, 2-d and 0-d indices.
  for (DType t : {DType::Bool, DType::Int8, DType::Float16, DType::BFloat16, DType::Float32, DType::Int64,
                  DType::Float64})
    for (DType it : {DType::Int32, DType::Int64})
      for (int64_t axis : {0, 1, 2, -1})
        for (const Dims& ishape : {Dims{3}, Dims{2, 2}, Dims{}}) {
          CAPTURE(dtype_name(t));
          CAPTURE(dtype_name(it));
          CAPTURE(axis);
          Tensor params = values_of(t, Dims{4, 5, 6}, seed++);
          Tensor indices = int_tensor(it, ishape, {3, 0, 2, 1});
          Tensor in[] = {params, indices};
          Attrs a{{"axis", axis}};
          Tensor want = execute1(Prim::gather, in, a);
          Tensor got(want.dtype(), want.shape());
          std::memset(got.raw(), 0x5a, got.nbytes());
          CHECK(emulate_gather(m, params, indices, static_cast<int>(axis < 0 ? axis + 3 : axis), got) == 0);
          REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
          checked += static_cast<int>(got.numel());
        }
  // An index out of range sets the flag.
  for (int64_t bad : {-1, 5}) {
    Tensor params = values_of(DType::Float32, Dims{4, 5}, seed++);
    Tensor indices = int_tensor(DType::Int64, Dims{3}, {1, bad, 2});
    Tensor in[] = {params, indices};
    CHECK_THROWS_AS(execute1(Prim::gather, in, Attrs{{"axis", int64_t{1}}}), IndexError);
    Tensor got(DType::Float32, Dims{4, 3});
    CHECK(emulate_gather(m, params, indices, 1, got) == 1);
  }
  // one_hot: every output dtype, index dtype and axis, indices outside [0, depth).
  const DType outs[] = {DType::Bool,    DType::Int8,     DType::UInt8,   DType::Int32,  DType::Int64,
                        DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  for (DType ot : outs)
    for (DType it : kIndexDTypes)
      for (int64_t axis : {-1, 0, 1}) {
        CAPTURE(dtype_name(ot));
        CAPTURE(dtype_name(it));
        CAPTURE(axis);
        Tensor indices = int_tensor(it, Dims{3, 7}, {0, 4, 2, -1, 5, 1, 3, 9});
        Attrs a{{"depth", int64_t{5}}, {"on_value", 2.7}, {"off_value", -1.3}, {"axis", axis}, {"dtype", ot}};
        Tensor in[] = {indices};
        Tensor want = execute1(Prim::one_hot, in, a);
        Tensor got(want.dtype(), want.shape());
        std::memset(got.raw(), 0x5a, got.nbytes());
        const int ax = static_cast<int>(axis < 0 ? axis + 3 : axis);
        long long n = got.numel(), depth = 5, inner = 1;
        for (int i = ax; i < 2; ++i) inner *= indices.dim(i);
        uint64_t on = 0, off = 0;
        store_from_double(&on, ot, 0, 2.7);
        store_from_double(&off, ot, 0, -1.3);
        void* o = got.raw();
        void* idx = indices.raw();
        void* args[] = {&n, &o, &idx, &depth, &inner, &on, &off};
        m.symbol<msl::test::EmulatedLaunch>("run_" + cuda::one_hot_kernel_name(got.itemsize(), it))(3, 5, args);
        REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
        checked += static_cast<int>(got.numel());
      }
  CHECK(checked > 5000);
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("every gather and one_hot kernel text compiles with NVRTC for sm_80 and sm_90") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  std::string all = cuda::movement_prelude();
  for (size_t size : kSizes)
    for (DType t : kIndexDTypes) {
      all += cuda::one_hot_kernel_text(size, t);
      if (t == DType::Int32 || t == DType::Int64) all += cuda::gather_kernel_text(size, t);
    }
  for (int arch : {80, 90}) {
    cuda::NvrtcOutput out = cuda::nvrtc_compile(all, "movement_kernels", arch);
    CHECK(out.image.compare(0, 4, "\x7f" "ELF") == 0);
  }
}
#endif
