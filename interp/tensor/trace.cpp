// Tracing: the per-thread stack of active traces, recording primitives on
// tracers into the trace's graph, and trace_function, which runs an MSL
// function on tracers and turns its result into the graph's output. The
// design is in trace.h; the hooks that route tracers here from the tensor
// binding are in module_msl_core.cpp and tensor_*.cpp.
#include "interp/tensor/trace.h"

#include <fmt/format.h>

#include <functional>
#include <iterator>

#include "interp/core/native_args.h"
#include "interp/core/nodes.h"
#include "interp/tensor/tensor_object.h"
#include "kernels/errors.h"

namespace msl::trace {

using kernels::Attrs;
using kernels::DType;
using kernels::Prim;
using kernels::PrimDef;
using kernels::PrimKind;
using kernels::Tensor;
using kernels::TensorSpec;

namespace {

// The active traces of this thread, outermost first. A trace is active from
// the call of the traced function until its result has been converted.
thread_local std::vector<std::shared_ptr<TraceState>> tl_stack;

TraceState* innermost() { return tl_stack.empty() ? nullptr : tl_stack.back().get(); }

// Pushes a trace for the duration of a scope; ends it (graph = null) on the
// way out, normal or exceptional, so its tracers can never record again.
struct ActiveTrace {
  explicit ActiveTrace(std::shared_ptr<TraceState> s) : state(std::move(s)) { tl_stack.push_back(state); }
  ~ActiveTrace() {
    state->graph = nullptr;
    // Inner traces are popped by their own scopes first, so this one is on
    // top; searching anyway keeps the stack exact whatever happens.
    for (auto it = tl_stack.rbegin(); it != tl_stack.rend(); ++it)
      if (*it == state) {
        tl_stack.erase(std::next(it).base());
        break;
      }
  }
  ActiveTrace(const ActiveTrace&) = delete;
  ActiveTrace& operator=(const ActiveTrace&) = delete;
  std::shared_ptr<TraceState> state;
};

Value make_tracer(const std::shared_ptr<TraceState>& s, const TensorSpec& spec, ir::Node* node) {
  return Value::object(new TracerObj(Ref<Class>(s->tensor_cls), spec, node, s));
}


// A Parameter the traced function reads without taking it as an argument
// (self.weight in a library method): in the graph it would be a constant,
// its value at trace time, and later updates would never be seen. The
// trace fails instead, so the call runs in the interpreter (graph mode) or
// the error names the Parameter.
[[noreturn]] void frozen_parameter(Interp& I, TraceState& s, const Value& v) {
  const ParamInfo* info = tensor_obj(v)->param.get();
  raise_exc(I, "RuntimeError",
            fmt::format("tracing '{}': it reads Parameter '{}', which is not one of its arguments; its value would "
                        "be frozen into the graph",
                        s.fn_name, info ? info->name : "?"));
}

// The graph node of one primitive input and its spec: a tracer's node, or a
// constant for a concrete tensor, a number (by the scalar rule against
// `like`) or a nested list.
ir::Node* input_node(Interp& I, TraceState& s, const Value& v, DType like, const PrimDef& def, size_t i,
                     TensorSpec& spec) {
  if (is_tracer(v)) {
    TracerObj& t = usable(I, v);
    spec = t.spec;
    return t.node;
  }
  if (is_tensor(v) && tensor_obj(v)->param && !s.freeze_parameters) frozen_parameter(I, s, v);
  Tensor c;
  if (!operand_tensor(I, v, like, c, def.name))
    raise_type_error(I, fmt::format("{}() tensor argument {} must be a Tensor, a number or a list, not {}", def.name,
                                    i + 1, I.type_name(v)));
  spec = c.spec();
  return s.graph->constant(std::move(c));
}

// The graph node for (part of) the traced function's result.
ir::Node* output_node(Interp& I, TraceState& s, const Value& v) {
  I.check_stack();
  ir::FuncGraph& g = *s.graph;
  if (is_tracer(v)) return usable(I, v).node;
  if (is_tensor(v) && tensor_obj(v)->param && !s.freeze_parameters) frozen_parameter(I, s, v);
  if (is_tensor(v)) return g.constant(tensor_of(v));
  if (v.is_none()) return g.constant(ir::NoneValue{});
  if (v.is_bool()) return g.constant(v.as_bool());
  if (v.is_int()) return g.constant(v.as_int());
  if (v.is_float()) return g.constant(v.as_float());
  if (v.is(Kind::Str)) return g.constant(v.as<Str>()->s);
  if (v.is(Kind::Tuple) || v.is(Kind::List)) {
    std::vector<ir::Node*> items;
    for (const Value& x : v.is(Kind::Tuple) ? v.as<Tuple>()->items : v.as<List>()->items)
      items.push_back(output_node(I, s, x));
    return g.apply(ir::IrOp::make_tuple, std::move(items));
  }
  raise_type_error(I, fmt::format("tracing '{}': the result contains a value of type '{}', which a graph cannot "
                                  "return (tensors, numbers, strings, None and tuples or lists of them can)",
                                  s.fn_name, I.type_name(v)));
}

TensorClass* tensor_class(Interp& I) {
  Ref<Module> core = I.import_module("msl._core", nullptr);
  GlobalSlot* slot = core->find(I.intern("Tensor"));
  if (!slot || !slot->value.is(Kind::Class)) raise_exc(I, "RuntimeError", "trace: msl._core.Tensor is missing");
  return static_cast<TensorClass*>(slot->value.as<Class>());
}

// The name of the traced function for messages, and its parameter names.
std::string function_name(const Value& fn, const std::string& fallback) {
  if (fn.is(Kind::Function) && fn.as<Function>()->name) return fn.as<Function>()->name->s;
  if (fn.is(Kind::Native)) return fn.as<Native>()->name;
  return fallback;
}

std::string param_name(const Value& fn, size_t i) {
  if (!fn.is(Kind::Function)) return "";
  const FuncCode& code = *fn.as<Function>()->code;
  return i < code.nposargs && i < code.param_names.size() ? code.param_names[i]->s : "";
}

}  // namespace

// ------------------------------------------------------------------ checks

bool active() { return !tl_stack.empty(); }

bool any_tracer(std::span<const Value> values) {
  for (const Value& v : values)
    if (is_tracer(v)) return true;
  return false;
}

TracerObj& usable(Interp& I, const Value& v) {
  TracerObj& t = *tracer_obj(v);
  const TraceState& s = *t.trace;
  if (!s.graph)
    raise_exc(I, "RuntimeError",
              fmt::format("a tracer of the trace of '{}' was used after that trace ended: {} escaped from the traced "
                          "function (stored in a global, an object or a closure)\nhelp: return traced values from the "
                          "traced function instead of storing them",
                          s.fn_name, tracer_repr(t.spec)));
  TraceState* top = innermost();
  if (top != &s)
    raise_exc(I, "RuntimeError",
              fmt::format("tracing '{}': {} belongs to the enclosing trace of '{}'; a nested trace cannot capture "
                          "the traced values of an outer one\nhelp: pass the value to the inner function as an "
                          "argument",
                          top ? top->fn_name : "?", tracer_repr(t.spec), s.fn_name));
  return t;
}

void needs_value(Interp& I, const Value& v, const std::string& what) {
  TracerObj& t = usable(I, v);
  raise_type_error(I, fmt::format("tracing '{}': {} needs the value of a traced tensor ({}), which is not known "
                                  "while tracing\nhelp: a traced function may branch on shapes and dtypes, not on "
                                  "tensor values",
                                  t.trace->fn_name, what, tracer_repr(t.spec)));
}

void cannot_trace(Interp& I, const Value& v, const std::string& message) {
  TracerObj& t = usable(I, v);
  raise_exc(I, "RuntimeError", fmt::format("tracing '{}': {}", t.trace->fn_name, message));
}

// --------------------------------------------------------------- recording

Value apply_prim(Interp& I, Prim p, std::span<const Value> inputs, const Attrs& attrs) {
  const PrimDef& def = kernels::prim_def(p);
  const Value* first = nullptr;
  for (const Value& v : inputs)
    if (is_tracer(v)) {
      first = &v;
      break;
    }
  // A random primitive is recorded without its seed and offset: the graph
  // draws them from the global generator each time it runs
  // (kernels::draw_random_attrs), as PyNative does per call. So one on
  // constant inputs (ops.uniform(shape, a, b) in a construct) goes into the
  // innermost trace too, where every other primitive on constants is
  // computed now. A collective likewise: every run must exchange data.
  if (!first && !((kernels::is_random(p) || kernels::is_collective(p)) && !tl_stack.empty()))
    raise_exc(I, "RuntimeError", fmt::format("trace: {}() has no traced input", def.name));
  std::shared_ptr<TraceState> s = first ? usable(I, *first).trace : tl_stack.back();
  if (first && def.kind == PrimKind::InPlace)
    cannot_trace(I, *first, fmt::format("{}() writes into its input in place, which a trace cannot capture", def.name));
  // nonzero's inferred length is only an upper bound (movement_scatter.cpp).
  if (first && p == Prim::nonzero)
    cannot_trace(I, *first, "nonzero() of a traced tensor has a length that depends on its values, which a trace "
                            "cannot capture");

  DType like = DType::Float32;
  for (const Value& v : inputs)
    if (is_tensor_or_tracer(v)) {
      like = is_tracer(v) ? tracer_obj(v)->spec.dtype : tensor_of(v).dtype();
      break;
    }
  std::vector<ir::Node*> args;
  std::vector<TensorSpec> specs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) args.push_back(input_node(I, *s, inputs[i], like, def, i, specs[i]));
  std::vector<TensorSpec> outs;
  kernel_call(I, [&] { kernels::infer(p, specs, attrs, outs); });

  ir::Node* node = s->graph->apply(p, std::move(args), "", {}, attrs);
  if (outs.size() == 1) return make_tracer(s, outs[0], node);
  std::vector<Value> items;
  for (size_t i = 0; i < outs.size(); ++i) {
    ir::Node* item = s->graph->apply(ir::IrOp::tuple_getitem, {node, s->graph->constant(static_cast<int64_t>(i))});
    items.push_back(make_tracer(s, outs[i], item));
  }
  return new_tuple(std::move(items));
}

Value filled_like(Interp& I, const Value& like, DType dtype, const Value& fill) {
  TracerObj& t = usable(I, like);
  std::shared_ptr<TraceState> s = t.trace;
  // zeros_like makes a fresh tensor on every run; a broadcast constant would
  // hand every caller a view of one shared buffer.
  Value r = make_tracer(s, t.spec, s->graph->apply(ir::IrOp::zeros_like, {t.node}));
  if (dtype != t.spec.dtype) r = apply_prim(I, Prim::cast, std::span<const Value>(&r, 1), Attrs{{"dtype", dtype}});
  bool zero = fill.is_float() ? fill.as_float() == 0 : fill.is_int() ? fill.as_int() == 0 : !fill.as_bool();
  if (zero) return r;
  if (dtype == DType::Bool) return apply_prim(I, Prim::logical_not, std::span<const Value>(&r, 1), {});
  Value in[2] = {r, fill};
  return apply_prim(I, Prim::add, in, {});
}

Value stop_gradient(Interp& I, const Value& x) {
  TracerObj& t = usable(I, x);
  return make_tracer(t.trace, t.spec, t.trace->graph->apply(ir::IrOp::stop_gradient, {t.node}));
}

// ----------------------------------------------------------- trace_function

ir::FuncGraph* trace_function(Interp& I, ir::IrModule& m, const Value& fn, const std::vector<TraceInput>& args,
                              const std::vector<std::pair<std::string, Value>>& kwargs, const std::string& name,
                              bool freeze_parameters) {
  auto state = std::make_shared<TraceState>();
  state->freeze_parameters = freeze_parameters;
  state->fn_name = function_name(fn, name);
  state->tensor_cls = tensor_class(I);
  std::function<void(const TraceInput&, size_t)> check = [&](const TraceInput& in, size_t i) {
    for (const TraceInput& item : in.items) check(item, i);
    if (!in.is_tensor) return;
    for (int64_t d : in.shape)
      if (d < 0)
        raise_value_error(I, fmt::format("trace '{}': argument {} has a negative dimension in shape {}", state->fn_name,
                                         i + 1, in.shape.str()));
  };
  for (size_t i = 0; i < args.size(); ++i) check(args[i], i);

  ir::FuncGraph* g = m.new_graph(name);
  state->graph = g;
  std::function<Value(const TraceInput&, const std::string&)> make_arg = [&](const TraceInput& in,
                                                                             const std::string& pname) -> Value {
    if (in.is_tensor) return make_tracer(state, TensorSpec{in.dtype, in.shape, in.device}, g->add_param(pname));
    if (!in.is_tuple) return in.constant;
    std::vector<Value> items;
    for (size_t k = 0; k < in.items.size(); ++k)
      items.push_back(make_arg(in.items[k], pname.empty() ? "" : pname + "_" + std::to_string(k)));
    return new_tuple(std::move(items));
  };
  std::vector<Value> call_args;
  for (size_t i = 0; i < args.size(); ++i) call_args.push_back(make_arg(args[i], param_name(fn, i)));
  std::vector<std::pair<Ref<Str>, Value>> kw;
  for (const auto& [k, v] : kwargs) kw.emplace_back(Ref<Str>(I.intern(k)), v);

  try {
    ActiveTrace scope(state);
    Value result = I.call(fn, call_args, kw);
    g->set_output(output_node(I, *state, result));
  } catch (...) {
    // Keep the module valid for the verifier and printer: the graph made so
    // far cannot be removed, so it returns None and says why.
    g->set_output(g->constant(ir::NoneValue{}));
    g->flags().set("trace_failed", true);
    throw;
  }
  return g;
}

void tensor_leaves(ir::FuncGraph* g, ir::Node* arg, const TraceInput& in, std::vector<ir::Node*>& out) {
  if (in.is_tensor) {
    out.push_back(arg);
    return;
  }
  for (size_t k = 0; k < in.items.size(); ++k)
    if (in.items[k].is_tensor || in.items[k].is_tuple)
      tensor_leaves(g, g->apply(ir::IrOp::tuple_getitem, {arg, g->constant(static_cast<int64_t>(k))}), in.items[k],
                    out);
}

}  // namespace msl::trace
