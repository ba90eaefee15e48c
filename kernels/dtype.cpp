#include "kernels/dtype.h"

#include <cmath>
#include <limits>

namespace msl::kernels {

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: normalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while (!(mant & 0x400u));
      u = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000u | (mant << 13);
  } else {
    u = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00u : 0x7c00u);  // NaN / Inf
  if (abs >= 0x477ff000u) return sign | 0x7c00u;                                  // overflow to Inf
  if (abs < 0x38800000u) {                                                        // subnormal or zero
    // Scale into the subnormal range and let the FPU round to nearest even.
    float a;
    std::memcpy(&a, &abs, 4);
    return sign | static_cast<uint16_t>(std::nearbyint(a * 16777216.0f));  // a / 2^-24
  }
  uint32_t mant = abs & 0x7fffffu;
  uint32_t exp = (abs >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // carries into the exponent correctly
  return sign | static_cast<uint16_t>(h);
}

// The inline size table in dtype.h must agree with the C++ element types.
#define MSL_X(e, T, py, ms) static_assert(dtype_size(DType::e) == sizeof(T), "dtype_size table out of date");
MSL_DTYPES(MSL_X)
#undef MSL_X

const char* dtype_name(DType t) {
  switch (t) {
#define MSL_X(e, T, py, ms) \
  case DType::e: return py;
    MSL_DTYPES(MSL_X)
#undef MSL_X
  }
  return "?";
}

const char* dtype_display_name(DType t) {
  switch (t) {
#define MSL_X(e, T, py, ms) \
  case DType::e: return ms;
    MSL_DTYPES(MSL_X)
#undef MSL_X
  }
  return "?";
}

bool parse_dtype(std::string_view name, DType& out) {
#define MSL_X(e, T, py, ms)                        \
  if (name == py || name == ms) {                  \
    out = DType::e;                                \
    return true;                                   \
  }
  MSL_DTYPES(MSL_X)
#undef MSL_X
  if (name == "bool") {
    out = DType::Bool;
    return true;
  }
  return false;
}

namespace {
int rank(DType t) {  // position in the promotion lattice
  switch (t) {
    case DType::Bool: return 0;
    case DType::UInt8:
    case DType::Int8: return 1;
    case DType::Int32: return 2;
    case DType::Int64: return 3;
    case DType::Float16:
    case DType::BFloat16: return 4;
    case DType::Float32: return 5;
    case DType::Float64: return 6;
  }
  return 0;
}
}  // namespace

DType python_number_dtype(PyNumber kind, const DType* like) {
  if (!like) return kind == PyNumber::Bool ? DType::Bool : kind == PyNumber::Int ? DType::Int64 : DType::Float32;
  if (kind == PyNumber::Float && !is_floating(*like)) return DType::Float32;
  if (kind == PyNumber::Int && *like == DType::Bool) return DType::Int64;
  return *like;
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::Int8 && b == DType::UInt8) || (a == DType::UInt8 && b == DType::Int8)) return DType::Int32;
  if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
    return DType::Float32;
  return rank(a) >= rank(b) ? a : b;
}

double load_as_double(const void* base, DType t, int64_t i) {
  switch (t) {
    case DType::Bool: return static_cast<const bool*>(base)[i] ? 1.0 : 0.0;
    case DType::Int8: return static_cast<const int8_t*>(base)[i];
    case DType::UInt8: return static_cast<const uint8_t*>(base)[i];
    case DType::Int32: return static_cast<const int32_t*>(base)[i];
    case DType::Int64: return static_cast<double>(static_cast<const int64_t*>(base)[i]);
    case DType::Float16: return half_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::BFloat16: return bf16_to_float(static_cast<const uint16_t*>(base)[i]);
    case DType::Float32: return static_cast<const float*>(base)[i];
    case DType::Float64: return static_cast<const double*>(base)[i];
  }
  return 0;
}

namespace {
template <class I>
I saturate_int(double v) {
  // Float-to-int conversion of out-of-range values is undefined in C++;
  // truncate toward zero and clamp, as NumPy does on x86 for in-range values.
  if (std::isnan(v)) return 0;
  constexpr double lo = static_cast<double>(std::numeric_limits<I>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<I>::max());
  if (v <= lo) return std::numeric_limits<I>::min();
  if (v >= hi) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}
}  // namespace

void store_from_double(void* base, DType t, int64_t i, double v) {
  switch (t) {
    case DType::Bool: static_cast<bool*>(base)[i] = v != 0; break;
    case DType::Int8: static_cast<int8_t*>(base)[i] = saturate_int<int8_t>(v); break;
    case DType::UInt8: static_cast<uint8_t*>(base)[i] = saturate_int<uint8_t>(v); break;
    case DType::Int32: static_cast<int32_t*>(base)[i] = saturate_int<int32_t>(v); break;
    case DType::Int64: static_cast<int64_t*>(base)[i] = saturate_int<int64_t>(v); break;
    case DType::Float16: static_cast<uint16_t*>(base)[i] = float_to_half(static_cast<float>(v)); break;
    case DType::BFloat16: static_cast<uint16_t*>(base)[i] = float_to_bf16(static_cast<float>(v)); break;
    case DType::Float32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
    case DType::Float64: static_cast<double*>(base)[i] = v; break;
  }
}

}  // namespace msl::kernels
