// The reductions' CUDA C (reduce_cuda.h).
#include "kernels/cuda/reduce_cuda.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/cuda/copy_cuda.h"

namespace msl::kernels::cuda {

namespace {

constexpr const char* kGeometry = R"(struct msl_reduce_geometry {
  int nkept, nred;
  msl_i64 kept_shape[8], kept_stride[8], red_shape[8], red_stride[8];
};
)";

std::string ctype(DType t) { return t == DType::Bool ? "unsigned char" : cuda_type_name(t); }

// An element `v` of dtype t as the value the reduction compares or adds:
// 16-bit floats as float32 (the CPU widens them first), Bool as 0/1.
std::string load(DType t, const std::string& v) {
  switch (t) {
    case DType::Float16: return "msl_h2f(" + v + ")";
    case DType::BFloat16: return "msl_b2f(" + v + ")";
    case DType::Bool: return "(unsigned char)(" + v + " != 0)";
    default: return v;
  }
}

// The loaded value's C type.
std::string value_type(DType t) {
  if (t == DType::Float16 || t == DType::BFloat16) return "float";
  return ctype(t);
}

// The statement storing `acc` (of the accumulator's type) as out[i].
std::string store(DType out, const std::string& acc) {
  switch (out) {
    case DType::Float16: return fmt::format("out[i] = msl_f2h((float){});", acc);
    case DType::BFloat16: return fmt::format("out[i] = msl_f2b((float){});", acc);
    default: return fmt::format("out[i] = ({}){};", ctype(out), acc);
  }
}

}  // namespace

std::string reduce_kernel_name(const ReduceKernel& k) {
  return fmt::format("msl_{}_{}_to_{}", prim_name(k.prim), dtype_name(k.in), dtype_name(k.out));
}

std::string reduce_prelude() { return copy_kernel_prelude() + kGeometry; }

std::vector<std::string> reduce_param_types(const ReduceKernel& k) {
  return {"msl_i64", ctype(k.out) + "*", "const " + ctype(k.in) + "*", "msl_reduce_geometry", "msl_i64"};
}

std::string reduce_source(const ReduceKernel& k) { return reduce_prelude() + reduce_kernel_text(k); }

std::string reduce_kernel_text(const ReduceKernel& k) {
  const bool sum = k.prim == Prim::reduce_sum, arg = k.prim == Prim::argmax || k.prim == Prim::argmin;
  const bool is_max = k.prim == Prim::reduce_max || k.prim == Prim::argmax;
  if (!sum && !arg && k.prim != Prim::reduce_max && k.prim != Prim::reduce_min)
    throw std::invalid_argument(fmt::format("reduce: {} is not a reduction", prim_name(k.prim)));
  const std::string vt = value_type(k.in);
  std::string s = fmt::format(
      "extern \"C\" __global__ void {}(msl_i64 n, {}* __restrict__ out, const {}* __restrict__ x, "
      "msl_reduce_geometry g, msl_i64 count) {{\n"
      "  for (msl_i64 i = (msl_i64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (msl_i64)gridDim.x * "
      "blockDim.x) {{\n"
      "    msl_i64 rest = i, off = 0;\n"
      "    for (int d = g.nkept - 1; d >= 0; --d) {{\n"
      "      off += rest % g.kept_shape[d] * g.kept_stride[d];\n"
      "      rest /= g.kept_shape[d];\n"
      "    }}\n"
      "    msl_i64 idx[8] = {{0, 0, 0, 0, 0, 0, 0, 0}};\n",
      reduce_kernel_name(k), ctype(k.out), ctype(k.in));
  // The accumulator: double for float sums, wrapping 64-bit for integer
  // sums, the best value so far (and its index) for the others.
  if (sum)
    s += is_floating(k.in) ? "    double acc = 0.0;\n" : "    unsigned long long acc = 0;\n";
  else
    s += fmt::format("    {} acc = 0;\n    int best = 0;\n", vt);
  s += "    for (msl_i64 j = 0; j < count; ++j) {\n";
  s += fmt::format("      const {} v = {};\n", vt, load(k.in, "x[off]"));
  if (sum) {
    s += is_floating(k.in) ? "      acc += (double)v;\n" : "      acc += (unsigned long long)(msl_i64)v;\n";
  } else if (arg) {
    // Strictly better, or the first NaN (which then stays).
    s += fmt::format("      if (j == 0 || v {} acc || (v != v && acc == acc)) {{\n        acc = v;\n"
                     "        best = (int)j;\n      }}\n",
                     is_max ? ">" : "<");
  } else {
    s += fmt::format("      if (j == 0 || v {} acc || v != v) acc = v;\n", is_max ? ">" : "<");
  }
  // The odometer over the reduced dimensions.
  s += "      for (int d = g.nred - 1; d >= 0; --d) {\n"
       "        if (++idx[d] < g.red_shape[d]) {\n"
       "          off += g.red_stride[d];\n"
       "          break;\n"
       "        }\n"
       "        off -= g.red_stride[d] * (g.red_shape[d] - 1);\n"
       "        idx[d] = 0;\n"
       "      }\n"
       "    }\n";
  if (arg)
    s += "    out[i] = best;\n";
  else if (sum && !is_floating(k.in))
    s += "    " + store(k.out, "(msl_i64)acc") + "\n";
  else
    s += "    " + store(k.out, "acc") + "\n";
  s += "  }\n}\n";
  return s;
}

ReduceGeometry reduce_geometry(const Dims& shape, const Dims& strides, uint32_t mask, int64_t& count) {
  ReduceGeometry g;
  count = 1;
  for (int d = 0; d < shape.size(); ++d) {
    if (mask >> d & 1) count *= shape[d];
    if (shape[d] == 1) continue;
    if (mask >> d & 1) {
      g.red_shape[g.nred] = shape[d];
      g.red_stride[g.nred++] = strides[d];
    } else {
      g.kept_shape[g.nkept] = shape[d];
      g.kept_stride[g.nkept++] = strides[d];
    }
  }
  return g;
}

}  // namespace msl::kernels::cuda
