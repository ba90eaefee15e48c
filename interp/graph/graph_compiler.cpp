// Lowering live MSL callables to graphs, gradient graphs, and calls. The
// scheme is described in graph_compiler.h.
#include "interp/graph/graph_compiler.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "interp/graph/graph_compiler_impl.h"
#include "interp/graph/graph_host_adapter.h"
#include "interp/graph/graph_values.h"
#include "interp/core/native_args.h"
#include "interp/core/nodes.h"
#include "interp/tensor/tensor_object.h"
#include "jit/fused_elementwise.h"
#include "jit/passes/pipeline.h"
#include "kernels/activation_block.h"
#include "kernels/dump.h"
#include "lang/ir/dot.h"
#include "lang/ir/printer.h"

namespace msl {

bool native_primitive(const Value& v, kernels::Prim& out);  // module_msl_core.cpp

using ir::FuncGraph;
using ir::IrOp;
using ir::Node;
using ir::ResolvedName;

namespace {

bool is_library(const Function* f) {
  if (!f->module) return false;
  const std::string& n = f->module->name->s;
  return n == "msl" || n.rfind("msl.", 0) == 0;
}

// NumPy and cv2 run on the host (their arrays are not tensors): a call of
// one of their functions in a construct is evaluated when the graph
// compiles, its arguments constants (`Tensor(np.array([[0, 1]],
// np.int32))`), as MindSpore's graph mode runs NumPy through its JIT
// Fallback; with traced arguments it is an error naming the call.
// A method of a dict, list, tuple or str that only reads it
// (`self.cfg.items()`, `self.names.index("b")`, `"{}".format(n)`): a call
// with compile-time arguments is evaluated when the graph compiles, so its
// result is a constant a loop can unroll over. Methods that change the
// container (append, update, pop...) are not: they run in program order.
bool pure_container_method(const Value& v) {
  if (!v.is(Kind::BoundMethod)) return false;
  const auto* bm = static_cast<const BoundMethod*>(v.obj());
  if (!bm->func.is(Kind::Native)) return false;
  const Value& self = bm->self;
  if (!self.is(Kind::Dict) && !self.is(Kind::List) && !self.is(Kind::Tuple) && !self.is(Kind::Str)) return false;
  static const std::set<std::string> kPure = {"items", "keys", "values", "get", "index", "count", "format", "join",
                                              "upper", "lower", "split", "strip", "replace", "startswith",
                                              "endswith", "find"};
  return kPure.count(static_cast<const Native*>(bm->func.obj())->name) > 0;
}

bool is_host_library(const Function* f) {
  if (!f->module || !f->module->name) return false;
  const std::string& n = f->module->name->s;
  return n == "numpy" || n.rfind("numpy.", 0) == 0 || n == "cv2";
}

[[noreturn]] void graph_mode_error(Interp& I, const std::vector<Diagnostic>& errors) {
  Value exc = I.new_exception(I.exception_class("GraphModeError").get(), errors.front().message);
  auto* x = exc.as<ExceptionObj>();
  x->diagnostics = errors;
  x->need_location = false;
  I.raise_value(exc);
}

std::vector<std::string> split_dotted(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t dot; (dot = s.find('.', start)) != std::string::npos; start = dot + 1) out.push_back(s.substr(start, dot - start));
  out.push_back(s.substr(start));
  return out;
}

}  // namespace

// One compilation: the root graph and the weights found so far.
struct GraphCompiler::Session {
  GraphCompiler& gc;
  FuncGraph* root;
  size_t nargs;
  std::vector<Value> weights;
  std::unordered_map<const Object*, Node*> weight_nodes;
  std::map<std::pair<const Object*, int>, Node*> amp_casts;
  std::unordered_map<const FuncGraph*, FuncGraph*> amp_wrappers;
  ir::Lowerer lowerer;
  // Identity keys for (function, self) pairs: a bound method's graph is
  // specific to its instance.
  std::map<std::pair<const Object*, const Object*>, std::unique_ptr<char>> keys;
  int sequence_depth = 0;
  // Cell instance -> its scope (ir::Loc::scope): "Default" for the first
  // Cell reached (the compiled Cell, or one a compiled function calls),
  // then "/<attribute>-<Class>" per level, as MindSpore names scopes.
  std::unordered_map<const Object*, std::string> scopes;

  // The scope of Cell `cell`, naming its whole tree when it is the first
  // Cell of this compilation seen.
  const std::string& scope_of(const Value& cell) {
    if (auto it = scopes.find(cell.obj()); it != scopes.end()) return it->second;
    name_scopes(cell, "Default", 0);
    return scopes.at(cell.obj());
  }

  void name_scopes(const Value& cell, std::string scope, int depth) {
    Interp& I = gc.I;
    if (!scopes.emplace(cell.obj(), scope).second || depth > 64) return;
    Value cells = I.getattr_or_undef(cell, I.intern("_cells"));
    if (!cells.is(Kind::Dict)) return;
    for (const Value& key : I.to_vector(cells)) {
      Value child = I.getitem(cells, key);
      if (!key.is(Kind::Str) || !child.is(Kind::Instance)) continue;
      name_scopes(child, scope + "/" + static_cast<Str*>(key.obj())->s + "-" + I.type_name(child), depth + 1);
    }
  }

  Session(GraphCompiler& g, FuncGraph* r, size_t n)
      : gc(g), root(r), nargs(n), lowerer(g.module, std::make_shared<ir::LowerContext>()) {
    lowerer.set_root(r);
  }

  Node* weight_node(const Value& p) {
    auto it = weight_nodes.find(p.obj());
    if (it != weight_nodes.end()) return it->second;
    const ParamInfo* info = tensor_obj(p)->param.get();
    Node* n = root->add_param(info ? info->name : "weight", root->loc());
    weights.push_back(p);
    weight_nodes[p.obj()] = n;
    return n;
  }

  // Mixed precision (Cell.to_float): a Parameter named in the Cell's
  // _amp_params, read as self.<name>, is read cast to the Cell's
  // _float_dtype (MindSpore casts a mixed-precision Cell's Parameters at
  // use); the weight stays the float32 parameter of the root graph and
  // the cast's gradient brings its sensitivity back to float32. One cast
  // per weight and dtype, in the root graph, shared by every read.
  Node* amp_weight(const Value& self, const std::string& name, const Value& p) {
    Interp& I = gc.I;
    if (!is_tensor(p) || !tensor_obj(p)->param) return nullptr;
    Value names = I.getattr_or_undef(self, I.intern("_amp_params"));
    if (!names.is(Kind::Tuple)) return nullptr;
    bool listed = false;
    for (const Value& n : static_cast<Tuple*>(names.obj())->items)
      listed = listed || (n.is(Kind::Str) && static_cast<Str*>(n.obj())->s == name);
    Value dt = I.getattr_or_undef(self, I.intern("_float_dtype"));
    if (!listed || !is_dtype_obj(dt)) return nullptr;
    kernels::DType to = static_cast<DTypeObj*>(dt.obj())->dtype;
    if (tensor_of(p).dtype() == to) return nullptr;
    Node*& n = amp_casts[{p.obj(), static_cast<int>(to)}];
    if (!n) {
      Node* w = weight_node(p);
      n = root->apply(kernels::Prim::cast, {w}, "", root->loc(), kernels::Attrs{{"dtype", to}});
    }
    return n;
  }

  // A user Cell set to_float casts its floating-point inputs when called
  // (Cell._cast_input; PyNative does it in Cell.__call__): its construct is
  // called through a graph that casts each argument first. Library Cells
  // cast what they need themselves (Dense, Conv*), and a construct with
  // defaults is called directly (its arguments may be left out).
  FuncGraph* amp_inputs(const Value& cell, const ResolvedName& construct) {
    Interp& I = gc.I;
    Value amp = I.getattr_or_undef(cell, I.intern("_amp"));
    if (!amp.is_bool() || !amp.as_bool() || !construct.defaults.empty()) return nullptr;
    Value cast = I.getattr_or_undef(cell, I.intern("_cast_input"));
    if (!cast.is(Kind::BoundMethod)) return nullptr;
    FuncGraph* inner = lowerer.lower(construct);
    if (!inner) graph_mode_error(I, lowerer.errors());
    FuncGraph*& w = amp_wrappers[inner];
    if (w) return w;
    w = gc.module.new_graph("to_float_" + inner->name(), root, inner->loc());
    std::vector<Node*> call{w->constant(inner)};
    Node* c = w->constant(host_ref(I, cast));
    for (Node* p : inner->params()) call.push_back(w->apply({c, w->add_param(p->name(), p->loc())}, "", w->loc()));
    w->set_output(w->apply(call, "", w->loc()));
    // Its callers sequence it as they would `inner`. An `inner` still being
    // lowered (its body names the Cell again) may yet have effects: the
    // wrapper is sequenced, which at worst adds order.
    if (!inner->output() || lowerer.effectful(inner)) lowerer.mark_effectful(w);
    return w;
  }

  const void* key_for(const Object* fn, const Object* self) {
    auto& k = keys[{fn, self}];
    if (!k) k = std::make_unique<char>();
    return k.get();
  }

  ir::ContextPtr context_for(Function* fn, const Value& self);
  ResolvedName classify(const Value& v);
  ResolvedName function_name(Function* fn, const Value& self, const Object* key_obj);
};

ResolvedName GraphCompiler::Session::function_name(Function* fn, const Value& self, const Object* key_obj) {
  ResolvedName r;
  FuncCode* code = fn->code.get();
  if (!code->def && !code->lambda) return r;
  r.kind = ResolvedName::Kind::Function;
  r.def = code->def;
  r.lambda = code->lambda;
  r.context = context_for(fn, self);
  r.key = key_for(key_obj ? key_obj : fn, self.is_obj() ? self.obj() : nullptr);
  r.name = code->name == "<lambda>" ? "lambda" : code->name;
  r.bound = self.is_undef() ? 0 : 1;
  auto constant_of = [&](const Value& d) -> ir::ConstValue {
    exec::RtValue rv = to_rt(gc.I, d);
    if (auto t = rv.get_if<kernels::Tensor>()) return *t;
    if (auto b = rv.get_if<bool>()) return *b;
    if (auto i = rv.get_if<int64_t>()) return *i;
    if (auto f = rv.get_if<double>()) return *f;
    if (auto s = rv.get_if<std::string>()) return *s;
    if (rv.is_none()) return ir::NoneValue{};
    return host_ref(gc.I, d);
  };
  for (const Value& d : fn->defaults) r.defaults.push_back(constant_of(d));
  for (const Value& d : fn->kwdefaults)
    r.kwonly_defaults.push_back(d.is_undef() ? std::nullopt : std::optional<ir::ConstValue>(constant_of(d)));
  return r;
}

ResolvedName GraphCompiler::Session::classify(const Value& v) {
  Interp& I = gc.I;
  ResolvedName r;
  r.kind = ResolvedName::Kind::Constant;
  if (v.is_none()) return r.value = ir::NoneValue{}, r;
  if (v.is_bool()) return r.value = v.as_bool(), r;
  if (v.is_int()) return r.value = v.as_int(), r;
  if (v.is_float()) return r.value = v.as_float(), r;
  if (v.is(Kind::Str)) return r.value = static_cast<Str*>(v.obj())->s, r;
  if ((v.is(Kind::List) || v.is(Kind::Tuple)) && sequence_depth < 4) {
    // Iterable by an unrolled `for` (for layer in self.layers); the items
    // are read now, at compile time. As a value: the list itself. Nesting
    // is bounded (a list may contain itself).
    const std::vector<Value>& items =
        v.is(Kind::List) ? static_cast<List*>(v.obj())->items : static_cast<Tuple*>(v.obj())->items;
    r.kind = ResolvedName::Kind::Sequence;
    r.value = host_ref(I, v);
    ++sequence_depth;
    for (const Value& item : items) r.items.push_back(classify(item));
    --sequence_depth;
    return r;
  }
  if (is_tensor(v)) {
    if (tensor_obj(v)->param) {
      r.kind = ResolvedName::Kind::Node;
      r.node = weight_node(v);
      return r;
    }
    return r.value = tensor_of(v), r;
  }
  if (is_dtype_obj(v)) {
    r.value = host_ref(I, v);
    r.dtype = static_cast<DTypeObj*>(v.obj())->dtype;
    return r;
  }
  // A NumPy array (what a NumPy call evaluated at compile time gives): a
  // tensor constant, copied, so a later change of the array does not reach
  // into a compiled graph.
  if (kernels::Tensor shared; tensor_of_protocol(I, v, shared)) return r.value = shared.clone(), r;
  kernels::Prim p;
  if (native_primitive(v, p)) {
    r.kind = ResolvedName::Kind::Primitive;
    r.prim = p;
    return r;
  }
  if (v.is(Kind::Function)) {
    // A library function standing for an IR operator (ops.stop_gradient).
    const Value* op = static_cast<Function*>(v.obj())->attrs.find(I.intern("__msl_ir_op__"));
    ir::IrOp irop;
    if (op && op->is(Kind::Str) && ir::find_ir_op(static_cast<Str*>(op->obj())->s, irop)) return r.value = irop, r;
  }
  if (v.is_obj()) {
    Value mark = I.getattr_or_undef(v, I.intern("__msl_static__"));
    if (!mark.is_undef() && I.truthy(mark)) {
      r.kind = ResolvedName::Kind::Static;
      return r;
    }
  }
  if (v.is(Kind::Function) && is_host_library(static_cast<Function*>(v.obj()))) {
    r.kind = ResolvedName::Kind::Static;
    return r;
  }
  if (pure_container_method(v)) {
    r.kind = ResolvedName::Kind::Static;
    return r;
  }
  if (v.is(Kind::Function)) {
    auto* fn = static_cast<Function*>(v.obj());
    if (!is_library(fn)) {
      ResolvedName f = function_name(fn, Value::undef(), nullptr);
      if (f.kind == ResolvedName::Kind::Function) return f;
    }
  } else if (v.is(Kind::BoundMethod)) {
    auto* bm = static_cast<BoundMethod*>(v.obj());
    if (bm->func.is(Kind::Function) && !is_library(static_cast<Function*>(bm->func.obj()))) {
      ResolvedName f = function_name(static_cast<Function*>(bm->func.obj()), bm->self, nullptr);
      if (f.kind == ResolvedName::Kind::Function) return f;
    }
  } else if (v.is(Kind::Instance)) {
    // A cell container (CellList, SequentialCell: its cells in `_list`) is
    // iterable by an unrolled `for`; a CellList, whose construct is Cell's
    // (*inputs, not compiled), is only that.
    Value cells = I.getattr_or_undef(v, I.intern("_list"));
    std::vector<ResolvedName> items;
    if (cells.is(Kind::List) && sequence_depth < 4) {
      ++sequence_depth;
      for (const Value& item : static_cast<List*>(cells.obj())->items) items.push_back(classify(item));
      --sequence_depth;
    }
    // A Cell: calling it runs construct(self, ...).
    Value construct = I.getattr_or_undef(v, I.intern("construct"));
    bool container_only = cells.is(Kind::List) && construct.is(Kind::BoundMethod) &&
                          static_cast<BoundMethod*>(construct.obj())->func.is(Kind::Function) &&
                          static_cast<Function*>(static_cast<BoundMethod*>(construct.obj())->func.obj())->code->has_vararg;
    if (container_only) {
      r.kind = ResolvedName::Kind::Sequence;
      r.value = host_ref(I, v);
      r.items = std::move(items);
      return r;
    }
    if (construct.is(Kind::BoundMethod)) {
      auto* bm = static_cast<BoundMethod*>(construct.obj());
      Value bprop = I.getattr_or_undef(v, I.intern("bprop"));
      if (bprop.is(Kind::BoundMethod)) {
        // The user's gradient replaces construct's: construct runs in the
        // host, bprop gives the sensitivities (graph_runtime.cpp).
        r.value = std::make_shared<const CustomBpropHost>(construct, v, I.type_name(v) + ".construct");
        return r;
      }
      // Every Cell's construct is lowered, the library's too (nn.Dense,
      // WithLossCell...: their constructs are written in the graph-mode
      // subset), so Cells nest in one graph.
      if (bm->func.is(Kind::Function)) {
        auto* fn = static_cast<Function*>(bm->func.obj());
        ResolvedName f = function_name(fn, v, nullptr);
        if (f.kind != ResolvedName::Kind::Function) return f;
        if (!is_library(fn))
          if (FuncGraph* w = amp_inputs(v, f)) return r.value = w, r;
        f.items = std::move(items);
        return f;
      }
      r.value = host_ref(I, construct);
      return r;
    }
  } else if (v.is(Kind::NativeData) && typeid(*v.obj()) == typeid(JitFunctionObj)) {
    return classify(static_cast<JitFunctionObj*>(v.obj())->fn);
  } else if (GradFunctionObj* gfo = grad_function_of(v)) {
    // W(args) = GF(args..., this session's weight nodes): GF is top-level.
    if (gfo->spec.has_aux) {
      r.value = host_ref(I, v);
      return r;
    }
    // Its arity: that of the innermost differentiated function.
    Value fnv = gfo->fn;
    while (fnv.is(Kind::NativeData) && (typeid(*fnv.obj()) == typeid(GradFunctionObj) ||
                                        typeid(*fnv.obj()) == typeid(JitFunctionObj)))
      fnv = typeid(*fnv.obj()) == typeid(GradFunctionObj) ? static_cast<GradFunctionObj*>(fnv.obj())->fn
                                                          : static_cast<JitFunctionObj*>(fnv.obj())->fn;
    size_t n = 0;
    if (fnv.is(Kind::Function)) n = static_cast<Function*>(fnv.obj())->code->nposargs;
    else if (fnv.is(Kind::BoundMethod) && static_cast<BoundMethod*>(fnv.obj())->func.is(Kind::Function))
      n = static_cast<Function*>(static_cast<BoundMethod*>(fnv.obj())->func.obj())->code->nposargs - 1;
    else if (fnv.is(Kind::Instance)) {
      Value c = I.getattr_or_undef(fnv, I.intern("construct"));
      if (c.is(Kind::BoundMethod) && static_cast<BoundMethod*>(c.obj())->func.is(Kind::Function))
        n = static_cast<Function*>(static_cast<BoundMethod*>(c.obj())->func.obj())->code->nposargs - 1;
    }
    const Compiled& c = gc.compile_grad(gfo, n);
    if (gfo->spec.return_value || gfo->spec.sens_param) {
      // Called on the host (graph_call shapes value_and_grad's result),
      // but its weights become this graph's parameters too, so expansion
      // can put its gradient graph into this one (a training step).
      for (const Value& p : c.weights) weight_node(p);
      r.value = host_ref(I, v);
      return r;
    }
    FuncGraph* w = gc.module.new_graph("grad_" + c.graph->name(), root, c.graph->loc());
    std::vector<Node*> call{w->constant(c.graph)};
    for (size_t i = 0; i < c.nargs; ++i) call.push_back(w->add_param("x" + std::to_string(i)));
    for (const Value& p : c.weights) call.push_back(weight_node(p));
    w->set_output(w->apply(call, "", w->loc()));
    r.value = w;
    return r;
  }
  r.value = host_ref(I, v);
  r.is_class = v.is(Kind::Class);
  return r;
}

ir::ContextPtr GraphCompiler::Session::context_for(Function* fn, const Value& self) {
  auto ctx = std::make_shared<ir::LowerContext>();
  ctx->source = fn->code->source;
  // A Cell's construct (or another method of it): its nodes carry the
  // Cell's scope.
  if (self.is(Kind::Instance) && gc.I.getattr_or_undef(self, gc.I.intern("_cells")).is(Kind::Dict))
    ctx->scope = scope_of(self);
  if (ctx->source) gc.sources.emplace(ctx->source->name(), ctx->source);
  Ref<Function> keep(fn);
  Value self_v = self;
  std::string self_name =
      self.is_undef() || fn->code->param_names.empty() ? std::string() : fn->code->param_names[0]->s;
  ctx->resolve = [this, keep, self_v, self_name](const std::string& dotted) -> ResolvedName {
    Interp& I = gc.I;
    std::vector<std::string> parts = split_dotted(dotted);
    Value v = Value::undef();
    const std::string& head = parts[0];
    if (!self_name.empty() && head == self_name) v = self_v;
    for (size_t i = 0; v.is_undef() && i < keep->code->freevar_names.size() && i < keep->closure.size(); ++i)
      if (keep->code->freevar_names[i] == head) v = keep->closure[i]->value;
    if (v.is_undef() && keep->module) v = keep->module->get(I.intern(head));
    if (v.is_undef()) v = I.builtins_module()->get(I.intern(head));
    if (v.is_undef()) return {};
    for (size_t i = 1; i < parts.size(); ++i) {
      v = I.getattr_or_undef(v, I.intern(parts[i]));
      if (v.is_undef()) return {};
    }
    if (parts.size() == 2 && head == self_name)
      if (Node* low = amp_weight(self_v, parts[1], v)) {
        ResolvedName r;
        r.kind = ResolvedName::Kind::Node;
        r.node = low;
        return r;
      }
    return classify(v);
  };
  ctx->evaluate = [this, keep, self_v, self_name](const ast::Expr& e, const ir::StaticAliases& aliases) -> ResolvedName {
    Interp& I = gc.I;
    const SourcePtr& src = keep->code->source;
    // The expression's text, which may span lines (parenthesized).
    std::string text;
    for (uint32_t line = e.span.line; line <= e.span.end_line; ++line) {
      std::string_view lt = src->line_text(line);
      size_t from = line == e.span.line ? e.span.col - 1 : 0;
      size_t to = line == e.span.end_line ? e.span.end_col - 1 : lt.size();
      text += std::string(lt.substr(std::min(from, lt.size()), to > from ? to - from : 0)) + " ";
    }
    // The function's globals plus what its body sees besides: `self` and
    // the enclosing functions' variables.
    Ref<Module> scope = I.new_module("<graph-eval>", src->name());
    if (keep->module)
      for (GlobalSlot* g : keep->module->order) scope->set(g->name.get(), g->value);
    for (size_t i = 0; i < keep->code->freevar_names.size() && i < keep->closure.size(); ++i)
      scope->set(I.intern(keep->code->freevar_names[i]), keep->closure[i]->value);
    if (!self_name.empty()) scope->set(I.intern(self_name), self_v);
    for (auto& [name, dotted] : aliases)
      scope->set(I.intern(name), I.eval_expression(std::make_shared<SourceFile>(src->name(), dotted), scope));
    Value v = I.eval_expression(std::make_shared<SourceFile>(src->name(), text), scope);
    // A dict view (self.cfg.items()) as the tuple of what it holds now.
    std::string type = I.type_name(v);
    if (type == "dict_keys" || type == "dict_values" || type == "dict_items") v = new_tuple(I.to_vector(v));
    return classify(v);
  };
  ctx->adapter = [this](const ir::HostAdapter& h) { return make_host_adapter(gc.I, h); };
  return ctx;
}

GraphCompiler::GraphCompiler(Interp& interp)
    : I(interp), grad(module, [this](const ir::PrimRef& p) { return rule_for(p); }) {
  save_dir = I.options().save_graphs_dir;
  disk_ = GraphDiskCache::from_environment();
  Ref<Module> core = I.import_module("msl._core", nullptr);
  Value t = core->get(I.intern("Tensor"));
  tensor_cls = static_cast<TensorClass*>(static_cast<Class*>(t.obj()));
}

GraphCompiler::~GraphCompiler() = default;

void GraphCompiler::optimize(FuncGraph& g) {
  jit::PassOptions po;
  po.verify_each_pass = I.options().log_level == 0;
  po.print_after = I.options().print_after;
  po.dump = [this](const std::string& pass, const std::string& text) {
    I.write_err("# IR after " + pass + "\n" + text + "\n");
  };
  try {
    jit::optimize(module, g, po);
  } catch (const jit::PassError& e) {
    I.raise(I.exception_class("RuntimeError").get(), std::string("internal error optimizing a graph: ") + e.what());
  }
}

void GraphCompiler::save(const std::string& name, const std::string& phase, const FuncGraph& g, bool dot,
                         const ir::PrintOptions& opts, const std::string& header) {
  std::string base = save_path(name, phase);
  write_saved(base + ".ir", header + ir::print_graph(g, opts));
  if (dot) write_saved(base + ".dot", ir::to_dot(g));
}

void GraphCompiler::save_text(const std::string& name, const std::string& suffix, const std::string& text) {
  write_saved(save_path(name, suffix), text);
}

std::string GraphCompiler::save_path(const std::string& name, const std::string& phase) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(save_dir, ec);
  char num[16];
  std::snprintf(num, sizeof num, "%02d_", saved++);
  return (fs::path(save_dir) / (num + name + "_" + phase)).string();
}

void GraphCompiler::write_saved(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) I.raise(I.exception_class("OSError").get(), "save_graphs: cannot write '" + path + "'");
}

// Times the phases of one compilation. Phases of compilations nested in it
// (a gradient function compiled while lowering) are recorded by those and
// left out of the enclosing phase.
struct PhaseClock {
  std::vector<std::pair<std::string, double>>& times;
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  size_t seen = times.size();
  void mark(const std::string& phase) {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - t).count();
    for (size_t i = seen; i < times.size(); ++i) ms -= times[i].second;
    times.emplace_back(phase, ms);
    seen = times.size();
    t = now;
  }
};

namespace {
// One compilation's bookkeeping: a compilation started by another (a
// gradient function used inside a compiled function) adds to its phases.
struct CompileScope {
  int& depth;
  PhaseClock clock;
  static std::vector<std::pair<std::string, double>>& fresh(std::vector<std::pair<std::string, double>>& t, int d) {
    if (d == 0) t.clear();
    return t;
  }
  CompileScope(std::vector<std::pair<std::string, double>>& times, int& d)
      : depth(d), clock{fresh(times, d)} {
    ++depth;
  }
  ~CompileScope() { --depth; }
};
}  // namespace

Compiled GraphCompiler::build(const Value& fn, size_t nargs) {
  CompileScope scope(last_times, compiling_);
  PhaseClock& clock = scope.clock;
  std::string name = "graph";
  Value nm = fn.is_obj() ? I.getattr_or_undef(fn, I.intern("__name__")) : Value::undef();
  if (nm.is(Kind::Str)) name = static_cast<Str*>(nm.obj())->s;
  FuncGraph* root = module.new_graph(name == "<lambda>" ? "lambda" : name);
  Session s(*this, root, nargs);
  std::vector<Node*> call;
  for (size_t i = 0; i < nargs; ++i) call.push_back(root->add_param("x" + std::to_string(i)));
  ResolvedName r = s.classify(fn);
  r.positional_arity = nargs;  // a def with *args is lowered for this many arguments
  Node* callee = nullptr;
  if (r.kind == ResolvedName::Kind::Function) {
    FuncGraph* g = s.lowerer.lower(r);
    if (!g) graph_mode_error(I, s.lowerer.errors());
    callee = root->constant(g);
    // Defaults of parameters the caller leaves out.
    size_t nparams = g->params().size();
    if (nargs > nparams)
      I.raise(I.exception_class("TypeError").get(), name + "() takes " + std::to_string(nparams) +
                                                        " positional arguments but " + std::to_string(nargs) +
                                                        " were given");
    if (nargs + r.defaults.size() < nparams)
      I.raise(I.exception_class("TypeError").get(),
              name + "() missing " + std::to_string(nparams - nargs - r.defaults.size()) + " required argument(s)");
    for (size_t i = nargs; i < nparams; ++i) call.push_back(root->constant(r.defaults[i - (nparams - r.defaults.size())]));
  } else if (r.kind == ResolvedName::Kind::Constant &&
             (std::holds_alternative<FuncGraph*>(r.value) || std::holds_alternative<ir::HostRef>(r.value))) {
    callee = root->constant(r.value);  // a gradient function's graph, a library Cell's construct
  } else if (r.kind == ResolvedName::Kind::Primitive) {
    callee = root->constant(ir::PrimRef{r.prim, {}});
  } else {
    I.raise(I.exception_class("TypeError").get(),
            I.type_name(fn) + " object cannot be compiled: graph mode compiles MSL functions, methods and Cells");
  }
  call.insert(call.begin(), callee);
  root->set_output(root->apply(call, "", root->loc()));
  clock.mark("lower");
  if (!save_dir.empty()) save(root->name(), "lowered", *root, false);
  optimize(*root);
  clock.mark("optimize");
  if (!save_dir.empty()) save(root->name(), "opt", *root, true);
  Compiled c;
  c.graph = root;
  c.nargs = nargs;
  c.weights = std::move(s.weights);
  return c;
}

Compiled GraphCompiler::build_grad(GradFunctionObj* gf, size_t nargs) {
  const GradSpec& spec = gf->spec;
  CompileScope scope(last_times, compiling_);
  PhaseClock& clock = scope.clock;
  // R(args..., weights...) for the differentiated function, then GF around J(R).
  FuncGraph* root = module.new_graph("fwd");
  Session s(*this, root, nargs);
  std::vector<Node*> call;
  for (size_t i = 0; i < nargs; ++i) call.push_back(root->add_param("x" + std::to_string(i)));
  ResolvedName r = s.classify(gf->fn);
  r.positional_arity = nargs;
  FuncGraph* target = nullptr;
  if (r.kind == ResolvedName::Kind::Function) {
    target = s.lowerer.lower(r);
    if (!target) graph_mode_error(I, s.lowerer.errors());
  } else if (r.kind == ResolvedName::Kind::Constant && std::holds_alternative<FuncGraph*>(r.value)) {
    target = std::get<FuncGraph*>(r.value);
  } else if (r.kind == ResolvedName::Kind::Primitive ||
             (r.kind == ResolvedName::Kind::Constant && std::holds_alternative<ir::HostRef>(r.value))) {
    // A primitive or a library function: differentiate a graph calling it
    // (a library function is traced when the gradient runs).
    target = module.new_graph("call", root, root->loc());
    std::vector<Node*> c{r.kind == ResolvedName::Kind::Primitive ? target->constant(ir::PrimRef{r.prim, {}})
                                                                  : target->constant(r.value)};
    for (size_t i = 0; i < nargs; ++i) c.push_back(target->add_param("x" + std::to_string(i)));
    target->set_output(target->apply(c, "", root->loc()));
  } else {
    I.raise(I.exception_class("TypeError").get(),
            "cannot differentiate a " + I.type_name(gf->fn) + ": give a function, a method or a Cell");
  }
  if (target->params().size() != nargs)
    I.raise(I.exception_class("TypeError").get(),
            "the differentiated function takes " + std::to_string(target->params().size()) + " arguments, " +
                std::to_string(nargs) + " given");
  call.insert(call.begin(), root->constant(target));
  root->set_output(root->apply(call, "", root->loc()));
  std::vector<Node*> wnodes;
  for (const Value& w : spec.weights) {
    if (!is_tensor(w) || !tensor_obj(w)->param)
      I.raise(I.exception_class("TypeError").get(), "weights must be Parameters, got " + I.type_name(w));
    wnodes.push_back(s.weight_node(w));
  }
  clock.mark("lower");
  FuncGraph* jr;
  try {
    jr = grad.j_graph(root);
  } catch (const ad::GradError& e) {
    I.raise(I.exception_class("GraphModeError").get(), e.what());
  }

  size_t nw = s.weights.size();
  FuncGraph* g = module.new_graph("grad_" + target->name());
  ir::Loc l = target->loc();
  std::vector<Node*> args{g->constant(jr)};
  std::vector<Node*> params;
  for (size_t i = 0; i < nargs + nw; ++i) {
    Node* p = g->add_param(i < nargs ? "x" + std::to_string(i) : "w" + std::to_string(i - nargs), l);
    params.push_back(p);
    args.push_back(p);
  }
  Node* pair = g->apply(args, "pair", l);
  Node* out = g->apply(IrOp::tuple_getitem, {pair, g->constant(int64_t{0})}, "out", l);
  Node* bp = g->apply(IrOp::tuple_getitem, {pair, g->constant(int64_t{1})}, "bprop", l);
  Node* sens;
  if (spec.sens_param) {
    sens = g->add_param("sens", l);
  } else if (spec.has_aux) {
    Node* first = g->apply(IrOp::tuple_getitem, {out, g->constant(int64_t{0})}, "", l);
    sens = g->apply(IrOp::tuple_setitem, {g->apply(IrOp::zeros_like, {out}, "", l), g->constant(int64_t{0}),
                                          g->apply(IrOp::ones_like, {first}, "", l)},
                    "sens", l);
  } else {
    sens = g->apply(IrOp::ones_like, {out}, "sens", l);
  }
  Node* grads = g->apply({bp, sens}, "grads", l);
  auto item = [&](size_t i) { return g->apply(IrOp::tuple_getitem, {grads, g->constant(static_cast<int64_t>(i))}, "", l); };
  auto input_grad = [&](int64_t pos) -> Node* {
    int64_t p = pos < 0 ? pos + static_cast<int64_t>(nargs) : pos;
    if (p < 0 || p >= static_cast<int64_t>(nargs))
      I.raise(I.exception_class("IndexError").get(), "grad_position " + std::to_string(pos) + " is out of range for " +
                                                         std::to_string(nargs) + " inputs");
    return item(static_cast<size_t>(p) + 1);
  };
  Node* in_part = nullptr;
  switch (spec.inputs) {
    case GradSpec::Inputs::None: break;
    case GradSpec::Inputs::One: in_part = input_grad(spec.positions.at(0)); break;
    case GradSpec::Inputs::Tuple:
    case GradSpec::Inputs::All: {
      std::vector<Node*> items;
      if (spec.inputs == GradSpec::Inputs::All)
        for (size_t i = 0; i < nargs; ++i) items.push_back(item(i + 1));
      else
        for (int64_t pos : spec.positions) items.push_back(input_grad(pos));
      in_part = g->apply(IrOp::make_tuple, items, "", l);
      break;
    }
  }
  Node* w_part = nullptr;
  if (spec.has_weights) {
    std::vector<Node*> items;
    for (Node* wn : wnodes) {
      size_t k = 0;
      while (root->params()[nargs + k] != wn) ++k;
      items.push_back(item(nargs + k + 1));
    }
    w_part = g->apply(IrOp::make_tuple, items, "", l);
  }
  Node* result = in_part && w_part ? g->apply(IrOp::make_tuple, {in_part, w_part}, "", l)
                 : in_part         ? in_part
                 : w_part          ? w_part
                                   : g->apply(IrOp::make_tuple, {}, "", l);
  // Top-level callers shape has_aux / value_and_grad results themselves.
  if (spec.has_aux || spec.return_value) result = g->apply(IrOp::make_tuple, {out, result}, "", l);
  g->set_output(result);
  clock.mark("grad");
  if (!save_dir.empty()) {
    save(target->name(), "lowered", *root, false);
    save(target->name(), "grad", *jr, false);
  }
  optimize(*g);
  clock.mark("optimize");
  if (!save_dir.empty()) save(target->name(), "grad_opt", *g, true);
  Compiled c;
  c.graph = g;
  c.nargs = nargs;
  c.weights = std::move(s.weights);
  c.sens_param = spec.sens_param;
  return c;
}

const Compiled& GraphCompiler::compile(const Value& fn, size_t nargs) {
  auto key = std::make_tuple(static_cast<const Object*>(fn.obj()), nargs, generation);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  Compiled c;
  c.fn = fn;
  c.nargs = nargs;
  prepare(c, true);
  keep_.push_back(fn);
  return cache_.emplace(key, std::move(c)).first->second;
}

void GraphCompiler::prepare(Compiled& c, bool deferrable) {
  if (deferrable && disk_cache_usable() && compiling_ == 0) {
    // Lowering waits for the first call that misses the disk cache: a hit
    // needs only the fingerprint.
    last_times.clear();
    PhaseClock clock{last_times};
    Fingerprint fp = fingerprint_of(I, c.fn);
    clock.mark("fingerprint");
    if (fp.ok) {
      c.fingerprint = std::move(fp);
      c.fingerprint_fresh = true;
    } else {
      cache_info("not cached on disk: the callable holds " + fp.why);
    }
  }
  if (!c.fingerprint) {
    Compiled b = c.grad ? build_grad(c.grad, c.nargs) : build(c.fn, c.nargs);
    b.fn = c.fn;
    b.grad = c.grad;
    c = std::move(b);
  }
}

const Compiled& GraphCompiler::built(const Compiled& c) {
  if (c.graph) return c;
  // The fingerprint phase stays first in the compile times.
  std::vector<std::pair<std::string, double>> before = last_times;
  Compiled b = c.grad ? build_grad(c.grad, c.nargs) : build(c.fn, c.nargs);
  last_times.insert(last_times.begin(), before.begin(), before.end());
  auto& m = const_cast<Compiled&>(c);  // cache_'s entry, completed in place
  m.graph = b.graph;
  m.weights = std::move(b.weights);
  return c;
}

const Compiled& GraphCompiler::gradient(GradFunctionObj* gf, size_t nargs, bool lazy) {
  const GradSpec& s = gf->spec;
  std::ostringstream key;
  key << generation << '/' << static_cast<const void*>(gf->fn.is_obj() ? gf->fn.obj() : nullptr) << '/' << nargs << '/'
      << static_cast<int>(s.inputs) << '/' << s.has_weights << s.sens_param << s.has_aux << s.return_value << '/';
  for (int64_t p : s.positions) key << p << ',';
  key << '/';
  for (const Value& w : s.weights) key << static_cast<const void*>(w.obj()) << ',';
  auto it = grad_cache_.find(key.str());
  if (it != grad_cache_.end()) return it->second;
  Compiled c;
  c.fn = Value::object(gf);
  c.grad = gf;
  c.nargs = nargs;
  c.sens_param = s.sens_param;
  prepare(c, lazy && !s.sens_param);
  keep_.push_back(Value::object(gf));  // keeps fn and the weights alive: their addresses are the key
  return grad_cache_.emplace(key.str(), std::move(c)).first->second;
}

const Compiled& GraphCompiler::compile_grad(GradFunctionObj* gf, size_t nargs) {
  return built(gradient(gf, nargs, false));
}

const Compiled& GraphCompiler::grad_entry(GradFunctionObj* gf, size_t nargs) { return gradient(gf, nargs, true); }

// The abstract value of an argument: what a compiled graph is specialized
// for. Python numbers count by kind, not value, so a loop bound does not
// cause a recompilation per value.
jit::AbsValue abstract_of(const exec::RtValue& v) {
  using jit::ScalarKind;
  if (auto t = v.get_if<kernels::Tensor>()) return jit::abs_tensor(t->spec());  // the device is part of the type
  if (v.is<bool>()) return jit::abs_scalar(ScalarKind::Bool);
  if (v.is<int64_t>()) return jit::abs_scalar(ScalarKind::Int);
  if (v.is<double>()) return jit::abs_scalar(ScalarKind::Float);
  if (auto s = v.get_if<std::string>()) return jit::abs_const(*s);
  if (v.is_none()) return jit::abs_const(ir::NoneValue{});
  if (v.is<exec::RtTuple>()) {
    std::vector<jit::AbsValue> items;
    for (const exec::RtValue& x : v.tuple()) items.push_back(abstract_of(x));
    return jit::abs_tuple(std::move(items));
  }
  jit::AbsValue any;
  any.v.emplace<jit::AbsAny>();
  return any;
}

exec::RtValue GraphCompiler::run(const Compiled& base, std::vector<exec::RtValue> args) {
  ir::FuncGraph* g = runnable(base, args);
  try {
    return exec::run_graph(*g, std::move(args), exec_options());
  } catch (...) {
    raise_exec_error(I);
  }
}

ir::FuncGraph* GraphCompiler::runnable(const Compiled& base, const std::vector<exec::RtValue>& args) {
  // Each argument signature (dtype and shape of every tensor, kind of every
  // number) is specialized once, on first use: type errors (branches that
  // join different shapes, loops that change them) are reported before
  // anything runs, and save_graphs shows the typed graph. Straight-line
  // code (everything inlined into one graph: a network's forward pass, its
  // gradient, a training step) then runs as primitives: library calls
  // expanded at the types and cleaned up, so a gradient computes only what
  // is asked of it (no input gradient of the first layer). Anything else
  // runs as compiled, with library calls made at run time: clones of
  // loops grow too large to expand.
  std::vector<jit::AbsValue> sig;
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(base.graph)) + (graph_mode ? "g:" : "p:");
  for (const exec::RtValue& a : args) {
    sig.push_back(abstract_of(a));
    key += jit::identity_key(sig.back()) + ";";
  }
  auto it = specialized_.find(key);
  if (it == specialized_.end()) {
    if (I.options().log_level == 0) log_signature(*base.graph, sig);
    PhaseClock clock{last_times};
    auto specialize_at_sig = [&](ir::FuncGraph& g) {
      try {
        return jit::specialize(module, g, sig, specialize_options());
      } catch (const jit::SpecializeError& e) {
        specialize_failed(e);
      }
    };
    jit::Specialized sp = specialize_at_sig(*base.graph);
    clock.mark("specialize");
    if (!save_dir.empty()) save(base.graph->name(), "specialized", *sp.graph, false, sp.print_options());
    ir::FuncGraph* result = base.graph;
    GraphUse typed_use = graph_use(*sp.graph);
    size_t graphs = typed_use.graphs;
    if (graphs != 1 && !typed_use.switches) {
      // Branches whose condition only the types decide (`if x.shape[0] > 1:`)
      // are direct calls of the taken branch now: inlined, the graph may be
      // straight-line code after all. (A switch left means a loop or a
      // tensor condition, which stays control flow.)
      optimize(*sp.graph);
      sp = specialize_at_sig(*sp.graph);
      graphs = graph_use(*sp.graph).graphs;
    }
    if (graphs != 1) {
      debug("@" + base.graph->name() + " runs as compiled: it calls " + std::to_string(graphs - 1) +
            " other graphs (closures, branches or loops)");
    } else {
      // The compiled graph (base), which specialized, still runs when
      // expansion fails or leaves library calls.
      jit::Specialized prim = std::move(sp);
      jit::BackendContext ctx = backend_context(base.graph->name(), sig, {base.weights, base.nargs}, clock);
      try {
        jit::BackendResult r = graph_target(sig).compile(ctx, prim);
        if (r.primitives) {
          result = prim.graph;
          if (!save_dir.empty()) {
            save(base.graph->name(), "primitives", *prim.graph, false, prim.print_options(),
                 "# memory plan: " + r.plan.summary() + "\n");
            if (std::string cuda = jit::fused_cuda_listing(*prim.graph); !cuda.empty())
              save_text(base.graph->name(), "cuda.cu", cuda);
          }
        } else {
          debug("@" + base.graph->name() + " runs as compiled: " + r.why);
        }
      } catch (const jit::SpecializeError& e) {
        debug("@" + base.graph->name() + " runs as compiled: expansion failed: " + e.what());
      }
    }
    it = specialized_.emplace(key, result).first;
    count_graph_compiled();
  }
  return it->second;
}

void GraphCompiler::specialize_failed(const jit::SpecializeError& e) {
  auto src = e.loc.valid() ? sources.find(*e.loc.file) : sources.end();
  if (src == sources.end()) I.raise(I.exception_class("GraphModeError").get(), e.what());
  Diagnostic d;
  d.source = src->second;
  d.span = Span{e.loc.line, e.loc.col, e.loc.line, e.loc.col + 1};
  d.message = e.message;
  d.error_type = "GraphModeError";
  // Types are checked for the whole graph before it runs, so the error
  // comes before any statement of the call has run.
  d.help = "graph mode checks every operation's types when it compiles; in PyNative mode "
           "(set_context(mode=PYNATIVE_MODE), msl --mode pynative) the same code raises where it runs";
  graph_mode_error(I, {d});
}

jit::BackendContext GraphCompiler::backend_context(const std::string& name, const std::vector<jit::AbsValue>& sig,
                                                   const WeightParams& weights, PhaseClock& clock) {
  jit::BackendContext ctx(module);
  // msl --dump writes every op's output, in both modes alike (a difference
  // is found by comparing the two folders), so it runs graph mode unfused.
  ctx.fuse = graph_mode && !kernels::dumping();
  ctx.layout_block = layout_block();
  ctx.expand = [this, &sig, weights](jit::Specialized& sp) -> std::string {
    sp = expand_to_primitives(*this, std::move(sp), sig, weights);
    GraphUse use = graph_use(*sp.graph);
    return use.host ? "library calls remain after expansion ($" + use.first_host + ")" : "";
  };
  ctx.after_pass = [this, name, &clock](const std::string& pass, const jit::Specialized& sp) {
    print_after(pass, sp);
    if (pass == "expand") {
      clock.mark("expand");
      report_subgraphs(name, sp);
    }
    if (pass == "fuse_elementwise" && I.options().emit_llvm) emit_llvm(*sp.graph);
    if (pass == "compile_cuda" && I.options().emit_cuda) I.write_out(jit::fused_cuda_listing(*sp.graph));
    if (pass == "memory_plan") clock.mark("fuse");
  };
  ctx.debug = [this](const std::string& message) { debug(message); };
  return ctx;
}

void GraphCompiler::report_subgraphs(const std::string& name, const jit::Specialized& sp) {
  if (!I.options().emit_subgraphs && subgraph_reports == nullptr && save_dir.empty()) return;
  auto start = std::chrono::steady_clock::now();
  std::vector<jit::SubgraphGroup> groups = jit::find_identical_subgraphs(sp);
  std::string json = jit::subgraphs_json(sp, groups);
  if (I.options().emit_subgraphs) I.write_out(json);
  // --save-graphs: the groups and the folded drawing beside the IR files.
  if (!save_dir.empty()) {
    std::string base = save_path(name, "subgraphs");
    write_saved(base + ".json", json);
    write_saved(base + ".dot", jit::folded_dot(sp, groups));
  }
  if (subgraph_reports) {
    std::string dot = jit::folded_dot(sp, groups);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    subgraph_reports->push_back(
        {sp.graph->name(), jit::apply_count(*sp.graph), seconds, std::move(groups), json, std::move(dot)});
  }
}

const jit::Target& GraphCompiler::graph_target(const std::vector<jit::AbsValue>& sig) const {
  if (graph_mode && I.options().graph_target == "cuda") return jit::cuda_target();
  return jit::target_for(jit::device_of(sig));
}

int GraphCompiler::layout_block() const {
  return I.options().activation_layout == "nchw" ? 0 : kernels::activation_block();
}

void GraphCompiler::print_after(const std::string& pass, const jit::Specialized& sp) {
  const std::string& pa = I.options().print_after;
  if (pa == pass || pa == "all") I.write_err("# IR after " + pass + "\n" + ir::print_graph(*sp.graph, sp.print_options()) + "\n");
}

void GraphCompiler::debug(const std::string& message) {
  if (I.options().log_level == 0) I.write_err("[DEBUG] graph: " + message + "\n");
}

void GraphCompiler::log_signature(const FuncGraph& graph, const std::vector<jit::AbsValue>& sig) {
  auto [it, first] = last_signature_.try_emplace(&graph, sig);
  std::string what = "@" + graph.name();
  if (first) {
    debug("compiling " + what + " (" + (graph_mode ? "GRAPH_MODE" : "PYNATIVE_MODE") + ")");
    return;
  }
  std::string change;
  for (size_t i = 0; i < sig.size() && i < it->second.size(); ++i) {
    if (jit::identity_key(sig[i]) == jit::identity_key(it->second[i])) continue;
    change = "argument " + std::to_string(i) + " was " + jit::to_string(it->second[i]) + ", now " +
             jit::to_string(sig[i]);
    break;
  }
  if (change.empty()) change = std::string("the mode is now ") + (graph_mode ? "GRAPH_MODE" : "PYNATIVE_MODE");
  debug("recompiling " + what + " for a new input signature: " + change);
  it->second = sig;
}

// msl --emit=llvm: each fused cluster's program and optimized LLVM IR, on
// stdout as the program compiles it.
void GraphCompiler::emit_llvm(const ir::FuncGraph& g) { I.write_out(jit::fused_llvm_listing(g)); }

jit::SpecializeOptions GraphCompiler::specialize_options() {
  jit::SpecializeOptions so;
  so.host_call = [this](const ir::HostRef& h, const std::vector<jit::AbsValue>& a) { return host_type(h, a); };
  return so;
}

std::vector<exec::RtValue> GraphCompiler::executor_args(const Compiled& c, std::span<Value> args) {
  std::vector<exec::RtValue> rt;
  for (size_t i = 0; i < c.nargs; ++i) rt.push_back(to_rt(I, args[i]));
  for (const Value& w : c.weights) rt.push_back(exec::RtValue(tensor_of(w)));
  if (c.sens_param) rt.push_back(to_rt(I, args.back()));
  return rt;
}

exec::RtValue GraphCompiler::run(const Compiled& c, std::span<Value> args) {
  if (c.fingerprint && disk_cache_usable()) return run_cached(c, args);
  const Compiled& b = built(c);
  return run(b, executor_args(b, args));
}

GraphCompiler& compiler_of(Interp& I) {
  auto& st = I.graph_state();
  if (!st) st = std::make_shared<GraphCompiler>(I);
  return *static_cast<GraphCompiler*>(st.get());
}

Value graph_call(Interp& I, const Value& fn, std::span<Value> args) {
  GraphCompiler& gc = compiler_of(I);
  const Compiled& c = gc.compile(fn, args.size());
  return from_rt(I, gc.tensor_cls, gc.run(c, args));
}

Value grad_call(Interp& I, const Value& grad_fn, std::span<Value> args) {
  GraphCompiler& gc = compiler_of(I);
  auto* gf = static_cast<GradFunctionObj*>(grad_fn.obj());
  size_t nargs = args.size() - (gf->spec.sens_param ? 1 : 0);
  if (gf->spec.sens_param && args.empty())
    I.raise(I.exception_class("TypeError").get(), "sens_param=True: pass the output's sensitivity as the last argument");
  const Compiled& c = gc.grad_entry(gf, nargs);
  Value v = from_rt(I, gc.tensor_cls, gc.run(c, args));
  if (!gf->spec.has_aux && !gf->spec.return_value) return v;
  std::vector<Value> pair = I.to_vector(v);
  Value out = pair[0], grads = pair[1];
  if (gf->spec.has_aux) {
    // MindSpore: (grads, aux) with aux the tuple of the outputs after the
    // first, a 1-tuple for one (`grads, (z,) = grad_fn(x)`).
    std::vector<Value> outs = I.to_vector(out);
    Value auxv = new_tuple(std::vector<Value>(outs.begin() + 1, outs.end()));
    if (!gf->spec.return_value) return new_tuple({grads, auxv});
  }
  return new_tuple({out, grads});
}

std::string graph_ir_text(Interp& I, const Value& fn, size_t nargs) {
  GraphCompiler& gc = compiler_of(I);
  if (GradFunctionObj* gf = grad_function_of(fn)) {
    gc.compile_grad(gf, nargs);
    return ir::print_module(gc.module);
  }
  // The callable's graph and the graphs nested in it, not everything
  // compiled before.
  return ir::print_graph(*gc.built(gc.compile(fn, nargs)).graph);
}

}  // namespace msl
