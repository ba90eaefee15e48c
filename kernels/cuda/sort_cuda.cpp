// The sort kernel's CUDA C (sort_cuda.h).
#include "kernels/cuda/sort_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/cuda/copy_cuda.h"
#include "kernels/cuda/movement_cuda.h"

namespace msl::kernels::cuda {

DType sort_key_dtype(DType t) {
  switch (t) {
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32: return DType::Float32;
    case DType::Float64: return DType::Float64;
    default: return DType::Int64;
  }
}

std::string sort_kernel_name(DType key, size_t item_size, bool descending) {
  return fmt::format("msl_sort_{}_u{}_{}", dtype_name(key), item_size, descending ? "desc" : "asc");
}

std::vector<std::string> sort_param_types(DType key, size_t item_size) {
  std::string k = cuda_type_name(key), u = element_type(item_size);
  return {"long long", "long long", "const " + k + "*", "const " + u + "*", u + "*", "int*", "int*"};
}

std::string sort_kernel_text(DType key, size_t item_size, bool descending) {
  if (key != DType::Float32 && key != DType::Float64 && key != DType::Int64)
    throw std::invalid_argument("sort: keys are float32, float64 or int64");
  std::string k = cuda_type_name(key), u = element_type(item_size);
  std::string name = sort_kernel_name(key, item_size, descending);
  // p before q: NaN (p != p) above every number.
  std::string before = descending ? "(p > q || (p != p && q == q))" : "(p < q || (p == p && q != q))";
  return fmt::format(R"(typedef long long msl_i64;
extern "C" __global__ void {name}(msl_i64 rows, msl_i64 n, const {k}* keys, const {u}* x, {u}* values,
                                  int* indices, int* scratch) {{
  for (msl_i64 r = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += (msl_i64)gridDim.x * blockDim.x) {{
    const {k}* key = keys + r * n;
    int* a = indices + r * n;
    int* b = scratch + r * n;
    for (msl_i64 j = 0; j < n; ++j) a[j] = (int)j;
    for (msl_i64 width = 1; width < n; width *= 2) {{
      for (msl_i64 lo = 0; lo < n; lo += 2 * width) {{
        const msl_i64 mid = lo + width < n ? lo + width : n;
        const msl_i64 hi = lo + 2 * width < n ? lo + 2 * width : n;
        msl_i64 i = lo, j = mid, o = lo;
        while (i < mid && j < hi) {{
          const {k} p = key[a[j]], q = key[a[i]];
          // The right run's element goes first only when strictly before.
          b[o++] = {before} ? a[j++] : a[i++];
        }}
        while (i < mid) b[o++] = a[i++];
        while (j < hi) b[o++] = a[j++];
      }}
      int* t = a;
      a = b;
      b = t;
    }}
    int* out = indices + r * n;
    if (a != out)
      for (msl_i64 j = 0; j < n; ++j) out[j] = a[j];
    for (msl_i64 j = 0; j < n; ++j) values[r * n + j] = x[r * n + out[j]];
  }}
}}
)",
                     fmt::arg("name", name), fmt::arg("k", k), fmt::arg("u", u), fmt::arg("before", before));
}

}  // namespace msl::kernels::cuda
