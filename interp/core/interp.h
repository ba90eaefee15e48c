// The host interpreter: one Interp is one independent MSL world (modules,
// builtins, interned names). It executes the AST after compiling it into a
// tree of executable nodes (interp/core/nodes.h) in which every variable has been
// resolved to a frame slot, a closure cell or a global slot, so no name is
// looked up in a dictionary at run time except attributes.
//
// Errors are MSL exceptions carried through C++ by `MslError` (a thrown
// ExceptionObj). Nodes that can fail record their source span on the
// exception as it passes, so a traceback shows every user frame with the
// exact failing expression.
//
// The Interp never prints and never exits the process: output and errors go
// through the sinks in Interp::Options.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "interp/core/gc.h"
#include "interp/core/object.h"
#include "kernels/memory_budget.h"
#include "lang/ast.h"
#include "lang/diagnostics.h"

namespace msl {

// What C++ code throws to raise an MSL exception. `exc` is an ExceptionObj.
struct MslError {
  Value exc;
  ExceptionObj* obj() const { return exc.as<ExceptionObj>(); }
};

// Thrown by sys.exit(): unwinds to the driver, which exits with `code`.
struct MslExit {
  int code;
};

class Interp {
 public:
  struct Options {
    // Where print() and sys.stdout.write go. Default: discard.
    std::function<void(std::string_view)> write_stdout;
    std::function<void(std::string_view)> write_stderr;
    // What print(..., flush=True) and sys.stdout.flush() do: push what
    // write_stdout buffered to its destination (msl_main: fflush(stdout),
    // which is block-buffered when redirected). Null: nothing to flush.
    std::function<void()> flush_stdout;
    // The process's file descriptors behind write_stdout, write_stderr and
    // standard input (msl_main: 1, 2 and 0), which sys.stdout.isatty() and
    // its siblings ask isatty(3) about. -1: the stream is no descriptor (an
    // embedding host's callback): never a terminal, and sys.stdin is empty.
    int stdin_fd = -1;
    int stdout_fd = -1;
    int stderr_fd = -1;
    // Maximum depth of nested MSL calls before RecursionError (sys.setrecursionlimit).
    int recursion_limit = 1000;
    // When > 0, a RuntimeError is raised after this many loop iterations and
    // calls (the fuzzer's and the embedding API's step limit). The limited
    // code cannot catch it: once exceeded, no `except` clause matches, a
    // `finally` block cannot end the unwinding with return/break/continue,
    // and every further step raises again, until reset_limits().
    int64_t step_limit = 0;
    // Largest list/tuple/string (elements or bytes) built by repetition or
    // materialisation before MemoryError; the fuzzer and embedders lower it.
    size_t max_sequence = size_t{1} << 28;
    // > 0: the bytes this interpreter may hold (objects, their contents and
    // tensor storage; kernels/memory_budget.h), counted while the embedding
    // API runs it. An allocation past it raises MemoryError in the script.
    size_t memory_limit = 0;
    // No access to the host machine (interp/core/sandbox.h): files, os, the
    // environment, input().
    bool sandbox = false;
    // The interpreter is the process's last (the msl command): its teardown
    // leaves compiled code to the process's exit (keep_code_until_exit).
    bool process_exits_after = false;
    std::vector<std::string> argv;         // sys.argv
    std::vector<std::string> module_path;  // MSL_PATH entries
    std::string stdlib_dir;                // standard library root
    // Graph mode (msl --mode/--save-graphs/--print-after): the initial
    // msl.context mode ("graph" or "pynative"), where compiled graphs are
    // saved (empty: nowhere), and the pass after which IR is printed.
    std::string graph_mode = "graph";
    std::string save_graphs_dir;
    // "cpu" or "gpu": msl --device, the device_target msl.context starts with.
    std::string device = "cpu";
    std::string print_after;
    // msl --layout: "auto" keeps graph mode's activations in the layout
    // oneDNN's kernels want (jit/passes/layout_choice.h); "nchw" keeps them
    // NCHW throughout (for comparisons, or to work around a layout bug).
    std::string activation_layout = "auto";
    // msl --emit=llvm: print the LLVM IR of every fused cluster compiled.
    bool emit_llvm = false;
    // msl --emit=cuda: print each graph's CUDA program (its fused kernels).
    bool emit_cuda = false;
    // msl --emit=subgraphs: print each compiled graph's identical
    // sub-graphs as JSON (jit/subgraphs.h).
    bool emit_subgraphs = false;
    // msl --graph-target: "auto" compiles graph mode for the arguments'
    // device; "cuda" for the GPU whatever the device (--emit=cuda implies
    // it): the GPU's passes, every fused kernel compiled by NVRTC, so the
    // kernels are checked on a machine without a GPU, where the graph then
    // runs on the CPU.
    std::string graph_target = "auto";
    // Messages at or above this level go to stderr, on MindSpore's GLOG_v
    // scale: 0 debug (recompilations and their cause, memory plans), 1 info,
    // 2 warning, 3 error. msl --log-level or GLOG_v.
    int log_level = 2;
  };

  explicit Interp(Options opts);
  ~Interp();
  Interp(const Interp&) = delete;
  Interp& operator=(const Interp&) = delete;

  Options& options() { return opts_; }

  // ---------------------------------------------------------------- running
  // Parses and runs `source` as the body of `module` (created as __main__ when
  // null). Syntax errors raise SyntaxError/IndentationError.
  Value run_source(SourcePtr source, Ref<Module> module = nullptr);
  // run_source for an imported module's file: its tree comes from the
  // module AST cache when the same text was parsed before
  // (interp/core/module_ast_cache.h).
  Value run_imported(SourcePtr source, Ref<Module> module);
  // run_source for the program the msl command runs (a script or -c): a
  // program under kCachedProgramBytes takes its tree from the same cache,
  // so a warm start never loads the parser (ANTLR's tables take ~6 ms to
  // build). Larger ones are parsed: their trees would only swell the cache
  // and the memory a run peaks at.
  Value run_program(SourcePtr source);
  static constexpr size_t kCachedProgramBytes = size_t{64} << 10;
  // REPL: like run_source, but every module-level expression statement
  // (also inside if/for/while/try) shows its value through display().
  Value run_interactive(SourcePtr source, Ref<Module> module);
  // Shows a REPL value: writes its repr to stdout and binds `_`; None is not shown.
  void display(const Value& v);
  // Evaluates a single expression in `module`'s globals.
  Value eval_expression(SourcePtr source, Ref<Module> module);
  Ref<Module> main_module();

  // Interrupt from another thread (Ctrl-C, embedding API): the running code
  // raises KeyboardInterrupt at its next loop iteration or call.
  void request_interrupt() { interrupt_.store(true, std::memory_order_relaxed); pending_.store(true); }
  // Ends the running evaluation with RuntimeError(`reason`), which the
  // limited code cannot catch (as the step limit): from any thread (the
  // embedding API's abort() and its wall-clock limit). `reason` must
  // outlive the evaluation (a string literal).
  void request_abort(const char* reason) {
    abort_reason_.store(reason, std::memory_order_relaxed);
    pending_.store(true);
  }
  // Asks for a cycle collection at the next safe point (the heap calls it).
  void request_gc() { gc_due_.store(true, std::memory_order_relaxed); pending_.store(true); }

  // --------------------------------------------------------------- strings
  Str* intern(std::string_view s);  // owned by the Interp; valid for its lifetime
  Value str(std::string s) { return Value::object(new Str(std::move(s))); }

  // ---------------------------------------------------------------- errors
  [[noreturn]] void raise(Class* cls, std::string message);
  [[noreturn]] void raise_value(Value exc);  // an exception instance or class
  // NameError/AttributeError for `name`, not found in `where` (a module, or
  // the object): the traceback suggests the closest name there.
  [[noreturn]] void raise_missing(Class* cls, std::string message, Str* name, Value where);
  Ref<Class> exception_class(std::string_view name);  // builtin exception by name
  // Creates an exception instance of `cls` with args (message,).
  Value new_exception(Class* cls, std::string message);
  // The text of an uncaught exception: traceback frames, source excerpts, `Type: message`.
  std::string format_exception(const Value& exc);
  // `chained`: exc is shown as the cause or context of another exception.
  std::string format_exception_chain(const Value& exc, bool chained);
  // Is `src` a module of the standard library (hidden from tracebacks)?
  bool is_library_source(const SourceFile* src) const;
  // The `Type: message` line alone.
  std::string exception_summary(const Value& exc);

  // ------------------------------------------------------ generic protocols
  Class* cls_of(const Value& v);
  Class* iterator_class(const char* name);
  std::string type_name(const Value& v);
  bool isinstance(const Value& v, Class* cls) { return cls_of(v)->is_subclass_of(cls); }
  bool truthy(const Value& v);
  std::string repr(const Value& v);
  // Appends repr(v) to `out` (linear in the size of nested containers).
  void repr_into(std::string& out, const Value& v);
  std::string to_str(const Value& v);
  size_t hash(const Value& v);
  bool eq(const Value& a, const Value& b);
  Value binary(ast::BinOp op, const Value& a, const Value& b);
  // In-place variant (`+=`): tries __iadd__ and list extension first.
  Value inplace(ast::BinOp op, const Value& a, const Value& b);
  Value unary(ast::UnaryOp op, const Value& v);
  Value compare(ast::CmpOp op, const Value& a, const Value& b);
  bool less(const Value& a, const Value& b);  // `a < b` as a bool (sorting, min/max)
  bool contains(const Value& container, const Value& item);

  Value getattr(const Value& obj, Str* name);
  // Returns Undef instead of raising AttributeError.
  Value getattr_or_undef(const Value& obj, Str* name);
  void setattr(const Value& obj, Str* name, Value v);
  void delattr(const Value& obj, Str* name);
  Value getitem(const Value& obj, const Value& key);
  void setitem(const Value& obj, const Value& key, Value v);
  void delitem(const Value& obj, const Value& key);
  int64_t len(const Value& v);

  Value call(const Value& f, std::span<Value> args, std::span<std::pair<Ref<Str>, Value>> kw = {});
  Value call0(const Value& f) { return call(f, {}); }
  Value call1(const Value& f, Value a);
  Value call2(const Value& f, Value a, Value b);
  // Calls obj.name(args...) (method lookup without a bound-method object).
  Value call_method(const Value& obj, Str* name, std::span<Value> args);

  // Iteration: returns an iterator object; next() gives false at the end.
  Value iter(const Value& v);
  bool next(const Value& it, Value& out);
  // Materializes any iterable.
  std::vector<Value> to_vector(const Value& iterable);

  // Integer / float coercions with Python's error messages.
  int64_t to_int_index(const Value& v, const char* what);  // ints and bools (and __index__)
  double to_float(const Value& v, const char* what);

  // -------------------------------------------------------------- modules
  Ref<Module> import_module(const std::string& dotted, const SourceFile* importer);
  Ref<Module> new_module(std::string_view name, std::string file);
  void register_native_module(std::string name, std::function<void(Interp&, Module&)> init);
  Ref<Module> builtins_module() { return builtins_; }
  // The module imported as `name`, or null when it was not (yet).
  Module* loaded_module(const std::string& name) {
    auto it = modules_.find(name);
    return it == modules_.end() ? nullptr : it->second.get();
  }
  // Adds a native function to a module (or the builtins when mod is null).
  void def_native(Module* mod, std::string_view name, NativeFn fn, Ref<Object> data = nullptr);
  // Adds a native method to a class.
  void def_method(Class* cls, std::string_view name, NativeFn fn);
  Ref<Class> new_class(std::string_view name, Class* base, std::string module_name, bool builtin);

  // ----------------------------------------------------------- builtin types
  Ref<Class> cls_object, cls_type, cls_none, cls_bool, cls_int, cls_float, cls_str, cls_list,
      cls_tuple, cls_dict, cls_set, cls_frozenset, cls_range, cls_slice, cls_function,
      cls_builtin_function, cls_method, cls_module, cls_cell, cls_iterator, cls_property,
      cls_staticmethod, cls_classmethod, cls_super, cls_ellipsis, cls_not_implemented;
  Ref<Class> exc_base, exc_exception;  // BaseException, Exception
  Value ellipsis, not_implemented;

  // Interned names used by the runtime (dunder methods and common attributes).
  struct Names;
  const Names& names() const { return *names_; }

  // ----------------------------------------------- internals used by nodes
  struct CallDepthGuard {
    explicit CallDepthGuard(Interp& I);
    ~CallDepthGuard() { --I_.depth_; }
    Interp& I_;
  };
  // Called at loop back-edges and function entry: interrupts, step limit.
  void poll() {
    if (pending_.load(std::memory_order_relaxed)) handle_pending();
  }
  void count_step() {
    if (opts_.step_limit > 0 && ++steps_ > opts_.step_limit) step_limit_exceeded();
  }
  // A limit was hit and its error is unwinding: the step limit
  // (Options::step_limit) or an abort (request_abort). No `except` matches
  // it and no `finally` ends it.
  bool limit_hit() const { return (opts_.step_limit > 0 && steps_ > opts_.step_limit) || aborted_; }
  // After the error reached the host: the next evaluation starts a new count.
  void reset_limits() {
    if (opts_.step_limit > 0 && steps_ > opts_.step_limit) steps_ = 0;
    aborted_ = false;
    abort_reason_.store(nullptr, std::memory_order_relaxed);
  }
  // The budget of Options::memory_limit (null without one): the embedding
  // API makes it current while the interpreter runs.
  kernels::MemoryBudget* memory_budget() const { return budget_; }
  // Throws RecursionError when the C++ stack is nearly exhausted (deeply
  // nested data in repr/eq, runaway recursion through native code).
  void check_stack() {
    char here;
    if (&here < stack_limit_) stack_exhausted();
  }
  // Marks the start of a run on the current thread (computes the stack limit).
  void enter_thread();
  // Makes this interpreter's heap the one new objects on this thread join
  // (cheap; every entry point of the embedding API calls it).
  void activate() { heap_.activate(); }
  // Frees unreachable reference cycles now; returns the number of objects freed.
  size_t collect_garbage();

  // __del__. An instance whose class defines it is not freed when its last
  // reference goes (or the collector finds it unreachable): it is queued
  // (defer_finalizer in gc.h), and the finalizers run at the end of the
  // statement (Block in nodes_stmt.cpp), at the next poll, or when the
  // running source ends. Running user code inside an arbitrary decref, in
  // the middle of a dict update or a C++ destructor, would not be safe.
  // Each instance is finalized once; one that __del__ resurrects lives on.
  // An exception escaping __del__ is printed to stderr as "Exception ignored
  // in: <function C.__del__ ...>" with its traceback, and the program goes
  // on, as in CPython. Objects still alive when the interpreter is destroyed
  // are not finalized (Python does not promise it either).
  void run_finalizers();
  void run_queued_finalizers() {
    if (!finalize_queue_.empty()) run_finalizers();
  }
  // Distinguishes interpreters (Class::interp_serial) without a pointer
  // that could dangle.
  uint64_t serial() const { return serial_; }

  // The value stack holding function frames' local slots.
  Value* alloc_slots(size_t n);
  void free_slots(Value* base, size_t n);

  // Counts mutations of class dictionaries after creation (Class::traits).
  uint64_t class_epoch() const { return class_epoch_; }
  void bump_class_epoch() { ++class_epoch_; }
  const Class::Traits& traits(Class* c);

  // Currently handled exception (for bare `raise` and implicit context).
  std::vector<Value>& handled_exceptions() { return handled_; }

  // Per-interpreter state of graph mode (interp/graph/graph_compiler.h), created
  // on first use; released before the heap so it can hold values.
  std::shared_ptr<void>& graph_state() { return graph_state_; }

  void write_out(std::string_view s) { if (opts_.write_stdout) opts_.write_stdout(s); }
  void write_err(std::string_view s) { if (opts_.write_stderr) opts_.write_stderr(s); }
  void flush_out() { if (opts_.flush_stdout) opts_.flush_stdout(); }

 private:
  // Compiles and runs a parsed file as the body of `module`.
  Value run_parsed(std::shared_ptr<ast::Module> tree, Ref<Module> module);
  std::string repr_leaf(const Value& v);
  void handle_pending();
  [[noreturn]] void step_limit_exceeded();
  [[noreturn]] void stack_exhausted();
  void init_builtin_types();
  void init_exceptions();

  // First member: destroyed last, after every member holding objects.
  GcHeap heap_;
  std::atomic<bool> gc_due_{false};
  Options opts_;
  std::unordered_map<std::string_view, Str*> interned_;
  std::vector<Ref<Str>> interned_owner_;
  std::unique_ptr<Names> names_;
  Ref<Module> builtins_;
  Ref<Module> main_;
  std::unordered_map<std::string, Ref<Module>> modules_;
  std::unordered_map<std::string, std::function<void(Interp&, Module&)>> native_modules_;
  std::unordered_map<std::string, Ref<Class>> exceptions_;
  std::unordered_map<std::string, Ref<Class>> iterator_classes_;
  std::vector<Value> handled_;
  std::atomic<bool> pending_{false};
  std::atomic<const char*> abort_reason_{nullptr};
  bool aborted_ = false;
  kernels::MemoryBudget* budget_ = nullptr;
  std::atomic<bool> interrupt_{false};
  uint64_t serial_;
  bool finalizers_enabled_ = true;  // false once the destructor starts
  std::vector<Ref<Instance>> finalize_queue_;
  int depth_ = 0;
  uint64_t class_epoch_ = 1;
  int64_t steps_ = 0;
  char* stack_limit_ = nullptr;
  Value* stack_base_ = nullptr;
  Value* stack_top_ = nullptr;
  Value* stack_end_ = nullptr;
  std::shared_ptr<void> graph_state_;
  friend struct ModuleLoader;
  friend bool defer_finalizer(Object* o);
};

// Interned dunder and common names, created once per Interp.
struct Interp::Names {
  explicit Names(Interp& I);
#define MSL_NAMES(X)                                                                                   \
  X(__init__) X(__call__) X(__getitem__) X(__setitem__) X(__delitem__) X(__len__) X(__repr__)          \
  X(__str__) X(__iter__) X(__next__) X(__contains__) X(__eq__) X(__ne__) X(__lt__) X(__le__) X(__gt__) \
  X(__ge__) X(__hash__) X(__bool__) X(__add__) X(__radd__) X(__iadd__) X(__sub__) X(__rsub__)          \
  X(__isub__) X(__mul__) X(__rmul__) X(__imul__) X(__matmul__) X(__rmatmul__) X(__imatmul__)            \
  X(__truediv__) X(__rtruediv__) X(__itruediv__) X(__floordiv__) X(__rfloordiv__) X(__ifloordiv__)    \
  X(__mod__) X(__rmod__) X(__imod__) X(__pow__) X(__rpow__) X(__ipow__) X(__lshift__) X(__rlshift__)   \
  X(__ilshift__) X(__rshift__) X(__rrshift__) X(__irshift__) X(__and__) X(__rand__) X(__iand__)         \
  X(__or__) X(__ror__) X(__ior__) X(__xor__) X(__rxor__) X(__ixor__) X(__neg__) X(__pos__)              \
  X(__invert__) X(__abs__) X(__getattr__) X(__setattr__) X(__name__) X(__class__) X(__dict__)          \
  X(__doc__) X(__module__) X(__qualname__) X(__file__) X(__index__) X(__int__) X(__float__)             \
  X(__enter__) X(__new__) X(__format__) X(__bases__) X(__base__) X(__del__) X(__get__) X(args) X(self)
#define MSL_DECLARE_NAME(n) Str* n;
  MSL_NAMES(MSL_DECLARE_NAME)
#undef MSL_DECLARE_NAME
};

inline const Class::Traits& Interp::traits(Class* c) {
  return c->traits(class_epoch_, names_->__setattr__, names_->__del__);
}

// Helpers for native functions: argument checking with Python's messages.
void check_arity(Interp& I, const char* fname, Args& a, size_t min, size_t max);
void no_kwargs(Interp& I, const char* fname, Args& a);
// The keyword argument `name` if given (and removes nothing); Undef otherwise.
Value kwarg(Args& a, std::string_view name);

}  // namespace msl
