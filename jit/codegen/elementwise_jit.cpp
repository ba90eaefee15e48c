#include "jit/codegen/elementwise_jit.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <map>
#include <mutex>
#include <stdexcept>

#include "kernels/parallel.h"

namespace msl::jit::codegen {

// ------------------------------------------------------------- programs

int EwProgram::input(int k) {
  EwValue v;
  v.op = EwOp::Input;
  v.input = k;
  if (k >= num_inputs) num_inputs = k + 1;
  values.push_back(v);
  return static_cast<int>(values.size()) - 1;
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

void validate(const EwProgram& p) {
  if (p.values.empty() || p.outputs.empty())
    throw std::invalid_argument("elementwise program: no output value");
  for (int o : p.outputs)
    if (o < 0 || o >= static_cast<int>(p.values.size()))
      throw std::invalid_argument(fmt::format("elementwise program: output %{} is not a value", o));
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

}  // namespace

std::string EwProgram::text() const {
  std::string s = fmt::format("inputs {}\n", num_inputs);
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
  return s + "\n";
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
void build_function(llvm::Module& m, const EwProgram& p, const std::string& name) {
  llvm::LLVMContext& ctx = m.getContext();
  IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  llvm::Type* i64 = b.getInt64Ty();
  auto* fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, i64, i64}, false);
  auto* fn = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, name, m);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
  b.SetInsertPoint(entry);
  llvm::Argument *in = fn->getArg(0), *out = fn->getArg(1), *begin = fn->getArg(2), *end = fn->getArg(3);
  std::vector<Value*> bases, outs;
  for (int k = 0; k < p.num_inputs; ++k)
    bases.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, in, static_cast<uint64_t>(k))));
  for (size_t k = 0; k < p.outputs.size(); ++k)
    outs.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, out, k)));
  b.CreateCondBr(b.CreateICmpSLT(begin, end), loop, done);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2);
  i->addIncoming(begin, entry);
  std::vector<Value*> ins;
  for (Value* base : bases) ins.push_back(b.CreateLoad(b.getFloatTy(), b.CreateGEP(b.getFloatTy(), base, i)));
  std::vector<Value*> vals;
  for (const EwValue& v : p.values) vals.push_back(gen_value(b, v, vals, ins));
  for (size_t k = 0; k < p.outputs.size(); ++k)
    b.CreateStore(vals[static_cast<size_t>(p.outputs[k])], b.CreateGEP(b.getFloatTy(), outs[k], i));
  Value* next = b.CreateAdd(i, b.getInt64(1), "", true, true);
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, end), loop, done);
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

struct ElementwiseJit::Impl {
  std::mutex mu;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::map<std::string, EwFunction> cache;
  int next = 0;

  // A module holding `p`'s function, optimized at O3 for the host.
  std::pair<std::unique_ptr<llvm::LLVMContext>, std::unique_ptr<llvm::Module>> module_for(const EwProgram& p,
                                                                                       const std::string& name) {
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
    pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*m, mam);
    return {std::move(ctx), std::move(m)};
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
  validate(p);
  std::string key = p.text();
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->cache.find(key);
  if (it != impl_->cache.end()) return it->second;
  std::string name = fmt::format("msl_fused_{}", impl_->next++);
  auto [ctx, m] = impl_->module_for(p, name);
  if (llvm::Error e = impl_->jit->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx))))
    throw std::runtime_error("LLVM: cannot add the module: " + llvm_error(std::move(e)));
  auto sym = impl_->jit->lookup(name);
  if (!sym) throw std::runtime_error("LLVM: cannot find " + name + ": " + llvm_error(sym.takeError()));
  EwFunction fn = sym->toPtr<EwFunction>();
  impl_->cache.emplace(key, fn);
  return fn;
}

void ElementwiseJit::run(const EwProgram& p, const float* const* in, float* const* out, int64_t n) {
  run(compile(p), in, out, n);
}

void ElementwiseJit::run(EwFunction fn, const float* const* in, float* const* out, int64_t n) {
  kernels::parallel_for(n, kernels::kParallelGrain, [&](int64_t b, int64_t e) { fn(in, out, b, e); });
}

std::string ElementwiseJit::llvm_ir(const EwProgram& p) {
  validate(p);
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto [ctx, m] = impl_->module_for(p, "msl_fused");
  std::string s;
  llvm::raw_string_ostream os(s);
  m->print(os, nullptr);
  return os.str();
}

}  // namespace msl::jit::codegen
