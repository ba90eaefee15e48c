// Clones of a hot loop for AVX-512, AVX2 and baseline x86-64, chosen once at
// load time by the CPU's features (GCC function multi-versioning): no
// -march flag is needed for wide vectors and the binary still runs anywhere.
//
// Put it on a function that takes the chunk [begin, end) and __restrict
// pointers, and call that from the parallel_for lambda. A loop written
// inside the lambda itself reads its pointers and scalars through the
// closure, which holds them by reference, so every float it stores may
// change a captured float (a learning rate, say), and GCC keeps that loop
// scalar; the clone also gets 512-bit vectors where the baseline build has
// 128-bit ones.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MSL_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define MSL_SIMD_CLONES
#endif
