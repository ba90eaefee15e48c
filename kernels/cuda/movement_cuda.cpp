// The indexing kernels' CUDA C (movement_cuda.h).
#include "kernels/cuda/movement_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/cuda/copy_cuda.h"

namespace msl::kernels::cuda {

namespace {

const char* unsigned_type(size_t item_size) {
  switch (item_size) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    case 8: return "unsigned long long";
  }
  throw std::invalid_argument(fmt::format("movement: no element of {} bytes", item_size));
}

std::string index_type(DType t) {
  if (!is_integral(t)) throw std::invalid_argument("movement: indices must be integers");
  return cuda_type_name(t);
}

std::string index_value(DType, const std::string& v) { return "(msl_i64)" + v; }

const char* kLoop =
    "  for (msl_i64 i = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (msl_i64)gridDim.x * "
    "blockDim.x) {\n";

}  // namespace

std::string movement_prelude() { return "typedef long long msl_i64;\n"; }

std::string gather_kernel_name(size_t item_size, DType index) {
  return fmt::format("msl_gather_u{}_{}", item_size, dtype_name(index));
}

std::vector<std::string> gather_param_types(size_t item_size, DType index) {
  std::string u = unsigned_type(item_size);
  return {"msl_i64", u + "*", "const " + u + "*", "const " + index_type(index) + "*", "msl_i64", "msl_i64", "msl_i64",
          "int*"};
}

std::string gather_kernel_text(size_t item_size, DType index) {
  const char* u = unsigned_type(item_size);
  std::string s = fmt::format(
      "extern \"C\" __global__ void {}(msl_i64 n, {}* __restrict__ out, const {}* __restrict__ params, "
      "const {}* __restrict__ indices, msl_i64 k, msl_i64 size, msl_i64 inner, int* err) {{\n",
      gather_kernel_name(item_size, index), u, u, index_type(index));
  s += kLoop;
  s += fmt::format("    const msl_i64 j = i % inner, t = i / inner, o = t / k;\n"
                   "    const msl_i64 v = {};\n"
                   "    if (v < 0 || v >= size) {{\n      *err = 1;\n      continue;\n    }}\n"
                   "    out[i] = params[(o * size + v) * inner + j];\n  }}\n}}\n",
                   index_value(index, "indices[t % k]"));
  return s;
}

std::string one_hot_kernel_name(size_t item_size, DType index) {
  return fmt::format("msl_one_hot_u{}_{}", item_size, dtype_name(index));
}

std::vector<std::string> one_hot_param_types(size_t item_size, DType index) {
  std::string u = unsigned_type(item_size);
  return {"msl_i64", u + "*", "const " + index_type(index) + "*", "msl_i64", "msl_i64", u, u};
}

std::string one_hot_kernel_text(size_t item_size, DType index) {
  const char* u = unsigned_type(item_size);
  std::string s = fmt::format(
      "extern \"C\" __global__ void {}(msl_i64 n, {}* __restrict__ out, const {}* __restrict__ indices, "
      "msl_i64 depth, msl_i64 inner, const {} on, const {} off) {{\n",
      one_hot_kernel_name(item_size, index), u, index_type(index), u, u);
  s += kLoop;
  s += fmt::format("    const msl_i64 j = i % inner, t = i / inner, v = t % depth, r = t / depth;\n"
                   "    out[i] = {} == v ? on : off;\n  }}\n}}\n",
                   index_value(index, "indices[r * inner + j]"));
  return s;
}

}  // namespace msl::kernels::cuda
