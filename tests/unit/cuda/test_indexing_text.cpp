// The scatter and NumPy-style indexing kernel texts (kernels/cuda/
// movement_cuda.h's scatter_add, kernels/cuda/indexing_cuda.h) under host
// emulation against the CPU's kernels (movement_index.cpp,
// movement_scatter.cpp), composed as indexing_launch.cpp composes them:
// scatter_add in every accumulator dtype (8-bit integers through the
// compare-and-swap add) with repeated rows, bit for bit when the emulated
// threads reach the updates in the CPU's order and within rounding in
// another order (integers always exact); gather_nd, tensor_scatter_update
// (the last repeated row wins) and tensor_scatter_add from the row offsets,
// with negative indices; the error flags of bad indices; nonzero's count,
// scan and fill over several chunks, in every dtype, with -0.0 and NaN.
// And every text compiles with NVRTC.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/indexing_cuda.h"
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
using msl::test::emulated_launcher;
using msl::test::EmulatedLaunch;

namespace {

using msl::test::converted;
using msl::test::int_tensor;
using msl::test::values_of;

constexpr DType kAccumulators[] = {DType::Int8,  DType::UInt8,   DType::Int32,
                                   DType::Int64, DType::Float32, DType::Float64};
constexpr DType kIndexDTypes[] = {DType::Int32, DType::Int64};
constexpr size_t kSizes[] = {1, 2, 4, 8};

// Every kernel of the two groups, with (when `launchers`) their emulated launchers.
std::string module_source(bool launchers) {
  std::string s = cuda::movement_prelude() + cuda::indexing_prelude();
  auto add = [&](const std::string& text, const std::string& name, const std::vector<std::string>& params) {
    s += text;
    if (launchers) s += emulated_launcher(name, params);
  };
  for (DType acc : kAccumulators)
    for (DType it : kIndexDTypes)
      add(cuda::scatter_add_kernel_text(acc, it), cuda::scatter_add_kernel_name(acc, it),
          cuda::scatter_add_param_types(acc, it));
  for (DType it : kIndexDTypes)
    add(cuda::nd_offsets_kernel_text(it), cuda::nd_offsets_kernel_name(it), cuda::nd_offsets_param_types(it));
  add(cuda::nd_last_row_kernel_text(), cuda::nd_last_row_kernel_name(), cuda::nd_last_row_param_types());
  for (size_t size : kSizes) {
    add(cuda::nd_update_kernel_text(size), cuda::nd_update_kernel_name(size), cuda::nd_update_param_types(size));
    add(cuda::gather_kernel_text(size, DType::Int64), cuda::gather_kernel_name(size, DType::Int64),
        cuda::gather_param_types(size, DType::Int64));
  }
  for (DType t : msl::test::kAllDTypes) {
    add(cuda::nonzero_count_kernel_text(t), cuda::nonzero_count_kernel_name(t), cuda::nonzero_count_param_types(t));
    add(cuda::nonzero_fill_kernel_text(t), cuda::nonzero_fill_kernel_name(t), cuda::nonzero_fill_param_types(t));
  }
  add(cuda::nonzero_scan_kernel_text(), cuda::nonzero_scan_kernel_name(), cuda::nonzero_scan_param_types());
  return s;
}

const msl::test::HostModule& module() {
  static const msl::test::HostModule m(module_source(true));
  return m;
}

void run(const std::string& kernel, unsigned blocks, unsigned threads, void** args) {
  module().symbol<EmulatedLaunch>("run_" + kernel)(blocks, threads, args);
}

// Values in [-100, 100) converted to t (so integer sums wrap in 8 bits).
// scatter_add's kernel into a copy of x in its accumulator dtype, rounded
// back to x's dtype; the flag through *err.
Tensor emulate_scatter_add(const Tensor& x, const Tensor& indices, const Tensor& updates, int axis, unsigned blocks,
                           unsigned threads, int32_t* err) {
  DType acc_dt = cuda::scatter_accumulator(x.dtype());
  Tensor acc = converted(x, acc_dt), upd = converted(updates, acc_dt);
  long long n = upd.numel(), k = indices.numel(), size = x.dim(axis), inner = 1;
  for (int i = axis + 1; i < x.ndim(); ++i) inner *= x.dim(i);
  void* o = acc.raw();
  void* u = upd.raw();
  void* idx = indices.raw();
  void* args[] = {&n, &o, &u, &idx, &k, &size, &inner, &err};
  run(cuda::scatter_add_kernel_name(acc_dt, indices.dtype()), blocks, threads, args);
  return converted(acc, x.dtype());
}

// The row offsets of `indices` into x; the flag through *err.
Tensor emulate_offsets(const Tensor& x, const Tensor& indices, int32_t* err) {
  int K = static_cast<int>(indices.dim(indices.ndim() - 1));
  long long rows = indices.numel() / K;
  cuda::NdDims dims;
  dims.ndim = K;
  for (int j = 0; j < K; ++j) dims.d[j] = x.dim(j);
  Tensor offs(DType::Int64, Dims{rows});
  void* o = offs.raw();
  void* idx = indices.raw();
  void* args[] = {&rows, &o, &idx, &dims, &err};
  run(cuda::nd_offsets_kernel_name(indices.dtype()), 2, 3, args);
  return offs;
}

// x's elements per index position, and the positions.
void split_nd(const Tensor& x, int K, long long& positions, long long& inner) {
  positions = inner = 1;
  for (int j = 0; j < x.ndim(); ++j) (j < K ? positions : inner) *= x.dim(j);
}

}  // namespace

TEST_CASE("scatter_add adds the CPU's updates under host emulation") {
  uint32_t seed = 1;
  int checked = 0;
  for (DType t : {DType::Int8, DType::UInt8, DType::Int32, DType::Int64, DType::Float16, DType::BFloat16,
                  DType::Float32, DType::Float64})
    for (DType it : kIndexDTypes)
      for (int64_t axis : {0, 1, 2, -1})
        for (const Dims& ishape : {Dims{5}, Dims{2, 3}, Dims{}}) {
          CAPTURE(dtype_name(t));
          CAPTURE(dtype_name(it));
          CAPTURE(axis);
          CAPTURE(ishape.str());
          const int ax = static_cast<int>(axis < 0 ? axis + 3 : axis);
          Tensor x = values_of(t, Dims{4, 5, 6}, seed++);
          Tensor indices = int_tensor(it, ishape, {3, 0, 3, 1, 3, 2});  // row 3 three times
          Dims ushape;
          for (int i = 0; i < 3; ++i) {
            if (i != ax) ushape.push_back(x.dim(i));
            if (i == ax)
              for (int64_t d : ishape) ushape.push_back(d);
          }
          Tensor updates = values_of(t, ushape, seed++);
          Tensor in[] = {x, indices, updates};
          Tensor want = execute1(Prim::scatter_add, in, Attrs{{"axis", axis}});
          // One thread per update: each element's updates arrive in index
          // order, the CPU's, so even float sums are its bits.
          int32_t err = 0;
          unsigned blocks = static_cast<unsigned>(updates.numel() / 8 + 1);
          Tensor got = emulate_scatter_add(x, indices, updates, ax, blocks, 8, &err);
          CHECK(err == 0);
          REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
          // A small grid: each thread strides over several updates, so a
          // repeated row's updates arrive out of order: integers exact.
          got = emulate_scatter_add(x, indices, updates, ax, 2, 7, &err);
          CHECK(err == 0);
          bool is_float = t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
          double rtol = t == DType::Float16 || t == DType::BFloat16 ? 1e-2 : t == DType::Float32 ? 1e-3 : 1e-12;
          msl::test::require_matches(got, want, is_float ? rtol : 0);
          checked += static_cast<int>(want.numel());
        }
  CHECK(checked > 10000);
  // An index out of range sets the flag.
  for (int64_t bad : {-1, 5}) {
    Tensor x = values_of(DType::Float32, Dims{4, 5}, seed++);
    Tensor indices = int_tensor(DType::Int64, Dims{3}, {1, bad, 2});
    int32_t err = 0;
    emulate_scatter_add(x, indices, values_of(DType::Float32, Dims{4, 3}, seed++), 1, 2, 7, &err);
    CHECK(err == 1);
  }
}

TEST_CASE("gather_nd and the tensor scatters from row offsets under host emulation") {
  uint32_t seed = 100;
  // Rows naming positions of the first K dims of x [4, 5, 3], negative
  // ones counting from the end, repeated positions (the scatters' order).
  const std::vector<int64_t> rows_of[] = {{},
                                          {2, -1, 0, 2, 3, -4},
                                          {1, 4, -1, -5, 1, 4, 0, 0, 3, 2, 1, 4},
                                          {0, 1, 2, 3, -1, -3, 0, 1, 2, 1, 1, 1, 0, 1, -1}};
  for (DType t : msl::test::kAllDTypes)
    for (DType it : kIndexDTypes)
      for (int K : {1, 2, 3}) {
        CAPTURE(dtype_name(t));
        CAPTURE(dtype_name(it));
        CAPTURE(K);
        Tensor x = values_of(t, Dims{4, 5, 3}, seed++);
        const std::vector<int64_t>& v = rows_of[K];
        int64_t rows = static_cast<int64_t>(v.size()) / K;
        Tensor indices = int_tensor(it, Dims{rows, K}, v);
        int32_t err = 0;
        Tensor offs = emulate_offsets(x, indices, &err);
        REQUIRE(err == 0);
        long long positions, inner, k = rows, n;
        split_nd(x, K, positions, inner);
        // gather_nd: gather's kernel along the positions.
        Tensor in2[] = {x, indices};
        Tensor want = execute1(Prim::gather_nd, in2);
        Tensor got(t, want.shape());
        n = got.numel();
        void* o = got.raw();
        void* p = x.raw();
        void* idx = offs.raw();
        int32_t* e = &err;
        void* gather_args[] = {&n, &o, &p, &idx, &k, &positions, &inner, &e};
        run(cuda::gather_kernel_name(x.itemsize(), DType::Int64), 3, 4, gather_args);
        CHECK(err == 0);
        REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
        // tensor_scatter_update: the last row naming a position wins.
        Tensor updates = values_of(t, want.shape(), seed++);
        Tensor in3[] = {x, indices, updates};
        want = execute1(Prim::tensor_scatter_update, in3);
        got = x.clone();
        Tensor last = Tensor::zeros(DType::Int64, Dims{positions});
        void* l = last.raw();
        void* mark_args[] = {&k, &idx, &l};
        run(cuda::nd_last_row_kernel_name(), 2, 3, mark_args);
        o = got.raw();
        void* u = updates.raw();
        void* update_args[] = {&n, &o, &u, &idx, &l, &inner};
        run(cuda::nd_update_kernel_name(x.itemsize()), 2, 5, update_args);
        REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
        // tensor_scatter_add: scatter_add's kernel along the positions.
        if (t == DType::Bool) continue;
        want = execute1(Prim::tensor_scatter_add, in3);
        Dims flat{positions, inner};
        got = emulate_scatter_add(Tensor::view(x, flat, contiguous_strides(flat), 0), offs, updates, 0, 64, 8, &err);
        CHECK(err == 0);
        REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
      }
  // A bad index: the flag, and offset 0 for its row (the others computed).
  for (int64_t bad : {5, -6}) {
    Tensor x = values_of(DType::Float32, Dims{4, 5, 3}, seed++);
    Tensor indices = int_tensor(DType::Int32, Dims{3, 2}, {1, 2, 3, bad, -1, -1});
    Tensor in[] = {x, indices};
    CHECK_THROWS_AS(execute1(Prim::gather_nd, in), IndexOutOfRange);
    int32_t err = 0;
    Tensor offs = emulate_offsets(x, indices, &err);
    CHECK(err == 1);
    CHECK(offs.data<int64_t>()[0] == 7);
    CHECK(offs.data<int64_t>()[1] == 0);
    CHECK(offs.data<int64_t>()[2] == 19);
  }
}

TEST_CASE("nonzero counts, scans and fills the CPU's coordinates under host emulation") {
  uint32_t seed = 200;
  for (DType t : msl::test::kAllDTypes)
    for (const Dims& shape : {Dims{7}, Dims{3, 4, 5}, Dims{2, 3, 2, 700}, Dims{0, 4}, Dims{300}}) {
      CAPTURE(dtype_name(t));
      CAPTURE(shape.str());
      // Mostly zeros and small values; -0.0 and NaN among the floats.
      std::mt19937 rng(seed++);
      Tensor d(DType::Float64, shape);
      for (int64_t i = 0; i < d.numel(); ++i) {
        uint32_t r = rng() % 10;
        d.data<double>()[i] = r < 5 ? 0.0 : r == 5 ? -0.0 : r == 6 ? std::nan("") : r == 7 ? 1e-30 : double(r) - 8.5;
      }
      Tensor x = converted(d, t);
      Tensor in[] = {x};
      Tensor want = execute1(Prim::nonzero, in);
      long long n = x.numel(), chunk = cuda::nonzero_chunk(n), chunks = (n + chunk - 1) / chunk, one = 1;
      Tensor counts(DType::Int64, Dims{chunks + 1});
      Tensor got(DType::Int64, Dims{n, x.ndim()});
      void* xp = x.raw();
      void* c = counts.raw();
      void* o = got.raw();
      cuda::NdDims dims;
      dims.ndim = x.ndim();
      for (int j = 0; j < x.ndim(); ++j) dims.d[j] = x.dim(j);
      void* count_args[] = {&chunks, &xp, &n, &chunk, &c};
      run(cuda::nonzero_count_kernel_name(t), 2, 3, count_args);
      void* scan_args[] = {&one, &chunks, &c};
      run(cuda::nonzero_scan_kernel_name(), 1, 1, scan_args);
      int64_t nnz = counts.data<int64_t>()[chunks];
      REQUIRE(nnz == want.dim(0));
      void* fill_args[] = {&chunks, &xp, &n, &chunk, &c, &o, &dims};
      run(cuda::nonzero_fill_kernel_name(t), 3, 2, fill_args);
      REQUIRE(std::memcmp(got.raw(), want.raw(), want.nbytes()) == 0);
    }
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("every scatter and indexing kernel text compiles with NVRTC for sm_80 and sm_90") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  for (int arch : {80, 90}) {
    cuda::NvrtcOutput out = cuda::nvrtc_compile(module_source(false), "indexing_kernels", arch);
    CHECK(out.image.compare(0, 4,
                            "\x7f"
                            "ELF") == 0);
  }
}
#endif
