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
#include <stdexcept>

#include "jit/codegen/elementwise_reduce.h"
#include "jit/codegen/object_cache.h"
#include "kernels/parallel.h"

namespace msl::jit::codegen {

// ------------------------------------------------------------- programs

int EwProgram::input(int k, EwIndexing how) {
  EwValue v;
  v.op = EwOp::Input;
  v.input = k;
  if (k >= num_inputs) num_inputs = k + 1;
  if (k >= 0 && (!how.full() || k < static_cast<int>(indexing.size()))) {
    if (k >= static_cast<int>(indexing.size())) indexing.resize(static_cast<size_t>(k) + 1);
    indexing[static_cast<size_t>(k)] = how;
  }
  values.push_back(v);
  return static_cast<int>(values.size()) - 1;
}

EwIndexing EwProgram::input_indexing(int k) const {
  return k >= 0 && k < static_cast<int>(indexing.size()) ? indexing[static_cast<size_t>(k)] : EwIndexing{};
}

EwIndexing EwProgram::broadcast() const {
  EwIndexing shared;
  auto join = [&](EwIndexing how, const char* what, size_t k) {
    if (how.full() || how.scalar()) return;
    if (!shared.full() && !(how == shared))
      throw std::invalid_argument(fmt::format(
          "elementwise program: {} {} is indexed as (i / {}) % {}, another input or sum as (i / {}) % {}; one "
          "pattern per program",
          what, k, how.inner, how.count, shared.inner, shared.count));
    shared = how;
  };
  for (int k = 0; k < num_inputs; ++k) join(input_indexing(k), "input", static_cast<size_t>(k));
  for (size_t r = 0; r < reductions.size(); ++r) join(reductions[r].how, "sum", r);
  return shared;
}

int EwProgram::constant(float c) {
  EwValue v;
  v.op = EwOp::Const;
  v.constant = c;
  values.push_back(v);
  return static_cast<int>(values.size()) - 1;
}

int EwProgram::unary(EwOp op, int a) {
  EwValue v;
  v.op = op;
  v.a = a;
  values.push_back(v);
  return static_cast<int>(values.size()) - 1;
}

int EwProgram::binary(EwOp op, int a, int b) {
  EwValue v;
  v.op = op;
  v.a = a;
  v.b = b;
  values.push_back(v);
  return static_cast<int>(values.size()) - 1;
}

namespace {

const char* op_name(EwOp op) {
  switch (op) {
    case EwOp::Input: return "input";
    case EwOp::Const: return "const";
    case EwOp::Add: return "add";
    case EwOp::Sub: return "sub";
    case EwOp::Mul: return "mul";
    case EwOp::Div: return "div";
    case EwOp::Neg: return "neg";
    case EwOp::Relu: return "relu";
    case EwOp::ReluGrad: return "relu_grad";
    case EwOp::Max: return "maximum";
    case EwOp::Min: return "minimum";
    case EwOp::Exp: return "exp";
    case EwOp::Sigmoid: return "sigmoid";
    case EwOp::Tanh: return "tanh";
  }
  return "?";
}

bool is_binary(EwOp op) {
  return op == EwOp::Add || op == EwOp::Sub || op == EwOp::Mul || op == EwOp::Div || op == EwOp::Max ||
         op == EwOp::Min || op == EwOp::ReluGrad;
}

}  // namespace

void validate_program(const EwProgram& p) {
  if (p.values.empty() || (p.outputs.empty() && p.reductions.empty()))
    throw std::invalid_argument("elementwise program: no output value");
  for (int o : p.outputs)
    if (o < 0 || o >= static_cast<int>(p.values.size()))
      throw std::invalid_argument(fmt::format("elementwise program: output %{} is not a value", o));
  for (const EwReduction& r : p.reductions)
    if (r.value < 0 || r.value >= static_cast<int>(p.values.size()) || r.how.count < 1 || r.how.inner < 1)
      throw std::invalid_argument(
          fmt::format("elementwise program: sum of %{} at (i / {}) % {}", r.value, r.how.inner, r.how.count));
  if (p.indexing.size() > static_cast<size_t>(p.num_inputs))
    throw std::invalid_argument(
        fmt::format("elementwise program: indexing for {} inputs of {}", p.indexing.size(), p.num_inputs));
  for (size_t k = 0; k < p.indexing.size(); ++k)
    if (const EwIndexing& how = p.indexing[k]; how.count < 0 || (!how.full() && how.inner < 1))
      throw std::invalid_argument(fmt::format("elementwise program: input {} has indexing (i / {}) % {}", k,
                                              how.inner, how.count));
  p.broadcast();
  for (size_t i = 0; i < p.values.size(); ++i) {
    const EwValue& v = p.values[i];
    int n = static_cast<int>(i);
    if (v.op == EwOp::Input && (v.input < 0 || v.input >= p.num_inputs))
      throw std::invalid_argument(fmt::format("elementwise program: value {} reads input {} of {}", i, v.input,
                                              p.num_inputs));
    if (v.op == EwOp::Input || v.op == EwOp::Const) continue;
    if (v.a < 0 || v.a >= n || (is_binary(v.op) && (v.b < 0 || v.b >= n)))
      throw std::invalid_argument(fmt::format("elementwise program: value {} ({}) uses a value not defined before it",
                                              i, op_name(v.op)));
  }
}

std::string EwProgram::text() const {
  std::string s = fmt::format("inputs {}\n", num_inputs);
  for (int k = 0; k < num_inputs; ++k)
    if (EwIndexing how = input_indexing(k); !how.full())
      s += fmt::format("input {} at (i / {}) % {}\n", k, how.inner, how.count);
  for (size_t i = 0; i < values.size(); ++i) {
    const EwValue& v = values[i];
    if (v.op == EwOp::Input)
      s += fmt::format("%{} = input {}\n", i, v.input);
    else if (v.op == EwOp::Const)
      s += fmt::format("%{} = const {:a}\n", i, v.constant);
    else if (is_binary(v.op))
      s += fmt::format("%{} = {} %{} %{}\n", i, op_name(v.op), v.a, v.b);
    else
      s += fmt::format("%{} = {} %{}\n", i, op_name(v.op), v.a);
  }
  s += "out";
  for (int o : outputs) s += fmt::format(" %{}", o);
  s += "\n";
  for (const EwReduction& r : reductions)
    s += fmt::format("sum %{} at (i / {}) % {}\n", r.value, r.how.inner, r.how.count);
  return s;
}

// ------------------------------------------------------------- codegen

namespace {

using llvm::IRBuilder;
using llvm::Value;

// exp(x): x = n ln2 + r with n = rint(x log2 e), r by Cody-Waite's split
// ln2, e^r by Cephes expf's polynomial, 2^n built in the exponent bits.
Value* gen_exp(IRBuilder<>& b, Value* x) {
  llvm::Type* f = b.getFloatTy();
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
  Value* ni = b.CreateFPToSI(n, b.getInt32Ty());
  Value* bits = b.CreateShl(b.CreateAdd(ni, b.getInt32(127)), 23);
  Value* e = b.CreateFMul(p, b.CreateBitCast(bits, f));
  return b.CreateSelect(nan, x, e);
}

Value* gen_value(IRBuilder<>& b, const EwValue& v, const std::vector<Value*>& vals, const std::vector<Value*>& ins) {
  llvm::Type* f = b.getFloatTy();
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

// void NAME(ptr in, ptr out, i64 begin, i64 end): the loop over [begin,
// end); in and out are arrays of array pointers.
//
// Blocks: entry (the array pointers, tiles; nothing to do when begin >=
// end), pre (scalar inputs, the first segment), fill (the tiles, when
// tiled), outer (one segment s: the full arrays
// rebased at s, a per-segment broadcast's values, the clipped range [lo,
// hi) inside it), loop (the elements s + k, k in [lo, hi): the loop LLVM
// vectorizes), latch (the next segment). Without a broadcast pattern the
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
  llvm::BasicBlock *entry = block("entry"), *pre = block("pre"), *outer = block("outer"), *loop = block("loop"),
                   *latch = block("latch"), *done = block("done");
  b.SetInsertPoint(entry);
  llvm::Argument *in = fn->getArg(0), *out = fn->getArg(1), *begin = fn->getArg(2), *end = fn->getArg(3);
  std::vector<Value*> bases, outs;
  for (int k = 0; k < p.num_inputs; ++k)
    bases.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, in, static_cast<uint64_t>(k))));
  for (size_t k = 0; k < p.outputs.size(); ++k)
    outs.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, out, k)));
  b.CreateCondBr(b.CreateICmpSLT(begin, end), pre, done);

  const EwIndexing shared = p.broadcast();
  const bool segmented = !shared.full();
  // Short segments (a bias of 10 over rows of 10, 7x7 channel maps) would
  // cost more in set-up than in elements: then the pattern's period is
  // copied into a tile on the stack, repeated to about kTileTarget
  // elements, and read as a row of that length (the segments start at
  // multiples of the period, so position k of a segment reads tile[k]).
  constexpr int64_t kShortSegment = 128, kMaxTile = 4096, kTileTarget = 1024;
  const int64_t period = shared.inner * shared.count;
  const bool tiled =
      segmented && (shared.inner > 1 ? shared.inner : shared.count) < kShortSegment && period <= kMaxTile;
  const bool per_segment = segmented && !tiled && shared.inner > 1;  // one broadcast value per segment
  // A segment: a tile's length; `inner` elements sharing a broadcast index;
  // or (inner == 1) a row of `count` elements, the broadcast index being
  // the position in it.
  const int64_t length = tiled         ? period * std::max<int64_t>(1, kTileTarget / period)
                         : per_segment ? shared.inner
                                       : shared.count;
  std::vector<Value*> tiles(static_cast<size_t>(p.num_inputs), nullptr);
  b.SetInsertPoint(entry->getTerminator());  // static allocas, in the entry block
  if (tiled)
    for (int k = 0; k < p.num_inputs; ++k)
      if (EwIndexing how = p.input_indexing(k); !how.full() && !how.scalar())
        tiles[static_cast<size_t>(k)] = b.CreateAlloca(f32, b.getInt64(length));
  ReductionCodegen sums(p, EwSegments{shared, tiled, per_segment, length});
  sums.entry(b, out);
  std::vector<Value*> ins(static_cast<size_t>(p.num_inputs), nullptr);
  b.SetInsertPoint(pre);
  sums.before_loop(b);
  for (int k = 0; k < p.num_inputs; ++k)
    if (p.input_indexing(k).scalar()) ins[static_cast<size_t>(k)] = b.CreateLoad(f32, bases[static_cast<size_t>(k)]);
  Value *s0 = begin, *c0 = nullptr;
  if (segmented) {
    Value* t0 = b.CreateSDiv(begin, b.getInt64(length));
    s0 = b.CreateMul(t0, b.getInt64(length));
    if (per_segment) c0 = b.CreateSRem(t0, b.getInt64(shared.count));
  }
  llvm::BasicBlock* before_outer = pre;
  if (tiled) {
    // tile[j] = input[(j / inner) % count] for the j this range reads:
    // [0, min(length, end - s0)), at least one.
    llvm::BasicBlock* fill = llvm::BasicBlock::Create(ctx, "fill", fn, outer);
    Value* filled = b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b.CreateSub(end, s0), b.getInt64(length));
    b.CreateBr(fill);
    b.SetInsertPoint(fill);
    llvm::PHINode* j = b.CreatePHI(i64, 2);
    j->addIncoming(b.getInt64(0), pre);
    Value* at = b.CreateSRem(b.CreateSDiv(j, b.getInt64(shared.inner)), b.getInt64(shared.count));
    for (size_t k = 0; k < tiles.size(); ++k)
      if (tiles[k])
        b.CreateStore(b.CreateLoad(f32, b.CreateGEP(f32, bases[k], at)), b.CreateGEP(f32, tiles[k], j));
    Value* j_next = b.CreateAdd(j, b.getInt64(1), "", true, true);
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
  std::vector<Value*> rows(bases.size(), nullptr), out_rows;
  for (int k = 0; k < p.num_inputs; ++k) {
    size_t ku = static_cast<size_t>(k);
    EwIndexing how = p.input_indexing(k);
    if (how.full())
      rows[ku] = b.CreateGEP(f32, bases[ku], s);
    else if (!how.scalar() && per_segment)
      ins[ku] = b.CreateLoad(f32, b.CreateGEP(f32, bases[ku], c_phi));
  }
  for (Value* o : outs) out_rows.push_back(b.CreateGEP(f32, o, s));
  Value* rest = b.CreateSub(end, s);
  Value* lo = segmented ? b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateSub(begin, s), b.getInt64(0))
                        : b.getInt64(0);
  Value* hi = segmented ? b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, rest, b.getInt64(length)) : rest;
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
  for (const EwValue& v : p.values) vals.push_back(gen_value(b, v, vals, ins));
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
