// msl._graph: the native side of graph mode and differentiation, used by
// stdlib/msl (msl.jit, msl.grad, msl.value_and_grad, ops.GradOperation):
//   jit(fn)                          a JitFunction: calls compile fn
//   grad_function(fn, inputs, positions, weights, sens_param, has_aux,
//                 return_value)      a GradFunction (inputs: "none", "one",
//                                    "tuple" or "all"; weights: None or a
//                                    sequence of Parameters)
//   ir_text(fn, nargs)               the IR of fn's graph (a gradient function: the module)
//   set_save_graphs(flag, path)      msl.context's save_graphs options
//   cli_options()                    (mode, save_graphs dir or None, device target) from msl's command line
//   compile_times()                  [(phase, ms)] of the last compilation
//   invalidate()                     compile-time values changed: recompile on next calls
//   find_subgraphs(fn, args)         calls fn(*args), compiling afresh, and returns each
//                                    compiled graph's identical sub-graphs
//   gradient_stats(grad_fn, *args)   (primitive applications, AD residue, IR, result) of
//                                    the gradient specialized for args, library calls
//                                    expanded, run on args
#include <fmt/format.h>

#include "interp/graph/graph_compiler_impl.h"
#include "interp/graph/graph_values.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"

namespace msl {

namespace {

Value jit_call(Interp& I, Args& a, Object*) {
  if (a.pos.empty() || !a.pos[0].is(Kind::NativeData) || typeid(*a.pos[0].obj()) != typeid(JitFunctionObj))
    I.raise(I.exception_class("TypeError").get(), "JitFunction.__call__ needs a JitFunction");
  if (!a.kw.empty()) I.raise(I.exception_class("TypeError").get(), "compiled functions take positional arguments only");
  auto* self = static_cast<JitFunctionObj*>(a.pos[0].obj());
  return graph_call(I, self->fn, a.pos.subspan(1));
}

// JitFunction.__get__(instance, owner): `@msl.jit` on a method (MindSpore's
// `@jit def sub_net(self, x)` in a Cell) binds like a function: through an
// instance it is the compiled bound method. The bound object is kept on the
// instance, so its graphs are compiled once, not on every attribute read.
Value jit_get(Interp& I, Args& a, Object*) {
  if (a.pos.size() < 2 || !a.pos[0].is(Kind::NativeData) || typeid(*a.pos[0].obj()) != typeid(JitFunctionObj))
    I.raise(I.exception_class("TypeError").get(), "JitFunction.__get__ needs a JitFunction and an instance");
  auto* jf = static_cast<JitFunctionObj*>(a.pos[0].obj());
  const Value& instance = a.pos[1];
  if (instance.is_none() || !jf->fn.is(Kind::Function)) return a.pos[0];
  Value bound = make_jit_function(I, make<BoundMethod>(instance, jf->fn).value());
  if (!instance.is(Kind::Instance)) return bound;
  Ref<Str> key(I.intern(fmt::format("__msl_jit_{:x}", reinterpret_cast<uintptr_t>(jf))));
  AttrMap& attrs = instance.as<Instance>()->attrs;
  if (const Value* kept = attrs.find(key.get())) return *kept;
  attrs.set(key.get(), bound);
  return bound;
}

Value grad_fn_call(Interp& I, Args& a, Object*) {
  if (a.pos.empty() || !grad_function_of(a.pos[0]))
    I.raise(I.exception_class("TypeError").get(), "GradFunction.__call__ needs a GradFunction");
  if (!a.kw.empty()) I.raise(I.exception_class("TypeError").get(), "gradient functions take positional arguments only");
  return grad_call(I, a.pos[0], a.pos.subspan(1));
}

Value fn_name(Interp& I, Args& a, Object*) {
  const Value& self = a.pos[0];
  Value fn = typeid(*self.obj()) == typeid(JitFunctionObj) ? static_cast<JitFunctionObj*>(self.obj())->fn
                                                            : static_cast<GradFunctionObj*>(self.obj())->fn;
  Value n = I.getattr_or_undef(fn, I.intern("__name__"));
  return n.is_undef() ? Value::object(new Str("graph")) : n;
}

Value f_jit(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "jit", a, 1, 1, v);
  return make_jit_function(I, v[0]);
}

Value f_grad_function(Interp& I, Args& a, Object*) {
  Value v[7];
  bind_args(I, "grad_function", a, {"fn", "inputs", "positions", "weights", "sens_param", "has_aux", "return_value"},
            7, v);
  GradSpec s;
  std::string mode = v[1].is(Kind::Str) ? static_cast<Str*>(v[1].obj())->s : "";
  if (mode == "none") s.inputs = GradSpec::Inputs::None;
  else if (mode == "one") s.inputs = GradSpec::Inputs::One;
  else if (mode == "tuple") s.inputs = GradSpec::Inputs::Tuple;
  else if (mode == "all") s.inputs = GradSpec::Inputs::All;
  else I.raise(I.exception_class("ValueError").get(), "grad_function: inputs must be none/one/tuple/all");
  s.positions.clear();
  if (v[2].is_int()) s.positions.push_back(v[2].as_int());
  else if (!v[2].is_none())
    for (const Value& p : I.to_vector(v[2])) {
      if (!p.is_int()) I.raise(I.exception_class("TypeError").get(), "grad_position must hold ints, got " + I.type_name(p));
      s.positions.push_back(p.as_int());
    }
  if (s.inputs == GradSpec::Inputs::One && s.positions.empty()) s.positions.push_back(0);
  if (!v[3].is_none()) {
    s.has_weights = true;
    if (is_tensor(v[3])) s.weights.push_back(v[3]);
    else s.weights = I.to_vector(v[3]);
    for (const Value& w : s.weights)
      if (!is_tensor(w) || !tensor_obj(w)->param)
        I.raise(I.exception_class("TypeError").get(), "weights must be Parameters, got " + I.type_name(w));
  }
  s.sens_param = I.truthy(v[4]);
  s.has_aux = I.truthy(v[5]);
  s.return_value = I.truthy(v[6]);
  return make_grad_function(I, v[0], std::move(s));
}

Value f_ir_text(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "ir_text", a, 2, 2, v);
  if (!v[1].is_int()) I.raise(I.exception_class("TypeError").get(), "ir_text: nargs must be an int");
  Value fn = v[0];
  if (fn.is(Kind::NativeData) && typeid(*fn.obj()) == typeid(JitFunctionObj)) fn = static_cast<JitFunctionObj*>(fn.obj())->fn;
  return Value::object(new Str(graph_ir_text(I, fn, static_cast<size_t>(v[1].as_int()))));
}

Value f_set_save_graphs(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "set_save_graphs", a, 2, 2, v);
  if (!v[1].is(Kind::Str)) I.raise(I.exception_class("TypeError").get(), "save_graphs_path must be a str");
  compiler_of(I).save_dir = I.truthy(v[0]) ? static_cast<Str*>(v[1].obj())->s : std::string();
  return Value::none();
}

// set_graph_mode(on): GRAPH_MODE (fusion in compiled graphs) or PYNATIVE_MODE.
Value f_set_graph_mode(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "set_graph_mode", a, 1, 1, v);
  compiler_of(I).graph_mode = I.truthy(v[0]);
  return Value::none();
}

// The initial mode, save_graphs setting and device given on the command line.
Value f_cli_options(Interp& I, Args& a, Object*) {
  bind_positional(I, "cli_options", a, 0, 0, nullptr);
  const auto& o = I.options();
  return new_tuple({Value::integer(o.graph_mode == "pynative" ? 1 : 0),
                    o.save_graphs_dir.empty() ? Value::none() : Value::object(new Str(o.save_graphs_dir)),
                    Value::object(new Str(o.device == "gpu" ? "GPU" : "CPU"))});
}

Value f_gradient_stats(Interp& I, Args& a, Object*) {
  if (a.pos.empty()) I.raise(I.exception_class("TypeError").get(), "gradient_stats(grad_fn, *args)");
  return gradient_stats(I, a.pos[0], a.pos.subspan(1));
}

// find_subgraphs(fn, args): calls fn(*args) with every graph compiled
// afresh (not from a cache) and returns, per compiled graph, a dict of its
// identical sub-graphs (jit/subgraphs.h): graph, nodes, groups (dicts:
// cell, nodes, count, signature, parent, members: [{scope, node_ids}]),
// json and dot (the folded drawing).
Value f_find_subgraphs(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "find_subgraphs", a, 2, 2, v);
  GraphCompiler& gc = compiler_of(I);
  std::vector<GraphCompiler::SubgraphReport> reports;
  auto* outer = gc.subgraph_reports;
  gc.subgraph_reports = &reports;
  ++gc.generation;  // compile again, so the passes run and report
  std::vector<Value> args = I.to_vector(v[1]);
  try {
    I.call(v[0], std::span<Value>(args));
  } catch (...) {
    gc.subgraph_reports = outer;
    throw;
  }
  gc.subgraph_reports = outer;
  auto str = [](const std::string& s) { return Value::object(new Str(s)); };
  auto dict = [&](std::vector<std::pair<const char*, Value>> items) {
    Value d = Value::object(new Dict());
    for (auto& [k, val] : items) I.setitem(d, str(k), val);
    return d;
  };
  std::vector<Value> out;
  for (const GraphCompiler::SubgraphReport& r : reports) {
    std::vector<Value> groups;
    for (const jit::SubgraphGroup& g : r.groups) {
      std::vector<Value> members;
      for (const jit::SubgraphMember& m : g.members) {
        std::vector<Value> ids;
        for (uint32_t id : m.node_ids) ids.push_back(Value::integer(id));
        members.push_back(dict({{"scope", str(m.scope)}, {"node_ids", new_list(std::move(ids))}}));
      }
      groups.push_back(dict({{"cell", str(g.cell)},
                             {"nodes", Value::integer(static_cast<int64_t>(g.nodes))},
                             {"count", Value::integer(static_cast<int64_t>(g.members.size()))},
                             {"signature", str(g.signature)},
                             {"parent", g.parent < 0 ? Value::none() : Value::integer(g.parent)},
                             {"members", new_list(std::move(members))}}));
    }
    out.push_back(dict({{"graph", str(r.graph)}, {"nodes", Value::integer(static_cast<int64_t>(r.nodes))},
                        {"seconds", Value::number(r.seconds)},
                        {"groups", new_list(std::move(groups))}, {"json", str(r.json)},
                        {"dot", str(r.dot)}}));
  }
  return new_list(std::move(out));
}

// Values compiled graphs read at compile time changed (Cell.set_train):
// later calls compile again.
Value f_invalidate(Interp& I, Args& a, Object*) {
  bind_positional(I, "invalidate", a, 0, 0, nullptr);
  ++compiler_of(I).generation;
  return Value::none();
}

// [(phase, milliseconds)] of the last compilation.
Value f_compile_times(Interp& I, Args& a, Object*) {
  bind_positional(I, "compile_times", a, 0, 0, nullptr);
  std::vector<Value> items;
  for (auto& [phase, ms] : compiler_of(I).last_times)
    items.push_back(new_tuple({Value::object(new Str(phase)), Value::number(ms)}));
  return new_list(std::move(items));
}

}  // namespace

Value make_jit_function(Interp& I, const Value& fn) {
  GraphCompiler& gc = compiler_of(I);
  return Value::object(new JitFunctionObj(gc.jit_cls, fn));
}

Value make_grad_function(Interp& I, const Value& fn, GradSpec spec) {
  GraphCompiler& gc = compiler_of(I);
  return Value::object(new GradFunctionObj(gc.grad_cls, fn, std::move(spec)));
}

void init_module_msl_graph(Interp& I, Module& m) {
  GraphCompiler& gc = compiler_of(I);
  gc.jit_cls = I.new_class("JitFunction", I.cls_object.get(), "msl._graph", true);
  I.def_method(gc.jit_cls.get(), "__call__", jit_call);
  I.def_method(gc.jit_cls.get(), "__get__", jit_get);
  gc.grad_cls = I.new_class("GradFunction", I.cls_object.get(), "msl._graph", true);
  I.def_method(gc.grad_cls.get(), "__call__", grad_fn_call);
  for (Class* c : {gc.jit_cls.get(), gc.grad_cls.get()}) {
    auto prop = make<Property>();
    prop->fget = make<Native>("__name__", fn_name).value();
    c->dict.set(I.intern("__name__"), prop.value());
  }
  m.set(I.intern("JitFunction"), gc.jit_cls.value());
  m.set(I.intern("GradFunction"), gc.grad_cls.value());
  I.def_native(&m, "jit", f_jit);
  I.def_native(&m, "grad_function", f_grad_function);
  I.def_native(&m, "ir_text", f_ir_text);
  I.def_native(&m, "find_subgraphs", f_find_subgraphs);
  I.def_native(&m, "set_save_graphs", f_set_save_graphs);
  I.def_native(&m, "cli_options", f_cli_options);
  I.def_native(&m, "set_graph_mode", f_set_graph_mode);
  I.def_native(&m, "compile_times", f_compile_times);
  I.def_native(&m, "gradient_stats", f_gradient_stats);
  I.def_native(&m, "invalidate", f_invalidate);
}

}  // namespace msl
