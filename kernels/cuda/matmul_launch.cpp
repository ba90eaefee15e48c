// matmul and matmul_bias on the GPU through cuBLASLt.
//
// libcublasLt is loaded with dlopen on first use (toolkit_library.h). The
// row-major product is mapped to cuBLASLt's column-major one by gemm_plan.h.
// float32 computes in float32 (CUBLAS_COMPUTE_32F: TF32 off, as the
// acceptance's 1e-5 bound needs); float16 and bfloat16 in float32 with
// tensor cores; float64 in float64. matmul_bias uses the BIAS or RELU_BIAS
// epilogue, so the bias and the activation cost no extra pass. The
// algorithm is cuBLASLt's first heuristic answer, kept per problem.
#include <cublasLt.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <map>
#include <mutex>
#include <tuple>

#include "kernels/cuda/cuda_kernels.h"
#include "kernels/cuda/device_cuda.h"
#include "kernels/cuda/gemm_plan.h"
#include "kernels/cuda/launch.h"
#include "kernels/cuda/toolkit_library.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels::cuda {

namespace {

#define MSL_CUBLASLT_FUNCTIONS(X)                                                                     \
  X(cublasLtCreate) X(cublasLtGetStatusName) X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) \
  X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy)      \
  X(cublasLtMatrixLayoutSetAttribute) X(cublasLtMatmulPreferenceCreate)                               \
  X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)                          \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmul)

struct Lt {
#define MSL_X(fn) decltype(&::fn) fn = nullptr;
  MSL_CUBLASLT_FUNCTIONS(MSL_X)
#undef MSL_X
  std::string error;
};

const Lt& lt() {
  static const Lt l = [] {
    Lt l;
    std::string soname = fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR);
    void* h = open_toolkit_library(soname);
    if (!h) {
      l.error = fmt::format("cuBLASLt not found: {} is not on the library path (install the CUDA toolkit's cuBLAS "
                            "or set CUDA_HOME)",
                            soname);
      return l;
    }
#define MSL_X(fn)                                                                  \
  l.fn = reinterpret_cast<decltype(&::fn)>(dlsym(h, #fn));                         \
  if (!l.fn) {                                                                     \
    l.error = fmt::format("cuBLASLt is too old: {} has no {}", soname, #fn);      \
    return l;                                                                      \
  }
    MSL_CUBLASLT_FUNCTIONS(MSL_X)
#undef MSL_X
    return l;
  }();
  if (!l.error.empty()) throw DeviceError(l.error);
  return l;
}

void check(cublasStatus_t s, const char* call, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw DeviceError(fmt::format("{} ({}): {}", call, what, lt().cublasLtGetStatusName(s)));
}

// Descriptors destroyed however the call ends.
struct Layout {
  cublasLtMatrixLayout_t h = nullptr;
  ~Layout() {
    if (h) lt().cublasLtMatrixLayoutDestroy(h);
  }
};

// Per GPU: the handle, and the algorithm chosen for each problem.
struct GpuState {
  cublasLtHandle_t handle = nullptr;
  std::mutex mu;
  std::map<std::tuple<int, bool, bool, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int>,
           cublasLtMatmulAlgo_t>
      algos;
};

GpuState& state(CudaDevice& dev) {
  static std::mutex mu;
  static std::map<int, GpuState*> states;
  std::lock_guard lock(mu);
  GpuState*& s = states[dev.info().ordinal];
  if (!s) {
    s = new GpuState();  // kept for the process, as the device
    dev.make_current();
    check(lt().cublasLtCreate(&s->handle), "cublasLtCreate", "matmul");
  }
  return *s;
}

constexpr size_t kWorkspaceBytes = size_t(32) << 20;

struct Types {
  cudaDataType_t data, scale;
  cublasComputeType_t compute;
};

Types types_of(DType t, const char* what) {
  switch (t) {
    case DType::Float32: return {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::Float16: return {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::BFloat16: return {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case DType::Float64: return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F};
    default: throw DTypeError(fmt::format("{}: the GPU multiplies float matrices only, got {}", what, dtype_name(t)));
  }
}

// out = op(a) . op(b) (+ bias, relu per `epilogue`), all on one GPU; out
// contiguous with the inferred batch shape.
void gemm(const Tensor& a_in, const Tensor& b_in, bool ta, bool tb, const Tensor& out, const Tensor* bias,
          cublasLtEpilogue_t epilogue, const char* what) {
  if (out.numel() == 0) return;
  CudaDevice& dev = device_of(out);
  const Dims& od = out.shape();
  int r = od.size();
  int64_t m = od[r - 2], n = od[r - 1];
  int64_t k = ta ? a_in.dim(a_in.ndim() - 2) : a_in.dim(a_in.ndim() - 1);
  int64_t batch = out.numel() / (m * n);
  // Operands contiguous with the result's batch dimensions (broadcast
  // copied), except a 2-d b, which every batch reads (stride 0).
  Dims batch_shape(std::vector<int64_t>(od.begin(), od.end() - 2));
  auto expanded = [&](const Tensor& t) {
    if (batch == 1) return t.contiguous();
    Dims full = batch_shape;
    full.push_back(t.dim(t.ndim() - 2));
    full.push_back(t.dim(t.ndim() - 1));
    Attrs to{{"shape", std::vector<int64_t>(full.begin(), full.end())}};
    Tensor in[] = {t};
    return execute1(Prim::broadcast_to, in, to).contiguous();
  };
  Tensor a = expanded(a_in);
  bool shared_b = b_in.ndim() == 2;
  Tensor b = shared_b ? b_in.contiguous() : expanded(b_in);
  GemmPlan p = plan_gemm(m, n, k, ta, tb, batch, m * k, shared_b ? 0 : k * n);
  Types t = types_of(out.dtype(), what);
  const Lt& L = lt();
  GpuState& st = state(dev);
  dev.make_current();

  cublasLtMatmulDesc_t desc = nullptr;
  check(L.cublasLtMatmulDescCreate(&desc, t.compute, t.scale), "cublasLtMatmulDescCreate", what);
  struct DescGuard {
    cublasLtMatmulDesc_t d;
    ~DescGuard() { lt().cublasLtMatmulDescDestroy(d); }
  } desc_guard{desc};
  cublasOperation_t opx = p.trans_x ? CUBLAS_OP_T : CUBLAS_OP_N, opy = p.trans_y ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(L.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opx, sizeof opx), "set TRANSA", what);
  check(L.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opy, sizeof opy), "set TRANSB", what);
  const void* bias_ptr = bias ? bias->raw() : nullptr;
  if (bias) {
    check(L.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue),
          "set EPILOGUE", what);
    check(L.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_ptr, sizeof bias_ptr),
          "set BIAS_POINTER", what);
  }
  Layout lx, ly, ld;
  auto layout = [&](Layout& l, int64_t rows, int64_t cols, int64_t lead, int64_t stride) {
    check(L.cublasLtMatrixLayoutCreate(&l.h, t.data, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), lead),
          "cublasLtMatrixLayoutCreate", what);
    if (p.batch > 1) {
      int32_t count = static_cast<int32_t>(p.batch);
      check(L.cublasLtMatrixLayoutSetAttribute(l.h, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
            "set BATCH_COUNT", what);
      check(L.cublasLtMatrixLayoutSetAttribute(l.h, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                               sizeof stride),
            "set STRIDED_BATCH_OFFSET", what);
    }
  };
  layout(lx, p.x_rows, p.x_cols, p.ldx, p.stride_x);
  layout(ly, p.y_rows, p.y_cols, p.ldy, p.stride_y);
  layout(ld, p.rows, p.cols, p.ldd, p.stride_d);

  auto key = std::make_tuple(static_cast<int>(out.dtype()), p.trans_x, p.trans_y, p.rows, p.cols, p.depth, p.batch,
                             p.stride_x, p.stride_y, static_cast<int>(bias ? epilogue : CUBLASLT_EPILOGUE_DEFAULT));
  cublasLtMatmulAlgo_t algo;
  {
    std::lock_guard lock(st.mu);
    auto it = st.algos.find(key);
    if (it != st.algos.end()) {
      algo = it->second;
    } else {
      cublasLtMatmulPreference_t pref = nullptr;
      check(L.cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate", what);
      size_t ws = kWorkspaceBytes;
      L.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
      cublasLtMatmulHeuristicResult_t result{};
      int found = 0;
      cublasStatus_t s =
          L.cublasLtMatmulAlgoGetHeuristic(st.handle, desc, lx.h, ly.h, ld.h, ld.h, pref, 1, &result, &found);
      L.cublasLtMatmulPreferenceDestroy(pref);
      check(s, "cublasLtMatmulAlgoGetHeuristic", what);
      if (found == 0)
        throw DeviceError(fmt::format("{}: cuBLASLt has no algorithm for {} x {} @ {} x {} ({})", what, m, k, k, n,
                                      dtype_name(out.dtype())));
      algo = result.algo;
      st.algos.emplace(key, algo);
    }
  }
  Tensor workspace(DType::UInt8, Dims{static_cast<int64_t>(kWorkspaceBytes)}, &dev);
  double one64 = 1.0, zero64 = 0.0;
  float one32 = 1.0f, zero32 = 0.0f;
  const void* alpha = t.scale == CUDA_R_64F ? static_cast<const void*>(&one64) : &one32;
  const void* beta = t.scale == CUDA_R_64F ? static_cast<const void*>(&zero64) : &zero32;
  check(L.cublasLtMatmul(st.handle, desc, alpha, b.raw(), lx.h, a.raw(), ly.h, beta, out.raw(), ld.h, out.raw(),
                         ld.h, &algo, workspace.raw(), kWorkspaceBytes, dev.stream()),
        "cublasLtMatmul", what);
}

void cuda_matmul(const KernelArgs& args) {
  gemm(args.in[0], args.in[1], args.attrs.get_bool("transpose_a"), args.attrs.get_bool("transpose_b"), args.out[0],
       nullptr, CUBLASLT_EPILOGUE_DEFAULT, "matmul");
}

void cuda_matmul_bias(const KernelArgs& args) {
  std::string act = args.attrs.get_str("activation");
  Tensor bias = args.in[2].contiguous();
  if (bias.dtype() != args.out[0].dtype())
    throw DTypeError(fmt::format("matmul_bias: the bias must be {} like the product", dtype_name(args.out[0].dtype())));
  gemm(args.in[0], args.in[1], args.attrs.get_bool("transpose_a"), args.attrs.get_bool("transpose_b"), args.out[0],
       &bias, act == "relu" ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS, "matmul_bias");
}

}  // namespace

void register_matmul_kernels() {
  set_device_kernel(Prim::matmul, DeviceType::CUDA, &cuda_matmul);
  set_device_kernel(Prim::matmul_bias, DeviceType::CUDA, &cuda_matmul_bias);
}

}  // namespace msl::kernels::cuda
