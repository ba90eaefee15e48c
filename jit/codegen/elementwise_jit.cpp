// Code generation for fused elementwise programs (elementwise_jit.h): the
// loop's LLVM IR, its optimization and compilation, the in-memory and disk
// caches, the threaded run. The programs themselves (validation, canonical
// text) are elementwise_program.cpp.
#include "jit/codegen/elementwise_jit.h"

#include <fmt/format.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>

#include "jit/codegen/elementwise_reduce.h"
#include "jit/codegen/object_cache.h"
#include "kernels/parallel.h"

namespace msl::jit::codegen {

// ------------------------------------------------------------- codegen

namespace {

using llvm::IRBuilder;
using llvm::Value;

// exp(x): x = n ln2 + r with n = rint(x log2 e), r by Cody-Waite's split
// ln2, e^r by Cephes expf's polynomial, 2^n built in the exponent bits.
// x is a float or a vector of floats (lane loops, gen_lane_vectors).
Value* gen_exp(IRBuilder<>& b, Value* x) {
  llvm::Type* f = x->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(f, v); };
  Value* nan = b.CreateFCmpUNO(x, x);
  Value* xc = b.CreateBinaryIntrinsic(llvm::Intrinsic::maxnum, x, c(-87.3365447505531));
  xc = b.CreateBinaryIntrinsic(llvm::Intrinsic::minnum, xc, c(88.7228391116729));
  Value* n = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(xc, c(1.44269504088896341)));
  Value* r = b.CreateFSub(xc, b.CreateFMul(n, c(0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(n, c(-2.12194440e-4)));
  Value* p = c(1.9875691500e-4);
  for (double k : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1})
    p = b.CreateFAdd(b.CreateFMul(p, r), c(k));
  p = b.CreateFAdd(b.CreateFAdd(b.CreateFMul(b.CreateFMul(p, r), r), r), c(1.0));
  llvm::Type* i32 = f->getWithNewType(b.getInt32Ty());
  Value* ni = b.CreateFPToSI(n, i32);
  Value* bits = b.CreateShl(b.CreateAdd(ni, llvm::ConstantInt::get(i32, 127)), 23);
  Value* e = b.CreateFMul(p, b.CreateBitCast(bits, f));
  return b.CreateSelect(nan, x, e);
}

// Value v of the program at one element (f: float) or at a vector of
// elements (f: a vector of floats), given the values before it and the
// inputs there.
Value* gen_value(IRBuilder<>& b, llvm::Type* f, const EwValue& v, const std::vector<Value*>& vals,
                 const std::vector<Value*>& ins) {
  auto c = [&](double x) { return llvm::ConstantFP::get(f, x); };
  Value* a = v.a >= 0 ? vals[static_cast<size_t>(v.a)] : nullptr;
  Value* y = v.b >= 0 ? vals[static_cast<size_t>(v.b)] : nullptr;
  switch (v.op) {
    case EwOp::Input: return ins[static_cast<size_t>(v.input)];
    case EwOp::Const: return c(v.constant);
    case EwOp::Add: return b.CreateFAdd(a, y);
    case EwOp::Sub: return b.CreateFSub(a, y);
    case EwOp::Mul: return b.CreateFMul(a, y);
    case EwOp::Div: return b.CreateFDiv(a, y);
    case EwOp::Neg: return b.CreateFNeg(a);
    // relu(NaN) is NaN (as the kernel library's): x > 0 ? x : (x is NaN ? x : 0).
    case EwOp::Relu: return b.CreateSelect(b.CreateFCmpUGT(a, c(0.0)), a, c(0.0));
    // relu_grad(dy, y): dy where y > 0 (a NaN y selects 0, as the kernel).
    case EwOp::ReluGrad: return b.CreateSelect(b.CreateFCmpOGT(y, c(0.0)), a, c(0.0));
    // maximum/minimum propagate NaN (NumPy), which maximum/minimum intrinsics do.
    case EwOp::Max: return b.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, a, y);
    case EwOp::Min: return b.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, a, y);
    case EwOp::Exp: return gen_exp(b, a);
    case EwOp::Sigmoid: return b.CreateFDiv(c(1.0), b.CreateFAdd(c(1.0), gen_exp(b, b.CreateFNeg(a))));
    case EwOp::Tanh: {
      // tanh(x) = 2 / (1 + e^(-2x)) - 1; e^(-2x) saturates to inf / 0 at the ends, giving -1 / 1.
      Value* e = gen_exp(b, b.CreateFMul(a, c(-2.0)));
      return b.CreateFSub(b.CreateFDiv(c(2.0), b.CreateFAdd(c(1.0), e)), c(1.0));
    }
  }
  return nullptr;
}

// The loop over positions [lo, hi) of one segment of a lane pattern, from
// b's insert point (the end of `outer`) to `latch`. LLVM's vectorizer would
// see a lane input's row[i % lane] as a gather; a row is `lane` contiguous
// values, so the loop is written in vectors of v elements, v a multiple of
// lane (whole_rows: the vector of a lane input is its row repeated, built
// once per segment) or a divisor of it (rows longer than a vector: the
// vector at t is row[t % lane ...], inside the row). Positions t run from
// lo rounded down to a multiple of v (of lane, where a segment starts):
// vectors wholly inside [lo, hi) are loaded and stored plainly, the first
// and last of a clipped range through masks. `ins` holds what every
// position reads alike (scalars splat, whole rows); rows[k] is full input k
// rebased at the segment, lane_rows[k] the row of lane input k when not
// whole_rows; c the segment's broadcast index (its row of the sums).
struct LaneVectors {
  int64_t v = 16;
  bool whole_rows = true;
  std::vector<Value*> ins, rows, lane_rows, out_rows;
  Value* c = nullptr;
};

void gen_lane_vectors(IRBuilder<>& b, const EwProgram& p, const LaneVectors& lv, LaneVectorSums& sums, Value* lo,
                      Value* hi, llvm::BasicBlock* latch) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::Type* f32 = b.getFloatTy();
  auto* vty = llvm::FixedVectorType::get(f32, static_cast<unsigned>(lv.v));
  const llvm::Align align(4);
  auto block = [&](const char* label) { return llvm::BasicBlock::Create(ctx, label, fn, latch); };
  llvm::BasicBlock *head = block("lanes"), *whole = block("lanes_whole"), *masked = block("lanes_masked"),
                   *next = block("lanes_next"), *segment_end = block("lanes_end");
  llvm::BasicBlock* from = b.GetInsertBlock();
  sums.segment_start(b, lv.c);
  Value* v = b.getInt64(lv.v);
  Value* t0 = b.CreateSub(lo, b.CreateSRem(lo, v));
  b.CreateBr(head);
  b.SetInsertPoint(head);
  llvm::PHINode* t = b.CreatePHI(b.getInt64Ty(), 2);
  t->addIncoming(t0, from);
  Value* t_end = b.CreateAdd(t, v, "", true, true);
  b.CreateCondBr(b.CreateAnd(b.CreateICmpSGE(t, lo), b.CreateICmpSLE(t_end, hi)), whole, masked);
  auto body = [&](Value* mask) {
    std::vector<Value*> in = lv.ins;
    for (size_t k = 0; k < in.size(); ++k) {
      if (lv.rows[k]) {
        Value* at = b.CreateGEP(f32, lv.rows[k], t);
        in[k] = mask ? static_cast<Value*>(b.CreateMaskedLoad(vty, at, align, mask, llvm::Constant::getNullValue(vty)))
                     : b.CreateAlignedLoad(vty, at, align);
      } else if (lv.lane_rows[k]) {
        Value* at = b.CreateGEP(f32, lv.lane_rows[k], b.CreateSRem(t, b.getInt64(p.broadcast().lane)));
        in[k] = b.CreateAlignedLoad(vty, at, align);
      }
    }
    std::vector<Value*> vals;
    for (const EwValue& ev : p.values) vals.push_back(gen_value(b, vty, ev, vals, in));
    sums.accumulate(b, vals, mask, t);
    for (size_t k = 0; k < lv.out_rows.size(); ++k) {
      Value* y = vals[static_cast<size_t>(p.outputs[k])];
      Value* at = b.CreateGEP(f32, lv.out_rows[k], t);
      if (mask)
        b.CreateMaskedStore(y, at, align, mask);
      else
        b.CreateAlignedStore(y, at, align);
    }
    b.CreateBr(next);
  };
  b.SetInsertPoint(whole);
  body(nullptr);
  // The vector's element k is position t + k: in the range when k is in
  // [lo - t, hi - t), both clamped to [0, v] (so that i32 holds them).
  b.SetInsertPoint(masked);
  auto clamp = [&](Value* x) {
    x = b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateSub(x, t), b.getInt64(0));
    x = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, x, v);
    return b.CreateVectorSplat(static_cast<unsigned>(lv.v), b.CreateTrunc(x, b.getInt32Ty()));
  };
  std::vector<llvm::Constant*> iota;
  for (int64_t k = 0; k < lv.v; ++k) iota.push_back(b.getInt32(static_cast<uint32_t>(k)));
  Value* k = llvm::ConstantVector::get(iota);
  body(b.CreateAnd(b.CreateICmpSGE(k, clamp(lo)), b.CreateICmpSLT(k, clamp(hi))));
  b.SetInsertPoint(next);
  t->addIncoming(t_end, next);
  b.CreateCondBr(b.CreateICmpSLT(t_end, hi), head, segment_end);
  b.SetInsertPoint(segment_end);
  sums.segment_end(b);
  b.CreateBr(latch);
}

// void NAME(ptr in, ptr out, i64 begin, i64 end): the loop over [begin,
// end); in and out are arrays of array pointers.
//
// Blocks: entry (the array pointers, tiles; nothing to do when begin >=
// end), pre (scalar inputs, the first segment), fill (the tiles, when
// tiled), outer (one segment s: the full arrays
// rebased at s, a per-segment broadcast's values, the clipped range [lo,
// hi) inside it), loop (the elements s + k, k in [lo, hi): the loop LLVM
// vectorizes; a lane pattern's vector loop instead, gen_lane_vectors),
// latch (the next segment). Without a broadcast pattern the
// only segment is [begin, end). The clipping makes lo < hi in every
// segment: the first starts at begin's segment, later ones below end.
// The sums' code (ReductionCodegen) goes into these blocks, plus a fold
// block before done when they accumulate in tiles.
void build_function(llvm::Module& m, const EwProgram& p, const std::string& name) {
  llvm::LLVMContext& ctx = m.getContext();
  IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* i64 = b.getInt64Ty();
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, i64, i64}, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m);
  auto block = [&](const char* label) { return llvm::BasicBlock::Create(ctx, label, fn); };
  llvm::BasicBlock *entry = block("entry"), *pre = block("pre"), *outer = block("outer"), *latch = block("latch"),
                   *done = block("done");
  b.SetInsertPoint(entry);
  llvm::Argument *in = fn->getArg(0), *out = fn->getArg(1), *begin = fn->getArg(2), *end = fn->getArg(3);
  std::vector<Value*> bases, outs;
  for (int k = 0; k < p.num_inputs; ++k)
    bases.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, in, static_cast<uint64_t>(k))));
  for (size_t k = 0; k < p.outputs.size(); ++k) outs.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, out, k)));
  b.CreateCondBr(b.CreateICmpSLT(begin, end), pre, done);

  const EwIndexing shared = p.broadcast();
  const bool segmented = !shared.full();
  const bool lanes = shared.lane > 1;
  int64_t patterned = 0;  // inputs and sums with the pattern (a tile each when tiled)
  for (int k = 0; k < p.num_inputs; ++k)
    if (EwIndexing how = p.input_indexing(k); !how.full() && !how.scalar()) ++patterned;
  for (const EwReduction& r : p.reductions)
    if (!r.how.scalar()) ++patterned;
  // Short segments (a bias of 10 over rows of 10, 7x7 channel maps) would
  // cost more in set-up than in elements: then the pattern's period is
  // copied into a tile on the stack, repeated to about kTileTarget
  // elements, and read as a row of that length (the segments start at
  // multiples of the period, so position k of a segment reads tile[k]).
  // A lane pattern's segments are walked in vectors (gen_lane_vectors) of
  // v = lcm(lane, 16) elements (16 for lanes of 16 and 8, 48 for 3) when
  // that is at most 64, else of gcd(lane, 16); they beat tiles unless a
  // segment is shorter than two vectors (measured on AVX-512 with 1 and 2
  // threads: segments of 2 to 32 vectors of 16 run in 0.55 to 0.85 of a
  // tile's time, one vector as fast; segments of one vector of 8, 1.3 to
  // 1.5 times slower). Its periods are whole channel-blocked images
  // (C * H * W: 16384 at 64 channels of 16x16), so its tiles may be
  // longer: up to kMaxLaneTileBytes in all on the stack of the thread
  // (OpenMP's workers get the default thread stack, 2 MiB and more; the
  // main thread 8 MiB); beyond that, vectors anyway.
  constexpr int64_t kShortSegment = 128, kMaxTile = 4096, kTileTarget = 1024;
  constexpr int64_t kMaxLaneTile = 16384, kMaxLaneTileBytes = 256 << 10;
  LaneVectors lv;
  if (lanes) {
    const int64_t whole = shared.lane <= 64 ? std::lcm(shared.lane, int64_t{16}) : 0;
    lv.whole_rows = whole > 0 && whole <= 64;
    lv.v = lv.whole_rows ? whole : std::gcd(shared.lane, int64_t{16});
  }
  const int64_t period = segmented ? shared.inner * shared.count : 0;
  const int64_t tile_length = segmented ? period * std::max<int64_t>(1, kTileTarget / period) : 0;
  const bool tiled =
      segmented &&
      (lanes ? shared.inner < 2 * lv.v && period <= kMaxLaneTile && tile_length * 4 * patterned <= kMaxLaneTileBytes
             : (shared.inner > 1 ? shared.inner : shared.count) < kShortSegment && period <= kMaxTile);
  const bool per_segment = segmented && !tiled && shared.inner > 1;  // one broadcast value per segment
  const bool lane_vectors = per_segment && lanes;                    // one row per segment, gen_lane_vectors
  // A segment: a tile's length; `inner` elements sharing a broadcast index;
  // or (inner == 1) a row of `count` elements, the broadcast index being
  // the position in it.
  const int64_t length = tiled ? tile_length : per_segment ? shared.inner : shared.count;
  std::vector<Value*> tiles(static_cast<size_t>(p.num_inputs), nullptr);
  b.SetInsertPoint(entry->getTerminator());  // static allocas, in the entry block
  if (tiled)
    for (int k = 0; k < p.num_inputs; ++k)
      if (EwIndexing how = p.input_indexing(k); !how.full() && !how.scalar())
        tiles[static_cast<size_t>(k)] = b.CreateAlloca(f32, b.getInt64(length));
  ReductionCodegen sums(p, EwSegments{shared, tiled, per_segment, length});
  sums.entry(b, out);
  LaneVectorSums lane_sums(p, lv.v, lv.whole_rows);  // instead of `sums` in lane vector loops
  if (lane_vectors) lane_sums.entry(b, out);
  std::vector<Value*> ins(static_cast<size_t>(p.num_inputs), nullptr);
  b.SetInsertPoint(pre);
  sums.before_loop(b);
  for (int k = 0; k < p.num_inputs; ++k)
    if (p.input_indexing(k).scalar()) {
      Value* x = b.CreateLoad(f32, bases[static_cast<size_t>(k)]);
      ins[static_cast<size_t>(k)] = lane_vectors ? b.CreateVectorSplat(static_cast<unsigned>(lv.v), x) : x;
    }
  Value *s0 = begin, *c0 = nullptr;
  if (segmented) {
    Value* t0 = b.CreateSDiv(begin, b.getInt64(length));
    s0 = b.CreateMul(t0, b.getInt64(length));
    if (per_segment) c0 = b.CreateSRem(t0, b.getInt64(shared.count));
  }
  llvm::BasicBlock* before_outer = pre;
  if (tiled) {
    // tile[j] = input[(j / inner) % count] for the j this range reads:
    // [0, min(length, end - s0)), at least one. A lane pattern's tile is
    // filled in whole rows of `lane` (the length is a multiple of lane),
    // row r being input row (r / (inner / lane)) % count.
    llvm::BasicBlock* fill = llvm::BasicBlock::Create(ctx, "fill", fn, outer);
    Value* filled = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateSub(end, s0), b.getInt64(length));
    const int64_t step = shared.lane;
    if (lanes)
      filled = b.CreateMul(b.CreateSDiv(b.CreateAdd(filled, b.getInt64(step - 1)), b.getInt64(step)), b.getInt64(step));
    b.CreateBr(fill);
    b.SetInsertPoint(fill);
    llvm::PHINode* j = b.CreatePHI(i64, 2);
    j->addIncoming(b.getInt64(0), pre);
    Value* at = b.CreateSRem(b.CreateSDiv(j, b.getInt64(shared.inner)), b.getInt64(shared.count));
    if (lanes) at = b.CreateMul(at, b.getInt64(step));
    for (size_t k = 0; k < tiles.size(); ++k) {
      if (!tiles[k]) continue;
      Value *src = b.CreateGEP(f32, bases[k], at), *dst = b.CreateGEP(f32, tiles[k], j);
      if (lanes)
        b.CreateMemCpy(dst, llvm::Align(4), src, llvm::Align(4), static_cast<uint64_t>(step) * 4);
      else
        b.CreateStore(b.CreateLoad(f32, src), dst);
    }
    Value* j_next = b.CreateAdd(j, b.getInt64(step), "", true, true);
    j->addIncoming(j_next, fill);
    b.CreateCondBr(b.CreateICmpSLT(j_next, filled), fill, outer);
    before_outer = fill;
  } else {
    b.CreateBr(outer);
  }

  b.SetInsertPoint(outer);
  Value* s = s0;
  llvm::PHINode *s_phi = nullptr, *c_phi = nullptr;
  if (segmented) {
    s = s_phi = b.CreatePHI(i64, 2);
    s_phi->addIncoming(s0, before_outer);
    if (per_segment) {
      c_phi = b.CreatePHI(i64, 2);
      c_phi->addIncoming(c0, before_outer);
    }
  }
  std::vector<Value*> rows(bases.size(), nullptr), lane_rows(bases.size(), nullptr), out_rows;
  for (int k = 0; k < p.num_inputs; ++k) {
    size_t ku = static_cast<size_t>(k);
    EwIndexing how = p.input_indexing(k);
    if (how.full()) {
      rows[ku] = b.CreateGEP(f32, bases[ku], s);
    } else if (!how.scalar() && lane_vectors) {
      Value* row = b.CreateGEP(f32, bases[ku], b.CreateMul(c_phi, b.getInt64(shared.lane)));
      if (!lv.whole_rows) {
        lane_rows[ku] = row;
        continue;
      }
      auto* row_type = llvm::FixedVectorType::get(f32, static_cast<unsigned>(shared.lane));
      Value* x = b.CreateAlignedLoad(row_type, row, llvm::Align(4));
      if (lv.v > shared.lane) {  // the row repeated: element j is row[j % lane]
        std::vector<int> repeat;
        for (int64_t j = 0; j < lv.v; ++j) repeat.push_back(static_cast<int>(j % shared.lane));
        x = b.CreateShuffleVector(x, repeat);
      }
      ins[ku] = x;
    } else if (!how.scalar() && per_segment) {
      ins[ku] = b.CreateLoad(f32, b.CreateGEP(f32, bases[ku], c_phi));
    }
  }
  for (Value* o : outs) out_rows.push_back(b.CreateGEP(f32, o, s));
  Value* rest = b.CreateSub(end, s);
  Value* lo =
      segmented ? b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateSub(begin, s), b.getInt64(0)) : b.getInt64(0);
  Value* hi = segmented ? b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, rest, b.getInt64(length)) : rest;

  if (lane_vectors) {
    lv.ins = ins;
    lv.rows = rows;
    lv.lane_rows = lane_rows;
    lv.out_rows = out_rows;
    lv.c = c_phi;
    gen_lane_vectors(b, p, lv, lane_sums, lo, hi, latch);
  } else {
    llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "loop", fn, latch);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode* i = b.CreatePHI(i64, 2);
    i->addIncoming(lo, outer);
    sums.loop_phis(b, outer);
    // Iterations are independent even when an output array is an input
    // array (a result written over a dying operand reads and writes the same
    // element in one iteration): the accesses form one group the loop
    // declares parallel, so the vectorizer needs no overlap checks (and
    // takes no scalar fallback when the arrays are the same).
    llvm::MDNode* group = llvm::MDNode::getDistinct(ctx, {});
    auto grouped = [&](llvm::Instruction* inst) {
      inst->setMetadata(llvm::LLVMContext::MD_access_group, group);
      return inst;
    };
    for (int k = 0; k < p.num_inputs; ++k) {
      size_t ku = static_cast<size_t>(k);
      EwIndexing how = p.input_indexing(k);
      if (how.full())
        ins[ku] = grouped(b.CreateLoad(f32, b.CreateGEP(f32, rows[ku], i)));
      else if (!how.scalar() && !per_segment)
        ins[ku] = grouped(b.CreateLoad(f32, b.CreateGEP(f32, tiled ? tiles[ku] : bases[ku], i)));
    }
    std::vector<Value*> vals;
    for (const EwValue& v : p.values) vals.push_back(gen_value(b, f32, v, vals, ins));
    for (size_t k = 0; k < p.outputs.size(); ++k)
      grouped(b.CreateStore(vals[static_cast<size_t>(p.outputs[k])], b.CreateGEP(f32, out_rows[k], i)));
    sums.accumulate(b, vals, i, grouped);
    Value* next = b.CreateAdd(i, b.getInt64(1), "", true, true);
    i->addIncoming(next, loop);
    llvm::Instruction* back = b.CreateCondBr(b.CreateICmpSLT(next, hi), loop, latch);
    llvm::MDNode* parallel = llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.parallel_accesses"), group});
    llvm::TempMDTuple self = llvm::MDNode::getTemporary(ctx, {});
    llvm::MDNode* loop_id = llvm::MDNode::getDistinct(ctx, {self.get(), parallel});
    loop_id->replaceOperandWith(0, loop_id);
    back->setMetadata(llvm::LLVMContext::MD_loop, loop_id);
  }

  b.SetInsertPoint(latch);
  sums.after_segment(b, c_phi);
  llvm::BasicBlock* exit = sums.exit_block(fn, done);
  if (!segmented) {
    b.CreateBr(exit);
  } else {
    Value* s_next = b.CreateAdd(s, b.getInt64(length), "", true, true);
    s_phi->addIncoming(s_next, latch);
    if (per_segment) {
      Value* c1 = b.CreateAdd(c_phi, b.getInt64(1), "", true, true);
      c_phi->addIncoming(b.CreateSelect(b.CreateICmpEQ(c1, b.getInt64(shared.count)), b.getInt64(0), c1), latch);
    }
    b.CreateCondBr(b.CreateICmpSLT(s_next, end), outer, exit);
  }
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

std::string llvm_error(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

}  // namespace

// Bump when the object code compiled for the same IR changes (the
// optimization pipeline, the target machine's options): the disk cache's key
// includes it. Changes to the generated IR need no bump: the key includes
// the unoptimized IR itself.
constexpr int kObjectCodeVersion = 1;

namespace {

// Process-wide, so that stats() can be read without starting LLVM.
std::atomic<int64_t> g_memory_hits{0}, g_disk_hits{0}, g_compiled{0};

}  // namespace

struct ElementwiseJit::Impl {
  using ContextAndModule = std::pair<std::unique_ptr<llvm::LLVMContext>, std::unique_ptr<llvm::Module>>;

  std::mutex mu;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::map<std::string, EwFunction> cache;
  bool disk_cache = true;

  // A verified, unoptimized module holding `p`'s function `name`.
  ContextAndModule build(const EwProgram& p, const std::string& name) {
    auto ctx = std::make_unique<llvm::LLVMContext>();
    auto m = std::make_unique<llvm::Module>("msl_fused", *ctx);
    m->setDataLayout(jit->getDataLayout());
    m->setTargetTriple(tm->getTargetTriple().str());
    build_function(*m, p, name);
    llvm::Function* fn = m->getFunction(name);
    fn->addFnAttr("target-cpu", tm->getTargetCPU());
    fn->addFnAttr("target-features", tm->getTargetFeatureString());
    std::string err;
    llvm::raw_string_ostream es(err);
    if (llvm::verifyModule(*m, &es)) throw std::runtime_error("elementwise codegen made invalid IR: " + es.str());
    return {std::move(ctx), std::move(m)};
  }

  void optimize(llvm::Module& m) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(m, mam);
  }

  // A module holding `p`'s function, optimized at O3 for the host.
  ContextAndModule module_for(const EwProgram& p, const std::string& name) {
    ContextAndModule cm = build(p, name);
    optimize(*cm.second);
    return cm;
  }

  // Everything the machine code of unoptimized module `m` depends on: the
  // disk cache's key (the program is there for whoever reads a cache file).
  std::string object_key(const EwProgram& p, const llvm::Module& m) const {
    std::string ir;
    llvm::raw_string_ostream os(ir);
    m.print(os, nullptr);
    return fmt::format(
        "msl fused elementwise loop, object code version {}\nLLVM {}\ntriple {}\ncpu {}\nfeatures {}\nO3\n{}{}",
        kObjectCodeVersion, LLVM_VERSION_STRING, tm->getTargetTriple().str(), tm->getTargetCPU().str(),
        tm->getTargetFeatureString().str(), p.text(), os.str());
  }

  // Links a relocatable object into the JIT and returns its function `name`.
  EwFunction add_object(std::string_view object, const std::string& name) {
    auto buffer = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), name);
    if (llvm::Error e = jit->addObjectFile(std::move(buffer)))
      throw std::runtime_error("LLVM: cannot add the object: " + llvm_error(std::move(e)));
    auto sym = jit->lookup(name);
    if (!sym) throw std::runtime_error("LLVM: cannot find " + name + ": " + llvm_error(sym.takeError()));
    return sym->toPtr<EwFunction>();
  }

  // The program's loop: from the disk cache when it has the object, else
  // optimized and compiled here and stored there.
  EwFunction load_or_compile(const EwProgram& p) {
    // The key is computed from the IR with a fixed function name; the name
    // linked is then made from the key: the same in every run (so cached
    // objects match it) and different for every program in this process.
    auto [ctx, m] = build(p, "msl_fused");
    std::string key = object_key(p, *m);
    std::string name = "msl_fused_" + ObjectCache::hash(key);
    ObjectCache disk = disk_cache ? ObjectCache::from_environment() : ObjectCache();
    if (std::optional<std::string> object = disk.load(key)) {
      EwFunction fn = add_object(*object, name);
      ++g_disk_hits;
      return fn;
    }
    m->getFunction("msl_fused")->setName(name);
    optimize(*m);
    llvm::orc::SimpleCompiler compiler(*tm);
    auto object = compiler(*m);
    if (!object) throw std::runtime_error("LLVM: cannot compile the loop: " + llvm_error(object.takeError()));
    std::string_view bytes((*object)->getBufferStart(), (*object)->getBufferSize());
    disk.store(key, bytes);  // best-effort: an unwritable cache only costs the next run a compile
    EwFunction fn = add_object(bytes, name);
    ++g_compiled;
    return fn;
  }
};

ElementwiseJit::ElementwiseJit() : impl_(std::make_unique<Impl>()) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw std::runtime_error("LLVM: cannot describe the host CPU: " + llvm_error(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = jtmb->createTargetMachine();
  if (!tm) throw std::runtime_error("LLVM: no target machine for the host: " + llvm_error(tm.takeError()));
  impl_->tm = std::move(*tm);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) throw std::runtime_error("LLVM: cannot create the ORC JIT: " + llvm_error(jit.takeError()));
  impl_->jit = std::move(*jit);
}

ElementwiseJit::~ElementwiseJit() = default;

ElementwiseJit& ElementwiseJit::instance() {
  static ElementwiseJit j;
  return j;
}

std::string ElementwiseJit::target() const {
  return impl_->tm->getTargetCPU().str() + " " + impl_->tm->getTargetFeatureString().str();
}

EwFunction ElementwiseJit::compile(const EwProgram& p) {
  validate_program(p);
  std::string key = p.text();
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->cache.find(key);
  if (it != impl_->cache.end()) {
    ++g_memory_hits;
    return it->second;
  }
  EwFunction fn = impl_->load_or_compile(p);
  impl_->cache.emplace(key, fn);
  return fn;
}

JitStats ElementwiseJit::stats() { return {g_memory_hits.load(), g_disk_hits.load(), g_compiled.load()}; }

void ElementwiseJit::set_disk_cache(bool on) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->disk_cache = on;
}

void ElementwiseJit::run(const EwProgram& p, const float* const* in, float* const* out, int64_t n) {
  run(compile(p), p, in, out, n);
}

void ElementwiseJit::run(EwFunction fn, const float* const* in, float* const* out, int64_t n) {
  kernels::parallel_for(n, kernels::kParallelGrain, [&](int64_t b, int64_t e) { fn(in, out, b, e); });
}

std::string ElementwiseJit::llvm_ir(const EwProgram& p) {
  validate_program(p);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto [ctx, m] = impl_->module_for(p, "msl_fused");
  std::string s;
  llvm::raw_string_ostream os(s);
  m->print(os, nullptr);
  return os.str();
}

}  // namespace msl::jit::codegen
