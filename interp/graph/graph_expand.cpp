// Expanding library calls of a specialized graph into primitives: each call
// of a host function (a library wrapper, a gradient rule) whose arguments
// have known types is traced at those types (interp/tensor/trace.h) and replaced by
// a call of the traced graph, which the clean-up pipeline then inlines. The
// result is a graph of kernel primitives only — what the native back end
// compiles — and what `msl._graph.gradient_stats` measures: the number of
// primitive applications of an optimized gradient and what AD left behind.
#include <fmt/format.h>

#include <set>
#include <sstream>

#include "interp/graph/graph_compiler_impl.h"
#include "interp/graph/graph_values.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"
#include "jit/passes/ad_residue.h"
#include "jit/passes/rewrite.h"
#include "jit/passes/typed_simplify.h"
#include "lang/ir/printer.h"

namespace msl {

namespace {

// The trace inputs of `n`'s arguments from their specialized types, the
// tensor arguments collected; false when one has no traceable type.
bool typed_inputs(GraphCompiler& gc, const jit::Specialized& sp, const ir::Node* n,
                  std::vector<trace::TraceInput>& inputs, std::vector<ir::Node*>& tensor_args, std::string& key) {
  for (size_t i = 0; i < n->num_args(); ++i) {
    auto it = sp.types.find(n->arg(i)->id());
    trace::TraceInput in;
    if (it == sp.types.end() || !gc.trace_input(it->second, in)) return false;
    trace::tensor_leaves(n->graph(), n->arg(i), in, tensor_args);
    key += jit::identity_key(it->second) + ";";
    inputs.push_back(std::move(in));
  }
  return true;
}

const HostValue* library_function(const ir::Node* n) {
  if (!n->is_constant()) return nullptr;
  auto hv = dynamic_cast<const HostValue*>(n->as_host());
  return hv && !dynamic_cast<const CustomBpropHost*>(hv) ? hv : nullptr;
}

// A call of a gradient function (value_and_grad(net, None, weights) in
// TrainOneStepCell) from the root graph whose weights are all parameters
// of the root graph too: the call of its compiled gradient graph with
// those parameters, so the training step becomes one graph (the inliner
// then merges the two). Null when it is not such a call.
ir::Node* inline_grad_call(GraphCompiler& gc, const jit::Specialized& sp, const ir::Node* n,
                           const WeightParams& weights) {
  const ir::Node* callee = n->callee();
  auto hv = callee->is_constant() ? dynamic_cast<const HostValue*>(callee->as_host()) : nullptr;
  if (!hv || n->graph() != sp.graph || weights.values.empty()) return nullptr;
  GradFunctionObj* gf = grad_function_of(hv->value());
  if (!gf || gf->spec.has_aux || (gf->spec.sens_param && n->num_args() == 0)) return nullptr;
  size_t nargs = n->num_args() - (gf->spec.sens_param ? 1 : 0);
  const Compiled& c = gc.compile_grad(gf, nargs);
  ir::FuncGraph* g = sp.graph;
  std::vector<ir::Node*> call{g->constant(c.graph)};
  for (size_t i = 0; i < nargs; ++i) call.push_back(n->arg(i));
  for (const Value& w : c.weights) {
    size_t j = 0;
    while (j < weights.values.size() && weights.values[j].obj() != w.obj()) ++j;
    if (j == weights.values.size()) return nullptr;  // a weight the step does not have
    call.push_back(g->params()[weights.first + j]);
  }
  if (c.sens_param) call.push_back(n->arg(nargs));
  return g->apply(call, n->name(), n->loc());
}

}  // namespace

// Replaces traceable host calls in `sp`'s graph nest; returns how many.
// f(args) becomes a call of f traced at the arguments' types; J(f)(args),
// which AD leaves for library functions, a call of J of that trace (what
// debug mode makes at run time), which the clean-up then inlines.
size_t expand_host_calls(GraphCompiler& gc, const jit::Specialized& sp, const WeightParams& weights) {
  jit::Subst subst;
  for (ir::FuncGraph* h : ir::nested_graphs(*sp.graph)) {
    for (ir::Node* n : ir::topo_order(*h)) {
      if (!n->is_apply()) continue;
      if (ir::Node* grad = inline_grad_call(gc, sp, n, weights)) {
        subst[n] = grad;
        continue;
      }
      // J of host data (a Cell's stride tuple passed to a library function
      // under AD) is the data: the call taking it can then be traced.
      if (n->is_call_of(ir::IrOp::J) && n->num_args() == 1 && gc.host_data(n->arg(0)->as_host())) {
        subst[n] = n->arg(0);
        continue;
      }
      ir::Node* callee = n->callee();
      bool j = callee->is_call_of(ir::IrOp::J) && callee->num_args() == 1;
      const HostValue* hv = library_function(j ? callee->arg(0) : callee);
      if (!hv) continue;
      auto first = n->num_args() > 0 ? sp.types.find(n->arg(0)->id()) : sp.types.end();
      if (!gc.may_trace(*hv, first != sp.types.end() ? &first->second : nullptr)) continue;  // runs as a host call
      std::vector<trace::TraceInput> inputs;
      std::vector<ir::Node*> tensor_args;
      std::string key = fmt::format("expand:{}:", static_cast<const void*>(hv));
      if (!typed_inputs(gc, sp, n, inputs, tensor_args, key)) continue;
      std::vector<ir::Node*> call;
      try {
        if (j) {
          call.push_back(h->constant(gc.traced_j(*hv, 1, inputs, key)));
          call.insert(call.end(), n->inputs().begin() + 1, n->inputs().end());
        } else {
          call.push_back(h->constant(trace::trace_function(gc.I, gc.module, hv->value(), inputs, {}, hv->name())));
          call.insert(call.end(), tensor_args.begin(), tensor_args.end());
        }
      } catch (const MslError&) {
        continue;  // not traceable: stays a host call
      } catch (const ad::GradError&) {
        continue;  // differentiated at run time, which reports the error
      }
      subst[n] = h->apply(call, n->name(), n->loc());
    }
  }
  if (!subst.empty()) jit::rebuild_with(gc.module, *sp.graph, subst);
  return subst.size();
}

jit::Specialized expand_to_primitives(GraphCompiler& gc, jit::Specialized sp, const std::vector<jit::AbsValue>& sig,
                                      const WeightParams& weights) {
  jit::SpecializeOptions so = gc.specialize_options();
  // Expanding a J(f) call gives the backpropagator's rule calls types, so
  // they expand in the next round.
  for (int round = 0; round < 8 && expand_host_calls(gc, sp, weights) > 0; ++round) {
    gc.optimize(*sp.graph);
    sp = jit::specialize(gc.module, *sp.graph, sig, so);
  }
  if (jit::run_typed_simplify(gc.module, sp)) {
    gc.optimize(*sp.graph);
    // The clean-up rebuilt nodes: type them again (fusion reads the types).
    sp = jit::specialize(gc.module, *sp.graph, sig, so);
  }
  return sp;
}

GraphUse graph_use(const ir::FuncGraph& g) {
  GraphUse use;
  std::vector<const ir::FuncGraph*> work{&g};
  std::set<const ir::FuncGraph*> seen{&g};
  while (!work.empty()) {
    const ir::FuncGraph* top = work.back();
    work.pop_back();
    for (ir::FuncGraph* h : ir::nested_graphs(*top)) {
      seen.insert(h);
      for (ir::Node* n : ir::topo_order(*h)) {
        use.effects |= jit::is_effect(n);
        use.switches |= n->is_call_of(ir::IrOp::switch_);
        for (ir::Node* in : n->inputs()) {
          if (!in->is_constant()) continue;
          if (const ir::HostObject* h = in->as_host()) {
            if (!use.host) use.first_host = h->name();
            use.host = true;
          }
          if (const ir::FuncGraph* c = in->as_graph(); c && seen.insert(c).second) work.push_back(c);
        }
      }
    }
  }
  use.graphs = seen.size();
  return use;
}

// msl._graph.gradient_stats(grad_fn, *args): the gradient graph for these
// arguments, specialized, with library calls expanded and cleaned up:
// (number of primitive applications, number of AD residue nodes, IR text,
// the result of running it on args).
Value gradient_stats(Interp& I, const Value& grad_fn, std::span<Value> args) {
  GraphCompiler& gc = compiler_of(I);
  GradFunctionObj* gf = grad_function_of(grad_fn);
  if (!gf) I.raise(I.exception_class("TypeError").get(), "gradient_stats: expected a gradient function");
  size_t nargs = args.size() - (gf->spec.sens_param ? 1 : 0);
  const Compiled& c = gc.compile_grad(gf, nargs);
  std::vector<exec::RtValue> rt = gc.executor_args(c, args);
  std::vector<jit::AbsValue> sig;
  for (const exec::RtValue& a : rt) sig.push_back(abstract_of(a));
  jit::Specialized sp;
  try {
    sp = expand_to_primitives(gc, jit::specialize(gc.module, *c.graph, sig, gc.specialize_options()), sig);
  } catch (const jit::SpecializeError& e) {
    gc.specialize_failed(e);
  }
  // Run it too, so callers can check the expanded graph against the one
  // debug mode runs.
  exec::RtValue result;
  try {
    result = exec::run_graph(*sp.graph, std::move(rt), gc.exec_options());
  } catch (...) {
    raise_exec_error(I);
  }
  return new_tuple({Value::integer(static_cast<int64_t>(jit::count_primitive_applies(*sp.graph))),
                    Value::integer(static_cast<int64_t>(jit::ad_residue(*sp.graph).size())),
                    Value::object(new Str(ir::print_graph(*sp.graph))), from_rt(I, gc.tensor_cls, result)});
}

}  // namespace msl
