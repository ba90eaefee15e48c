// The channel block of oneDNN's activation layout on this CPU, for graph
// mode's layout pass (jit/passes/layout_choice.h): oneDNN's convolution and
// batch-norm kernels work on nChw16c data on AVX-512 machines and nChw8c on
// AVX2 ones.
#pragma once

namespace msl::kernels {

// 16 (AVX-512), 8 (AVX2), or 0 where oneDNN has neither (keep NCHW).
int activation_block();

}  // namespace msl::kernels
