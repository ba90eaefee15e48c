// TEMPORARY during development: weak definitions so the library links while
// primitive groups are being written. Deleted once every group exists.
#include <fmt/format.h>

#include "kernels/errors.h"
#include "kernels/primitives.h"

namespace msl::kernels {
#define MSL_X(name, ni, no, kind, attrs)                                                              \
  __attribute__((weak)) void infer_##name(const InferArgs&) { throw ValueError(#name ": pending"); } \
  __attribute__((weak)) void cpu_##name(const KernelArgs&) { throw ValueError(#name ": pending"); }
MSL_PRIMITIVES(MSL_X)
#undef MSL_X
}  // namespace msl::kernels
