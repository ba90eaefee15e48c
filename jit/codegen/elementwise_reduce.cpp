// A fused loop's sums: the code inside the loop and the per-thread
// accumulation around it (elementwise_reduce.h).
#include "jit/codegen/elementwise_reduce.h"

#include <algorithm>

#include "kernels/parallel.h"

namespace msl::jit::codegen {

using llvm::Value;

void ReductionCodegen::entry(llvm::IRBuilder<>& b, Value* out) {
  llvm::Type* ptr = b.getPtrTy();
  for (size_t r = 0; r < p_.reductions.size(); ++r) {
    acc_.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, out, p_.outputs.size() + r)));
    const bool tiled = seg_.tiled && !p_.reductions[r].how.scalar();
    tile_.push_back(tiled ? b.CreateAlloca(b.getFloatTy(), b.getInt64(seg_.length)) : nullptr);
  }
  sum_.assign(p_.reductions.size(), nullptr);
  next_.assign(p_.reductions.size(), nullptr);
}

void ReductionCodegen::before_loop(llvm::IRBuilder<>& b) {
  for (Value* t : tile_)
    if (t) b.CreateMemSet(t, b.getInt8(0), b.getInt64(static_cast<uint64_t>(seg_.length) * 4), llvm::MaybeAlign(4));
}

void ReductionCodegen::loop_phis(llvm::IRBuilder<>& b, llvm::BasicBlock* outer) {
  for (size_t r = 0; r < p_.reductions.size(); ++r)
    if (in_register(p_.reductions[r])) {
      sum_[r] = b.CreatePHI(b.getFloatTy(), 2);
      sum_[r]->addIncoming(llvm::ConstantFP::get(b.getFloatTy(), 0.0), outer);
    }
}

void ReductionCodegen::accumulate(llvm::IRBuilder<>& b, const std::vector<Value*>& vals, Value* i,
                                  const std::function<llvm::Instruction*(llvm::Instruction*)>& grouped) {
  llvm::Type* f32 = b.getFloatTy();
  for (size_t r = 0; r < p_.reductions.size(); ++r) {
    Value* v = vals[static_cast<size_t>(p_.reductions[r].value)];
    if (sum_[r]) {
      // The order of a register's additions is free (reassoc), so the
      // vectorizer keeps one partial sum per lane.
      auto* add = llvm::cast<llvm::Instruction>(b.CreateFAdd(sum_[r], v));
      llvm::FastMathFlags fmf;
      fmf.setAllowReassoc();
      add->setFastMathFlags(fmf);
      next_[r] = add;
      sum_[r]->addIncoming(add, b.GetInsertBlock());
      continue;
    }
    // Position i of a row (i is its broadcast index) or of a tile: each
    // iteration owns its element, as it owns its output element.
    Value* at = b.CreateGEP(f32, tile_[r] ? tile_[r] : acc_[r], i);
    Value* old = grouped(b.CreateLoad(f32, at));
    grouped(b.CreateStore(b.CreateFAdd(old, v), at));
  }
}

void ReductionCodegen::after_segment(llvm::IRBuilder<>& b, Value* index) {
  llvm::Type* f32 = b.getFloatTy();
  for (size_t r = 0; r < p_.reductions.size(); ++r) {
    if (!next_[r]) continue;
    Value* at = p_.reductions[r].how.scalar() ? acc_[r] : b.CreateGEP(f32, acc_[r], index);
    b.CreateStore(b.CreateFAdd(b.CreateLoad(f32, at), next_[r]), at);
  }
}

llvm::BasicBlock* ReductionCodegen::exit_block(llvm::Function* fn, llvm::BasicBlock* done) {
  if (std::none_of(tile_.begin(), tile_.end(), [](Value* t) { return t != nullptr; })) return done;
  // acc[(j / inner) % count] += tile[j] for j in [0, length): once per
  // call, after the last segment (a tile is as long as a segment, at most
  // a few thousand elements).
  llvm::LLVMContext& ctx = fn->getContext();
  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx, "fold_start", fn, done);
  llvm::BasicBlock* fold = llvm::BasicBlock::Create(ctx, "fold", fn, done);
  llvm::IRBuilder<> b(start);
  b.CreateBr(fold);
  b.SetInsertPoint(fold);
  llvm::Type* f32 = b.getFloatTy();
  llvm::PHINode* j = b.CreatePHI(b.getInt64Ty(), 2);
  j->addIncoming(b.getInt64(0), start);
  const EwIndexing& how = seg_.shared;
  Value* at = b.CreateSRem(b.CreateSDiv(j, b.getInt64(how.inner)), b.getInt64(how.count));
  if (how.lane > 1) at = b.CreateAdd(b.CreateMul(at, b.getInt64(how.lane)), b.CreateSRem(j, b.getInt64(how.lane)));
  for (size_t r = 0; r < tile_.size(); ++r) {
    if (!tile_[r]) continue;
    Value* dst = b.CreateGEP(f32, acc_[r], at);
    Value* add = b.CreateFAdd(b.CreateLoad(f32, dst), b.CreateLoad(f32, b.CreateGEP(f32, tile_[r], j)));
    b.CreateStore(add, dst);
  }
  Value* j_next = b.CreateAdd(j, b.getInt64(1), "", true, true);
  j->addIncoming(j_next, fold);
  b.CreateCondBr(b.CreateICmpSLT(j_next, b.getInt64(seg_.length)), fold, done);
  return start;
}

// ------------------------------------------------------- lane vectors

void LaneVectorSums::entry(llvm::IRBuilder<>& b, Value* out) {
  llvm::Type* ptr = b.getPtrTy();
  auto* vty = llvm::FixedVectorType::get(b.getFloatTy(), static_cast<unsigned>(v_));
  for (size_t r = 0; r < p_.reductions.size(); ++r) {
    acc_.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, out, p_.outputs.size() + r)));
    slot_.push_back(in_slot(p_.reductions[r]) ? b.CreateAlloca(vty) : nullptr);
  }
}

void LaneVectorSums::segment_start(llvm::IRBuilder<>& b, Value* c) {
  c_ = c;
  auto* vty = llvm::FixedVectorType::get(b.getFloatTy(), static_cast<unsigned>(v_));
  for (Value* slot : slot_)
    if (slot) b.CreateStore(llvm::Constant::getNullValue(vty), slot);
}

void LaneVectorSums::accumulate(llvm::IRBuilder<>& b, const std::vector<Value*>& vals, Value* mask, Value* t) {
  llvm::Type* f32 = b.getFloatTy();
  auto* vty = llvm::FixedVectorType::get(f32, static_cast<unsigned>(v_));
  for (size_t r = 0; r < p_.reductions.size(); ++r) {
    const EwReduction& red = p_.reductions[r];
    Value* y = vals[static_cast<size_t>(red.value)];
    if (mask) y = b.CreateSelect(mask, y, llvm::Constant::getNullValue(vty));  // elements outside the range add 0
    // A row longer than the vector: the vector at t adds to elements
    // t % lane ... of the segment's row, in place.
    Value* at = slot_[r] ? slot_[r]
                         : b.CreateGEP(f32, acc_[r],
                                       b.CreateAdd(b.CreateMul(c_, b.getInt64(red.how.lane)),
                                                   b.CreateSRem(t, b.getInt64(red.how.lane))));
    b.CreateAlignedStore(b.CreateFAdd(b.CreateAlignedLoad(vty, at, llvm::Align(4)), y), at, llvm::Align(4));
  }
}

void LaneVectorSums::segment_end(llvm::IRBuilder<>& b) {
  llvm::Type* f32 = b.getFloatTy();
  auto* vty = llvm::FixedVectorType::get(f32, static_cast<unsigned>(v_));
  for (size_t r = 0; r < p_.reductions.size(); ++r) {
    if (!slot_[r]) continue;
    const EwIndexing& how = p_.reductions[r].how;
    Value* sum = b.CreateAlignedLoad(vty, slot_[r], llvm::Align(4));
    if (how.scalar()) {
      // The order of the vector's additions is free, as a register's is
      // in the plain loops.
      llvm::FastMathFlags fmf;
      fmf.setAllowReassoc();
      auto* total = llvm::cast<llvm::Instruction>(b.CreateFAddReduce(llvm::ConstantFP::get(f32, 0.0), sum));
      total->setFastMathFlags(fmf);
      b.CreateStore(b.CreateFAdd(b.CreateLoad(f32, acc_[r]), total), acc_[r]);
      continue;
    }
    // The vector holds v / lane copies of the row: add them up, then to
    // acc's row c.
    const int64_t lane = how.lane;
    Value* row = nullptr;
    for (int64_t k = 0; k < v_ / lane; ++k) {
      std::vector<int> part;
      for (int64_t j = 0; j < lane; ++j) part.push_back(static_cast<int>(k * lane + j));
      Value* x = v_ == lane ? sum : b.CreateShuffleVector(sum, part);
      row = row ? b.CreateFAdd(row, x) : x;
    }
    auto* row_type = llvm::FixedVectorType::get(f32, static_cast<unsigned>(lane));
    Value* at = b.CreateGEP(f32, acc_[r], b.CreateMul(c_, b.getInt64(lane)));
    b.CreateAlignedStore(b.CreateFAdd(b.CreateAlignedLoad(row_type, at, llvm::Align(4)), row), at, llvm::Align(4));
  }
}

// ------------------------------------------------------------- running

void ElementwiseJit::run(EwFunction fn, const EwProgram& p, const float* const* in, float* const* out, int64_t n) {
  if (p.reductions.empty()) return run(fn, in, out, n);
  // Each chunk of the elements (one per thread, split as parallel_for
  // splits) adds into zeroed arrays of its own, 64 bytes apart so that
  // threads do not share a cache line; the totals are summed in float64.
  constexpr int64_t kPad = 16;
  const size_t outputs = p.outputs.size();
  std::vector<int64_t> offset;
  int64_t per_chunk = 0;
  for (const EwReduction& r : p.reductions) {
    offset.push_back(per_chunk);
    per_chunk += (r.how.elements() + kPad - 1) / kPad * kPad;
  }
  const int64_t chunks = kernels::parallel_chunks(n, kernels::kParallelGrain);
  std::vector<float> partial(static_cast<size_t>(chunks * per_chunk), 0.0f);
  auto run_chunk = [&](int64_t c) {
    std::vector<float*> arrays(out, out + outputs);
    for (int64_t o : offset) arrays.push_back(partial.data() + c * per_chunk + o);
    int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
    if (b < e) fn(in, arrays.data(), b, e);
  };
  if (chunks == 1)
    run_chunk(0);
  else
    kernels::parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) run_chunk(c);
    });
  for (size_t r = 0; r < p.reductions.size(); ++r)
    for (int64_t k = 0; k < p.reductions[r].how.elements(); ++k) {
      double total = 0;
      for (int64_t c = 0; c < chunks; ++c) total += partial[static_cast<size_t>(c * per_chunk + offset[r] + k)];
      out[outputs + r][k] = static_cast<float>(total);
    }
}

}  // namespace msl::jit::codegen
