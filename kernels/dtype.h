// Element types of tensors.
//
// The set is MindSpore's (float16/bfloat16/float32/float64, int8/uint8/
// int32/int64, bool). Half-precision values are stored as their 16-bit
// patterns and converted to float for arithmetic; kernels that care about
// speed have float32/float64/int fast paths and fall back to the generic
// "load as double, compute, store" loops for the rest.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace msl::kernels {

#define MSL_DTYPES(X)            \
  X(Bool, bool, "bool_", "Bool") \
  X(Int8, int8_t, "int8", "Int8") \
  X(UInt8, uint8_t, "uint8", "UInt8") \
  X(Int32, int32_t, "int32", "Int32") \
  X(Int64, int64_t, "int64", "Int64") \
  X(Float16, ::msl::kernels::Half, "float16", "Float16") \
  X(BFloat16, ::msl::kernels::BFloat16, "bfloat16", "BFloat16") \
  X(Float32, float, "float32", "Float32") \
  X(Float64, double, "float64", "Float64")

enum class DType : uint8_t {
#define MSL_X(e, t, py, ms) e,
  MSL_DTYPES(MSL_X)
#undef MSL_X
};
constexpr int kNumDTypes = 9;

// IEEE binary16, stored as bits. Conversions round to nearest even.
struct Half {
  uint16_t bits = 0;
};
// bfloat16: the upper half of a float32, rounded to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
};

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);
inline float bf16_to_float(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// Bytes per element; inline because Tensor::raw() needs it on every op.
constexpr size_t dtype_size(DType t) {
  constexpr uint8_t kSizes[] = {1, 1, 1, 4, 8, 2, 2, 4, 8};  // in MSL_DTYPES order
  return kSizes[static_cast<int>(t)];
}
// "float32": the name of the MSL/Python attribute (msl.float32).
const char* dtype_name(DType t);
// "Float32": how MindSpore prints a dtype (Tensor(shape=[2], dtype=Float32, ...)).
const char* dtype_display_name(DType t);
bool parse_dtype(std::string_view name, DType& out);

inline bool is_floating(DType t) {
  return t == DType::Float16 || t == DType::BFloat16 || t == DType::Float32 || t == DType::Float64;
}
inline bool is_integral(DType t) { return !is_floating(t) && t != DType::Bool; }
// The 16-bit floats: mixed precision's low-precision dtypes.
inline bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// NumPy/MindSpore promotion of two tensor dtypes: bool < ints < floats; among
// floats the wider wins, and float16 with bfloat16 gives float32; among ints
// the wider (int8 with uint8 gives int32... NumPy gives int16, which MSL does
// not have; int32 is the next wider type).
DType promote_types(DType a, DType b);

// The dtype a Python number takes as an operand beside tensors (`x * 0.5`),
// given the first tensor operand's dtype (null: no tensor operand; then
// bool, int64 or float32), as MindSpore and PyTorch do: a float beside a
// tensor that is not floating is float32 and an int beside a bool tensor is
// int64, so that promotion keeps the number's value; otherwise the number
// takes the tensor's dtype (`half * 0.5` stays float16). PyNative, the
// specializer and the graph executor all ask this, so the modes agree.
enum class PyNumber : uint8_t { Bool, Int, Float };
DType python_number_dtype(PyNumber kind, const DType* like);

// Reads element `i` of a buffer of dtype `t` as double / writes it back,
// for generic (slow-path) kernels and for printing.
double load_as_double(const void* base, DType t, int64_t i);
void store_from_double(void* base, DType t, int64_t i, double v);

}  // namespace msl::kernels
