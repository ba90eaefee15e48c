// The GPU's kernel texts, checked without a GPU.
//
// Elementwise programs rendered to CUDA C (kernels/cuda/elementwise_cuda.h)
// run under host emulation (host_emulation.h) must give bit for bit the
// outputs of the CPU's LLVM-generated loop for the same program, which is
// an independent implementation (LLVM IR built by hand); their sums agree
// with a float64 sum. The copy kernels (copy_cuda.h) of every dtype pair
// must convert as the CPU's copy_convert and as values worked out here by
// hand. With the CUDA toolkit, every text also compiles with NVRTC for the
// GPUs MSL targets, so a syntax error in generated CUDA fails CI.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "jit/codegen/elementwise_jit.h"
#include "kernels/cuda/copy_cuda.h"
#include "kernels/cuda/elementwise_cuda.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"
#include "tests/unit/cuda/emulated_launch.h"
#include "tests/unit/cuda/host_emulation.h"
#ifdef MSL_HAVE_CUDA
#include "kernels/cuda/nvrtc_compiler.h"
#endif

using namespace msl::kernels;
using msl::jit::codegen::ElementwiseJit;

namespace {

// Programs covering every operation, constants (NaN and infinity among
// them), each broadcast pattern, by-value scalars and sums.
struct Case {
  const char* what;
  EwProgram program;
  int64_t n;
  uint64_t by_value = 0;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  {
    EwProgram p;  // every binary operation over two full inputs
    int x = p.input(0), y = p.input(1);
#define MSL_X(op, prim, arity) \
  if (arity == 2) p.outputs.push_back(p.binary(EwOp::op, x, y));
    MSL_EW_OPS(MSL_X)
#undef MSL_X
    out.push_back({"binary ops", p, 1000});
  }
  {
    EwProgram p;  // every unary operation, and constants
    int x = p.input(0);
#define MSL_X(op, prim, arity) \
  if (arity == 1) p.outputs.push_back(p.unary(EwOp::op, x));
    MSL_EW_OPS(MSL_X)
#undef MSL_X
    p.outputs.push_back(p.binary(EwOp::Mul, x, p.constant(0.1f)));
    p.outputs.push_back(p.binary(EwOp::Max, x, p.constant(std::numeric_limits<float>::quiet_NaN())));
    p.outputs.push_back(p.binary(EwOp::Min, x, p.constant(-std::numeric_limits<float>::infinity())));
    out.push_back({"unary ops and constants", p, 777});
  }
  {
    EwProgram p;  // relu(x * a + b) * sigmoid(x) - tanh(x) / 2, a bias [C] over [N, C]
    int x = p.input(0), a = p.input(1), b = p.input(2, EwIndexing{1, 7, 1});
    int r = p.unary(EwOp::Relu, p.binary(EwOp::Add, p.binary(EwOp::Mul, x, a), b));
    int s = p.binary(EwOp::Mul, r, p.unary(EwOp::Sigmoid, x));
    p.outputs = {p.binary(EwOp::Sub, s, p.binary(EwOp::Div, p.unary(EwOp::Tanh, x), p.constant(2.0f)))};
    out.push_back({"chain with a row bias", p, 7 * 45});
  }
  {
    EwProgram p;  // a channel bias [1, C, 1, 1] over [N, C, H, W], and a sum over it (a bias gradient)
    int x = p.input(0), b = p.input(1, EwIndexing{12, 5, 1});
    int y = p.binary(EwOp::Add, x, b);
    p.outputs = {y};
    p.reductions = {{x, EwIndexing{12, 5, 1}}};
    out.push_back({"channel bias and its sum", p, 3 * 5 * 12});
  }
  {
    EwProgram p;  // a lane pattern: per-channel [1, C/16, 1, 1, 16] over [N, C/16, H, W, 16]
    int x = p.input(0), g = p.input(1, EwIndexing{64, 3, 16});
    p.outputs = {p.binary(EwOp::Mul, x, g)};
    p.reductions = {{p.binary(EwOp::Mul, x, x), EwIndexing{1, 1, 1}}};
    out.push_back({"lane pattern and a total", p, 2 * 3 * 64});
  }
  {
    EwProgram p;  // scalars: one from memory, one by value (a Python number)
    int x = p.input(0), s = p.input(1, EwIndexing{1, 1, 1}), v = p.input(2, EwIndexing{1, 1, 1});
    p.outputs = {p.binary(EwOp::Sub, p.binary(EwOp::Mul, x, s), v)};
    out.push_back({"scalars in memory and by value", p, 300, uint64_t{1} << 2});
  }
  return out;
}

// Inputs with the special values every operation must treat as the CPU does.
std::vector<float> input_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-100.0f, 100.0f), small(-3.0f, 3.0f);
  std::vector<float> v(static_cast<size_t>(n));
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            88.0f, -88.0f, 89.0f, -104.0f, 1e-40f};
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i < std::size(specials) && seed % 2 ? specials[i] : (i % 3 ? small(rng) : u(rng));
  return v;
}

int64_t elements_of(const EwProgram& p, int k, int64_t n) {
  EwIndexing how = p.input_indexing(k);
  return how.full() ? n : how.elements();
}

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

// The host-emulation call of an elementwise kernel: n, then each input (a
// pointer or a float by value), the outputs and the sums.
std::string elementwise_launcher(const EwProgram& p, const std::string& name, uint64_t by_value) {
  std::vector<std::string> types{"long long"};
  for (int i = 0; i < p.num_inputs; ++i) types.push_back(by_value >> i & 1 ? "float" : "const float*");
  for (size_t i = 0; i < p.outputs.size() + p.reductions.size(); ++i) types.push_back("float*");
  return msl::test::emulated_launcher(name, types);
}


}  // namespace

TEST_CASE("rendered elementwise programs compute the CPU loop's bits under host emulation") {
  std::vector<Case> all = cases();
  std::string source = cuda::cuda_elementwise_helpers();
  for (const Case& c : all) {
    std::string name = cuda::cuda_kernel_name(c.program);
    source += cuda::render_cuda_kernel(c.program, name, c.by_value) + elementwise_launcher(c.program, name, c.by_value);
  }
  msl::test::HostModule module(source);
  for (const Case& c : all) {
    CAPTURE(std::string(c.what));
    const EwProgram& p = c.program;
    std::vector<std::vector<float>> in(static_cast<size_t>(p.num_inputs));
    for (int k = 0; k < p.num_inputs; ++k) in[static_cast<size_t>(k)] = input_values(elements_of(p, k, c.n), 11u + k);
    size_t n_out = p.outputs.size(), n_sum = p.reductions.size();
    std::vector<std::vector<float>> gpu(n_out + n_sum), cpu(n_out + n_sum);
    for (size_t k = 0; k < n_out + n_sum; ++k) {
      int64_t len = k < n_out ? c.n : p.reductions[k - n_out].how.elements();
      gpu[k].assign(static_cast<size_t>(len), 0.0f);
      cpu[k].assign(static_cast<size_t>(len), 0.0f);
    }
    // The CPU's loop.
    std::vector<const float*> in_ptrs;
    for (auto& v : in) in_ptrs.push_back(v.data());
    std::vector<float*> cpu_ptrs;
    for (auto& v : cpu) cpu_ptrs.push_back(v.data());
    ElementwiseJit::instance().run(p, in_ptrs.data(), cpu_ptrs.data(), c.n);
    // The GPU's kernel: 3 blocks of 64 threads, fewer than the elements, so
    // the grid-stride loop goes round.
    long long n = c.n;
    std::vector<void*> args{&n};
    std::vector<const float*> gin(in_ptrs);
    for (int k = 0; k < p.num_inputs; ++k)
      args.push_back(c.by_value >> k & 1 ? static_cast<void*>(in[static_cast<size_t>(k)].data())
                                         : static_cast<void*>(&gin[static_cast<size_t>(k)]));
    std::vector<float*> gout;
    for (auto& v : gpu) gout.push_back(v.data());
    for (auto& ptr : gout) args.push_back(&ptr);
    module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::cuda_kernel_name(p))(3, 64, args.data());
    for (size_t k = 0; k < n_out; ++k)
      for (size_t i = 0; i < gpu[k].size(); ++i) {
        INFO("output " << k << " element " << i << ": GPU text " << gpu[k][i] << ", CPU loop " << cpu[k][i]);
        REQUIRE(same_bits(gpu[k][i], cpu[k][i]));
      }
    // Sums: against float64, both ways.
    for (size_t r = 0; r < n_sum; ++r) {
      const EwReduction& red = p.reductions[r];
      // The summed value's float64 recomputation needs the program; every
      // sum above sums an input (x) or x * x.
      std::vector<double> want(static_cast<size_t>(red.how.elements()), 0.0);
      const std::vector<float>& x = in[0];
      bool square = p.values[static_cast<size_t>(red.value)].op == EwOp::Mul;
      for (int64_t i = 0; i < c.n; ++i) {
        int64_t at = ((i / red.how.inner) % red.how.count) * red.how.lane + i % red.how.lane;
        double v = x[static_cast<size_t>(i)];
        want[static_cast<size_t>(at)] += square ? v * v : v;
      }
      for (size_t i = 0; i < want.size(); ++i) {
        INFO("sum " << r << " element " << i);
        double tol = 1e-5 * std::fabs(want[i]) + 1e-3;
        if (std::isnan(want[i])) {
          CHECK(std::isnan(gpu[n_out + r][i]));
          continue;
        }
        CHECK(std::fabs(gpu[n_out + r][i] - want[i]) <= tol);
        CHECK(std::fabs(cpu[n_out + r][i] - want[i]) <= tol);
      }
    }
  }
}

TEST_CASE("a by-value input must be read as a scalar") {
  EwProgram p;
  p.outputs = {p.unary(EwOp::Neg, p.input(0))};
  CHECK_THROWS_AS(cuda::render_cuda(p, "k", 1), std::invalid_argument);
  EwProgram bad;  // an operand defined after its use
  bad.values.push_back({EwOp::Neg, 1, -1});
  bad.outputs = {0};
  CHECK_THROWS_AS(cuda::render_cuda(bad, "k"), std::invalid_argument);
}

namespace {

constexpr DType kDTypes[] = {DType::Bool,     DType::Int8,    DType::UInt8,   DType::Int32,  DType::Int64,
                             DType::Float16,  DType::BFloat16, DType::Float32, DType::Float64};

// Values every conversion must handle: fractions, negatives, values past
// each integer type's range, 16-bit float rounding ties and overflow, NaN.
const double kCopyValues[] = {0.0, -0.0, 1.0, -1.5, 2.5, 127.7, -128.9, 255.5, 300.0, -300.0, 65504.0,
                              65519.0, 65520.0, 1e-8, 6e-8, 3e-8, 1.00048828125, 1.000732421875,
                              3e9, -3e9, 1e19, -1e19, 0.1, std::numeric_limits<double>::quiet_NaN(),
                              std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};

// A CPU tensor of `t` holding kCopyValues as the CPU converts them.
Tensor source_of(DType t) {
  Tensor d(DType::Float64, Dims{static_cast<int64_t>(std::size(kCopyValues))});
  std::memcpy(d.raw(), kCopyValues, sizeof kCopyValues);
  Tensor s(t, d.shape());
  copy_tensor(d, s);
  return s;
}

}  // namespace

TEST_CASE("copy kernels of every dtype pair convert as the CPU does, over strided and broadcast geometry") {
  std::string source = cuda::copy_kernel_prelude();
  for (DType d : kDTypes)
    for (DType s : kDTypes) {
      source += cuda::copy_kernel(d, s);
      source += msl::test::emulated_launcher(
          cuda::copy_kernel_name(d, s), {"long long", std::string(cuda::cuda_type_name(d)) + "*",
                                         "const " + std::string(cuda::cuda_type_name(s)) + "*", "msl_geometry"});
    }
  msl::test::HostModule module(source);
  const int64_t m = static_cast<int64_t>(std::size(kCopyValues));
  for (DType d : kDTypes)
    for (DType s : kDTypes) {
      CAPTURE(dtype_name(d));
      CAPTURE(dtype_name(s));
      Tensor src = source_of(s);
      // A reversed read (negative stride) into every other element of a
      // [2, m] destination, row 0 broadcast from the same source.
      Tensor want(d, Dims{2, m}), got(d, Dims{2, m});
      std::memset(want.raw(), 0, want.nbytes());
      std::memset(got.raw(), 0, got.nbytes());
      Tensor rev = Tensor::view(src, Dims{2, m}, Dims{0, -1}, m - 1);
      copy_tensor(rev, want);
      cuda::CopyGeometry g;
      g.ndim = 2;
      g.shape[0] = 2;
      g.shape[1] = m;
      g.dst[0] = m;
      g.dst[1] = 1;
      g.src[0] = 0;
      g.src[1] = -1;
      long long n = 2 * m;
      void* dst = got.raw();
      const void* from = static_cast<char*>(src.raw()) + (m - 1) * static_cast<int64_t>(src.itemsize());
      void* args[] = {&n, &dst, &from, &g};
      module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::copy_kernel_name(d, s))(2, 5, args);
      for (int64_t i = 0; i < 2 * m; ++i) {
        CAPTURE(i);
        double a = want.item_at(i), b = got.item_at(i);
        CHECK((a == b || (std::isnan(a) && std::isnan(b))));
      }
    }
  // Conversions worked out by hand, the CPU's and the kernel's alike.
  auto convert = [&](DType d, DType s, double v) {
    Tensor from = source_of(s);  // any tensor of s; one element is replaced
    Tensor one(s, Dims{1});
    Tensor v64(DType::Float64, Dims{1});
    *v64.data<double>() = v;
    copy_tensor(v64, one);
    Tensor out(d, Dims{1});
    cuda::CopyGeometry g;
    g.ndim = 1;
    g.shape[0] = 1;
    g.dst[0] = g.src[0] = 1;
    long long n = 1;
    void* dst = out.raw();
    void* src = one.raw();
    void* args[] = {&n, &dst, &src, &g};
    module.symbol<msl::test::EmulatedLaunch>("run_" + cuda::copy_kernel_name(d, s))(1, 1, args);
    return out.item_at(0);
  };
  CHECK(convert(DType::Int8, DType::Float32, 300.7) == 127);
  CHECK(convert(DType::UInt8, DType::Float32, -1.5) == 0);
  CHECK(convert(DType::Int32, DType::Float64, std::numeric_limits<double>::quiet_NaN()) == 0);
  CHECK(convert(DType::Int32, DType::Float32, -2.9) == -2);
  CHECK(convert(DType::Bool, DType::Float32, 0.25) == 1);
  CHECK(convert(DType::Float16, DType::Float32, 65520.0) == std::numeric_limits<double>::infinity());
  CHECK(convert(DType::Float16, DType::Float32, 65519.0) == 65504.0);
  CHECK(convert(DType::Float16, DType::Float32, 1.00048828125) == 1.0);          // a tie: to even
  CHECK(convert(DType::Float16, DType::Float32, 1.000732421875) == 1.0009765625);  // above the tie
  CHECK(convert(DType::Float16, DType::Float32, 6e-8) == std::ldexp(1.0, -24));   // the smallest subnormal
  CHECK(convert(DType::BFloat16, DType::Float32, 1.00390625) == 1.0);             // a tie: to even
  CHECK(convert(DType::Int64, DType::Float64, 1e19) == 9223372036854775807.0);
}

#ifdef MSL_HAVE_CUDA
TEST_CASE("every kernel text compiles with NVRTC for sm_80 and sm_90") {
  std::string why = cuda::nvrtc_unavailable_reason();
  if (!why.empty()) {
    MESSAGE("NVRTC not loadable, not compiled: " << why);
    return;
  }
  for (const Case& c : cases()) {
    CAPTURE(std::string(c.what));
    std::string name = cuda::cuda_kernel_name(c.program);
    std::string text = cuda::render_cuda(c.program, name, c.by_value);
    for (int arch : {80, 90}) {
      cuda::NvrtcOutput out = cuda::nvrtc_compile(text, name, arch);
      CHECK(out.image.size() > 100);
      CHECK(out.image.compare(0, 4, "\x7f" "ELF") == 0);  // a cubin is an ELF file
    }
    // PTX for a GPU newer than the compiler, with the kernel's entry.
    cuda::NvrtcOutput ptx = cuda::nvrtc_compile(text, name, 90, /*ptx=*/true);
    CHECK(ptx.image.find(".entry " + name) != std::string::npos);
  }
  std::string all = cuda::copy_kernel_prelude();
  for (DType d : kDTypes)
    for (DType s : kDTypes) all += cuda::copy_kernel(d, s);
  cuda::NvrtcOutput out = cuda::nvrtc_compile(all, "copy_kernels", 90);
  CHECK(out.image.size() > 1000);
  // A syntax error is an error naming the program, with NVRTC's log.
  try {
    cuda::nvrtc_compile("extern \"C\" __global__ void k() { int x = ; }", "broken", 90);
    FAIL("a broken source compiled");
  } catch (const DeviceError& e) {
    std::string msg = e.what();
    CHECK(msg.find("NVRTC could not compile broken for sm_90") != std::string::npos);
    CHECK(msg.find("expected an expression") != std::string::npos);
  }
}
#endif
