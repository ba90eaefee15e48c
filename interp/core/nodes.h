// Executable nodes: the AST after name resolution (interp/core/compile.cpp).
//
// Each node evaluates itself against a Frame. Variables were resolved at
// compile time to a frame slot, a closure cell, a class-namespace entry or a
// module GlobalSlot, so a variable read is one indexed load. Small integer and
// float arithmetic is done inline in the nodes; everything else goes through
// the generic protocols of Interp (interp/core/ops.cpp).
//
// Error locations: nodes that can fail catch MslError on its way out and, if
// the exception has no location in this frame yet, record their span. The
// innermost failing node therefore wins, and a function boundary moves the
// location into the traceback (interp/core/call.cpp).
#pragma once

#include <memory>
#include <vector>

#include "interp/core/interp.h"

namespace msl {

struct StmtNode;
struct ExprNode;
struct DeferredBody;
using ExprNodePtr = std::unique_ptr<ExprNode>;
using StmtNodePtr = std::unique_ptr<StmtNode>;

// Compiled code of one function, lambda, class body or module body.
struct FuncCode {
  std::string name;      // "f", "<lambda>", "<module>", class name
  std::string qualname;  // "A.f"
  SourcePtr source;
  Span span;             // the def line
  std::vector<Ref<Str>> param_names;  // positional, then keyword-only, then *args, then **kwargs
  uint32_t nposargs = 0, nkwonly = 0;
  bool has_vararg = false, has_kwarg = false;
  uint32_t nslots = 0;
  std::vector<Ref<Str>> slot_names;   // for UnboundLocalError messages and debugging
  std::vector<uint32_t> cell_slots;   // slots holding Cells (captured by inner functions)
  std::vector<bool> slot_is_cell;
  // Fast path: only positional parameters, no cells among them, no *args/**kwargs.
  bool simple = false;
  bool is_module = false;
  StmtNodePtr body;    // functions, classes, modules
  ExprNodePtr expr;    // lambdas: the body expression
  // Set while a function's body waits for its first call (compile.cpp:
  // DeferredBody); body and expr are null until then.
  std::shared_ptr<DeferredBody> deferred;
  // The definition this code came from, for graph-mode lowering (the AST is
  // kept alive by `ast`): one of def/lambda for functions, null otherwise.
  std::shared_ptr<const ast::Module> ast;
  const ast::FunctionDef* def = nullptr;
  const ast::Lambda* lambda = nullptr;
  std::vector<std::string> freevar_names;  // names of Function::closure's cells, in order
  Ref<Str> doc;
  ~FuncCode();
};

struct Frame {
  Interp& I;
  Value* slots;
  Function* func;    // null for module bodies
  Module* module;
  Class* class_ns;   // non-null while executing a class body
  FuncCode* code;
  Value ret;
};

enum class Exec : uint8_t { Normal, Break, Continue, Return };

struct ExprNode {
  Span span;
  virtual ~ExprNode() = default;
  virtual Value eval(Frame& f) = 0;
  // For plain local variables: the bound slot itself, so readers that only
  // look at the value (attribute access, method calls) skip the reference
  // count traffic of a copy. Null for every other node, or when unbound.
  virtual const Value* peek(Frame&) { return nullptr; }
  // Assignment targets override these.
  virtual void store(Frame& f, Value v);
  virtual void del(Frame& f);
  // `target op= value`: evaluates the target's object and index only once.
  virtual void aug(Frame& f, ast::BinOp op, ExprNode* value);
};

struct StmtNode {
  Span span;
  virtual ~StmtNode() = default;
  virtual Exec exec(Frame& f) = 0;
};

// A block of slots on the interpreter's value stack (a call's locals, or a
// temporary argument array), released when it goes out of scope.
struct StackSlots {
  StackSlots(Interp& I, size_t n) : I_(I), n_(n), p(I.alloc_slots(n)) {}
  ~StackSlots() { I_.free_slots(p, n_); }
  StackSlots(const StackSlots&) = delete;
  StackSlots& operator=(const StackSlots&) = delete;
  Value& operator[](size_t i) { return p[i]; }
  Interp& I_;
  size_t n_;
  Value* p;
};

// Records `span` as the failing location of `e` if this frame has none yet.
inline void locate(MslError& e, const Span& span) {
  ExceptionObj* x = e.obj();
  if (x->need_location) {
    x->need_location = false;
    x->location = span;
  }
}

// The truth value of a condition; an error from __bool__ (a tensor with
// several elements) is reported at the condition's expression.
inline bool truth(Interp& I, const Value& v, const Span& span) {
  if (v.is_bool()) return v.as_bool();
  try {
    return I.truthy(v);
  } catch (MslError& e) {
    locate(e, span);
    throw;
  }
}

// Generates the body `code` deferred, for a call in `mod`; a SyntaxError
// found there is raised (and the next call tries again).
void compile_deferred_body(Interp& I, FuncCode& code, Module* mod);
// Runs a compiled body as a call of `fn` with already bound slots.
Value run_function_body(Interp& I, Function* fn, Value* slots);
// Binds arguments for a call of `fn` into fresh slots and runs it.
Value call_function(Interp& I, Function* fn, std::span<Value> args,
                    std::span<std::pair<Ref<Str>, Value>> kw);

// How module-level expression statements behave.
enum class CompileMode {
  File,         // values are discarded
  Interactive,  // every module-level expression statement (also inside if/for/...) displays its value (REPL)
  Eval,         // the value of a final expression statement is the result of the module body
};

// Compiles a parsed module (or REPL entry) for execution in `mod`.
// `owner` (the module's AST, may be null) is kept by every function's code so
// graph mode can lower its definition later.
std::shared_ptr<FuncCode> compile_module(Interp& I, const ast::Module& m, Module* mod, CompileMode mode,
                                         std::shared_ptr<const ast::Module> owner = nullptr);

// compile_module with `m` as the owner, for a module compiled once and read
// by nothing else afterwards: each top-level statement that no function's
// code points into (no def or lambda in it) is freed as soon as it is
// compiled, so that a huge script's AST and its executable nodes do not all
// exist at once. Its body holds null statements afterwards.
std::shared_ptr<FuncCode> compile_module_once(Interp& I, const std::shared_ptr<ast::Module>& m, Module* mod,
                                              CompileMode mode);

// Runs module-level code in `mod`; adds the <module> traceback frame on error.
Value run_module_code(Interp& I, const std::shared_ptr<FuncCode>& code, Module* mod);

}  // namespace msl
