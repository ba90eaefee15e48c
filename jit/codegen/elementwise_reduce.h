// The sums of a fused elementwise loop (EwProgram::reductions): code
// generated inside the loop that build_function (elementwise_jit.cpp)
// makes, and the per-thread accumulation around it
// (ElementwiseJit::run(fn, p, ...) in elementwise_reduce.cpp).
//
// Internal to jit/codegen: it needs LLVM's headers, which only the
// codegen library sees.
//
// A sum shares the loop's segments (elementwise_jit.h), since its pattern
// is the program's one broadcast pattern (or a scalar's); each segment
// layout has a place where the sum is cheapest:
//   scalar (count == 1), or one index per segment (inner > 1): a register
//       accumulates the segment (an fadd reduction the vectorizer splits
//       across lanes, so the order of additions is free: reassoc), added
//       to acc[index] at the segment's end;
//   rows (inner == 1, segments of `count`): acc[k] += value at position k,
//       beside the loads of the broadcast inputs at k;
//   tiles (short periods): a zeroed stack tile of the segment's length,
//       tile[k] += value at position k, folded into acc[(k / inner) %
//       count] (with a lane: acc[((k / inner) % count) * lane + k % lane])
//       once after the last segment;
//   lane vectors (gen_lane_vectors in elementwise_jit.cpp, LaneVectorSums
//       below): a vector register per segment, added to the segment's row
//       of acc (a scalar sum: its total to acc[0]) at the segment's end;
//       when a row is longer than a vector, the vector at position t is
//       added to acc's row at t % lane in place.
// The accumulators are float32: registers hold one segment, memory one
// addition per segment, so the error grows with the number of segments a
// thread sees, not with its elements; the threads' partial arrays are
// summed in float64 (elementwise_reduce.cpp).
#pragma once

#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <vector>

#include "jit/codegen/elementwise_jit.h"

namespace msl::jit::codegen {

// How build_function splits [begin, end) into segments (elementwise_jit.h).
struct EwSegments {
  EwIndexing shared;         // the program's pattern; full(): one segment
  bool tiled = false;        // read through tiles of `length`
  bool per_segment = false;  // inner > 1: one broadcast index per segment
  int64_t length = 0;        // a segment's elements (segmented loops)
  bool segmented() const { return !shared.full(); }
};

// Generates a program's sums at the hooks build_function calls, in order.
class ReductionCodegen {
 public:
  ReductionCodegen(const EwProgram& p, const EwSegments& segments) : p_(p), seg_(segments) {}
  bool any() const { return !p_.reductions.empty(); }

  // In the entry block, before its terminator: the accumulator arrays
  // (out[outputs.size() + r]) and the stack tiles.
  void entry(llvm::IRBuilder<>& b, llvm::Value* out);
  // In the block before the first segment (the range is not empty): the
  // tiles zeroed.
  void before_loop(llvm::IRBuilder<>& b);
  // At the top of the element loop, before anything but its index phi:
  // the register accumulators, starting from 0 on entry from `outer`.
  void loop_phis(llvm::IRBuilder<>& b, llvm::BasicBlock* outer);
  // In the element loop, once the values are computed: each sum's value at
  // position `i` of the segment added. `grouped` puts a memory access into
  // the loop's parallel access group.
  void accumulate(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& vals, llvm::Value* i,
                  const std::function<llvm::Instruction*(llvm::Instruction*)>& grouped);
  // In the latch (the loop left; `index` is the segment's broadcast index
  // when per_segment): the registers added to their arrays.
  void after_segment(llvm::IRBuilder<>& b, llvm::Value* index);
  // The block the last segment leaves to: `done`, or a new block where the
  // tiles are folded into the arrays before going on to `done`.
  llvm::BasicBlock* exit_block(llvm::Function* fn, llvm::BasicBlock* done);

 private:
  bool in_register(const EwReduction& r) const { return r.how.scalar() || seg_.per_segment; }
  const EwProgram& p_;
  EwSegments seg_;
  std::vector<llvm::Value*> acc_, tile_;  // per sum: its array; its tile (tiled, count > 1)
  std::vector<llvm::PHINode*> sum_;       // per sum: the register accumulator (in_register)
  std::vector<llvm::Value*> next_;        // per sum: the register after this element
};

// The sums of a lane pattern's vector loop (gen_lane_vectors): vectors of
// v elements, v a multiple of lane (whole_rows) or a divisor of it. A sum
// kept in a register per segment lives in a stack slot of one vector that
// LLVM promotes to a register (SROA), so the loop's two bodies (whole and
// masked vectors) need no hand-made phis.
class LaneVectorSums {
 public:
  LaneVectorSums(const EwProgram& p, int64_t v, bool whole_rows) : p_(p), v_(v), whole_rows_(whole_rows) {}
  // In the entry block, before its terminator: the arrays
  // (out[outputs.size() + r]) and the slots.
  void entry(llvm::IRBuilder<>& b, llvm::Value* out);
  // Where a segment starts (its broadcast index is `c`): the slots zeroed.
  void segment_start(llvm::IRBuilder<>& b, llvm::Value* c);
  // In a body, once the vector at segment position `t` is computed: each
  // sum's vector added (`mask`: the elements in the range; null: all).
  void accumulate(llvm::IRBuilder<>& b, const std::vector<llvm::Value*>& vals, llvm::Value* mask, llvm::Value* t);
  // Where the segment ends: the slots added to the arrays.
  void segment_end(llvm::IRBuilder<>& b);

 private:
  bool in_slot(const EwReduction& r) const { return r.how.scalar() || whole_rows_; }
  const EwProgram& p_;
  int64_t v_;
  bool whole_rows_;
  std::vector<llvm::Value*> acc_, slot_;  // per sum: its array; its slot (in_slot)
  llvm::Value* c_ = nullptr;              // the segment's broadcast index
};

}  // namespace msl::jit::codegen
