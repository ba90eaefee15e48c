// Expanding library calls of a specialized graph into primitives: each call
// of a host function (a library wrapper, a gradient rule) whose arguments
// have known types is traced at those types (interp/trace.h) and replaced by
// a call of the traced graph, which the clean-up pipeline then inlines. The
// result is a graph of kernel primitives only — what the native back end
// compiles — and what `msl._graph.gradient_stats` measures: the number of
// primitive applications of an optimized gradient and what AD left behind.
#include <sstream>

#include "interp/graph_compiler_impl.h"
#include "interp/graph_values.h"
#include "interp/native_args.h"
#include "interp/tensor_object.h"
#include "interp/trace.h"
#include "jit/passes/ad_residue.h"
#include "jit/passes/rewrite.h"
#include "jit/passes/typed_simplify.h"
#include "lang/ir/printer.h"

namespace msl {

// Replaces traceable host calls in `sp`'s graph nest; returns how many.
size_t expand_host_calls(GraphCompiler& gc, const jit::Specialized& sp) {
  jit::Subst subst;
  for (ir::FuncGraph* h : ir::nested_graphs(*sp.graph)) {
    for (ir::Node* n : ir::topo_order(*h)) {
      if (!n->is_apply() || !n->callee()->is_constant()) continue;
      auto hv = dynamic_cast<const HostValue*>(n->callee()->as_host());
      if (!hv || dynamic_cast<const CustomBpropHost*>(hv)) continue;
      std::vector<trace::TraceInput> inputs;
      std::vector<ir::Node*> tensor_args;
      bool ok = true;
      for (size_t i = 0; i < n->num_args() && ok; ++i) {
        auto it = sp.types.find(n->arg(i)->id());
        trace::TraceInput in;
        ok = it != sp.types.end() && gc.trace_input(it->second, in);
        if (ok && in.is_tensor) tensor_args.push_back(n->arg(i));
        inputs.push_back(std::move(in));
      }
      if (!ok) continue;
      ir::FuncGraph* t = nullptr;
      try {
        t = trace::trace_function(gc.I, gc.module, hv->value(), inputs, {}, hv->name());
      } catch (const MslError&) {
        continue;  // not traceable: stays a host call
      }
      std::vector<ir::Node*> call{h->constant(t)};
      call.insert(call.end(), tensor_args.begin(), tensor_args.end());
      subst[n] = h->apply(call, n->name(), n->loc());
    }
  }
  if (!subst.empty()) jit::rebuild_with(gc.module, *sp.graph, subst);
  return subst.size();
}

// msl._graph.gradient_stats(grad_fn, *args): the gradient graph for these
// arguments, specialized, with library calls expanded and cleaned up:
// (number of primitive applications, number of AD residue nodes, IR text,
// the result of running it on args).
Value gradient_stats(Interp& I, const Value& grad_fn, std::span<Value> args) {
  GraphCompiler& gc = compiler_of(I);
  if (!grad_fn.is(Kind::NativeData) || typeid(*grad_fn.obj()) != typeid(GradFunctionObj))
    I.raise(I.exception_class("TypeError").get(), "gradient_stats: expected a gradient function");
  auto* gf = static_cast<GradFunctionObj*>(grad_fn.obj());
  size_t nargs = args.size() - (gf->spec.sens_param ? 1 : 0);
  const Compiled& c = gc.compile_grad(gf, nargs);
  std::vector<exec::RtValue> rt = gc.executor_args(c, args);
  std::vector<jit::AbsValue> sig;
  for (const exec::RtValue& a : rt) sig.push_back(abstract_of(a));
  jit::SpecializeOptions so;
  so.host_call = [&gc](const ir::HostRef& h, const std::vector<jit::AbsValue>& a) { return gc.host_type(h, a); };
  auto specialize = [&](ir::FuncGraph& g) {
    try {
      return jit::specialize(gc.module, g, sig, so);
    } catch (const jit::SpecializeError& e) {
      I.raise(I.exception_class("GraphModeError").get(), e.what());
    }
  };
  // Specialize, expand library calls at the types found, clean up; then
  // specialize the primitive graph again for the type-directed no-ops.
  jit::Specialized sp = specialize(*c.graph);
  expand_host_calls(gc, sp);
  gc.optimize(*sp.graph);
  sp = specialize(*sp.graph);
  if (jit::run_typed_simplify(gc.module, sp)) gc.optimize(*sp.graph);
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
