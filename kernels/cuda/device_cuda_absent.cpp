// The GPU entry points of a build without the CUDA back end (MSL_CUDA=OFF,
// or AUTO on a machine without the CUDA toolkit): there is no GPU to open
// and no NVRTC to compile graph units with.
#include "kernels/cuda/image_cache.h"
#include "kernels/cuda/nvrtc_compiler.h"
#include "kernels/cuda/program_unit.h"
#include "kernels/device.h"
#include "kernels/errors.h"

namespace msl::kernels {

namespace {
constexpr const char* kNoCuda =
    "this build of MSL has no GPU back end (it was configured without the CUDA toolkit, or with -DMSL_CUDA=OFF)";
}  // namespace

Device* cuda_device(int) { throw DeviceError(kNoCuda); }
std::string cuda_unavailable_reason(int) { return kNoCuda; }

namespace cuda {

NvrtcOutput nvrtc_compile(const std::string&, const std::string&, int, bool) { throw DeviceError(kNoCuda); }
std::vector<int> nvrtc_supported_archs() { return {}; }
std::string nvrtc_version() { return ""; }
std::string nvrtc_unavailable_reason() { return kNoCuda; }
void set_image_store(ImageStore) {}
CachedImage compile_cached(const std::string&, const std::string&, int, bool) { throw DeviceError(kNoCuda); }
void unit_compile_target(int&, bool&) { throw DeviceError(kNoCuda); }
void launch_unit_kernel(const ProgramUnit&, const std::string&, int64_t, std::span<const Tensor>,
                        std::span<const Tensor>, size_t, const char*) {
  throw DeviceError(kNoCuda);
}

}  // namespace cuda

}  // namespace msl::kernels
