// How many Philox counter blocks each random primitive consumes, so that the
// global generator (philox.h) can advance its offset past them and the next
// random op draws fresh numbers.
//
// One block is one 128-bit Philox output: four 32-bit lanes. The exact use
// of the lanes by each primitive is documented in random_ops.cpp:
//   dropout                        1 lane per element      ceil(numel / 4) blocks
//   random_uniform  float32/16/bf16 1 lane per element      ceil(numel / 4)
//   random_uniform  float64         2 lanes per element     ceil(numel / 2)
//   random_normal   float32/16/bf16 1 lane per element      ceil(numel / 4)
//   random_normal   float64         2 lanes per element     ceil(numel / 2)
// Any other primitive consumes nothing.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/dtype.h"
#include "kernels/primitives.h"

namespace msl::kernels {

// Counter blocks used by primitive `p` producing `numel` elements of dtype
// `dt` (for dropout: the input's numel and dtype).
uint64_t random_blocks_used(Prim p, int64_t numel, DType dt);

// Completes the attributes of a call of random primitive `p` on inputs
// `in` from the global generator (philox.h), as each call draws: `seed`,
// when not given, is the generator's; `offset`, when not given, is 0 for a
// given seed (the same draw every call, as a fixed seed asks) and else the
// next counters, taken past what the call uses, so every call draws fresh
// numbers. Used by PyNative dispatch and by compiled graphs when they run,
// so a graph replays no draw. Checks the call first (kernel errors), so a
// failing call leaves the generator untouched.
void draw_random_attrs(Prim p, std::span<const TensorSpec> in, Attrs& attrs);

}  // namespace msl::kernels
