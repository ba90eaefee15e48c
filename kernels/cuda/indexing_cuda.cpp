// NumPy-style indexing's CUDA C (indexing_cuda.h).
#include "kernels/cuda/indexing_cuda.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/cuda/copy_cuda.h"
#include "kernels/cuda/movement_cuda.h"

namespace msl::kernels::cuda {

namespace {

constexpr const char* kPrelude = R"(typedef long long msl_i64;
struct msl_nd_dims {
  int ndim;
  msl_i64 d[8];
};
)";

// A grid-stride loop over `count`, opening a block the caller closes.
std::string loop_over(const char* count) {
  return fmt::format(
      "  for (msl_i64 i = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; i < {}; i += (msl_i64)gridDim.x * "
      "blockDim.x) {{\n",
      count);
}

const char* index_type(DType t) {
  if (t != DType::Int32 && t != DType::Int64) throw std::invalid_argument("indexing: indices must be Int32 or Int64");
  return cuda_type_name(t);
}

// How nonzero reads an element of dtype t: its C type, and the test of `v`.
struct NonzeroRead {
  const char* type;
  const char* test;
};

NonzeroRead nonzero_read(DType t) {
  switch (t) {
    case DType::Bool: return {"unsigned char", "v != 0"};
    case DType::Float16:
    case DType::BFloat16: return {"unsigned short", "(v & 0x7fffu) != 0"};  // +-0 are the only zeros
    default: return {cuda_type_name(t), "v != 0"};
  }
}

// A nonzero kernel over chunks up to the body of its walk: the signature
// (chunks, x, n, chunk, then `params`), `start` once per chunk i, then the
// loop over the chunk's elements k that skips the zeros; the caller
// appends the body for a nonzero element and closes the three blocks.
std::string chunk_walk(const std::string& name, DType t, const char* params, const char* start) {
  return fmt::format(
             "extern \"C\" __global__ void {}(msl_i64 chunks, const {}* __restrict__ x, msl_i64 n, "
             "msl_i64 chunk, {}) {{\n",
             name, nonzero_read(t).type, params) +
         loop_over("chunks") + start +
         fmt::format(
             "    const msl_i64 end = (i + 1) * chunk < n ? (i + 1) * chunk : n;\n"
             "    for (msl_i64 k = i * chunk; k < end; ++k) {{\n"
             "      const {} v = x[k];\n"
             "      if (!({})) continue;\n",
             nonzero_read(t).type, nonzero_read(t).test);
}

// The parameters nonzero's kernels start with (chunks, x, n, chunk).
std::vector<std::string> chunk_params(DType t) {
  return {"msl_i64", fmt::format("const {}*", nonzero_read(t).type), "msl_i64", "msl_i64"};
}

}  // namespace

std::string indexing_prelude() { return kPrelude; }

// ------------------------------------------------------------ row offsets

std::string nd_offsets_kernel_name(DType index) { return fmt::format("msl_nd_offsets_{}", dtype_name(index)); }

std::vector<std::string> nd_offsets_param_types(DType index) {
  return {"msl_i64", "msl_i64*", fmt::format("const {}*", index_type(index)), "msl_nd_dims", "int*"};
}

std::string nd_offsets_kernel_text(DType index) {
  std::string s = fmt::format(
      "extern \"C\" __global__ void {}(msl_i64 rows, msl_i64* __restrict__ offs, const {}* __restrict__ indices, "
      "msl_nd_dims dims, int* err) {{\n",
      nd_offsets_kernel_name(index), index_type(index));
  s += loop_over("rows");
  s += "    msl_i64 off = 0;\n"
       "    for (int j = 0; j < dims.ndim; ++j) {\n"
       "      const msl_i64 n = dims.d[j], v = (msl_i64)indices[i * dims.ndim + j];\n"
       "      if (v < -n || v >= n) {\n        *err = 1;\n        off = 0;\n        break;\n      }\n"
       "      off = off * n + (v < 0 ? v + n : v);\n"
       "    }\n"
       "    offs[i] = off;\n  }\n}\n";
  return s;
}

// --------------------------------------------------- last-row-wins update

std::string nd_last_row_kernel_name() { return "msl_nd_last_row"; }

std::vector<std::string> nd_last_row_param_types() { return {"msl_i64", "const msl_i64*", "unsigned long long*"}; }

std::string nd_last_row_kernel_text() {
  return "extern \"C\" __global__ void msl_nd_last_row(msl_i64 rows, const msl_i64* __restrict__ offs, "
         "unsigned long long* last) {\n" +
         loop_over("rows") + "    atomicMax(last + offs[i], (unsigned long long)(i + 1));\n  }\n}\n";
}

std::string nd_update_kernel_name(size_t item_size) { return fmt::format("msl_nd_update_u{}", item_size); }

std::vector<std::string> nd_update_param_types(size_t item_size) {
  std::string u = element_type(item_size);
  return {"msl_i64", u + "*", "const " + u + "*", "const msl_i64*", "const unsigned long long*", "msl_i64"};
}

std::string nd_update_kernel_text(size_t item_size) {
  const char* u = element_type(item_size);
  std::string s = fmt::format(
      "extern \"C\" __global__ void {}(msl_i64 n, {}* __restrict__ out, const {}* __restrict__ updates, "
      "const msl_i64* __restrict__ offs, const unsigned long long* __restrict__ last, msl_i64 inner) {{\n",
      nd_update_kernel_name(item_size), u, u);
  s += loop_over("n");
  s += "    const msl_i64 r = i / inner, at = offs[r];\n"
       "    if (last[at] == (unsigned long long)(r + 1)) out[at * inner + i % inner] = updates[i];\n  }\n}\n";
  return s;
}

// ---------------------------------------------------------------- nonzero

int64_t nonzero_chunk(int64_t n) {
  // At most 2^16 chunks: the scan is one thread's loop over them.
  return std::max<int64_t>(256, (n + 65535) / 65536);
}

std::string nonzero_count_kernel_name(DType t) { return fmt::format("msl_nonzero_count_{}", dtype_name(t)); }

std::vector<std::string> nonzero_count_param_types(DType t) {
  std::vector<std::string> p = chunk_params(t);
  p.push_back("msl_i64*");
  return p;
}

std::string nonzero_count_kernel_text(DType t) {
  return chunk_walk(nonzero_count_kernel_name(t), t, "msl_i64* __restrict__ counts", "    msl_i64 count = 0;\n") +
         "      ++count;\n    }\n    counts[i] = count;\n  }\n}\n";
}

std::string nonzero_scan_kernel_name() { return "msl_nonzero_scan"; }

std::vector<std::string> nonzero_scan_param_types() { return {"msl_i64", "msl_i64", "msl_i64*"}; }

std::string nonzero_scan_kernel_text() {
  return "extern \"C\" __global__ void msl_nonzero_scan(msl_i64 one, msl_i64 chunks, msl_i64* counts) {\n" +
         loop_over("one") +
         "    msl_i64 sum = 0;\n"
         "    for (msl_i64 c = 0; c < chunks; ++c) {\n"
         "      const msl_i64 count = counts[c];\n"
         "      counts[c] = sum;\n"
         "      sum += count;\n"
         "    }\n"
         "    counts[chunks] = sum;\n  }\n}\n";
}

std::string nonzero_fill_kernel_name(DType t) { return fmt::format("msl_nonzero_fill_{}", dtype_name(t)); }

std::vector<std::string> nonzero_fill_param_types(DType t) {
  std::vector<std::string> p = chunk_params(t);
  p.insert(p.end(), {"const msl_i64*", "msl_i64*", "msl_nd_dims"});
  return p;
}

std::string nonzero_fill_kernel_text(DType t) {
  return chunk_walk(nonzero_fill_kernel_name(t), t,
                    "const msl_i64* __restrict__ starts, msl_i64* __restrict__ out, msl_nd_dims shape",
                    "    msl_i64 row = starts[i];\n") +
         "      msl_i64 rest = k;\n"
         "      for (int j = shape.ndim - 1; j >= 0; --j) {\n"
         "        out[row * shape.ndim + j] = rest % shape.d[j];\n"
         "        rest /= shape.d[j];\n"
         "      }\n"
         "      ++row;\n    }\n  }\n}\n";
}

}  // namespace msl::kernels::cuda
