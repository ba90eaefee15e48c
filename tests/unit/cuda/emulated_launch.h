// The host-emulation launcher of a kernel text (host_emulation.h): a C
// function run_<name>(blocks, threads, args) that calls the kernel once per
// emulated thread with its parameters read from args as cuLaunchKernel
// reads them (args[k] points at parameter k).
#pragma once

#include <string>
#include <vector>

namespace msl::test {

inline std::string emulated_launcher(const std::string& name, const std::vector<std::string>& param_types) {
  std::string call = name + "(";
  for (size_t k = 0; k < param_types.size(); ++k)
    call += (k ? ", *(" : "*(") + param_types[k] + "*)args[" + std::to_string(k) + "]";
  call += ")";
  return "extern \"C\" void run_" + name +
         "(unsigned blocks, unsigned threads, void** args) {\n"
         "  for (unsigned b = 0; b < blocks; ++b)\n"
         "    for (unsigned t = 0; t < threads; ++t) {\n"
         "      msl_set_thread(blocks, threads, b, t);\n      " +
         call + ";\n    }\n}\n";
}

using EmulatedLaunch = void(unsigned, unsigned, void**);

}  // namespace msl::test
