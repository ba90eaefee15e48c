// The softmax family on a GPU against the CPU's kernels: every float dtype,
// the last and an inner axis, a transposed input, both losses, and the
// sparse loss's IndexError. The sums are added in another order than the
// CPU's, so results agree within a few ulps of the dtype.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/device.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"

using namespace msl::kernels;

namespace {

Device* gpu() { return cuda_device(0); }

Tensor values_of(DType t, const Dims& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-6.0, 6.0);
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) d.data<double>()[i] = u(rng);
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

void check_close(const Tensor& gpu_result, const Tensor& cpu_result) {
  REQUIRE(gpu_result.device()->type() == DeviceType::CUDA);
  Tensor a = gpu_result.to_host().contiguous();
  REQUIRE(a.shape() == cpu_result.shape());
  REQUIRE(a.dtype() == cpu_result.dtype());
  DType t = a.dtype();
  double eps = t == DType::Float16 ? 2e-3 : t == DType::BFloat16 ? 1.6e-2 : t == DType::Float32 ? 4e-6 : 1e-13;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.item_at(i), y = cpu_result.item_at(i);
    INFO("element " << i << ": GPU " << x << ", CPU " << y);
    if (std::isnan(x) || std::isnan(y)) {
      REQUIRE((std::isnan(x) && std::isnan(y)));
      continue;
    }
    REQUIRE(std::fabs(x - y) <= eps * (std::fabs(y) + 1.0));
  }
}

std::vector<Tensor> to_gpu(const std::vector<Tensor>& in) {
  std::vector<Tensor> out;
  for (const Tensor& t : in) out.push_back(t.to_device(gpu()));
  return out;
}

void both(Prim p, const std::vector<Tensor>& in, const Attrs& attrs) {
  std::vector<Tensor> want, got;
  execute(p, in, attrs, want);
  execute(p, to_gpu(in), attrs, got);
  REQUIRE(got.size() == want.size());
  for (size_t k = 0; k < got.size(); ++k) check_close(got[k], want[k]);
}

}  // namespace

TEST_CASE("softmax, log_softmax and their gradients on the GPU") {
  uint32_t seed = 1;
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64})
    for (int64_t axis : {-1, 0, 1}) {
      CAPTURE(dtype_name(t));
      CAPTURE(axis);
      Attrs a{{"axis", axis}};
      Tensor x = values_of(t, Dims{17, 40, 3}, seed++);
      Tensor xt = Tensor::view(values_of(t, Dims{3, 40, 17}, seed++), Dims{17, 40, 3}, Dims{1, 17, 680}, 0);
      Tensor dy = values_of(t, Dims{17, 40, 3}, seed++);
      for (Prim p : {Prim::softmax, Prim::log_softmax}) {
        both(p, {x}, a);
        both(p, {xt}, a);
        Tensor xin[] = {x};
        Tensor y = execute1(p, xin, a);
        both(p == Prim::softmax ? Prim::softmax_grad : Prim::log_softmax_grad, {y, dy}, a);
      }
    }
}

TEST_CASE("softmax cross entropy, dense and sparse, on the GPU") {
  for (DType t : {DType::Float16, DType::BFloat16, DType::Float32, DType::Float64}) {
    CAPTURE(dtype_name(t));
    Tensor logits = values_of(t, Dims{64, 10}, 3);
    Tensor raw[] = {values_of(t, Dims{64, 10}, 4)};
    Tensor dense = execute1(Prim::softmax, raw, Attrs{{"axis", int64_t{-1}}});
    both(Prim::softmax_cross_entropy, {logits, dense}, Attrs{});
    for (DType lt : {DType::Int32, DType::Int64}) {
      Tensor labels(lt, Dims{64});
      Tensor l64(DType::Int64, Dims{64});
      for (int64_t i = 0; i < 64; ++i) l64.data<int64_t>()[i] = (i * 7) % 10;
      copy_tensor(l64, labels);
      both(Prim::sparse_softmax_cross_entropy, {logits, labels}, Attrs{});
      l64.data<int64_t>()[40] = 10;
      copy_tensor(l64, labels);
      std::vector<Tensor> out;
      try {
        execute(Prim::sparse_softmax_cross_entropy, to_gpu({logits, labels}), Attrs{}, out);
        FAIL("a label out of range was accepted");
      } catch (const IndexError& e) {
        CHECK(std::string(e.what()).find("label 10 is out of range for 10 classes") != std::string::npos);
      }
    }
  }
}
