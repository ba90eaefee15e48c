// The debug-mode graph executor: frames, closures, calls with a tail-call
// trampoline, and error locations. The design is described in
// executor.h; value operations live in exec_ops.cpp.
#include "jit/exec/executor.h"

#include <vector>

#include "kernels/op_site.h"
#include "kernels/trace.h"
#include "kernels/errors.h"
#include "lang/ir/ir_module.h"
#include "lang/ir/liveness.h"

namespace msl::exec {

using ir::FuncGraph;
using ir::Node;

namespace {

std::string loc_str(const Node* n) {
  if (!n) return "";
  const ir::Loc* loc = &n->loc();
  if (!loc->valid() && n->graph()) loc = &n->graph()->loc();
  if (!loc->valid()) return "";
  return *loc->file + ":" + std::to_string(loc->line);
}

// The values of one call of a graph.
struct Frame {
  const FuncGraph* graph;
  RtCaptures captures;
  std::unordered_map<const Node*, RtValue> vals;
};

struct GraphInfo {
  ir::Liveness live;              // topo order and the values that die at each node
  std::vector<Node*> free_vars;   // free_variables
};

class Executor {
 public:
  explicit Executor(ExecOptions opts) : opts_(std::move(opts)) {}

  // Calls `fn` with `args`; `site` (may be null) is the calling node.
  RtValue call(RtValue fn, std::vector<RtValue> args, const Node* site);

 private:
  const GraphInfo& info(const FuncGraph* g);
  RtValue value_of(Frame& f, const Node* n);
  RtValue constant(Frame& f, const Node* n);
  void compute(Frame& f, const Node* n, const std::vector<const Node*>& dying = {});
  void compute_missing(Frame& f, const Node* n);
  RtValue apply(const RtValue& callee, std::vector<RtValue> args, const Node* site);
  RtValue make_closure(Frame& f, const FuncGraph* g);
  // Whether `f` can give `n`'s value: a constant, a node of its own graph
  // or a captured free variable.
  bool visible(const Frame& f, const Node* n) const;

  ExecOptions opts_;
  int depth_ = 0;
  uint64_t state_serial_ = 0;
};

const GraphInfo& Executor::info(const FuncGraph* g) {
  // Kept across runs (a training loop runs the same graphs every step, and
  // free_variables walks the module's graph list): per thread, keyed by
  // the module's serial (never reused, unlike addresses), the graph's id
  // and its output node's id, so a graph rebuilt by a pass is recomputed.
  struct Key {
    uint64_t module;
    uint32_t graph, output;
    bool operator==(const Key& o) const { return module == o.module && graph == o.graph && output == o.output; }
  };
  struct KeyHash {
    size_t operator()(const Key& k) const { return std::hash<uint64_t>()(k.module * 0x9E3779B97F4A7C15ull ^ (uint64_t{k.graph} << 32 | k.output)); }
  };
  thread_local std::unordered_map<Key, GraphInfo, KeyHash> cache;
  Key key{g->module().serial(), g->id(), g->output() ? g->output()->id() : UINT32_MAX};
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  return cache.emplace(key, GraphInfo{ir::liveness(*g), ir::free_variables(*g)}).first->second;
}

RtValue Executor::make_closure(Frame& f, const FuncGraph* g) {
  const GraphInfo& gi = info(g);
  RtClosure c{g, nullptr};
  if (!gi.free_vars.empty()) {
    auto caps = std::make_shared<std::unordered_map<const Node*, RtValue>>();
    // A free variable this frame cannot see is left out: a closure that is
    // made but never called (a backpropagator whose gradient nothing reads,
    // left unspecialized and still pointing into the graph its specialized
    // copy came from) must not fail. One that is called and reads it fails
    // then, naming the node (value_of).
    for (const Node* fv : gi.free_vars)
      if (visible(f, fv)) (*caps)[fv] = value_of(f, fv);
    c.captures = std::move(caps);
  }
  return RtValue(std::move(c));
}

bool Executor::visible(const Frame& f, const Node* n) const {
  return n->is_constant() || n->graph() == f.graph || (f.captures && f.captures->count(n));
}

RtValue Executor::constant(Frame& f, const Node* n) {
  struct V {
    Executor& ex;
    Frame& f;
    RtValue operator()(const ir::NoneValue&) const { return RtValue(); }
    RtValue operator()(bool b) const { return RtValue(b); }
    RtValue operator()(int64_t i) const { return RtValue(i); }
    RtValue operator()(double d) const { return RtValue(d); }
    RtValue operator()(const std::string& s) const { return RtValue(s); }
    RtValue operator()(const kernels::Tensor& t) const { return RtValue(t); }
    RtValue operator()(const ir::PrimRef& p) const { return RtValue(p); }
    RtValue operator()(ir::IrOp op) const { return RtValue(op); }
    RtValue operator()(FuncGraph* g) const { return ex.make_closure(f, g); }
    RtValue operator()(const ir::HostRef& h) const { return RtValue(h); }
  };
  return std::visit(V{*this, f}, n->value());
}

RtValue Executor::value_of(Frame& f, const Node* n) {
  if (n->is_constant()) return constant(f, n);
  if (n->graph() == f.graph) {
    auto it = f.vals.find(n);
    if (it != f.vals.end()) return it->second;
    compute_missing(f, n);
    return f.vals.at(n);
  }
  if (f.captures) {
    auto it = f.captures->find(n);
    if (it != f.captures->end()) return it->second;
  }
  throw ExecError("the value of a node of @" + (n->graph() ? n->graph()->name() : std::string("?")) +
                      " is not available in @" + f.graph->name() + " (not a captured free variable)",
                  loc_str(n));
}

// A node of f's graph outside its topo order (used only by nested graphs):
// compute it and its missing inputs, inputs first, without recursion.
void Executor::compute_missing(Frame& f, const Node* n) {
  if (!n->is_apply()) throw ExecError("parameter of @" + f.graph->name() + " is not bound", loc_str(n));
  std::vector<std::pair<const Node*, size_t>> stack{{n, 0}};
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next < node->inputs().size()) {
      const Node* in = node->inputs()[next++];
      if (in->is_apply() && in->graph() == f.graph && !f.vals.count(in)) stack.push_back({in, 0});
      continue;
    }
    const Node* done = node;
    stack.pop_back();
    if (!f.vals.count(done)) compute(f, done);
  }
}

// Evaluates one Apply node of f's graph (all inputs available) into f.vals.
// The frame drops the values whose last use this is before the call, so an
// operand the arguments hold the only reference to can be overwritten by
// the op (a compiled kernel writes its result into it) and its buffer is
// free for reuse as soon as the op is done.
void Executor::compute(Frame& f, const Node* n, const std::vector<const Node*>& dying) {
  RtValue callee = value_of(f, n->callee());
  std::vector<RtValue> args;
  args.reserve(n->num_args());
  for (size_t i = 0; i < n->num_args(); ++i) args.push_back(value_of(f, n->arg(i)));
  for (const Node* d : dying) f.vals.erase(d);
  f.vals[n] = apply(callee, std::move(args), n);
}

namespace {

// run() with the node's source line as the op site while a tool wants it
// (msl --dump's index, the profiler's timeline: kernels/op_site.h).
template <class F>
RtValue at_site(const Node* site, F&& run) {
  if (!kernels::op_sites_wanted() || !site) return run();
  const ir::Loc* loc = &site->loc();
  if (!loc->valid() && site->graph()) loc = &site->graph()->loc();
  kernels::OpSite at(loc->file, loc->line, site->loc().scope);
  return run();
}

}  // namespace

// Applies a primitive or operator; closures and partials go through call().
RtValue Executor::apply(const RtValue& callee, std::vector<RtValue> args, const Node* site) {
  try {
    if (auto p = callee.get_if<ir::PrimRef>()) return at_site(site, [&] { return detail::run_kernel(*p, args); });
    if (auto op = callee.get_if<ir::IrOp>()) {
      if (*op != ir::IrOp::J) return detail::run_ir_op(*op, args, opts_, state_serial_);
      if (args.size() != 1) detail::fail("J takes 1 argument, got " + std::to_string(args.size()));
      if (!opts_.runtime_j) detail::fail("J of a " + type_name(args[0]) + " needs the autodiff runtime");
      return opts_.runtime_j(args[0]);
    }
    if (auto h = callee.get_if<ir::HostRef>()) {
      if (const ir::CompiledKernel* k = (*h)->as_compiled_kernel())
        return at_site(site, [&] { return detail::run_compiled(*k, std::move(args)); });
      if (!opts_.call_host) detail::fail("cannot call the host object " + (*h)->name() + " here");
      try {
        return opts_.call_host(*h, std::move(args));
      } catch (...) {
        if (opts_.host_failed) opts_.host_failed(site);
        throw;
      }
    }
  } catch (const ExecError& e) {
    if (!e.location().empty()) throw;
    throw ExecError(e.message(), loc_str(site));
  } catch (const kernels::ShapeError& e) {
    throw ExecError(std::string("ShapeError: ") + e.what(), loc_str(site));
  } catch (const kernels::DTypeError& e) {
    throw ExecError(std::string("DTypeError: ") + e.what(), loc_str(site));
  } catch (const kernels::ValueError& e) {
    throw ExecError(std::string("ValueError: ") + e.what(), loc_str(site));
  } catch (const kernels::IndexError& e) {
    throw ExecError(std::string("IndexError: ") + e.what(), loc_str(site));
  } catch (const kernels::ZeroDivisionError& e) {
    throw ExecError(std::string("ZeroDivisionError: ") + e.what(), loc_str(site));
  } catch (const kernels::KernelError& e) {
    throw ExecError(e.what(), loc_str(site));
  }
  return call(callee, std::move(args), site);
}

RtValue Executor::call(RtValue fn, std::vector<RtValue> args, const Node* site) {
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  };
  if (depth_ >= opts_.max_depth)
    throw ExecError("maximum recursion depth (" + std::to_string(opts_.max_depth) + ") exceeded", loc_str(site));
  ++depth_;
  DepthGuard guard{depth_};
  for (;;) {
    // Unwrap partial applications: their arguments come first.
    while (auto p = fn.get_if<std::shared_ptr<const RtPartial>>()) {
      std::shared_ptr<const RtPartial> part = *p;
      args.insert(args.begin(), part->args.begin(), part->args.end());
      fn = part->fn;
    }
    auto c = fn.get_if<RtClosure>();
    if (!c) {
      if (fn.is<ir::PrimRef>() || fn.is<ir::IrOp>() || fn.is<ir::HostRef>()) return apply(fn, std::move(args), site);
      throw ExecError("a value of type " + type_name(fn) + " is not callable", loc_str(site));
    }
    const FuncGraph* g = c->graph;
    if (args.size() != g->params().size())
      throw ExecError("@" + g->name() + " takes " + std::to_string(g->params().size()) + " arguments, got " +
                          std::to_string(args.size()),
                      loc_str(site));
    Frame f{g, c->captures, {}};
    for (size_t i = 0; i < args.size(); ++i) f.vals[g->params()[i]] = std::move(args[i]);
    args.clear();
    const Node* out = g->output();
    if (!out) throw ExecError("@" + g->name() + " has no output", loc_str(site));
    bool tail = out->is_apply() && out->graph() == g;
    const ir::Liveness& live = info(g).live;
    const std::vector<const Node*>* out_release = nullptr;
    for (size_t k = 0; k < live.order.size(); ++k) {
      const Node* n = live.order[k];
      if (n == out) out_release = &live.release[k];
      if (!n->is_apply() || n == out) continue;
      if (f.vals.count(n)) {
        for (const Node* d : live.release[k]) f.vals.erase(d);
        continue;
      }
      compute(f, n, live.release[k]);
    }
    if (!tail) return value_of(f, out);
    // The output is a call: evaluate its callee and arguments here, then
    // either loop (a graph call: the trampoline) or apply it directly.
    RtValue callee = value_of(f, out->callee());
    std::vector<RtValue> next_args;
    next_args.reserve(out->num_args());
    for (size_t i = 0; i < out->num_args(); ++i) next_args.push_back(value_of(f, out->arg(i)));
    if (out_release)
      for (const Node* d : *out_release) f.vals.erase(d);
    if (callee.is<RtClosure>() || callee.is<std::shared_ptr<const RtPartial>>()) {
      fn = std::move(callee);
      args = std::move(next_args);
      site = out;
      continue;
    }
    return apply(callee, std::move(next_args), out);
  }
}

}  // namespace

RtValue run_graph(const FuncGraph& g, std::vector<RtValue> args, ExecOptions opts) {
  if (!ir::free_variables(g).empty())
    throw ExecError("@" + g.name() + " has free variables; run its enclosing graph instead", loc_str(g.output()));
  Executor ex(std::move(opts));
  kernels::TraceSpan span("@" + g.name(), "graph");  // the profiler's timeline: one compiled-graph run
  return ex.call(RtValue(RtClosure{&g, nullptr}), std::move(args), nullptr);
}

RtValue call_value(const RtValue& fn, std::vector<RtValue> args, ExecOptions opts) {
  Executor ex(std::move(opts));
  return ex.call(fn, std::move(args), nullptr);
}

}  // namespace msl::exec
