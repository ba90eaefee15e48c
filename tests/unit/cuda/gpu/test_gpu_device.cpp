// The CUDA device and its kernels on a real GPU, against the CPU's kernels
// on the same inputs: copies of every dtype both ways, the elementwise
// primitives of the program representation (bit for bit: the pointwise
// kernels do the eager CPU kernels' operations), casts of every dtype pair, strided assignment
// and reshape of a transposed tensor, matmul and matmul_bias through
// cuBLASLt and conv2d with its gradients through cuDNN (within float32
// rounding), pooling, batch norm and their gradients, and the errors (out of memory, a
// primitive without a GPU kernel).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "kernels/device.h"
#include "kernels/elementwise_program.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"

using namespace msl::kernels;

namespace {

Device* gpu() { return cuda_device(0); }

Tensor random_tensor(DType t, Dims shape, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-50.0, 50.0);
  Tensor d(DType::Float64, shape);
  for (int64_t i = 0; i < d.numel(); ++i) d.data<double>()[i] = i % 7 == 3 ? 0.0 : u(rng);
  Tensor out(t, shape);
  copy_tensor(d, out);
  return out;
}

// Equal element for element, bit for bit for floats (NaN matches NaN).
void require_same(const Tensor& gpu_result, const Tensor& cpu_result) {
  REQUIRE(gpu_result.device()->type() == DeviceType::CUDA);
  Tensor a = gpu_result.to_host().contiguous(), b = cpu_result.contiguous();
  REQUIRE(a.shape() == b.shape());
  REQUIRE(a.dtype() == b.dtype());
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.item_at(i), y = b.item_at(i);
    INFO("element " << i << ": GPU " << x << ", CPU " << y);
    REQUIRE((x == y || (std::isnan(x) && std::isnan(y))));
    if (a.dtype() == DType::Float32) REQUIRE(std::signbit(x) == std::signbit(y));
  }
}

constexpr DType kDTypes[] = {DType::Bool,    DType::Int8,     DType::UInt8,   DType::Int32,  DType::Int64,
                             DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

}  // namespace

TEST_CASE("the GPU device names itself and copies every dtype both ways") {
  CHECK(gpu()->name() == "GPU:0");
  CHECK(gpu()->type() == DeviceType::CUDA);
  for (DType t : kDTypes) {
    CAPTURE(dtype_name(t));
    Tensor h = random_tensor(t, Dims{3, 1000}, 1);
    Tensor g = h.to_device(gpu());
    CHECK(g.device() == gpu());
    require_same(g, h);
  }
}

TEST_CASE("elementwise primitives on the GPU give the CPU's bits") {
  const Prim prims[] = {
#define MSL_X(op, prim, arity) Prim::prim,
      MSL_EW_OPS(MSL_X)
#undef MSL_X
  };
  for (Prim p : prims) {
    CAPTURE(prim_name(p));
    int arity = prim_def(p).inputs;
    Tensor x = random_tensor(DType::Float32, Dims{37, 5}, 2);
    Tensor y = random_tensor(DType::Float32, Dims{37, 5}, 3);
    Tensor row = random_tensor(DType::Float32, Dims{5}, 4);
    Tensor scalar(DType::Float32, Dims{});
    *scalar.data<float>() = 0.75f;
    auto both = [&](std::vector<Tensor> in) {
      std::vector<Tensor> on_gpu;
      for (const Tensor& t : in) on_gpu.push_back(t.ndim() == 0 ? t : t.to_device(gpu()));
      require_same(execute1(p, on_gpu), execute1(p, in));
    };
    if (arity == 1) {
      both({x});
      both({Tensor::view(x, Dims{5, 37}, Dims{1, 5}, 0)});  // transposed: copied to a full input first
    } else {
      both({x, y});
      both({x, row});     // a broadcast row
      both({x, scalar});  // a host scalar, passed by value
      both({Tensor::view(x, Dims{5, 37}, Dims{1, 5}, 0), Tensor::view(y, Dims{5, 37}, Dims{1, 5}, 0)});
    }
  }
}

TEST_CASE("cast of every dtype pair and assign into a strided view on the GPU") {
  for (DType to : kDTypes)
    for (DType from : kDTypes) {
      CAPTURE(dtype_name(to));
      CAPTURE(dtype_name(from));
      Tensor h = random_tensor(from, Dims{4, 33}, 5);
      Attrs a{{"dtype", to}};
      Tensor in[] = {h.to_device(gpu())};
      Tensor cpu_in[] = {h};
      require_same(execute1(Prim::cast, in, a), execute1(Prim::cast, cpu_in, a));
    }
  // assign into the transpose of a GPU tensor, from a broadcast row.
  Tensor base = random_tensor(DType::Float32, Dims{6, 4}, 6);
  Tensor row = random_tensor(DType::Float32, Dims{6}, 7);
  Tensor g = base.to_device(gpu());
  Tensor gt = Tensor::view(g, Dims{4, 6}, Dims{1, 4}, 0);
  Tensor ht = Tensor::view(base, Dims{4, 6}, Dims{1, 4}, 0);
  Tensor gin[] = {gt, row.to_device(gpu())};
  Tensor hin[] = {ht, row};
  execute1(Prim::assign, gin);
  execute1(Prim::assign, hin);
  require_same(g, base);
  // reshape of a transposed GPU tensor copies on the device.
  Attrs shape{{"shape", std::vector<int64_t>{24}}};
  Tensor rg[] = {gt};
  Tensor rh[] = {ht};
  require_same(execute1(Prim::reshape, rg, shape), execute1(Prim::reshape, rh, shape));
}

TEST_CASE("GPU errors: out of memory names the request; a primitive without a GPU kernel names the device") {
  try {
    Tensor huge(DType::Float32, Dims{int64_t{1} << 48}, gpu());
    FAIL("a 1 PiB tensor was allocated");
  } catch (const OutOfMemory& e) {
    std::string msg = e.what();
    CHECK(msg.find("GPU:0 out of memory: tried to allocate") != std::string::npos);
  }
  // The device is still usable.
  Tensor x = random_tensor(DType::Float32, Dims{8}, 8);
  Tensor in[] = {x.to_device(gpu())};
  Tensor cin[] = {x};
  require_same(execute1(Prim::neg, in), execute1(Prim::neg, cin));
  // Every primitive has a GPU kernel (unit.cuda_text.kernel_coverage): the
  // error is shown with to_blocked's slot emptied for the call.
  const KernelFn kernel = prim_def(Prim::to_blocked).kernels[static_cast<int>(DeviceType::CUDA)];
  set_device_kernel(Prim::to_blocked, DeviceType::CUDA, nullptr);
  Tensor image = random_tensor(DType::Float32, Dims{1, 16, 4, 4}, 9).to_device(gpu());
  Tensor block_in[] = {image};
  try {
    execute1(Prim::to_blocked, block_in, Attrs{{"block", int64_t{16}}});
    set_device_kernel(Prim::to_blocked, DeviceType::CUDA, kernel);
    FAIL("a primitive without a GPU kernel ran");
  } catch (const ValueError& e) {
    set_device_kernel(Prim::to_blocked, DeviceType::CUDA, kernel);
    CHECK(std::string(e.what()).find("no kernel for device GPU:0") != std::string::npos);
  }
}

namespace {

// |gpu - cpu| <= rtol * |cpu| + atol element for element.
void require_close(const Tensor& gpu_result, const Tensor& cpu_result, double rtol, double atol) {
  REQUIRE(gpu_result.device()->type() == DeviceType::CUDA);
  Tensor a = gpu_result.to_host().contiguous(), b = cpu_result.contiguous();
  REQUIRE(a.shape() == b.shape());
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.item_at(i), y = b.item_at(i);
    INFO("element " << i << ": GPU " << x << ", CPU " << y);
    REQUIRE(std::fabs(x - y) <= rtol * std::fabs(y) + atol);
  }
}

}  // namespace

TEST_CASE("matmul and matmul_bias through cuBLASLt match the CPU (float32, TF32 off)") {
  struct Shapes {
    Dims a, b;
    bool ta, tb;
  };
  const Shapes cases[] = {
      {Dims{7, 5}, Dims{5, 3}, false, false},       {Dims{5, 7}, Dims{5, 3}, true, false},
      {Dims{7, 5}, Dims{3, 5}, false, true},        {Dims{5, 7}, Dims{3, 5}, true, true},
      {Dims{2, 7, 5}, Dims{5, 3}, false, false},    {Dims{2, 7, 5}, Dims{2, 5, 3}, false, false},
      {Dims{1, 7, 5}, Dims{3, 5, 3}, false, false}, {Dims{2, 1, 5, 7}, Dims{1, 3, 3, 5}, true, true},
      {Dims{64, 300}, Dims{300, 129}, false, false},
  };
  for (const Shapes& c : cases) {
    CAPTURE(c.a.str());
    CAPTURE(c.b.str());
    Attrs t{{"transpose_a", c.ta}, {"transpose_b", c.tb}};
    Tensor a = random_tensor(DType::Float32, c.a, 11), b = random_tensor(DType::Float32, c.b, 12);
    Tensor gin[] = {a.to_device(gpu()), b.to_device(gpu())};
    Tensor cin[] = {a, b};
    // Inputs in [-50, 50]: products of k terms, so the absolute bound grows with k.
    require_close(execute1(Prim::matmul, gin, t), execute1(Prim::matmul, cin, t), 1e-5, 1e-3);
  }
  for (const char* act : {"none", "relu"}) {
    Attrs t{{"transpose_a", false}, {"transpose_b", false}, {"activation", std::string(act)}};
    Tensor a = random_tensor(DType::Float32, Dims{9, 6}, 13), b = random_tensor(DType::Float32, Dims{6, 4}, 14);
    Tensor bias = random_tensor(DType::Float32, Dims{4}, 15);
    Tensor gin[] = {a.to_device(gpu()), b.to_device(gpu()), bias.to_device(gpu())};
    Tensor cin[] = {a, b, bias};
    require_close(execute1(Prim::matmul_bias, gin, t), execute1(Prim::matmul_bias, cin, t), 1e-5, 1e-3);
  }
}

TEST_CASE("conv2d and its gradients through cuDNN match the CPU (float32, no TF32)") {
  struct Conv {
    Dims x, w;
    Attrs attrs;
  };
  const Conv cases[] = {
      {Dims{2, 3, 9, 9}, Dims{4, 3, 3, 3}, Attrs{{"pad_mode", std::string("pad")}, {"padding", std::vector<int64_t>{1}}}},
      // "same" with stride 2 on an even size: the odd pixel of padding at the bottom/right.
      {Dims{2, 3, 8, 8}, Dims{4, 3, 3, 3}, Attrs{{"pad_mode", std::string("same")}, {"stride", std::vector<int64_t>{2}}}},
      {Dims{1, 4, 7, 6}, Dims{6, 2, 3, 2}, Attrs{{"pad_mode", std::string("valid")}, {"groups", int64_t{2}}}},
      {Dims{1, 2, 9, 9}, Dims{3, 2, 3, 3}, Attrs{{"pad_mode", std::string("valid")}, {"dilation", std::vector<int64_t>{2}}}},
  };
  for (const Conv& c : cases) {
    CAPTURE(c.x.str());
    CAPTURE(c.w.str());
    Tensor x = random_tensor(DType::Float32, c.x, 16), w = random_tensor(DType::Float32, c.w, 17);
    Tensor gin[] = {x.to_device(gpu()), w.to_device(gpu())};
    Tensor cin[] = {x, w};
    Tensor y = execute1(Prim::conv2d, cin, c.attrs);
    require_close(execute1(Prim::conv2d, gin, c.attrs), y, 1e-5, 1e-2);
    Tensor dy = random_tensor(DType::Float32, y.shape(), 18);
    Attrs bi = c.attrs, bf = c.attrs;
    bi.set("input_shape", std::vector<int64_t>(c.x.begin(), c.x.end()));
    bf.set("filter_shape", std::vector<int64_t>(c.w.begin(), c.w.end()));
    Tensor gi[] = {dy.to_device(gpu()), w.to_device(gpu())};
    Tensor ci[] = {dy, w};
    require_close(execute1(Prim::conv2d_backprop_input, gi, bi), execute1(Prim::conv2d_backprop_input, ci, bi), 1e-5,
                  1e-2);
    Tensor gf[] = {dy.to_device(gpu()), x.to_device(gpu())};
    Tensor cf[] = {dy, x};
    require_close(execute1(Prim::conv2d_backprop_filter, gf, bf), execute1(Prim::conv2d_backprop_filter, cf, bf),
                  1e-5, 1e-1);
  }
}

TEST_CASE("pooling and its gradients on the GPU match the CPU") {
  Attrs max_attrs{{"kernel_size", std::vector<int64_t>{3}}, {"stride", std::vector<int64_t>{2}},
                  {"pad_mode", std::string("same")}};
  Tensor x = random_tensor(DType::Float32, Dims{2, 3, 10, 9}, 19);
  Tensor xin[] = {x};
  Tensor gx[] = {x.to_device(gpu())};
  Tensor y = execute1(Prim::max_pool2d, xin, max_attrs);
  require_same(execute1(Prim::max_pool2d, gx, max_attrs), y);
  Tensor dy = random_tensor(DType::Float32, y.shape(), 20);
  Tensor cin[] = {x, dy};
  Tensor gin[] = {x.to_device(gpu()), dy.to_device(gpu())};
  require_same(execute1(Prim::max_pool2d_grad, gin, max_attrs), execute1(Prim::max_pool2d_grad, cin, max_attrs));
  Attrs avg_attrs{{"kernel_size", std::vector<int64_t>{2}}, {"stride", std::vector<int64_t>{2}},
                  {"pad_mode", std::string("valid")}};
  Tensor ya = execute1(Prim::avg_pool2d, xin, avg_attrs);
  require_close(execute1(Prim::avg_pool2d, gx, avg_attrs), ya, 1e-6, 1e-6);
  Attrs grad_attrs = avg_attrs;
  grad_attrs.set("input_shape", std::vector<int64_t>{2, 3, 10, 9});
  Tensor dya = random_tensor(DType::Float32, ya.shape(), 21);
  Tensor ca[] = {dya};
  Tensor ga[] = {dya.to_device(gpu())};
  require_close(execute1(Prim::avg_pool2d_grad, ga, grad_attrs), execute1(Prim::avg_pool2d_grad, ca, grad_attrs),
                1e-6, 1e-6);
}

TEST_CASE("batch_norm and batch_norm_grad on the GPU match the CPU") {
  Tensor x = random_tensor(DType::Float32, Dims{4, 3, 5, 6}, 22);
  Tensor gamma = random_tensor(DType::Float32, Dims{3}, 23), beta = random_tensor(DType::Float32, Dims{3}, 24);
  Tensor mean = random_tensor(DType::Float32, Dims{3}, 25), var = random_tensor(DType::Float32, Dims{3}, 26);
  // A variance must be positive.
  Tensor v_in[] = {var};
  var = execute1(Prim::abs, v_in);
  for (bool training : {true, false}) {
    CAPTURE(training);
    Attrs attrs{{"training", training}, {"epsilon", 1e-5}};
    Tensor cin[] = {x, gamma, beta, mean, var};
    Tensor gin[] = {x.to_device(gpu()), gamma.to_device(gpu()), beta.to_device(gpu()), mean.to_device(gpu()),
                    var.to_device(gpu())};
    std::vector<Tensor> want, got;
    execute(Prim::batch_norm, cin, attrs, want);
    execute(Prim::batch_norm, gin, attrs, got);
    for (int i = 0; i < 3; ++i) require_close(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)], 2e-5, 1e-4);
    if (!training) continue;
    Tensor dy = random_tensor(DType::Float32, x.shape(), 27);
    Tensor cg[] = {dy, x, gamma, want[1], want[2]};
    Tensor gg[] = {dy.to_device(gpu()), x.to_device(gpu()), gamma.to_device(gpu()), got[1], got[2]};
    std::vector<Tensor> gwant, ggot;
    execute(Prim::batch_norm_grad, cg, Attrs{{"epsilon", 1e-5}}, gwant);
    execute(Prim::batch_norm_grad, gg, Attrs{{"epsilon", 1e-5}}, ggot);
    for (int i = 0; i < 3; ++i) require_close(ggot[static_cast<size_t>(i)], gwant[static_cast<size_t>(i)], 1e-4, 1e-2);
  }
}
