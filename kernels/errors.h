// Errors raised by shape/dtype inference and kernels.
//
// kernels/ knows nothing of the interpreter: it throws these C++ exceptions,
// and the MSL binding turns them into the MSL exceptions of the same names
// (ShapeError, TypeError, ValueError, ZeroDivisionError) at the line of the
// MSL call. Inference
// runs before any output is allocated, so a mismatch computes nothing.
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

namespace msl::kernels {

struct KernelError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Shapes that do not fit: "add: cannot broadcast (3, 4) with (2, 4)".
struct ShapeError : KernelError {
  using KernelError::KernelError;
};
// A dtype the op does not accept: "log: unsupported dtype Int32".
struct DTypeError : KernelError {
  using KernelError::KernelError;
};
// A bad attribute or argument value: "one_hot: depth must be >= 0, got -1".
struct ValueError : KernelError {
  using KernelError::KernelError;
};
// An index out of range (gather, one_hot with bad indices is not an error).
struct IndexError : KernelError {
  using KernelError::KernelError;
};
// An index of an n-d index tensor outside [-size, size) (gather_nd and the
// scatters): `dim` is the position in the index's last dimension, which the
// indexing binding maps back to the axis of x the user indexed.
struct IndexOutOfRange : IndexError {
  IndexOutOfRange(const char* op, int64_t index, int dim, int64_t size);
  int64_t index;
  int dim;
  int64_t size;
};
// Integer floordiv/mod by zero: "floordiv: integer division by zero"
// (ZeroDivisionError in MSL, as Python's int division).
struct ZeroDivisionError : KernelError {
  using KernelError::KernelError;
};

// A device, its driver or one of its libraries is missing or failed: "cuLaunchKernel
// (add): CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered"
// (RuntimeError in MSL).
struct DeviceError : KernelError {
  using KernelError::KernelError;
};

// A device's memory is exhausted even after its allocator released its
// cache: the message names the request and the allocator's statistics
// (MemoryError in MSL; the program can go on).
struct OutOfMemory : std::bad_alloc {
  explicit OutOfMemory(std::string message) : message(std::move(message)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

}  // namespace msl::kernels
