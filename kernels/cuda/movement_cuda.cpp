// The indexing kernels' CUDA C (movement_cuda.h).
#include "kernels/cuda/movement_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/cuda/copy_cuda.h"

namespace msl::kernels::cuda {

namespace {

std::string index_type(DType t) {
  if (!is_integral(t)) throw std::invalid_argument("movement: indices must be integers");
  return cuda_type_name(t);
}

std::string index_value(DType, const std::string& v) { return "(msl_i64)" + v; }

const char* kLoop =
    "  for (msl_i64 i = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (msl_i64)gridDim.x * "
    "blockDim.x) {\n";

// atomicAdd for every accumulator type. CUDA has none for 8-bit integers:
// their add is a compare-and-swap loop on the aligned 32-bit word that
// holds the byte, which writes its other bytes back unchanged (device
// blocks are 64-byte aligned and sized in 64-byte steps, caching_allocator.h,
// so the word never leaves the tensor's block). Integer additions wrap, as
// the CPU's.
constexpr const char* kMovementPrelude = R"(typedef long long msl_i64;
__device__ __forceinline__ void msl_atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void msl_atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void msl_atomic_add(int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void msl_atomic_add(msl_i64* p, msl_i64 v) {
  atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
__device__ __forceinline__ void msl_atomic_add(unsigned char* p, unsigned char v) {
  unsigned* word = (unsigned*)((unsigned long long)p & ~3ull);
  const unsigned shift = (unsigned)((unsigned long long)p & 3ull) * 8u;
  unsigned old = *word, seen;
  do {
    seen = old;
    const unsigned sum = ((seen >> shift) + v) & 0xffu;
    old = atomicCAS(word, seen, (seen & ~(0xffu << shift)) | (sum << shift));
  } while (old != seen);
}
__device__ __forceinline__ void msl_atomic_add(signed char* p, signed char v) {
  msl_atomic_add((unsigned char*)p, (unsigned char)v);
}
)";

// The signature of gather and scatter_add: (n, T* a, const T* b, indices,
// k, size, inner, err), and its parameter types.
std::string indexed_signature(const std::string& name, const std::string& t, const char* a, const char* b,
                              DType index) {
  return fmt::format(
      "extern \"C\" __global__ void {}(msl_i64 n, {}* __restrict__ {}, const {}* __restrict__ {}, "
      "const {}* __restrict__ indices, msl_i64 k, msl_i64 size, msl_i64 inner, int* err) {{\n",
      name, t, a, t, b, index_type(index));
}

std::vector<std::string> indexed_param_types(const std::string& t, DType index) {
  return {"msl_i64", t + "*", "const " + t + "*", "const " + index_type(index) + "*", "msl_i64", "msl_i64", "msl_i64",
          "int*"};
}

// The loop over [outer, k, inner] with element i's row v = indices[t % k],
// flagging one outside [0, size) in *err and skipping it.
std::string indexed_loop(DType index) {
  return kLoop + fmt::format("    const msl_i64 j = i % inner, t = i / inner, o = t / k;\n"
                             "    const msl_i64 v = {};\n"
                             "    if (v < 0 || v >= size) {{\n      *err = 1;\n      continue;\n    }}\n",
                             index_value(index, "indices[t % k]"));
}

}  // namespace

const char* element_type(size_t item_size) {
  switch (item_size) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    case 8: return "unsigned long long";
  }
  throw std::invalid_argument(fmt::format("movement: no element of {} bytes", item_size));
}

std::string movement_prelude() { return kMovementPrelude; }

DType scatter_accumulator(DType t) {
  if (t == DType::Float16 || t == DType::BFloat16) return DType::Float32;
  if (t == DType::Bool) throw std::invalid_argument("scatter_add: no Bool accumulator");
  return t;
}

namespace {

// The C type of an accumulator dtype (scatter_accumulator's results only).
const char* accumulator_type(DType acc) {
  if (acc == DType::Bool || acc == DType::Float16 || acc == DType::BFloat16)
    throw std::invalid_argument(fmt::format("scatter_add: {} is no accumulator dtype", dtype_name(acc)));
  return cuda_type_name(acc);
}

}  // namespace

std::string scatter_add_kernel_name(DType acc, DType index) {
  return fmt::format("msl_scatter_add_{}_{}", dtype_name(acc), dtype_name(index));
}

std::vector<std::string> scatter_add_param_types(DType acc, DType index) {
  return indexed_param_types(accumulator_type(acc), index);
}

std::string scatter_add_kernel_text(DType acc, DType index) {
  return indexed_signature(scatter_add_kernel_name(acc, index), accumulator_type(acc), "acc", "updates", index) +
         indexed_loop(index) + "    msl_atomic_add(acc + (o * size + v) * inner + j, updates[i]);\n  }\n}\n";
}

std::string gather_kernel_name(size_t item_size, DType index) {
  return fmt::format("msl_gather_u{}_{}", item_size, dtype_name(index));
}

std::vector<std::string> gather_param_types(size_t item_size, DType index) {
  return indexed_param_types(element_type(item_size), index);
}

std::string gather_kernel_text(size_t item_size, DType index) {
  return indexed_signature(gather_kernel_name(item_size, index), element_type(item_size), "out", "params", index) +
         indexed_loop(index) + "    out[i] = params[(o * size + v) * inner + j];\n  }\n}\n";
}

std::string one_hot_kernel_name(size_t item_size, DType index) {
  return fmt::format("msl_one_hot_u{}_{}", item_size, dtype_name(index));
}

std::vector<std::string> one_hot_param_types(size_t item_size, DType index) {
  std::string u = element_type(item_size);
  return {"msl_i64", u + "*", "const " + index_type(index) + "*", "msl_i64", "msl_i64", u, u};
}

std::string one_hot_kernel_text(size_t item_size, DType index) {
  const char* u = element_type(item_size);
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
