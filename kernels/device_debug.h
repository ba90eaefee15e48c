// The Debug device: for tests only, it proves that host code never reads a
// device's memory directly, without a GPU.
//
// Its memory is host memory in whole pages from mmap, kept PROT_NONE except
// while one of its kernels runs: the dispatcher opens the storages of a
// primitive's inputs and outputs (and whatever the kernel allocates on the
// device meanwhile) around the call of the CPU kernel, which the Debug
// device reuses, and closes them after. copy_to_host / copy_from_host open
// a block for the copy. Any other read or write faults; a SIGSEGV handler
// (installed when the device is first used) turns a fault inside its pages
// into "debug device: host access to device memory at 0x..., storage of N
// bytes" and aborts. Freed blocks are unmapped at once, so a use after free
// faults too.
//
// MSL_DEFAULT_DEVICE=debug makes it the default device (device.h), which is
// how the script suites run on it (CTest label debug_device).
#pragma once

#include <span>

#include "kernels/tensor.h"

namespace msl::kernels {

Device* debug_device();

// While alive, the Debug-device storages of the given tensors, and Debug
// memory this thread allocates meanwhile, are readable and writable: a kernel
// of the Debug device runs inside one. Scopes nest (a block stays open until
// its last scope closes). Tensors of other devices are ignored, so a scope
// over CPU tensors costs a loop over them and nothing else.
class DebugAccess {
 public:
  DebugAccess(std::span<const Tensor> a, std::span<const Tensor> b = {});
  ~DebugAccess();
  DebugAccess(const DebugAccess&) = delete;
  DebugAccess& operator=(const DebugAccess&) = delete;
};

// Runs `kernel`, host code that reads `in` and writes `out`, as a kernel of
// `dev`: directly on the CPU, inside a DebugAccess scope on the Debug
// device. For host kernels outside the registry (graph mode's fused loops);
// other devices have none (ValueError naming `what`).
[[noreturn]] void throw_no_host_kernel(const char* what, Device* dev);
template <class F>
void run_host_kernel(const char* what, Device* dev, std::span<const Tensor> in, std::span<const Tensor> out,
                     F&& kernel) {
  if (dev->type() == DeviceType::CPU) {
    kernel();
  } else if (dev->type() == DeviceType::Debug) {
    DebugAccess scope(in, out);
    kernel();
  } else {
    throw_no_host_kernel(what, dev);
  }
}
// Installs the fault handler now (the device installs it on its first
// allocation): for a test whose framework replaced it meanwhile.
void debug_device_install_fault_handler();

// Number of Debug-device blocks allocated and not freed (tests).
size_t debug_device_live_blocks();

}  // namespace msl::kernels
