// main() of the GPU tests: without a usable GPU (no driver, no device) it
// prints why and exits 77, CTest's "skipped" (SKIP_RETURN_CODE).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "kernels/device.h"

int main(int argc, char** argv) {
  std::string why = msl::kernels::cuda_unavailable_reason(0);
  if (!why.empty()) {
    std::printf("skipped: no GPU to test on: %s\n", why.c_str());
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
