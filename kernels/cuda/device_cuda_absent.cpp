// cuda_device() of a build without the CUDA back end (MSL_CUDA=OFF, or
// AUTO on a machine without the CUDA toolkit): there is no GPU to open.
#include "kernels/device.h"
#include "kernels/errors.h"

namespace msl::kernels {

namespace {
constexpr const char* kNoCuda =
    "this build of MSL has no GPU back end (it was configured without the CUDA toolkit, or with -DMSL_CUDA=OFF)";
}  // namespace

Device* cuda_device(int) { throw DeviceError(kNoCuda); }
std::string cuda_unavailable_reason(int) { return kNoCuda; }

}  // namespace msl::kernels
