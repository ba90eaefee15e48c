// conv2d and its two gradients on the GPU through cuDNN.
//
// libcudnn.so.9 is loaded with dlopen on first use (toolkit_library.h).
// This is cuDNN's convolution API of descriptors and algorithm heuristics,
// which cuDNN 9 marks deprecated in favour of its graph API but still
// ships: eager mode needs the plain operations, and graph mode's fused
// convolutions (convolution + bias + activation) are the graph API's job.
// Geometry is the CPU's (conv_geometry: MindSpore's padding conventions);
// cuDNN pads symmetrically, so an asymmetric "same" padding is done by
// convolving a zero-padded copy of the input (or computing the gradient of
// one and cutting the border off). float32 computes with FMA math only
// (no TF32), as the acceptance's bound needs; 16-bit floats on tensor cores.
// Tensors are NCHW; the channel-blocked layout is the CPU's alone.
#include <cudnn.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <mutex>
#include <tuple>

#include "kernels/blocked_layout.h"
#include "kernels/cuda/cuda_driver.h"
#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/toolkit_library.h"
#include "kernels/dnnl_conv_plan.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

// The deprecated declarations are the API this file uses on purpose (above).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace msl::kernels::cuda {

namespace {

#define MSL_CUDNN_FUNCTIONS(X)                                                                                   \
  X(cudnnCreate) X(cudnnSetStream) X(cudnnGetErrorString) X(cudnnCreateTensorDescriptor)                         \
  X(cudnnSetTensor4dDescriptor) X(cudnnDestroyTensorDescriptor) X(cudnnCreateFilterDescriptor)                    \
  X(cudnnSetFilter4dDescriptor) X(cudnnDestroyFilterDescriptor) X(cudnnCreateConvolutionDescriptor)               \
  X(cudnnSetConvolution2dDescriptor) X(cudnnSetConvolutionGroupCount) X(cudnnSetConvolutionMathType)              \
  X(cudnnDestroyConvolutionDescriptor) X(cudnnGetConvolutionForwardAlgorithm_v7)                                  \
  X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward)                                           \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7) X(cudnnGetConvolutionBackwardDataWorkspaceSize)                  \
  X(cudnnConvolutionBackwardData) X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                                \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) X(cudnnConvolutionBackwardFilter)

struct Dnn {
#define MSL_X(fn) decltype(&::fn) fn = nullptr;
  MSL_CUDNN_FUNCTIONS(MSL_X)
#undef MSL_X
  std::string error;
};

const Dnn& dnn() {
  static const Dnn d = [] {
    Dnn d;
    std::string soname = fmt::format("libcudnn.so.{}", CUDNN_MAJOR);
    void* h = open_toolkit_library(soname);
    if (!h) {
      d.error = fmt::format("cuDNN not found: {} is not on the library path (install cuDNN {} or set CUDA_HOME)",
                            soname, CUDNN_MAJOR);
      return d;
    }
#define MSL_X(fn)                                                            \
  d.fn = reinterpret_cast<decltype(&::fn)>(dlsym(h, #fn));                   \
  if (!d.fn) {                                                               \
    d.error = fmt::format("cuDNN is too old: {} has no {}", soname, #fn);    \
    return d;                                                                \
  }
    MSL_CUDNN_FUNCTIONS(MSL_X)
#undef MSL_X
    return d;
  }();
  if (!d.error.empty()) throw DeviceError(d.error);
  return d;
}

void check(cudnnStatus_t s, const char* call, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw DeviceError(fmt::format("{} ({}): {}", call, what, dnn().cudnnGetErrorString(s)));
}

cudnnHandle_t handle(CudaDevice& dev) {
  static std::mutex mu;
  static std::map<int, cudnnHandle_t> handles;
  std::lock_guard lock(mu);
  cudnnHandle_t& h = handles[dev.info().ordinal];
  if (!h) {
    dev.make_current();
    check(dnn().cudnnCreate(&h), "cudnnCreate", "conv2d");
    check(dnn().cudnnSetStream(h, dev.stream()), "cudnnSetStream", "conv2d");
  }
  return h;
}

cudnnDataType_t data_type(DType t, const char* what) {
  switch (t) {
    case DType::Float32: return CUDNN_DATA_FLOAT;
    case DType::Float16: return CUDNN_DATA_HALF;
    case DType::BFloat16: return CUDNN_DATA_BFLOAT16;
    case DType::Float64: return CUDNN_DATA_DOUBLE;
    default: throw DTypeError(fmt::format("{}: the GPU convolves float tensors only, got {}", what, dtype_name(t)));
  }
}

// The descriptors of one convolution, destroyed with it.
struct Descriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ~Descriptors() {
    const Dnn& d = dnn();
    if (x) d.cudnnDestroyTensorDescriptor(x);
    if (y) d.cudnnDestroyTensorDescriptor(y);
    if (w) d.cudnnDestroyFilterDescriptor(w);
    if (conv) d.cudnnDestroyConvolutionDescriptor(conv);
  }
};

// x [n, c, h, w] (h, w already padded when the padding is asymmetric),
// the weight, y, and the convolution with symmetric padding (pad_h, pad_w).
void describe(Descriptors& ds, const ConvGeom& g, int64_t h, int64_t w, int64_t pad_h, int64_t pad_w, DType dt,
              const char* what) {
  const Dnn& d = dnn();
  cudnnDataType_t t = data_type(dt, what);
  auto i = [](int64_t v) { return static_cast<int>(v); };
  check(d.cudnnCreateTensorDescriptor(&ds.x), "cudnnCreateTensorDescriptor", what);
  check(d.cudnnSetTensor4dDescriptor(ds.x, CUDNN_TENSOR_NCHW, t, i(g.n), i(g.c), i(h), i(w)),
        "cudnnSetTensor4dDescriptor", what);
  check(d.cudnnCreateTensorDescriptor(&ds.y), "cudnnCreateTensorDescriptor", what);
  check(d.cudnnSetTensor4dDescriptor(ds.y, CUDNN_TENSOR_NCHW, t, i(g.n), i(g.o), i(g.win.ho), i(g.win.wo)),
        "cudnnSetTensor4dDescriptor", what);
  check(d.cudnnCreateFilterDescriptor(&ds.w), "cudnnCreateFilterDescriptor", what);
  check(d.cudnnSetFilter4dDescriptor(ds.w, t, CUDNN_TENSOR_NCHW, i(g.o), i(g.c / g.groups), i(g.kh), i(g.kw)),
        "cudnnSetFilter4dDescriptor", what);
  check(d.cudnnCreateConvolutionDescriptor(&ds.conv), "cudnnCreateConvolutionDescriptor", what);
  cudnnDataType_t compute = dt == DType::Float64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
  check(d.cudnnSetConvolution2dDescriptor(ds.conv, i(pad_h), i(pad_w), i(g.win.sh), i(g.win.sw), i(g.win.dh),
                                          i(g.win.dw), CUDNN_CROSS_CORRELATION, compute),
        "cudnnSetConvolution2dDescriptor", what);
  check(d.cudnnSetConvolutionGroupCount(ds.conv, i(g.groups)), "cudnnSetConvolutionGroupCount", what);
  cudnnMathType_t math = dt == DType::Float16 || dt == DType::BFloat16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
  check(d.cudnnSetConvolutionMathType(ds.conv, math), "cudnnSetConvolutionMathType", what);
}

bool symmetric(const ConvGeom& g) { return g.win.pt == g.win.pb && g.win.pl == g.win.pr; }

// The interior of a padded tensor: the view of the unpadded input.
Tensor interior(const Tensor& padded, const ConvGeom& g) {
  const Dims& s = padded.strides();
  return Tensor::view(padded, Dims{g.n, g.c, g.h, g.w}, s, padded.offset() + g.win.pt * s[2] + g.win.pl * s[3]);
}

// A zeroed [n, c, h + pt + pb, w + pl + pr] tensor with x in its interior.
Tensor zero_padded(const Tensor& x, const ConvGeom& g, CudaDevice& dev) {
  Tensor p(x.dtype(), Dims{g.n, g.c, g.h + g.win.pt + g.win.pb, g.w + g.win.pl + g.win.pr}, &dev);
  dev.make_current();
  cuda::check(driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(p.raw()), 0, p.nbytes(), dev.stream()),
              "cuMemsetD8Async", "conv2d");
  Tensor inner = interior(p, g);
  Tensor in[] = {inner, x};
  execute1(Prim::assign, in);
  return p;
}

// Scale factors: cuDNN takes float for float/half/bfloat16 data, double for double.
struct Scales {
  double d1 = 1, d0 = 0;
  float f1 = 1, f0 = 0;
  const void* one(DType t) const { return t == DType::Float64 ? static_cast<const void*>(&d1) : &f1; }
  const void* zero(DType t) const { return t == DType::Float64 ? static_cast<const void*>(&d0) : &f0; }
};

void reject_blocked(const char* op, const Attrs& attrs) {
  if (layout_block(op, attrs))
    throw ValueError(fmt::format("{}: the channel-blocked layout is the CPU's; the GPU convolves NCHW tensors", op));
}

Tensor workspace(CudaDevice& dev, size_t bytes) {
  return Tensor(DType::UInt8, Dims{static_cast<int64_t>(std::max<size_t>(bytes, 1))}, &dev);
}

void cuda_conv2d(const KernelArgs& a) {
  const char* what = "conv2d";
  reject_blocked(what, a.attrs);
  Tensor x = a.in[0].contiguous(), w = a.in[1].contiguous();
  const Tensor& y = a.out[0];
  if (y.numel() == 0) return;
  ConvGeom g = conv_geometry(what, x.shape(), w.shape(), a.attrs);
  CudaDevice& dev = device_of(y);
  bool sym = symmetric(g);
  if (!sym) x = zero_padded(x, g, dev);
  Descriptors ds;
  describe(ds, g, x.dim(2), x.dim(3), sym ? g.win.pt : 0, sym ? g.win.pl : 0, y.dtype(), what);
  const Dnn& d = dnn();
  cudnnHandle_t h = handle(dev);
  dev.make_current();
  cudnnConvolutionFwdAlgoPerf_t perf[8];
  int found = 0;
  check(d.cudnnGetConvolutionForwardAlgorithm_v7(h, ds.x, ds.w, ds.conv, ds.y, 8, &found, perf),
        "cudnnGetConvolutionForwardAlgorithm_v7", what);
  if (found == 0) throw DeviceError("conv2d: cuDNN offers no algorithm for this convolution");
  size_t bytes = 0;
  check(d.cudnnGetConvolutionForwardWorkspaceSize(h, ds.x, ds.w, ds.conv, ds.y, perf[0].algo, &bytes),
        "cudnnGetConvolutionForwardWorkspaceSize", what);
  Tensor ws = workspace(dev, bytes);
  Scales s;
  check(d.cudnnConvolutionForward(h, s.one(y.dtype()), ds.x, x.raw(), ds.w, w.raw(), ds.conv, perf[0].algo, ws.raw(),
                                  bytes, s.zero(y.dtype()), ds.y, y.raw()),
        "cudnnConvolutionForward", what);
}

void cuda_conv2d_backprop_input(const KernelArgs& a) {
  const char* what = "conv2d_backprop_input";
  reject_blocked(what, a.attrs);
  Tensor dy = a.in[0].contiguous(), w = a.in[1].contiguous();
  const Tensor& dx = a.out[0];
  if (dx.numel() == 0) return;
  ConvGeom g = conv_geometry(what, dx.shape(), w.shape(), a.attrs);
  CudaDevice& dev = device_of(dx);
  bool sym = symmetric(g);
  // Asymmetric padding: the gradient of the padded input, whose interior is dx.
  Tensor target = sym ? dx
                      : Tensor(dx.dtype(), Dims{g.n, g.c, g.h + g.win.pt + g.win.pb, g.w + g.win.pl + g.win.pr}, &dev);
  Descriptors ds;
  describe(ds, g, target.dim(2), target.dim(3), sym ? g.win.pt : 0, sym ? g.win.pl : 0, dx.dtype(), what);
  const Dnn& d = dnn();
  cudnnHandle_t h = handle(dev);
  dev.make_current();
  cudnnConvolutionBwdDataAlgoPerf_t perf[8];
  int found = 0;
  check(d.cudnnGetConvolutionBackwardDataAlgorithm_v7(h, ds.w, ds.y, ds.conv, ds.x, 8, &found, perf),
        "cudnnGetConvolutionBackwardDataAlgorithm_v7", what);
  if (found == 0) throw DeviceError("conv2d_backprop_input: cuDNN offers no algorithm for this convolution");
  size_t bytes = 0;
  check(d.cudnnGetConvolutionBackwardDataWorkspaceSize(h, ds.w, ds.y, ds.conv, ds.x, perf[0].algo, &bytes),
        "cudnnGetConvolutionBackwardDataWorkspaceSize", what);
  Tensor ws = workspace(dev, bytes);
  Scales s;
  check(d.cudnnConvolutionBackwardData(h, s.one(dx.dtype()), ds.w, w.raw(), ds.y, dy.raw(), ds.conv, perf[0].algo,
                                       ws.raw(), bytes, s.zero(dx.dtype()), ds.x, target.raw()),
        "cudnnConvolutionBackwardData", what);
  if (!sym) {
    Tensor in[] = {dx, interior(target, g)};
    execute1(Prim::assign, in);
  }
}

void cuda_conv2d_backprop_filter(const KernelArgs& a) {
  const char* what = "conv2d_backprop_filter";
  reject_blocked(what, a.attrs);
  Tensor dy = a.in[0].contiguous(), x = a.in[1].contiguous();
  const Tensor& dw = a.out[0];
  if (dw.numel() == 0) return;
  ConvGeom g = conv_geometry(what, x.shape(), dw.shape(), a.attrs);
  CudaDevice& dev = device_of(dw);
  bool sym = symmetric(g);
  if (!sym) x = zero_padded(x, g, dev);
  Descriptors ds;
  describe(ds, g, x.dim(2), x.dim(3), sym ? g.win.pt : 0, sym ? g.win.pl : 0, dw.dtype(), what);
  const Dnn& d = dnn();
  cudnnHandle_t h = handle(dev);
  dev.make_current();
  cudnnConvolutionBwdFilterAlgoPerf_t perf[8];
  int found = 0;
  check(d.cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, ds.x, ds.y, ds.conv, ds.w, 8, &found, perf),
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7", what);
  if (found == 0) throw DeviceError("conv2d_backprop_filter: cuDNN offers no algorithm for this convolution");
  size_t bytes = 0;
  check(d.cudnnGetConvolutionBackwardFilterWorkspaceSize(h, ds.x, ds.y, ds.conv, ds.w, perf[0].algo, &bytes),
        "cudnnGetConvolutionBackwardFilterWorkspaceSize", what);
  Tensor ws = workspace(dev, bytes);
  Scales s;
  check(d.cudnnConvolutionBackwardFilter(h, s.one(dw.dtype()), ds.x, x.raw(), ds.y, dy.raw(), ds.conv, perf[0].algo,
                                         ws.raw(), bytes, s.zero(dw.dtype()), ds.w, dw.raw()),
        "cudnnConvolutionBackwardFilter", what);
}

}  // namespace

void register_conv_kernels() {
  set_device_kernel(Prim::conv2d, DeviceType::CUDA, &cuda_conv2d);
  set_device_kernel(Prim::conv2d_backprop_input, DeviceType::CUDA, &cuda_conv2d_backprop_input);
  set_device_kernel(Prim::conv2d_backprop_filter, DeviceType::CUDA, &cuda_conv2d_backprop_filter);
  register_fused_conv_kernels();
}

}  // namespace msl::kernels::cuda
