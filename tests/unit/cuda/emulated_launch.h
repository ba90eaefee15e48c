// The host-emulation launcher of a kernel text (host_emulation.h): a C
// function run_<name>(blocks, threads, args) that calls the kernel once per
// emulated thread with its parameters read from args as cuLaunchKernel
// reads them (args[k] points at parameter k); and the comparison of its
// results with the CPU kernels'.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "kernels/tensor.h"

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

// A kernel text's result against the CPU kernel's, element for element:
// equal when rtol is 0, else |got - want| <= rtol * (1 + |want|).
inline void require_matches(const kernels::Tensor& got, const kernels::Tensor& want, double rtol) {
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.numel(); ++i) {
    double x = got.item_at(i), y = want.item_at(i);
    INFO("element " << i << ": GPU text " << x << ", CPU " << y);
    if (rtol == 0)
      REQUIRE(x == y);
    else
      REQUIRE(std::fabs(x - y) <= rtol * (1 + std::fabs(y)));
  }
}

}  // namespace msl::test
