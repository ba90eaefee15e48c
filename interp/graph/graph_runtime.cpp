// The executor's hooks into the host (graph_compiler_impl.h): calling host
// objects, gradient rules bound to attributes, and J of values that are only
// known at run time (host functions, primitives reached as values).
//
// J of a host function h (a library function such as ops.square, or a
// gradient rule when differentiating a second time) cannot be a static
// transform: h is MSL code with Python-level logic. At run time its
// J-value is a JHost object; calling it with arguments traces h at their
// shapes and dtypes (interp/tensor/trace.h) into a straight-line graph T whose
// parameters are all the arguments, transforms T with the same J, caches the
// result per signature and calls it. Non-tensor arguments are constants of
// the trace (part of the signature) and get zero sensitivities.
#include <sstream>

#include "interp/builtins/builtins.h"
#include "interp/graph/graph_compiler_impl.h"
#include "interp/graph/graph_host_adapter.h"
#include "interp/graph/graph_values.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"

namespace msl {

namespace {

bool holds_tensor(const exec::RtValue& v) {
  if (v.is<kernels::Tensor>()) return true;
  if (v.is<exec::RtTuple>())
    for (const exec::RtValue& x : v.tuple())
      if (holds_tensor(x)) return true;
  return false;
}

// A primitive's gradient rule bound to its attributes (rule_for). Calls of
// it run a graph traced once per argument signature instead of the MSL
// rule (the rule is a straight-line composite of primitives, so the trace
// is exact): debug mode then pays no interpreter work per rule call.
class RuleHost final : public HostValue {
 public:
  using HostValue::HostValue;
};

// J of a host object, `order` times (J(J(h)) when a gradient that calls a
// library function is differentiated again): called with J-values (which
// for tensors and numbers are the values themselves).
class JHost final : public ir::HostObject {
 public:
  JHost(ir::HostRef fn, int order) : fn_(std::move(fn)), order_(order) {}
  std::string name() const override { return "J" + std::to_string(order_) + "(" + fn_->name() + ")"; }
  const ir::HostRef& fn() const { return fn_; }
  int order() const { return order_; }

 private:
  ir::HostRef fn_;
  int order_;
};

// The types of the tensors a trace takes as parameters for an argument of
// type `a` (trace::tensor_leaves' order: tuples of tensors flatten).
void tensor_leaf_types(const jit::AbsValue& a, const trace::TraceInput& in, std::vector<jit::AbsValue>& out) {
  if (in.is_tensor) {
    out.push_back(a);
    return;
  }
  auto t = a.get_if<jit::AbsTuple>();
  if (!t) return;
  for (size_t k = 0; k < in.items.size() && k < t->items.size(); ++k)
    if (in.items[k].is_tensor || in.items[k].is_tuple) tensor_leaf_types(t->items[k], in.items[k], out);
}

Value attr_to_value(TensorClass* tc, const kernels::AttrValue& a) {
  return std::visit(
      [&](auto&& x) -> Value {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) return Value::boolean(x);
        else if constexpr (std::is_same_v<T, int64_t>) return Value::integer(x);
        else if constexpr (std::is_same_v<T, double>) return Value::number(x);
        else if constexpr (std::is_same_v<T, std::string>) return Value::object(new Str(x));
        else if constexpr (std::is_same_v<T, kernels::DType>) return dtype_value(tc, x);
        else {
          std::vector<Value> items;
          for (int64_t i : x) items.push_back(Value::integer(i));
          return new_list(std::move(items));
        }
      },
      a);
}

}  // namespace

ir::ConstValue GraphCompiler::rule_for(const ir::PrimRef& p) {
  std::string key = kernels::prim_name(p.prim);
  key += "[" + ir::attrs_str(p.attrs) + "]";
  auto it = rules_.find(key);
  if (it != rules_.end()) return it->second;
  if (bound_rule_.is_undef() || bound_rule_.is_none()) {
    Ref<Module> reg = I.import_module("msl._bprop", nullptr);
    bound_rule_ = reg->get(I.intern("bound_rule"));
    if (bound_rule_.is_undef())
      I.raise(I.exception_class("RuntimeError").get(), "msl._bprop has no bound_rule: the gradient rules are missing");
  }
  std::vector<Value> args{Value::object(new Str(kernels::prim_name(p.prim)))};
  std::vector<Value> names, values;
  for (auto& [n, v] : p.attrs.items()) {
    names.push_back(Value::object(new Str(n)));
    values.push_back(attr_to_value(tensor_cls, v));
  }
  args.push_back(new_tuple(std::move(names)));
  args.push_back(new_tuple(std::move(values)));
  Value rule = I.call(bound_rule_, std::span<Value>(args));
  ir::ConstValue c = std::make_shared<const RuleHost>(rule, std::string("bprop_") + kernels::prim_name(p.prim));
  rules_.emplace(key, c);
  return c;
}

const HostValue* GraphCompiler::host_data(const ir::HostObject* h) {
  auto hv = dynamic_cast<const HostValue*>(h);
  return hv && !value_is_callable(I, hv->value()) ? hv : nullptr;
}

exec::RtValue GraphCompiler::runtime_j(const exec::RtValue& fn) {
  try {
    if (auto h = fn.get_if<ir::HostRef>()) {
      // A host value that is not a function (a dtype, a module) is its own
      // J-value, as numbers and tensors are.
      if (host_data(h->get())) return fn;
      if (auto jh = dynamic_cast<const JHost*>(h->get()))
        return exec::RtValue(ir::HostRef(std::make_shared<const JHost>(jh->fn(), jh->order() + 1)));
      return exec::RtValue(ir::HostRef(std::make_shared<const JHost>(*h, 1)));
    }
    if (auto p = fn.get_if<ir::PrimRef>()) return exec::RtValue(exec::RtClosure{grad.j_prim(*p), nullptr});
    if (auto c = fn.get_if<exec::RtClosure>()) {
      if (c->captures && !c->captures->empty())
        throw exec::ExecError("J of a closure that captures values is not supported at run time (@" +
                                  c->graph->name() + ")",
                              "");
      return exec::RtValue(exec::RtClosure{grad.j_graph(const_cast<ir::FuncGraph*>(c->graph)), nullptr});
    }
  } catch (const ad::GradError& e) {
    throw exec::ExecError(e.message(), e.location());
  }
  throw exec::ExecError("J of a value of type " + exec::type_name(fn) + " is not supported", "");
}

exec::RtValue GraphCompiler::call_host(const ir::HostRef& h, std::vector<exec::RtValue> args) {
  if (auto rule = dynamic_cast<const RuleHost*>(h.get())) {
    if (const ir::FuncGraph* g = traced_rule(*rule, args)) {
      std::vector<exec::RtValue> tensors;
      for (exec::RtValue& a : args)
        if (a.is<kernels::Tensor>()) tensors.push_back(std::move(a));
      return exec::call_value(exec::RtValue(exec::RtClosure{g, nullptr}), std::move(tensors), exec_options());
    }
  }
  if (auto hv = dynamic_cast<const HostValue*>(h.get())) {
    std::vector<Value> vals;
    for (const exec::RtValue& a : args) vals.push_back(from_rt(I, tensor_cls, a));
    Value r = I.call(hv->value(), std::span<Value>(vals));
    return to_rt(I, r);
  }
  auto jh = dynamic_cast<const JHost*>(h.get());
  if (!jh) throw exec::ExecError("cannot call " + h->name() + " from a graph", "");
  auto hv = dynamic_cast<const HostValue*>(jh->fn().get());
  if (!hv) throw exec::ExecError("cannot differentiate " + jh->fn()->name(), "");
  if (auto cb = dynamic_cast<const CustomBpropHost*>(hv); cb && jh->order() == 1) {
    // A Cell's own bprop: out = construct(*args), backpropagator from
    // Cell._custom_bprop (returns (None, grads...): None is a zero env).
    std::vector<Value> vals;
    for (const exec::RtValue& a : args) vals.push_back(from_rt(I, tensor_cls, a));
    Value out = I.call(cb->value(), std::span<Value>(vals));
    Value maker = I.getattr(cb->cell(), I.intern("_custom_bprop"));
    if (maker.is_undef())
      throw exec::ExecError(cb->name() + " defines bprop but is not a Cell (no _custom_bprop)", "");
    std::vector<Value> margs{new_tuple(vals), out};
    Value bp = I.call(maker, std::span<Value>(margs));
    return exec::make_tuple({to_rt(I, out), exec::RtValue(host_ref(I, bp))});
  }
  if (jh->order() == 1 && side_effect_primitive(I, hv->value())) {
    // A summary operator (or another side_effect_io primitive) in a
    // differentiated construct: it runs now, in the forward pass, on the
    // real values; its result is discarded, so nothing flows back through
    // it and its backpropagator (Primitive._effect_backprop) gives zeros.
    std::vector<Value> vals;
    for (const exec::RtValue& a : args) vals.push_back(from_rt(I, tensor_cls, a));
    Value out = I.call(hv->value(), std::span<Value>(vals));
    Value maker = I.getattr(hv->value(), I.intern("_effect_backprop"));
    std::vector<Value> margs{new_tuple(vals)};
    Value bp = I.call(maker, std::span<Value>(margs));
    return exec::make_tuple({to_rt(I, out), exec::RtValue(host_ref(I, bp))});
  }
  Value receiver = !args.empty() && args[0].is<ir::HostRef>() ? from_rt(I, tensor_cls, args[0]) : Value::undef();
  if (!traceable_host_call(I, hv->value(), receiver.is_undef() ? nullptr : &receiver))
    throw exec::ExecError("cannot differentiate " + hv->name() +
                              ": it acts on host state (a method of a list, dict or file, open, print, os, sys, time "
                              "or random); call it outside the differentiated function",
                          "");
  std::vector<trace::TraceInput> inputs;
  std::string key = std::to_string(jh->order()) + ":";
  if (size_t bad = trace_signature(*hv, args, inputs, key); bad < args.size())
    throw exec::ExecError("cannot differentiate " + hv->name() + " called with a " + exec::type_name(args[bad]) +
                              " argument (tensors and constants only)",
                          "");
  ir::FuncGraph* jg;
  try {
    jg = traced_j(*hv, jh->order(), inputs, key);
  } catch (const ad::GradError& e) {
    throw exec::ExecError(e.message(), e.location());
  }
  return exec::call_value(exec::RtValue(exec::RtClosure{jg, nullptr}), std::move(args), exec_options());
}

ir::FuncGraph* GraphCompiler::traced_j(const HostValue& hv, int order, const std::vector<trace::TraceInput>& inputs,
                                       const std::string& key) {
  ir::FuncGraph*& jg = traced_j_[key];
  if (jg) return jg;
  ir::FuncGraph* t = trace::trace_function(I, module, hv.value(), inputs, {}, hv.name());
  // All arguments as parameters: the traced graph's are the tensors only.
  ir::FuncGraph* w = module.new_graph(t->name() + "_all", nullptr, t->loc());
  std::vector<ir::Node*> call{w->constant(t)};
  for (size_t i = 0; i < inputs.size(); ++i) trace::tensor_leaves(w, w->add_param("a" + std::to_string(i)), inputs[i], call);
  w->set_output(w->apply(call, "", t->loc()));
  ir::FuncGraph* g = w;
  for (int k = 0; k < order; ++k) g = grad.j_graph(g);
  return jg = g;
}

size_t GraphCompiler::trace_signature(const HostValue& fn, const std::vector<exec::RtValue>& args,
                                      std::vector<trace::TraceInput>& inputs, std::string& key) {
  std::ostringstream os;
  os << static_cast<const void*>(&fn) << "(";
  for (size_t i = 0; i < args.size(); ++i) {
    const exec::RtValue& a = args[i];
    if (auto t = a.get_if<kernels::Tensor>()) {
      kernels::DeviceType dev = t->spec().device;
      inputs.push_back(trace::TraceInput::tensor(t->dtype(), t->shape(), dev));
      os << kernels::dtype_name(t->dtype()) << t->shape().str() << kernels::device_type_name(dev) << ",";
    } else if (a.is_none() || a.is<bool>() || a.is<int64_t>() || a.is<double>() || a.is<std::string>() ||
               a.is<ir::HostRef>() || (a.is<exec::RtTuple>() && !holds_tensor(a))) {
      inputs.push_back(trace::TraceInput::value(from_rt(I, tensor_cls, a)));
      os << exec::type_name(a) << ":" << exec::to_string(a) << ",";
    } else {
      return i;
    }
  }
  key += os.str() + ")";
  return args.size();
}

bool GraphCompiler::trace_input(const jit::AbsValue& a, trace::TraceInput& out) {
  if (auto t = a.get_if<jit::AbsTensor>()) {
    out = trace::TraceInput::tensor(t->dtype, t->shape, t->device);
    return true;
  }
  if (auto t = a.get_if<jit::AbsTuple>()) {
    std::vector<trace::TraceInput> items(t->items.size());
    for (size_t i = 0; i < items.size(); ++i)
      if (!trace_input(t->items[i], items[i])) return false;
    out = trace::TraceInput::tuple(std::move(items));
    return true;
  }
  if (auto f = a.get_if<jit::AbsFunc>(); f && f->callees.size() == 1) {
    // A host value that is data (a Cell's stride tuple), or its J, which is
    // itself: passed to the trace as is.
    const jit::AbsCallee& c = f->callees[0];
    const HostValue* hv = c.kind == jit::AbsCallee::Kind::Host && c.bound.empty() ? host_data(c.host.get()) : nullptr;
    if (!hv) return false;
    out = trace::TraceInput::value(hv->value());
    return true;
  }
  auto s = a.get_if<jit::AbsScalar>();
  if (!s || !s->value) return false;
  const ir::ConstValue& v = *s->value;
  exec::RtValue rv;
  if (auto b = std::get_if<bool>(&v)) rv = exec::RtValue(*b);
  else if (auto i = std::get_if<int64_t>(&v)) rv = exec::RtValue(*i);
  else if (auto d = std::get_if<double>(&v)) rv = exec::RtValue(*d);
  else if (auto st = std::get_if<std::string>(&v)) rv = exec::RtValue(*st);
  out = trace::TraceInput::value(from_rt(I, tensor_cls, rv));
  return true;
}

const ir::FuncGraph* GraphCompiler::traced_rule(const HostValue& rule, const std::vector<exec::RtValue>& args) {
  std::vector<trace::TraceInput> inputs;
  std::string key;
  // Tuples of tensors (concat's inputs) and states: the MSL rule runs.
  if (trace_signature(rule, args, inputs, key) < args.size()) return nullptr;
  auto [it, fresh] = traced_rules_.try_emplace(key, nullptr);
  if (fresh) {
    try {
      it->second = trace::trace_function(I, module, rule.value(), inputs, {}, rule.name());
    } catch (const MslError&) {
      it->second = nullptr;  // not traceable here: the MSL rule runs (same results)
    }
  }
  return it->second;
}

bool GraphCompiler::may_trace(const HostValue& hv, const jit::AbsValue* first) {
  const HostValue* receiver = nullptr;
  if (auto f = first ? first->get_if<jit::AbsFunc>() : nullptr; f && f->callees.size() == 1) {
    const jit::AbsCallee& c = f->callees[0];
    if (c.kind == jit::AbsCallee::Kind::Host && c.bound.empty()) receiver = host_data(c.host.get());
  }
  return traceable_host_call(I, hv.value(), receiver ? &receiver->value() : nullptr);
}

std::optional<jit::AbsValue> GraphCompiler::host_type(const ir::HostRef& h, const std::vector<jit::AbsValue>& args) {
  auto hv = dynamic_cast<const HostValue*>(h.get());
  if (!hv || dynamic_cast<const CustomBpropHost*>(hv)) return std::nullopt;
  if (!may_trace(*hv, args.empty() ? nullptr : &args[0])) return std::nullopt;  // runs when the graph runs
  // `x.dtype`: the dtype object itself, known from the type (a trace
  // cannot return it), so `x.dtype == msl.float16` folds (HostObject::equals).
  if (const std::string* attr = adapter_attribute(hv->value()); attr && *attr == "dtype" && args.size() == 1)
    if (auto t = args[0].get_if<jit::AbsTensor>()) {
      jit::AbsCallee dtype;
      dtype.kind = jit::AbsCallee::Kind::Host;
      dtype.host = host_ref(I, dtype_value(tensor_cls, t->dtype));
      return jit::AbsValue(jit::AbsFunc{{std::move(dtype)}});
    }
  if (std::optional<jit::AbsValue> r = isinstance_type(*hv, args)) return r;
  // A gradient function (a training step's value_and_grad): tracing it
  // would compile its gradient graph for untyped tracer arguments; the
  // expansion puts the graph itself in, typed.
  if (grad_function_of(hv->value())) return std::nullopt;
  std::ostringstream key;
  key << static_cast<const void*>(hv) << "(";
  std::vector<trace::TraceInput> inputs;
  std::vector<jit::AbsValue> tensor_args;
  for (const jit::AbsValue& a : args) {
    key << jit::identity_key(a) << ";";
    trace::TraceInput in;
    if (!trace_input(a, in)) return std::nullopt;  // a number of unknown value, a function...: not traceable
    tensor_leaf_types(a, in, tensor_args);
    inputs.push_back(std::move(in));
  }
  auto it = host_types_.find(key.str());
  if (it != host_types_.end()) return it->second;
  std::optional<jit::AbsValue> result;
  try {
    ir::FuncGraph* t = trace::trace_function(I, module, hv->value(), inputs, {}, hv->name());
    result = jit::specialize(module, *t, tensor_args).output;
  } catch (const MslError&) {
    result = std::nullopt;  // the function does what a trace cannot (it will run eagerly)
  } catch (const jit::SpecializeError&) {
    result = std::nullopt;
  }
  if (!result && tensor_args.empty()) result = constant_call_type(*hv, inputs);
  host_types_.emplace(key.str(), result);
  return result;
}

std::optional<jit::AbsValue> GraphCompiler::isinstance_type(const HostValue& hv,
                                                             const std::vector<jit::AbsValue>& args) {
  // isinstance(v, classinfo) with v's class known from its type: a tensor
  // is a Tensor, a tuple a tuple, a scalar its kind's class. The answer is
  // then a constant, so `if isinstance(y, tuple):` picks its branch when
  // the graph compiles, as MindSpore's graph mode does. Unknown (left to
  // run) when the class asked for is a Tensor subclass (is this tensor a
  // Parameter?) or when a tuple might have been a list.
  if (!hv.value().is(Kind::Native) || hv.value().as<Native>()->name != "isinstance" || args.size() != 2)
    return std::nullopt;
  Class* cls = nullptr;
  if (args[0].is<jit::AbsTensor>()) {
    cls = tensor_cls;
  } else if (args[0].is<jit::AbsTuple>()) {
    cls = I.cls_tuple.get();
  } else if (auto s = args[0].get_if<jit::AbsScalar>()) {
    switch (s->kind) {
      case jit::ScalarKind::Bool: cls = I.cls_bool.get(); break;
      case jit::ScalarKind::Int: cls = I.cls_int.get(); break;
      case jit::ScalarKind::Float: cls = I.cls_float.get(); break;
      case jit::ScalarKind::Str: cls = I.cls_str.get(); break;
      case jit::ScalarKind::None: cls = I.cls_none.get(); break;
    }
  }
  if (cls == nullptr) return std::nullopt;
  // classinfo: a class, or a tuple of them (a host tuple, or a graph tuple
  // of host classes).
  auto host_value = [](const jit::AbsValue& v) -> const HostValue* {
    auto f = v.get_if<jit::AbsFunc>();
    if (!f || f->callees.size() != 1 || f->callees[0].kind != jit::AbsCallee::Kind::Host || !f->callees[0].bound.empty())
      return nullptr;
    return dynamic_cast<const HostValue*>(f->callees[0].host.get());  // a class is callable: not host_data
  };
  std::vector<Value> classes;
  if (auto t = args[1].get_if<jit::AbsTuple>()) {
    for (const jit::AbsValue& item : t->items) {
      const HostValue* h = host_value(item);
      if (!h) return std::nullopt;
      classes.push_back(h->value());
    }
  } else if (const HostValue* h = host_value(args[1])) {
    if (h->value().is(Kind::Class)) classes.push_back(h->value());
    else if (h->value().is(Kind::Tuple)) classes = static_cast<Tuple*>(h->value().obj())->items;
    else return std::nullopt;
  } else {
    return std::nullopt;
  }
  bool answer = false;
  for (const Value& c : classes) {
    if (!c.is(Kind::Class)) return std::nullopt;
    auto* k = static_cast<Class*>(c.obj());
    if (k != tensor_cls && k->is_subclass_of(tensor_cls)) return std::nullopt;
    if (k == I.cls_list.get() && cls == I.cls_tuple.get()) return std::nullopt;
    answer = answer || cls->is_subclass_of(k);
  }
  return jit::abs_const(answer);
}

std::optional<jit::AbsValue> GraphCompiler::constant_call_type(const HostValue& hv,
                                                                const std::vector<trace::TraceInput>& inputs) {
  // Constants only (no tensor, no tuple of them): the call is what a trace
  // would run. A class or a dtype comes back as itself (`type(n) == int`).
  std::vector<Value> args;
  for (const trace::TraceInput& in : inputs) {
    if (in.is_tensor || in.is_tuple) return std::nullopt;
    args.push_back(in.constant);
  }
  Value r;
  try {
    r = I.call(hv.value(), std::span<Value>(args));
  } catch (const MslError&) {
    return std::nullopt;  // it fails again when the graph runs, with its traceback
  }
  if (!r.is(Kind::Class) && !is_dtype_obj(r)) return std::nullopt;
  jit::AbsCallee c;
  c.kind = jit::AbsCallee::Kind::Host;
  c.host = host_ref(I, r);
  return jit::AbsValue(jit::AbsFunc{{std::move(c)}});
}

void GraphCompiler::host_failed(const ir::Node* site) {
  try {
    throw;
  } catch (MslError& e) {
    const ir::Loc& l = site->loc();
    auto src = l.valid() ? sources.find(*l.file) : sources.end();
    if (src == sources.end()) return;
    ExceptionObj* x = e.obj();
    // The failing expression inside the host call is recorded already (a
    // library frame); this frame is the graph's, like a call frame's.
    Span span{l.line, l.col, l.line, l.col + 1};
    // Graphs are inlined and renamed by then: the frame says where, and
    // that the code ran compiled.
    x->traceback.push_back(TraceEntry{src->second, x->need_location ? span : x->location, "<graph mode>"});
    x->need_location = true;
  } catch (...) {
  }
}

exec::ExecOptions GraphCompiler::exec_options() {
  exec::ExecOptions o;
  o.print = [this](const std::string& line) { I.write_out(line + "\n"); };
  o.format = [this](const exec::RtValue& v) { return I.to_str(from_rt(I, tensor_cls, v)); };
  o.call_host = [this](const ir::HostRef& h, std::vector<exec::RtValue> args) { return call_host(h, std::move(args)); };
  o.host_failed = [this](const ir::Node* site) { host_failed(site); };
  o.runtime_j = [this](const exec::RtValue& fn) { return runtime_j(fn); };
  return o;
}

}  // namespace msl
