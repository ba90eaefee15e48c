// The specializer's engine: instances, graph calls and the fixpoint that
// solves recursion (specialize.h describes the algorithm).
#include "jit/specialize.h"

#include <algorithm>
#include <cstdio>

#include "jit/specialize_impl.h"

namespace msl::jit {

std::string line_of(const ir::Node* n) {
  if (!n || !n->loc().valid()) return "";
  return *n->loc().file + ":" + std::to_string(n->loc().line);
}

void Specializer::fail(const ir::Node* site, const std::string& message) const {
  std::string where = line_of(site);
  if (where.empty()) throw SpecializeError(message);
  throw SpecializeError(where + ": " + message, site->loc(), message);
}

const std::vector<ir::Node*>& Specializer::order(const ir::FuncGraph* g) {
  auto it = orders_.find(g);
  if (it == orders_.end()) it = orders_.emplace(g, ir::topo_order(*g)).first;
  return it->second;
}

AbsValue abstract_of_constant(const ir::ConstValue& v) {
  if (scalar_kind_of(v)) return abs_const(v);
  if (auto t = std::get_if<kernels::Tensor>(&v)) return abs_tensor(t->spec());
  if (auto g = std::get_if<ir::FuncGraph*>(&v)) return abs_graph_func(*g);
  AbsCallee c;
  if (auto p = std::get_if<ir::PrimRef>(&v)) {
    c.kind = AbsCallee::Kind::Prim;
    c.prim = *p;
  } else if (auto op = std::get_if<ir::IrOp>(&v)) {
    c.kind = AbsCallee::Kind::Op;
    c.op = *op;
  } else {
    c.kind = AbsCallee::Kind::Host;
    c.host = std::get<ir::HostRef>(v);
  }
  return AbsFunc{{std::move(c)}};
}

SpecContext* Specializer::enclosing(SpecContext* inst, const ir::FuncGraph* parent_graph, const ir::Node* site) {
  for (SpecContext* c = inst; c; c = c->parent)
    if (c->graph == parent_graph) return c;
  fail(site, "@" + (parent_graph ? parent_graph->name() : std::string("?")) +
                 " is not an enclosing function here, so its values cannot be read");
}

AbsValue Specializer::constant_value(SpecContext* inst, const ir::Node* n) {
  ir::FuncGraph* g = n->as_graph();
  if (!g) return abstract_of_constant(n->value());
  if (!m_.owns(g)) fail(n, "@" + g->name() + " belongs to another module");
  // A nested graph referenced outside its parent (legal when it has no free
  // variables) gets no context; reading a free variable then fails.
  SpecContext* ctx = nullptr;
  for (SpecContext* c = inst; c && g->parent(); c = c->parent)
    if (c->graph == g->parent()) {
      ctx = c;
      break;
    }
  AbsValue f = abs_graph_func(g, ctx);
  AbsCallee& c = std::get<AbsFunc>(f.v).callees[0];
  c.origin = n;
  c.origin_context = inst;
  return f;
}

AbsValue Specializer::value_of(SpecContext* inst, const ir::Node* n) {
  if (n->is_constant()) return constant_value(inst, n);
  if (n->graph() != inst->graph) {
    // A free variable: its value lives in the enclosing instance. While that
    // instance is still being evaluated its values may change, so reading
    // one makes this evaluation provisional too.
    SpecContext* owner = enclosing(inst->parent, n->graph(), n);
    if (owner->depth >= 0 && !stack_.empty()) stack_.back()->low = std::min(stack_.back()->low, owner->depth);
    return value_of(owner, n);
  }
  auto it = inst->values.find(n);
  if (it != inst->values.end()) return it->second;
  AbsValue v;
  if (n->is_parameter()) {
    const auto& ps = inst->graph->params();
    size_t i = static_cast<size_t>(std::find(ps.begin(), ps.end(), n) - ps.begin());
    if (i >= inst->args.size()) fail(n, "a parameter of @" + inst->graph->name() + " that is not in its list");
    v = inst->args[i];
  } else {
    v = eval_apply(inst, n);
  }
  inst->values[n] = v;
  return v;
}

AbsValue Specializer::eval_apply(SpecContext* inst, const ir::Node* n) {
  AbsValue fn = value_of(inst, n->callee());
  std::vector<AbsValue> args;
  args.reserve(n->num_args());
  for (size_t i = 0; i < n->num_args(); ++i) args.push_back(value_of(inst, n->arg(i)));
  // A value still pending (a recursive call in progress) makes everything
  // computed from it pending; the join at the enclosing call drops it.
  if (fn.is_bottom()) return fn;
  for (const AbsValue& a : args)
    if (a.is_bottom()) return a;
  if (n->is_call_of(ir::IrOp::print) || n->is_call_of(ir::IrOp::update_state)) inst->effects = true;
  if (auto p = n->callee()->as_prim(); p && kernels::prim_def(p->prim).kind == kernels::PrimKind::InPlace)
    inst->effects = true;
  return call(inst, n, fn, args);
}

AbsValue Specializer::call(SpecContext* inst, const ir::Node* site, const AbsValue& fn,
                           const std::vector<AbsValue>& args) {
  if (fn.is<AbsAny>()) return AbsAny{};
  auto f = fn.get_if<AbsFunc>();
  if (!f) fail(site, "a value of type " + to_string(fn) + " is not callable");
  if (f->callees.size() == 1) return call_callee(inst, site, f->callees[0], args);
  // One of several functions (an if whose condition is not a constant):
  // the result is the join of all of them.
  AbsValue result = AbsBottom{};
  size_t first = 0;
  for (size_t i = 0; i < f->callees.size(); ++i) {
    AbsValue r = call_callee(inst, site, f->callees[i], args);
    if (r.is_bottom()) continue;
    JoinFailure why;
    std::optional<AbsValue> j = join(result, r, &why);
    if (!j) fail_branches(site, f->callees, first, i, why);
    if (result.is_bottom()) first = i;
    result = std::move(*j);
  }
  return result;
}

namespace {

// The line of the node producing the part of a branch's result at `path`:
// through make_tuple items as long as they have locations.
std::string branch_line(const AbsCallee& c, const std::vector<size_t>& path) {
  if (c.kind != AbsCallee::Kind::Graph || !c.graph->output()) return "";
  const ir::Node* n = c.graph->output();
  uint32_t line = n->loc().valid() ? n->loc().line : c.graph->loc().line;
  for (size_t idx : path) {
    if (!n->is_call_of(ir::IrOp::make_tuple) || idx >= n->num_args()) break;
    n = n->arg(idx);
    if (n->loc().valid()) line = n->loc().line;
  }
  return line ? " (line " + std::to_string(line) + ")" : "";
}

}  // namespace

void Specializer::fail_branches(const ir::Node* site, const std::vector<AbsCallee>& callees, size_t left, size_t right,
                                const JoinFailure& why) const {
  const ir::Node* sw = site->callee();
  bool is_if = sw->is_call_of(ir::IrOp::switch_);
  std::string at = line_of(is_if && sw->loc().valid() ? sw : site);
  std::string what = is_if ? "the branches of the if" : "the functions called";
  if (!at.empty()) what += " at " + at;
  fail(site, what + " return different types: " + why.left + branch_line(callees[left], why.path) + " and " +
                 why.right + branch_line(callees[right], why.path));
}

AbsValue Specializer::call_callee(SpecContext* inst, const ir::Node* site, const AbsCallee& c,
                                  std::vector<AbsValue> args) {
  if (!c.bound.empty()) args.insert(args.begin(), c.bound.begin(), c.bound.end());
  if (c.j) {
    // J(f)(x) = (f(x), backpropagator); the backpropagator is not analysed.
    AbsCallee primal = c;
    primal.j -= 1;
    primal.bound.clear();
    AbsValue r = call_callee(inst, site, primal, std::move(args));
    if (r.is_bottom()) return r;
    return abs_tuple({r, AbsAny{}});
  }
  switch (c.kind) {
    case AbsCallee::Kind::Prim: return infer_prim(site, c.prim, args);
    case AbsCallee::Kind::Op: return infer_op(site, c.op, args);
    case AbsCallee::Kind::Host: {
      inst->effects = true;
      std::optional<AbsValue> r;
      if (opts_.host_call) r = opts_.host_call(c.host, args);
      return r ? *r : AbsValue(AbsAny{});
    }
    case AbsCallee::Kind::Graph: break;
  }
  ir::FuncGraph* g = c.graph;
  if (g->params().size() != args.size())
    fail(site, "@" + g->name() + " takes " + std::to_string(g->params().size()) + " arguments, got " +
                   std::to_string(args.size()));
  // The context pointer came from this specializer's own instances.
  auto* parent = const_cast<SpecContext*>(c.context);
  SpecContext* callee = instance(g, parent, std::move(args), site);
  auto record = [&](std::vector<SpecContext*>& list) {
    if (std::find(list.begin(), list.end(), callee) == list.end()) list.push_back(callee);
  };
  record(inst->calls[site]);
  if (c.origin) record(const_cast<SpecContext*>(c.origin_context)->value_calls[c.origin]);
  AbsValue r = run(callee);
  // A callee still in progress (recursion) may have effects not seen yet.
  if (callee->effects || callee->depth >= 0) inst->effects = true;
  return r;
}

namespace {

std::string memo_key(const ir::FuncGraph* g, const SpecContext* parent, const std::vector<AbsValue>& args) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%u/%p:", g->id(), static_cast<const void*>(parent));
  std::string k = buf;
  for (const AbsValue& a : args) k += identity_key(a) + ";";
  return k;
}

bool is_tensor_text(const std::string& s) { return s.rfind("Tensor[", 0) == 0; }

}  // namespace

SpecContext* Specializer::instance(ir::FuncGraph* g, SpecContext* parent, std::vector<AbsValue> args,
                                   const ir::Node* site) {
  std::string key = memo_key(g, parent, args);
  auto it = memo_.find(key);
  if (it != memo_.end()) return it->second;
  // A call of a graph already in progress (recursion, a loop's next
  // iteration) with another signature: broaden to the join of the two, so
  // a changing constant does not unroll the loop.
  size_t in_progress = 0;
  SpecContext* innermost = nullptr;
  for (SpecContext* s : stack_)
    if (s->graph == g && s->parent == parent) ++in_progress, innermost = s;
  if (innermost) {
    std::vector<AbsValue> joined;
    bool ok = true;
    for (size_t i = 0; i < args.size() && ok; ++i) {
      JoinFailure why;
      std::optional<AbsValue> j = join(innermost->args[i], args[i], &why);
      if (j) {
        joined.push_back(std::move(*j));
        continue;
      }
      if (is_tensor_text(why.left) && is_tensor_text(why.right))
        fail(site, "@" + g->name() + " is entered again with argument " + std::to_string(i + 1) + " of type " +
                       why.right + " where it had " + why.left +
                       ": a value carried around a loop must keep its dtype and shape");
      ok = false;  // the kinds differ (e.g. a scalar becomes a tensor): a new signature
    }
    if (ok) {
      args = std::move(joined);
      key = memo_key(g, parent, args);
      it = memo_.find(key);
      if (it != memo_.end()) return it->second;
    }
    if (static_cast<int>(in_progress) >= opts_.max_recursion_signatures)
      fail(site, "the recursion of @" + g->name() + " does not converge: it is entered with " +
                     std::to_string(in_progress) + " different argument types");
  }
  auto inst = std::make_unique<SpecContext>();
  inst->graph = g;
  inst->parent = parent;
  inst->args = std::move(args);
  inst->serial = static_cast<int>(instances_.size());
  if (parent) parent->children.push_back(inst.get());
  SpecContext* p = inst.get();
  instances_.push_back(std::move(inst));
  memo_.emplace(std::move(key), p);
  return p;
}

namespace {
void invalidate_children(SpecContext* inst) {
  for (SpecContext* c : inst->children) {
    c->final = false;
    invalidate_children(c);
  }
}
}  // namespace

AbsValue Specializer::run(SpecContext* inst) {
  if (inst->final) return inst->output;
  if (inst->depth >= 0) {
    // A recursive call: the result so far.
    inst->read_while_running = true;
    if (!stack_.empty()) stack_.back()->low = std::min(stack_.back()->low, inst->depth);
    return inst->output;
  }
  AbsValue out = evaluate(inst);
  if (!stack_.empty()) stack_.back()->low = std::min(stack_.back()->low, inst->low);
  return out;
}

AbsValue Specializer::evaluate(SpecContext* inst) {
  // Its closures' instances read this instance's values, which are about
  // to be recomputed.
  invalidate_children(inst);
  inst->depth = static_cast<int>(stack_.size());
  inst->low = inst->depth;
  inst->output = AbsBottom{};
  stack_.push_back(inst);
  for (int iter = 0;; ++iter) {
    if (iter == opts_.max_fixpoint_iterations)
      fail(inst->graph->output(), "the result type of the recursive @" + inst->graph->name() + " does not settle");
    inst->read_while_running = false;
    inst->values.clear();
    inst->calls.clear();
    inst->value_calls.clear();
    inst->effects = false;
    for (const ir::Node* n : order(inst->graph)) value_of(inst, n);
    if (!inst->graph->output()) fail(nullptr, "@" + inst->graph->name() + " has no output");
    AbsValue out = value_of(inst, inst->graph->output());
    if (!inst->read_while_running) {
      inst->output = std::move(out);
      break;
    }
    // Recursive calls saw `output`; done when this pass did not change it.
    JoinFailure why;
    std::optional<AbsValue> j = join(inst->output, out, &why);
    if (!j)
      fail(inst->graph->output(), "the recursive @" + inst->graph->name() + " returns " + why.left + " and " +
                                      why.right + ": a value carried around a loop must keep its dtype and shape");
    if (*j == inst->output) break;
    inst->output = std::move(*j);
  }
  stack_.pop_back();
  inst->final = inst->low >= inst->depth;
  // Pending although it depends on nothing outside: it calls itself on
  // every path.
  if (inst->final && inst->output.is_bottom() && divergent_.empty()) divergent_ = inst->graph->name();
  inst->depth = -1;
  return inst->output;
}

std::string Specialized::type_of(const ir::Node* n) const {
  auto it = types.find(n->id());
  return it == types.end() ? "" : to_string(it->second);
}

const AbsTensor* Specialized::tensor_type(const ir::Node* n) const {
  auto it = types.find(n->id());
  return it == types.end() ? nullptr : it->second.get_if<AbsTensor>();
}

ir::PrintOptions Specialized::print_options() const {
  ir::PrintOptions o;
  o.type_of = [this](const ir::Node* n) { return type_of(n); };
  return o;
}

std::function<void(const ir::Node*, const ir::Node*)> Specialized::keep_types() {
  return [this](const ir::Node* old, const ir::Node* rebuilt) {
    if (auto it = types.find(old->id()); it != types.end()) types[rebuilt->id()] = it->second;
  };
}

Specialized specialize(ir::IrModule& m, ir::FuncGraph& g, const std::vector<AbsValue>& args,
                       const SpecializeOptions& opts) {
  std::string where = g.loc().valid() ? *g.loc().file + ":" + std::to_string(g.loc().line) + ": " : "";
  if (!m.owns(&g)) throw SpecializeError(where + "@" + g.name() + " belongs to another module");
  if (g.parent())
    throw SpecializeError(where + "@" + g.name() + " is nested in @" + g.parent()->name() +
                          ": specialize the enclosing function, which gives its free variables values");
  if (args.size() != g.params().size())
    throw SpecializeError(where + "@" + g.name() + " takes " + std::to_string(g.params().size()) + " arguments, got " +
                          std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].is_bottom())
      throw SpecializeError(where + "argument " + std::to_string(i + 1) + " of @" + g.name() + " has no type");
  Specializer s(m, opts);
  SpecContext* root = s.instance(&g, nullptr, args, nullptr);
  AbsValue out = s.run(root);
  if (out.is_bottom()) {
    const std::string& loop = s.divergent().empty() ? g.name() : s.divergent();
    throw SpecializeError(where + "@" + g.name() + " never returns: every path through @" + loop + " calls it again");
  }
  Specialized result;
  result.output = out;
  build_specialized(s, root, result);
  return result;
}

}  // namespace msl::jit
