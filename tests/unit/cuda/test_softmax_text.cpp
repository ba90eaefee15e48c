// The softmax family's kernel texts (kernels/cuda/softmax_cuda.h) under
// host emulation against the CPU's kernels (softmax.cpp) and, for softmax
// and log_softmax, against float64 values worked out here: every float
// dtype, the last and an inner axis, rows of -inf, +inf, NaN and large
// values, empty tensors, dense and sparse cross entropy, and the sparse
// loss's out-of-range label flag. The sums are added in another order than
// the CPU's, so results agree within a few ulps of the dtype (tolerances
// below), not bit for bit.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cuda/softmax_cuda.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/emulated_launch.h"
#include "tests/unit/cuda/host_emulation.h"
#ifdef MSL_HAVE_CUDA
#include "kernels/cuda/nvrtc_compiler.h"
#endif

using namespace msl::kernels;

namespace {

constexpr DType kFloats[] = {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
constexpr Prim kPrims[] = {Prim::softmax,          Prim::log_softmax,           Prim::softmax_grad,
                           Prim::log_softmax_grad, Prim::softmax_cross_entropy, Prim::sparse_softmax_cross_entropy};

Tensor values_of(DType t, const Dims& shape, uint32_t seed, bool specials) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-6.0, 6.0);
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) d.data<double>()[i] = u(rng);
  if (specials && shape.size() == 2 && shape[0] >= 5) {
    const int64_t w = shape[1];
    double* p = d.data<double>();
    for (int64_t j = 0; j < w; ++j) p[j] = -std::numeric_limits<double>::infinity();  // row 0: all -inf
    p[w + 1] = std::numeric_limits<double>::infinity();                                // row 1: an inf
    p[2 * w + 2] = std::nan("");                                                       // row 2: a NaN
    for (int64_t j = 0; j < w; ++j) p[3 * w + j] = 1000.0 + j;                         // row 3: large
    p[4 * w] = -std::numeric_limits<double>::infinity();                               // row 4: one -inf
  }
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

// The tolerance of a result of dtype t: a few ulps of its magnitude plus 1.
double tolerance(DType t, double v) {
  double eps = t == DType::Float16 ? 2e-3 : t == DType::BFloat16 ? 1.6e-2 : t == DType::Float32 ? 4e-6 : 1e-13;
  return eps * (std::fabs(v) + 1.0);
}

void check_close(const Tensor& got, const Tensor& want, const char* what) {
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.numel(); ++i) {
    double a = got.item_at(i), b = want.item_at(i);
    INFO(what << " element " << i << ": GPU text " << a << ", CPU " << b);
    if (std::isnan(a) || std::isnan(b) || std::isinf(b)) {
      REQUIRE(((std::isnan(a) && std::isnan(b)) || a == b));
      continue;
    }
    REQUIRE(std::fabs(a - b) <= tolerance(got.dtype(), b));
  }
}

struct Run {
  std::vector<Tensor> in;
  Attrs attrs;
};

// Runs kernel k under emulation on contiguous inputs (as the launch makes
// them) into outputs shaped as the CPU's; returns the flag.
int32_t emulate(const msl::test::HostModule& m, const cuda::SoftmaxKernel& k, const Run& run,
                std::vector<Tensor>& out, const std::vector<Tensor>& want) {
  out.clear();
  for (const Tensor& w : want) {
    out.emplace_back(w.dtype(), w.shape());
    std::memset(out.back().raw(), 0x7f, out.back().nbytes());
  }
  std::vector<Tensor> in;
  for (const Tensor& t : run.in) in.push_back(t.contiguous());
  std::vector<void*> ptrs;
  for (const Tensor& t : out) ptrs.push_back(t.raw());
  for (const Tensor& t : in) ptrs.push_back(t.raw());
  long long rows, n, b = 1;
  int32_t err = 0;
  int32_t* err_ptr = &err;
  std::vector<void*> args{&rows};
  for (void*& p : ptrs) args.push_back(&p);
  if (k.prim == Prim::softmax_cross_entropy || k.prim == Prim::sparse_softmax_cross_entropy) {
    rows = want[1].dim(0);
    n = want[1].dim(1);
    args.push_back(&n);
    if (k.prim == Prim::sparse_softmax_cross_entropy) args.push_back(&err_ptr);
  } else {
    const Tensor& o = want[0];
    int axis = static_cast<int>(run.attrs.get_int("axis", -1));
    if (axis < 0) axis += o.ndim();
    n = o.dim(axis);
    for (int i = axis + 1; i < o.ndim(); ++i) b *= o.dim(i);
    rows = n == 0 ? 0 : o.numel() / n;
    args.push_back(&n);
    args.push_back(&b);
  }
  m.symbol<msl::test::EmulatedLaunch>("run_" + cuda::softmax_kernel_name(k))(2, 8, args.data());
  return err;
}

std::vector<Run> runs_for(Prim p, DType t, uint32_t seed) {
  std::vector<Run> runs;
  if (p == Prim::softmax || p == Prim::log_softmax || p == Prim::softmax_grad || p == Prim::log_softmax_grad) {
    const bool grad = p == Prim::softmax_grad || p == Prim::log_softmax_grad;
    struct Shape {
      Dims dims;
      int64_t axis;
      bool specials;
    };
    for (const Shape& s : {Shape{Dims{7, 33}, -1, true}, Shape{Dims{7, 33}, 0, false}, Shape{Dims{3, 5, 4}, 1, false},
                           Shape{Dims{0, 5}, 1, false}, Shape{Dims{6, 1}, 1, false}}) {
      Run r;
      r.attrs = Attrs{{"axis", s.axis}};
      Tensor x = values_of(t, s.dims, seed++, s.specials && !grad);
      if (grad) {
        // y as the forward pass gives it, so the sums are realistic.
        Tensor xin[] = {x};
        Tensor y = execute1(p == Prim::softmax_grad ? Prim::softmax : Prim::log_softmax, xin, r.attrs);
        r.in = {y, values_of(t, s.dims, seed++, false)};
      } else {
        r.in = {x};
      }
      runs.push_back(r);
    }
    // A transposed input: the launch makes it contiguous first.
    Tensor x = values_of(t, Dims{33, 7}, seed++, false);
    if (!grad) runs.push_back({{Tensor::view(x, Dims{7, 33}, Dims{1, 7}, 0)}, Attrs{{"axis", int64_t{-1}}}});
    return runs;
  }
  for (Dims shape : {Dims{9, 13}, Dims{6, 1}, Dims{0, 4}}) {
    Tensor logits = values_of(t, shape, seed++, shape[0] == 9);
    if (p == Prim::softmax_cross_entropy) {
      Tensor raw[] = {values_of(t, shape, seed++, false)};
      Tensor labels = execute1(Prim::softmax, raw, Attrs{{"axis", int64_t{-1}}});
      runs.push_back({{logits, labels}, Attrs{}});
    } else {
      for (DType lt : {DType::Int32, DType::Int64}) {
        Tensor labels(lt, Dims{shape[0]});
        for (int64_t i = 0; i < shape[0]; ++i) {
          int64_t v = (i * 7 + seed) % shape[1];
          Tensor one(DType::Int64, Dims{1});
          *one.data<int64_t>() = v;
          copy_tensor(one, Tensor::view(labels, Dims{1}, Dims{1}, i));
        }
        runs.push_back({{logits, labels}, Attrs{}});
      }
    }
  }
  return runs;
}

std::vector<cuda::SoftmaxKernel> all_kernels() {
  std::vector<cuda::SoftmaxKernel> ks;
  for (Prim p : kPrims)
    for (DType t : kFloats) {
      ks.push_back({p, t, DType::Int64});
      if (p == Prim::sparse_softmax_cross_entropy) ks.push_back({p, t, DType::Int32});
    }
  return ks;
}

std::string module_source() {
  std::string s = cuda::softmax_prelude();
  for (const auto& k : all_kernels())
    s += cuda::softmax_kernel_text(k) +
         msl::test::emulated_launcher(cuda::softmax_kernel_name(k), cuda::softmax_param_types(k));
  return s;
}

// softmax (log_softmax) of x along the last axis in float64, from scratch.
std::vector<double> float64_softmax(const Tensor& x, bool log) {
  int64_t w = x.dim(x.ndim() - 1), rows = x.numel() / w;
  std::vector<double> y(static_cast<size_t>(x.numel()));
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < w; ++j) m = std::max(m, x.item_at(r * w + j));
    for (int64_t j = 0; j < w; ++j) s += std::exp(x.item_at(r * w + j) - m);
    for (int64_t j = 0; j < w; ++j) {
      double v = x.item_at(r * w + j) - m;
      y[static_cast<size_t>(r * w + j)] = log ? v - std::log(s) : std::exp(v) / s;
    }
  }
  return y;
}

}  // namespace

TEST_CASE("softmax kernels compute the CPU's results under host emulation") {
  msl::test::HostModule module(module_source());
  uint32_t seed = 5;
  int checked = 0;
  for (Prim p : kPrims)
    for (DType t : kFloats)
      for (const Run& run : runs_for(p, t, seed += 11)) {
        CAPTURE(prim_name(p));
        CAPTURE(dtype_name(t));
        CAPTURE(run.in[0].shape().str());
        std::vector<Tensor> want;
        execute(p, run.in, run.attrs, want);
        cuda::SoftmaxKernel k{p, t, run.in.size() > 1 ? run.in[1].dtype() : DType::Int64};
        std::vector<Tensor> got;
        CHECK(emulate(module, k, run, got, want) == 0);
        for (size_t o = 0; o < want.size(); ++o) {
          check_close(got[o], want[o], o ? "output 1" : "output 0");
          checked += static_cast<int>(got[o].numel());
        }
        // Against float64 worked out here (finite rows of the last axis).
        if ((p == Prim::softmax || p == Prim::log_softmax) && run.attrs.get_int("axis") == -1 && t == DType::Float32) {
          std::vector<double> ref = float64_softmax(run.in[0].contiguous(), p == Prim::log_softmax);
          for (size_t i = 0; i < ref.size(); ++i)
            if (std::isfinite(ref[i]) && i >= 5 * 33) CHECK(std::fabs(got[0].item_at(static_cast<int64_t>(i)) - ref[i]) <= tolerance(t, ref[i]));
        }
      }
  CHECK(checked > 10000);
}

TEST_CASE("the sparse loss's kernel flags a label out of range") {
  msl::test::HostModule module(module_source());
  for (int64_t bad : {-1, 13}) {
    Tensor logits = values_of(DType::Float32, Dims{4, 13}, 1, false);
    Tensor labels(DType::Int32, Dims{4});
    int32_t* l = labels.data<int32_t>();
    l[0] = 3;
    l[1] = 0;
    l[2] = static_cast<int32_t>(bad);
    l[3] = 12;
    Tensor in[] = {logits, labels};
    std::vector<Tensor> cpu_out;
    CHECK_THROWS_AS(execute(Prim::sparse_softmax_cross_entropy, in, Attrs{}, cpu_out), IndexError);
    std::vector<Tensor> want{Tensor(DType::Float32, Dims{4}), Tensor(DType::Float32, Dims{4, 13})};
    std::vector<Tensor> got;
    cuda::SoftmaxKernel k{Prim::sparse_softmax_cross_entropy, DType::Float32, DType::Int32};
    CHECK(emulate(module, k, Run{{logits, labels}, Attrs{}}, got, want) == 1);
  }
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("every softmax kernel text compiles with NVRTC for sm_80 and sm_90") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  std::string all = cuda::softmax_prelude();
  for (const auto& k : all_kernels()) all += cuda::softmax_kernel_text(k);
  for (int arch : {80, 90}) {
    cuda::NvrtcOutput out = cuda::nvrtc_compile(all, "softmax_kernels", arch);
    CHECK(out.image.compare(0, 4, "\x7f" "ELF") == 0);
  }
  cuda::SoftmaxKernel k{Prim::log_softmax, DType::BFloat16};
  cuda::NvrtcOutput ptx = cuda::nvrtc_compile(cuda::softmax_source(k), "log_softmax", 90, /*ptx=*/true);
  CHECK(ptx.image.find(".entry " + cuda::softmax_kernel_name(k)) != std::string::npos);
}
#endif
