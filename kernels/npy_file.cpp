#include "kernels/npy_file.h"

#include <fmt/format.h>

#include "kernels/primitives.h"

namespace msl::kernels {

const char* npy_descr(DType t) {
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::Float16: return "<f2";
    case DType::Float64: return "<f8";
    default: return "<f4";  // float32, and bfloat16 widened to it
  }
}

std::string encode_npy(const Tensor& t) {
  Tensor c = t.dtype() == DType::BFloat16 ? execute1(Prim::cast, std::span<const Tensor>(&t, 1),
                                                     Attrs{{"dtype", DType::Float32}})
                                          : t;
  c = c.to_host().contiguous();
  // Python's repr of the shape tuple: "()", "(3,)", "(2, 3)".
  std::string shape = "(";
  for (int i = 0; i < c.ndim(); ++i)
    shape += std::to_string(c.dim(i)) + (c.ndim() == 1 ? "," : i + 1 < c.ndim() ? ", " : "");
  shape += ")";
  std::string header =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", npy_descr(c.dtype()), shape);
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  if (c.numel() > 0) out.append(static_cast<const char*>(c.raw()), c.nbytes());
  return out;
}

}  // namespace msl::kernels
