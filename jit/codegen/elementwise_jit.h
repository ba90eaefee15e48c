// CPU code generation for fused elementwise clusters with LLVM 19's ORC
// JIT: the first piece of graph mode's native back end.
//
// A cluster (chain or DAG of elementwise ops over float32 tensors of one
// shape) is described as an EwProgram: numbered values, each an input, a
// constant or an op of earlier values, and the values it outputs (a
// gradient's several results share their intermediates in one loop). compile() turns it into one loop
// over the elements, optimized at O3 for the host CPU (LLVM's loop
// vectorizer then uses AVX-512 or AVX2 as the CPU has them), cached in
// memory by the program's text and on disk as object files (object_cache.h:
// later runs link the object instead of compiling); run() splits the
// elements across the kernel threads.
// Reading each input once and writing the output once is what makes a
// fused chain memory-bound instead of one pass per op.
//
// An input may be smaller than the cluster and broadcast over it (a Dense
// bias [C] over [N, C], a conv bias [1, C, 1, 1] over [N, C, H, W], a
// tensor scalar): element i then reads input[(i / inner) % count]. All the
// broadcast inputs of a program with count > 1 share one (inner, count), so
// the loop is generated as segments where the index pattern is simple and
// nothing is divided per element:
//   inner > 1:  segments of `inner` elements, the broadcast values loaded
//               once per segment, a vectorized loop over the segment;
//   inner == 1: segments of `count` elements (rows), the broadcast inputs
//               read contiguously beside the full ones in a vectorized loop;
//   short segments (< 128) with a period inner * count of at most 4096:
//               the period is copied to a tile on the stack (repeated to
//               ~1024 elements) and read like a row of the tile's length.
// The first and last segments of [begin, end) are clipped, so any split of
// the elements across threads is correct; count == 1 inputs are read once.
//
// A pattern may have a second, trailing block of `lane` elements: element i
// reads input[((i / inner) % count) * lane + i % lane]. That is a per-
// channel operand of a channel-blocked tensor ([1, C/16, 1, 1, 16] over
// [N, C/16, H, W, 16]: inner H*W*16, count C/16, lane 16); lane divides
// inner, so a segment of `inner` elements reads one row of `lane` values
// over and over. Such loops are generated as
//   segments of at least two vectors, or periods too long for tiles:
//               segments of `inner` elements walked in vectors built by
//               hand (not by LLVM's vectorizer, which would gather
//               row[i % lane]): of lcm(lane, 16) elements when that is at
//               most 64, a lane input's vector being its row repeated,
//               loaded once per segment; else of gcd(lane, 16) elements,
//               read from the row at i % lane; the first and last vectors
//               of a clipped range masked;
//   shorter segments (1x1 maps) with periods up to 16384 (and 256 KiB of
//               tiles in all): the tiles above, filled a row at a time.
// Sums may have the lane pattern too (elementwise_reduce.h).
//
// A program may also sum values into fewer elements (a bias gradient:
// reduce_sum of dy over every axis but the channel): sum k adds value i to
// acc[(i / inner) % count], the same pattern as a broadcast input, which it
// shares with the program's inputs. The loop adds into accumulators it is
// given (one per thread, summed after the loop: elementwise_reduce.h), so
// a value that is only summed is never written to memory.
//
// exp (and sigmoid, tanh through it) is generated inline as a Cody-Waite
// range reduction with a degree-6 polynomial (Cephes expf, ~1 ulp), so it
// vectorizes like the arithmetic; NaN propagates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/elementwise_program.h"

namespace msl::jit::codegen {

// The program representation (EwProgram and its parts) is the kernels'
// (kernels/elementwise_program.h); the names stay usable here.
using kernels::EwIndexing;
using kernels::EwOp;
using kernels::EwProgram;
using kernels::EwReduction;
using kernels::EwValue;
using kernels::kNumEwOps;
using kernels::validate_program;

// out[k][i] = output k of program(in[0][...], in[1][...], ...), i in
// [begin, end) (any: the caller need not align it to a pattern), each
// input indexed as its EwIndexing says; then for sum r,
// out[outputs.size() + r][(i / inner) % count] += its value at i (added to
// what the array holds: the caller zeroes it).
using EwFunction = void (*)(const float* const* in, float* const* out, int64_t begin, int64_t end);

// How compile() calls were answered, over the whole process (msl --profile).
struct JitStats {
  int64_t memory_hits = 0;  // the program was compiled earlier in this process
  int64_t disk_hits = 0;    // its object came from the on-disk cache (object_cache.h)
  int64_t compiled = 0;     // optimized and compiled by LLVM
};

class ElementwiseJit {
 public:
  static ElementwiseJit& instance();
  ~ElementwiseJit();

  // The compiled loop of `p` (compiled once per distinct program). Throws
  // std::invalid_argument for a malformed program, std::runtime_error when
  // LLVM fails.
  EwFunction compile(const EwProgram& p);
  // Runs the compiled loop over n elements, split across kernel threads;
  // the sums' arrays (after the outputs in `out`) are overwritten with the
  // totals.
  void run(const EwProgram& p, const float* const* in, float* const* out, int64_t n);
  // The same with a loop compile() returned (no program lookup per call),
  // for a program without sums (threads would race on the sums' arrays).
  static void run(EwFunction fn, const float* const* in, float* const* out, int64_t n);
  // The same for any program: `p` says what the sums are (each thread adds
  // into zeroed arrays of its own, summed after the loop; elementwise_reduce.cpp).
  static void run(EwFunction fn, const EwProgram& p, const float* const* in, float* const* out, int64_t n);
  // The optimized LLVM IR of `p`'s loop (msl --emit=llvm).
  std::string llvm_ir(const EwProgram& p);
  // The host CPU and features code is generated for.
  std::string target() const;
  // Counts of compile()'s answers; static, so reading them starts no LLVM.
  static JitStats stats();
  // Compiled objects are kept in $XDG_CACHE_HOME/msl/kernels (else
  // ~/.cache/msl/kernels) and loaded from there by later runs; on by
  // default, the directory read from the environment at each compile.
  void set_disk_cache(bool on);

 private:
  ElementwiseJit();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace msl::jit::codegen
