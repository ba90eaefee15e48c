// The default device (device.h): the CPU, or the device MSL_DEFAULT_DEVICE
// names when it is first asked for (tests run the script suites on the
// Debug device this way).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/device.h"
#include "kernels/device_debug.h"

namespace msl::kernels {

namespace {

Device* from_environment() {
  const char* v = std::getenv("MSL_DEFAULT_DEVICE");
  if (!v || !*v || std::strcmp(v, "cpu") == 0) return cpu_device();
  if (std::strcmp(v, "debug") == 0) return debug_device();
  std::fprintf(stderr, "MSL_DEFAULT_DEVICE: unknown device '%s' (cpu or debug); using the CPU\n", v);
  return cpu_device();
}

std::atomic<Device*>& slot() {
  static std::atomic<Device*> d{from_environment()};
  return d;
}

}  // namespace

namespace detail {
bool default_device_off_cpu = default_device() != cpu_device();
}  // namespace detail

Device* default_device() { return slot().load(std::memory_order_relaxed); }
void set_default_device(Device* d) {
  slot().store(d, std::memory_order_relaxed);
  detail::default_device_off_cpu = d != cpu_device();
}

}  // namespace msl::kernels
