// NumPy's .npy encoding of one tensor (format version 1.0): the magic
// "\x93NUMPY", the version, a little-endian header length, a Python dict
// literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded
// with spaces to a multiple of 64 bytes and ending in a newline, then the
// elements row-major. Written by `msl --dump` (kernels/dump.cpp) and by
// numpy.save/savez (interp/checkpoint/checkpoint_npy.cpp, which also reads
// the format back).
#pragma once

#include <string>

#include "kernels/tensor.h"

namespace msl::kernels {

// NumPy's type string for the stored element type ("<f4", "|b1", ...);
// bfloat16, which NumPy lacks, is stored as float32 ("<f4").
const char* npy_descr(DType t);
// The whole .npy file for `t` (read from any device; bfloat16 widened).
std::string encode_npy(const Tensor& t);

}  // namespace msl::kernels
