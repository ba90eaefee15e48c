// The sort kernel text (kernels/cuda/sort_cuda.h) under host emulation
// against the CPU's sort (kernels/sort.cpp), bit for bit: values and
// positions of every dtype, ascending and descending, rows with ties
// (stability), NaN and infinities, a single element, rows of 1 to 37
// elements, and more rows than emulated threads; and an NVRTC compile of
// every kernel for sm_80 and sm_90.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/copy_cuda.h"
#include "kernels/cuda/sort_cuda.h"
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

constexpr DType kKeys[] = {DType::Float32, DType::Float64, DType::Int64};
constexpr size_t kSizes[] = {1, 2, 4, 8};

std::string module_source() {
  std::string s;
  for (DType key : kKeys)
    for (size_t size : kSizes)
      for (bool desc : {false, true}) {
        std::string name = cuda::sort_kernel_name(key, size, desc);
        s += cuda::sort_kernel_text(key, size, desc) +
             msl::test::emulated_launcher(name, cuda::sort_param_types(key, size));
      }
  return s;
}

// Small integers (many ties), with NaN, infinities and -0 among floats.
Tensor values(DType t, const Dims& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(-6, 6);
  Tensor d(DType::Float64, shape);
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < d.numel(); ++i) {
    double v = u(rng);
    if (is_floating(t)) {
      int pick = u(rng);
      if (pick == 6) v = std::nan("");
      if (pick == 5) v = inf;
      if (pick == -6) v = -inf;
      if (pick == 4) v = -0.0;
      if (pick == 3) v = v + 0.5;
    }
    if (t == DType::UInt8 && v < 0) v = -v;
    d.data<double>()[i] = v;
  }
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

void check_case(const msl::test::HostModule& m, DType t, const Dims& shape, bool desc, uint32_t seed) {
  CAPTURE(dtype_name(t));
  CAPTURE(shape.str());
  CAPTURE(desc);
  Tensor x = values(t, shape, seed);
  Attrs attrs;
  attrs.set("descending", desc);
  std::vector<Tensor> want;
  Tensor in[] = {x};
  execute(Prim::sort, in, attrs, want);
  DType key = cuda::sort_key_dtype(t);
  Tensor keys(key, shape);
  copy_tensor(x, keys);
  Tensor got_v(t, shape), got_i(DType::Int32, shape), scratch(DType::Int32, shape);
  long long n = shape[shape.size() - 1], rows = x.numel() / n;
  void *k = keys.raw(), *xp = x.raw(), *v = got_v.raw(), *i = got_i.raw(), *s = scratch.raw();
  void* args[] = {&rows, &n, &k, &xp, &v, &i, &s};
  m.symbol<msl::test::EmulatedLaunch>("run_" + cuda::sort_kernel_name(key, x.itemsize(), desc))(2, 3, args);
  msl::test::require_matches(got_i, want[1], 0);
  // Values bit for bit (NaN included): the bytes.
  REQUIRE(std::memcmp(got_v.raw(), want[0].raw(), want[0].nbytes()) == 0);
}

}  // namespace

TEST_CASE("sort kernels order rows as the CPU's stable sort under host emulation") {
  msl::test::HostModule m(module_source());
  uint32_t seed = 1;
  for (DType t : msl::test::kAllDTypes)
    for (bool desc : {false, true}) {
      check_case(m, t, Dims{1}, desc, seed++);
      check_case(m, t, Dims{7, 37}, desc, seed++);
      check_case(m, t, Dims{2, 3, 16}, desc, seed++);
      check_case(m, t, Dims{5, 2}, desc, seed++);
    }
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("every sort kernel text compiles with NVRTC for sm_80 and sm_90") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  for (DType key : kKeys)
    for (size_t size : kSizes)
      for (bool desc : {false, true})
        for (int arch : {80, 90}) {
          std::string name = cuda::sort_kernel_name(key, size, desc);
          CAPTURE(name);
          cuda::NvrtcOutput out = cuda::nvrtc_compile(cuda::sort_kernel_text(key, size, desc), name, arch);
          CHECK(out.image.compare(0, 4, "\x7f" "ELF") == 0);
        }
}
#endif
