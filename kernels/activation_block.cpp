#include "kernels/activation_block.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace msl::kernels {

int activation_block() {
  static const int block = [] {
    dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    switch (isa) {
      case dnnl::cpu_isa::avx512_core:
      case dnnl::cpu_isa::avx512_core_vnni:
      case dnnl::cpu_isa::avx512_core_bf16:
      case dnnl::cpu_isa::avx512_core_amx:
        return 16;
      case dnnl::cpu_isa::avx2:
      case dnnl::cpu_isa::avx2_vnni:
        return 8;
      default:
        return 0;
    }
  }();
  return block;
}

}  // namespace msl::kernels
