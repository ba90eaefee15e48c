// Internal to graph mode's front door (graph_compiler.h): the compiler
// object shared by graph_compiler.cpp (lowering live callables, gradient
// graphs, calls) and graph_runtime.cpp (the executor's hooks: host calls and
// J of host functions by tracing).
#pragma once

#include <map>
#include <tuple>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "interp/core/gc.h"
#include "interp/graph/graph_compiler.h"
#include "interp/graph/graph_disk_cache.h"
#include "interp/tensor/trace.h"
#include "jit/exec/executor.h"
#include "jit/specialize.h"
#include "jit/subgraphs.h"
#include "jit/target.h"
#include "lang/ad/grad.h"
#include "lang/ir/ir_module.h"
#include "lang/ir/lower.h"

namespace msl {

struct TensorClass;
struct GradFunctionObj;
class HostValue;
struct PhaseClock;
struct WeightParams;

// A compiled callable: R(args..., weights...) or GF(args..., weights...[, sens]).
// compile() may leave it unbuilt (graph null) when the disk cache may have
// its runnable graphs: `fn` is then lowered only when a call misses.
struct Compiled {
  ir::FuncGraph* graph = nullptr;
  size_t nargs = 0;             // leading parameters given by the caller
  std::vector<Value> weights;   // Parameters passed after the arguments
  bool sens_param = false;
  Value fn;                     // the callable (for a deferred build)
  GradFunctionObj* grad = nullptr;  // a gradient's deferred build (fn holds it)
  // Set when calls go through the disk cache (graph_disk_cache.h): the
  // fingerprint taken by compile(), used by the first call (later calls
  // walk the objects again: they may have changed since).
  std::optional<Fingerprint> fingerprint;
  bool fingerprint_fresh = false;
};

// The objects msl.jit / the gradient API return.
// Both are tracked by the cycle collector: a Cell keeps its compiled
// construct (msl.jit(self)) and a training Cell its gradient function, and
// each holds the Cell back.
struct JitFunctionObj final : NativeData {
  JitFunctionObj(Ref<Class> c, Value f) : NativeData(std::move(c)), fn(std::move(f)) { GcHeap::track_native(this); }
  Value fn;
  void traverse(GcVisitor& v) override { v.visit(fn); }
  void gc_clear() override { fn = Value(); }
};
struct GradFunctionObj final : NativeData {
  GradFunctionObj(Ref<Class> c, Value f, GradSpec s) : NativeData(std::move(c)), fn(std::move(f)), spec(std::move(s)) {
    GcHeap::track_native(this);
  }
  Value fn;
  GradSpec spec;
  void traverse(GcVisitor& v) override {
    v.visit(fn);
    for (auto& w : spec.weights) v.visit(w);
  }
  void gc_clear() override {
    fn = Value();
    spec.weights.clear();
  }
};
// `v` as a gradient function object, or null.
inline GradFunctionObj* grad_function_of(const Value& v) {
  return v.is(Kind::NativeData) && typeid(*v.obj()) == typeid(GradFunctionObj) ? static_cast<GradFunctionObj*>(v.obj())
                                                                                : nullptr;
}

class GraphCompiler {
 public:
  explicit GraphCompiler(Interp& I);
  ~GraphCompiler();

  Interp& I;
  ir::IrModule module;
  ad::GradTransformer grad;
  TensorClass* tensor_cls = nullptr;
  Ref<Class> jit_cls, grad_cls;
  Ref<Class> graph_fn_cls;  // graph closures returned to MSL code (graph_values.cpp)

  // Root graph of calling `fn` with nargs arguments (cached). With the
  // disk cache on, the graph is built only when a call misses it: use
  // built() before reading c.graph or c.weights.
  const Compiled& compile(const Value& fn, size_t nargs);
  // `c` built (lowered and optimized) if compile() deferred that.
  const Compiled& built(const Compiled& c);
  // GF for a gradient function object (cached); `raw` makes it return
  // make_tuple(out, grads) for the caller to shape (has_aux, value_and_grad).
  const Compiled& compile_grad(GradFunctionObj* gf, size_t nargs);
  // The same entry for a call from MSL code (grad_call): like compile(), it
  // may defer the build to a miss of the disk cache (not with sens_param).
  const Compiled& grad_entry(GradFunctionObj* gf, size_t nargs);
  // Milliseconds per phase of the last compilation (benchmarks), nested
  // compilations included.
  std::vector<std::pair<std::string, double>> last_times;
  int compiling_ = 0;
  // Bumped when values graphs read at compile time change (Cell.set_train):
  // part of every cache key, so such changes recompile.
  int64_t generation = 0;
  // msl.graph.find_identical_subgraphs: while set, each graph compiled
  // gets its identical sub-graphs found (after expansion) and appended here.
  struct SubgraphReport {
    std::string graph;
    size_t nodes = 0;      // its Apply nodes
    double seconds = 0;    // finding the groups, writing the JSON and the drawing
    std::vector<jit::SubgraphGroup> groups;
    std::string json;
    std::string dot;
  };
  std::vector<SubgraphReport>* subgraph_reports = nullptr;
  // save_graphs: the folder (empty: off) and the files written so far.
  std::string save_dir;
  int saved = 0;
  // Writes `g`'s nest as DIR/NN_name_phase.ir (and .dot when `dot`).
  void save(const std::string& name, const std::string& phase, const ir::FuncGraph& g, bool dot,
            const ir::PrintOptions& opts = {}, const std::string& header = "");
  // Writes `text` as DIR/NN_name_suffix (a graph's CUDA program: cuda.cu).
  void save_text(const std::string& name, const std::string& suffix, const std::string& text);
  // DIR/NN_name_phase, the next number taken; and writing one saved file.
  std::string save_path(const std::string& name, const std::string& phase);
  void write_saved(const std::string& path, const std::string& text);
  // Specialization with library calls typed by tracing them (host_type).
  jit::SpecializeOptions specialize_options();
  // GRAPH_MODE (msl.context): compiled graphs also fuse elementwise
  // clusters into generated loops; PYNATIVE_MODE keeps one kernel per op.
  bool graph_mode = true;

  // msl --emit=llvm: prints the fused clusters of `g` as LLVM IR.
  void emit_llvm(const ir::FuncGraph& g);
  // The target graphs specialized at `sig` compile for: the arguments'
  // device's, or the GPU's under msl --graph-target cuda / --emit=cuda.
  const jit::Target& graph_target(const std::vector<jit::AbsValue>& sig) const;

  // Runs the clean-up pipeline on `g` (with --print-after dumps).
  void optimize(ir::FuncGraph& g);
  // What the target's passes need from the front to compile `name`
  // specialized at `sig`: the mode's switches, expansion of library calls
  // (taking `weights`' gradient calls into the graph), and --print-after,
  // --emit=llvm, debug reports and compile phases (`clock`) after each pass.
  jit::BackendContext backend_context(const std::string& name, const std::vector<jit::AbsValue>& sig,
                                      const WeightParams& weights, PhaseClock& clock);
  // --print-after for the passes after specialization: `sp` with types.
  void print_after(const std::string& pass, const jit::Specialized& sp);
  // --emit=subgraphs and find_identical_subgraphs: the expanded graph's
  // identical sub-graphs (jit/subgraphs.h).
  // `name` names the saved files (--save-graphs), as the other phases'.
  void report_subgraphs(const std::string& name, const jit::Specialized& sp);
  // The channel block graph mode keeps activations in (0: NCHW): the CPU's
  // unless msl --layout nchw; part of the disk cache's key.
  int layout_block() const;
  // A debug-level message (msl --log-level debug / GLOG_v=0) on stderr.
  void debug(const std::string& message);
  // Which argument of `graph` changed since its last signature (debug).
  void log_signature(const ir::FuncGraph& graph, const std::vector<jit::AbsValue>& sig);

  // Executor options with every hook (host calls, runtime J).
  exec::ExecOptions exec_options();
  // The executor arguments of calling `c` with the caller's MSL arguments
  // (the sensitivity last when c.sens_param): arguments, weights, sens.
  std::vector<exec::RtValue> executor_args(const Compiled& c, std::span<Value> args);
  // Runs a compiled graph on the caller's MSL arguments, or on all its
  // executor arguments, specialized for their signature.
  exec::RtValue run(const Compiled& c, std::span<Value> args);
  exec::RtValue run(const Compiled& c, std::vector<exec::RtValue> args);

  // --- runtime (graph_runtime.cpp)
  ir::ConstValue rule_for(const ir::PrimRef& p);
  exec::RtValue runtime_j(const exec::RtValue& fn);
  // `h` as a host value that is data, not a function (a Cell's stride
  // tuple, a dtype): its own J-value, passed to traces as a constant.
  // Null for anything else.
  const HostValue* host_data(const ir::HostObject* h);
  exec::RtValue call_host(const ir::HostRef& h, std::vector<exec::RtValue> args);
  // In the handler of an exception from the host call at `site`: an
  // MslError gets the call's source line as a traceback frame, so an error
  // in `x.sum(axis=5)` inside a construct points at that line.
  void host_failed(const ir::Node* site);
  // Raises a specialization failure as GraphModeError: with the failing
  // line shown and a help line where the source is known.
  [[noreturn]] void specialize_failed(const jit::SpecializeError& e);
  // The source files of lowered functions by name (ir::Loc names them).
  std::map<std::string, SourcePtr> sources;
  // Trace inputs for calling host function `fn` with `args` (tensors by
  // dtype and shape, constants by value), the cache key of that signature
  // appended to `key`; returns args.size(), or the index of the first
  // argument a trace cannot take.
  size_t trace_signature(const HostValue& fn, const std::vector<exec::RtValue>& args,
                         std::vector<trace::TraceInput>& inputs, std::string& key);
  // J (applied `order` times) of host function `hv` traced at `inputs`,
  // taking every argument (constants too), cached under `key` (which must
  // name hv, order and the signature). Throws MslError when hv cannot be
  // traced, ad::GradError when the trace cannot be differentiated.
  ir::FuncGraph* traced_j(const HostValue& hv, int order, const std::vector<trace::TraceInput>& inputs,
                          const std::string& key);
  // A trace input for an argument of abstract type `a` (a tensor of known
  // type or a constant scalar); false when a trace cannot take it.
  bool trace_input(const jit::AbsValue& a, trace::TraceInput& out);
  // The graph of a gradient rule traced at these arguments' signature
  // (cached; null when it cannot be traced: the MSL rule runs instead).
  const ir::FuncGraph* traced_rule(const HostValue& rule, const std::vector<exec::RtValue>& args);
  // Whether host function `hv` may be traced at compile time
  // (traceable_host_call), `first` being the type of its first argument
  // (a method adapter's receiver) or null.
  bool may_trace(const HostValue& hv, const jit::AbsValue* first);
  // What a host function returns for arguments of these types, found by
  // tracing it (library code); nullopt when it cannot be traced.
  std::optional<jit::AbsValue> host_type(const ir::HostRef& h, const std::vector<jit::AbsValue>& args);
  // The type of a traceable call of constants whose result a trace cannot
  // return (a class, a dtype): the result itself, or nullopt.
  // isinstance(v, classinfo) decided from v's type, when it can be.
  std::optional<jit::AbsValue> isinstance_type(const HostValue& hv, const std::vector<jit::AbsValue>& args);
  std::optional<jit::AbsValue> constant_call_type(const HostValue& hv, const std::vector<trace::TraceInput>& inputs);

 private:
  struct Session;
  friend struct Session;
  Compiled build(const Value& fn, size_t nargs);
  Compiled build_grad(GradFunctionObj* gf, size_t nargs);
  // Builds c (fn, grad, nargs set) now, or, when `deferrable` and the disk
  // cache is on outside another compilation, takes its fingerprint so that
  // building waits for a call that misses the cache.
  void prepare(Compiled& c, bool deferrable);
  // The gradient cache's entry for gf; `lazy` as in grad_entry.
  const Compiled& gradient(GradFunctionObj* gf, size_t nargs, bool lazy);
  // The runnable graph of `base` for these executor arguments' signature:
  // specialized, expanded to primitives and fused when it is straight-line
  // code (cached per signature).
  ir::FuncGraph* runnable(const Compiled& base, const std::vector<exec::RtValue>& args);
  // run() through the disk cache, for a Compiled with a fingerprint.
  exec::RtValue run_cached(const Compiled& c, std::span<Value> args);
  // A runnable graph and the weights it takes after the arguments.
  struct CachedRunnable {
    ir::FuncGraph* graph = nullptr;  // null: run `c` the usual way
    std::vector<Value> weights;
    std::string weight_sig;  // the weights' types when it was made
  };
  CachedRunnable load_or_compile(const Compiled& c, const std::vector<exec::RtValue>& args, const std::string& sig);
  // Whether the disk cache may answer now (enabled, and no option asks to
  // see the compilation: save_graphs, --print-after, --emit=llvm, debug
  // logging).
  bool disk_cache_usable() const;
  // What the disk cache did and why (msl --log-level info).
  void cache_info(const std::string& message);

  GraphDiskCache disk_;
  std::map<std::string, CachedRunnable> cached_runnable_;  // per (Compiled, mode, signature)

  std::map<std::tuple<const Object*, size_t, int64_t>, Compiled> cache_;
  // Gradient graphs by what they compute (function, options, weights,
  // argument count): `msl.grad(f)(x)` in a loop makes a new gradient
  // object every step but compiles once.
  std::map<std::string, Compiled> grad_cache_;
  // Specialized graphs per (compiled graph, argument signature).
  std::map<std::string, ir::FuncGraph*> specialized_;
  std::map<const ir::FuncGraph*, std::vector<jit::AbsValue>> last_signature_;  // recompilation messages
  std::vector<Value> keep_;  // keys of cache_ stay alive
  std::map<std::string, ir::ConstValue> rules_;           // per primitive + attrs
  std::map<std::string, ir::FuncGraph*> traced_j_;        // J of traced host calls, per signature
  std::map<std::string, std::optional<jit::AbsValue>> host_types_;  // host_type, per signature
  std::map<std::string, const ir::FuncGraph*> traced_rules_;          // traced_rule, per signature
  Value bound_rule_;                                      // msl._bprop.registry.bound_rule
};

GraphCompiler& compiler_of(Interp& I);
jit::AbsValue abstract_of(const exec::RtValue& v);  // graph_compiler.cpp
// graph_expand.cpp
size_t expand_host_calls(GraphCompiler& gc, const jit::Specialized& sp);
// `sp` (a specialization for `sig`) as a graph of primitives: library calls
// expanded at the types found, cleaned up, specialized again for the
// type-directed no-ops. Throws jit::SpecializeError.
// The weights a compiled graph takes as parameters (Compiled::weights),
// starting at parameter `first`: gradient-function calls whose weights are
// among them expand into the graph.
struct WeightParams {
  std::vector<Value> values;
  size_t first = 0;
};
jit::Specialized expand_to_primitives(GraphCompiler& gc, jit::Specialized sp, const std::vector<jit::AbsValue>& sig,
                                      const WeightParams& weights = {});
// What `g` and every graph it reaches contain: effects (print, assign,
// state); host values (library functions called at run time); how many
// graphs (1: straight-line code, everything inlined).
struct GraphUse {
  bool effects = false;
  bool host = false;
  bool switches = false;  // control flow the types left open (a loop's condition, a tensor condition)
  size_t graphs = 0;
  std::string first_host;  // the name of one host value used ("" if none)
};
GraphUse graph_use(const ir::FuncGraph& g);
Value gradient_stats(Interp& I, const Value& grad_fn, std::span<Value> args);

}  // namespace msl
