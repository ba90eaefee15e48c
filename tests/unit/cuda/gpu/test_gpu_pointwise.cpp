// The strided pointwise kernels on a GPU against the CPU's kernels: every
// operation in every dtype the CPU accepts, mixed dtypes, transposed and
// broadcast inputs and host scalars; exact operations and the float32
// functions ported from the CPU's vector loops bit for bit, sin, cos, pow
// and float64 functions within 4 ulps (the CPU's vector sin/cos are within
// 2 of double libm, CUDA's double functions within 2 of exact); the
// integer errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "kernels/cuda/pointwise_cuda.h"
#include "kernels/device.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"

using namespace msl::kernels;

namespace {

Device* gpu() { return cuda_device(0); }

constexpr DType kAll[] = {DType::Bool,    DType::Int8,     DType::UInt8,   DType::Int32,  DType::Int64,
                          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

Tensor values_of(DType t, const Dims& shape, uint32_t seed, bool positive) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-60.0, 60.0);
  const double specials[] = {0.0, -0.0, std::nan(""), std::numeric_limits<double>::infinity(), -1.0, 1e-40};
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) {
    double v = u(rng);
    if (!is_floating(t)) v = std::round(v);
    if (is_floating(t) && static_cast<size_t>(i) < std::size(specials)) v = specials[i];
    if (positive) v = std::fabs(std::fmod(std::round(v), 5.0)) + 1;
    d.data<double>()[i] = v;
  }
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

int64_t ordered(const Tensor& t, int64_t i) {
  const char* p = static_cast<const char*>(t.raw()) + i * static_cast<int64_t>(t.itemsize());
  int64_t v = 0;
  if (t.itemsize() == 8) std::memcpy(&v, p, 8);
  if (t.itemsize() == 4) {
    int32_t b;
    std::memcpy(&b, p, 4);
    v = b;
  }
  if (t.itemsize() == 2) {
    int16_t b;
    std::memcpy(&b, p, 2);
    v = b;
  }
  return v < 0 ? std::numeric_limits<int64_t>::min() - v : v;
}

void compare(Prim p, const Tensor& gpu_result, const Tensor& cpu_result) {
  REQUIRE(gpu_result.device()->type() == DeviceType::CUDA);
  Tensor a = gpu_result.to_host().contiguous(), b = cpu_result.contiguous();
  REQUIRE(a.shape() == b.shape());
  REQUIRE(a.dtype() == b.dtype());
  // float32 (and 16-bit) exp, log, tanh, sigmoid and erf are the CPU's
  // vector functions, bit for bit; sin, cos, pow and float64 go through
  // CUDA's libm.
  const bool vector = a.dtype() != DType::Float64 && (p == Prim::exp || p == Prim::log || p == Prim::tanh ||
                                                      p == Prim::sigmoid || p == Prim::erf);
  const bool inexact = is_floating(a.dtype()) && !vector &&
                       (p == Prim::exp || p == Prim::log || p == Prim::sin || p == Prim::cos || p == Prim::tanh ||
                        p == Prim::sigmoid || p == Prim::erf || p == Prim::pow);
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.item_at(i), y = b.item_at(i);
    INFO("element " << i << ": GPU " << x << ", CPU " << y);
    if (std::isnan(x) || std::isnan(y)) {
      REQUIRE((std::isnan(x) && std::isnan(y)));
      continue;
    }
    if (inexact)
      REQUIRE(std::llabs(ordered(a, i) - ordered(b, i)) <= 4);
    else
      REQUIRE(std::memcmp(static_cast<const char*>(a.raw()) + i * static_cast<int64_t>(a.itemsize()),
                          static_cast<const char*>(b.raw()) + i * static_cast<int64_t>(b.itemsize()),
                          a.itemsize()) == 0);
  }
}

}  // namespace

TEST_CASE("pointwise primitives on the GPU give the CPU's results in every dtype and geometry") {
  const Prim prims[] = {
#define MSL_X(name, arity) Prim::name,
      MSL_PW_OPS(MSL_X)
#undef MSL_X
  };
  uint32_t seed = 1;
  for (Prim p : prims)
    for (DType t : kAll) {
      CAPTURE(prim_name(p));
      CAPTURE(dtype_name(t));
      const int arity = prim_def(p).inputs;
      const bool divisor = (p == Prim::floordiv || p == Prim::mod || p == Prim::pow) && !is_floating(t);
      auto input = [&](int k, const Dims& shape) {
        DType dt = p == Prim::select && k == 0 ? DType::Bool : t;
        return values_of(dt, shape, seed += 3, divisor && k == 1);
      };
      // Contiguous; a transposed first operand with broadcast rows; a host scalar last.
      for (int geometry = 0; geometry < 3; ++geometry) {
        std::vector<Tensor> in;
        for (int k = 0; k < arity; ++k) {
          if (geometry == 0 || p == Prim::relu_grad) in.push_back(input(k, Dims{33, 7}));
          else if (geometry == 1)
            in.push_back(k == 0 ? Tensor::view(input(k, Dims{33, 7}), Dims{7, 33}, Dims{1, 7}, 0) : input(k, Dims{33}));
          else
            in.push_back(input(k, k == arity - 1 && arity > 1 ? Dims{} : Dims{5, 9}));
        }
        Tensor want;
        try {
          want = execute1(p, in);
        } catch (const KernelError&) {
          std::vector<Tensor> on_gpu;
          for (const Tensor& x : in) on_gpu.push_back(x.ndim() == 0 ? x : x.to_device(gpu()));
          CHECK_THROWS_AS(execute1(p, on_gpu), KernelError);
          break;
        }
        std::vector<Tensor> on_gpu;
        for (const Tensor& x : in) on_gpu.push_back(x.ndim() == 0 ? x : x.to_device(gpu()));
        compare(p, execute1(p, on_gpu), want);
      }
    }
}

TEST_CASE("mixed dtypes go to the pointwise kernels, not the float32 programs") {
  Tensor x = values_of(DType::Float32, Dims{40}, 1, false);
  Tensor y = values_of(DType::Int32, Dims{40}, 2, false);
  Tensor h = values_of(DType::Float16, Dims{40}, 3, false);
  for (Prim p : {Prim::add, Prim::mul, Prim::maximum, Prim::div}) {
    CAPTURE(prim_name(p));
    Tensor cpu_in[] = {x, y};
    Tensor gpu_in[] = {x.to_device(gpu()), y.to_device(gpu())};
    compare(p, execute1(p, gpu_in), execute1(p, cpu_in));
    Tensor hh[] = {h, h};
    Tensor ghh[] = {h.to_device(gpu()), h.to_device(gpu())};
    compare(p, execute1(p, ghh), execute1(p, hh));
  }
}

TEST_CASE("integer floordiv and mod by zero and negative integer powers raise on the GPU") {
  Tensor x = values_of(DType::Int32, Dims{1000}, 4, false);
  Tensor y = values_of(DType::Int32, Dims{1000}, 5, true);
  *static_cast<int32_t*>(y.raw()) = 1;
  static_cast<int32_t*>(y.raw())[777] = 0;
  Tensor in[] = {x.to_device(gpu()), y.to_device(gpu())};
  CHECK_THROWS_AS(execute1(Prim::floordiv, in), ZeroDivisionError);
  CHECK_THROWS_AS(execute1(Prim::mod, in), ZeroDivisionError);
  Tensor zero(DType::Int32, Dims{});
  *zero.data<int32_t>() = 0;
  Tensor by_value[] = {x.to_device(gpu()), zero};
  CHECK_THROWS_AS(execute1(Prim::floordiv, by_value), ZeroDivisionError);
  static_cast<int32_t*>(y.raw())[777] = -2;
  Tensor neg[] = {x.to_device(gpu()), y.to_device(gpu())};
  CHECK_THROWS_AS(execute1(Prim::pow, neg), ValueError);
  // The device is usable afterwards and the flag starts clear.
  static_cast<int32_t*>(y.raw())[777] = 3;
  Tensor ok[] = {x.to_device(gpu()), y.to_device(gpu())};
  Tensor cpu_ok[] = {x, y};
  compare(Prim::floordiv, execute1(Prim::floordiv, ok), execute1(Prim::floordiv, cpu_ok));
}
