// The reduction kernels on a GPU against the CPU's kernels: every dtype,
// several axes sets, a transposed input; integer sums, max/min and the
// indices of argmax/argmin exactly, float sums within the CPU's own
// rounding (1 ulp of the output dtype plus 1e-6 of the magnitudes summed).
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
  std::uniform_real_distribution<double> u(-50.0, 50.0);
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) d.data<double>()[i] = i % 4 == 1 ? std::round(u(rng) / 10) : u(rng);
  if (is_floating(t) && d.numel() > 20) d.data<double>()[13] = std::nan("");
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

}  // namespace

TEST_CASE("reductions on the GPU give the CPU's results") {
  const DType dtypes[] = {DType::Bool,    DType::Int8,     DType::UInt8,   DType::Int32,  DType::Int64,
                          DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};
  uint32_t seed = 1;
  for (Prim p : {Prim::reduce_sum, Prim::reduce_max, Prim::reduce_min, Prim::argmax, Prim::argmin})
    for (DType t : dtypes) {
      CAPTURE(prim_name(p));
      CAPTURE(dtype_name(t));
      Tensor x = values_of(t, Dims{6, 50, 7}, seed += 2);
      Tensor xt = Tensor::view(values_of(t, Dims{6, 50, 7}, seed += 2), Dims{7, 50, 6}, Dims{1, 7, 350}, 0);
      std::vector<Attrs> attrs;
      if (p == Prim::argmax || p == Prim::argmin) {
        for (int64_t axis : {0, 1, 2}) attrs.push_back(Attrs{{"axis", axis}, {"keep_dims", axis == 1}});
      } else {
        using Axes = std::vector<int64_t>;
        for (const Axes& axes : {Axes{}, Axes{1}, Axes{0, 2}})
          attrs.push_back(Attrs{{"axes", axes}, {"keep_dims", axes.size() == 1}});
      }
      for (const Tensor& in : {x, xt})
        for (const Attrs& a : attrs) {
          CAPTURE(a.str());
          Tensor cpu_in[] = {in};
          Tensor gpu_in[] = {in.to_device(gpu())};
          Tensor want = execute1(p, cpu_in, a);
          Tensor got_dev = execute1(p, gpu_in, a);
          REQUIRE(got_dev.device()->type() == DeviceType::CUDA);
          Tensor got = got_dev.to_host().contiguous();
          REQUIRE(got.shape() == want.shape());
          REQUIRE(got.dtype() == want.dtype());
          for (int64_t i = 0; i < got.numel(); ++i) {
            double g = got.item_at(i), w = want.item_at(i);
            INFO("output " << i << ": GPU " << g << ", CPU " << w);
            if (std::isnan(g) || std::isnan(w)) {
              REQUIRE((std::isnan(g) && std::isnan(w)));
            } else if (p == Prim::reduce_sum && is_floating(t)) {
              int bits = t == DType::Float16 ? 11 : t == DType::BFloat16 ? 8 : t == DType::Float32 ? 24 : 53;
              REQUIRE(std::fabs(g - w) <= std::ldexp(std::fabs(w) + 50.0 * 350, 1 - bits));
            } else {
              REQUIRE(g == w);
            }
          }
        }
    }
}
