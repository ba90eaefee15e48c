// Rebuilding the analysed instances as new graphs (specialize.h, step 5).
//
// 1. Collect the instances reachable from the root through the calls their
//    last evaluation made (plus their enclosing instances).
// 2. Create every clone's graph and parameters first, so a clone can refer
//    to any other (a recursive call, a branch) before its body exists.
// 3. Build the bodies, enclosing instances before nested ones: a nested
//    clone's free variables are nodes of its parent's clone. Per node:
//      * a constant scalar value becomes a constant (unless the node has an
//        effect or calls the host);
//      * a switch with a constant condition becomes the taken operand;
//      * a call of one known graph instance calls that clone directly;
//      * a graph constant whose value was called as one instance (a branch
//        of an unknown switch, a function passed on or bound by partial)
//        refers to that clone; one never called, or called with several
//        signatures, stays a reference to the primal graph;
//      * anything else is copied with its inputs mapped.
#include <algorithm>
#include <unordered_set>

#include "jit/specialize_impl.h"

namespace msl::jit {

namespace {

int nesting_depth(const SpecContext* s) {
  int d = 0;
  for (const SpecContext* p = s->parent; p; p = p->parent) ++d;
  return d;
}

bool calls_host(const AbsValue& fn) {
  auto f = fn.get_if<AbsFunc>();
  if (!f) return fn.is<AbsAny>();
  for (const AbsCallee& c : f->callees)
    if (c.kind == AbsCallee::Kind::Host) return true;
  return false;
}

// Nodes whose evaluation matters beyond their value, never folded away:
// effects, host calls and calls of graphs with effects, and depend, whose
// value may be a constant (an optimizer's `return True` after its updates)
// while its second input is the effect chain it orders after.
bool has_effect(const SpecContext* inst, const ir::Node* n, const AbsValue& callee) {
  if (n->is_call_of(ir::IrOp::print) || n->is_call_of(ir::IrOp::update_state) || n->is_call_of(ir::IrOp::depend))
    return true;
  if (auto p = n->callee()->as_prim(); p && kernels::prim_def(p->prim).kind == kernels::PrimKind::InPlace) return true;
  if (calls_host(callee)) return true;
  auto it = inst->calls.find(n);
  if (it != inst->calls.end())
    for (const SpecContext* c : it->second)
      if (c->effects) return true;
  return false;
}

class Builder {
 public:
  Builder(Specializer& s, Specialized& out) : s_(s), out_(out) {}

  void run(SpecContext* root) {
    collect(root);
    std::stable_sort(order_.begin(), order_.end(),
                     [](const SpecContext* a, const SpecContext* b) { return nesting_depth(a) < nesting_depth(b); });
    for (SpecContext* inst : order_) {
      ir::FuncGraph* g = inst->graph;
      ir::FuncGraph* parent = inst->parent ? inst->parent->clone : nullptr;
      inst->clone = s_.module().new_graph(g->name(), parent, g->loc());
      inst->clone->flags() = g->flags();
      inst->clone_map.clear();
      for (size_t i = 0; i < g->params().size(); ++i) {
        const ir::Node* p = g->params()[i];
        ir::Node* q = inst->clone->add_param(p->name(), p->loc());
        inst->clone_map[p] = q;
        out_.types[q->id()] = inst->args[i];
      }
    }
    for (SpecContext* inst : order_) body(inst);
    out_.graph = root->clone;
  }

 private:
  void collect(SpecContext* root) {
    std::vector<SpecContext*> work{root};
    while (!work.empty()) {
      SpecContext* inst = work.back();
      work.pop_back();
      if (!seen_.insert(inst).second) continue;
      order_.push_back(inst);
      if (inst->parent) work.push_back(inst->parent);
      for (auto& [site, callees] : inst->calls)
        for (SpecContext* c : callees) work.push_back(c);
      for (auto& [constant, callees] : inst->value_calls)
        for (SpecContext* c : callees) work.push_back(c);
    }
    // Creation order, so clone names do not depend on hashing.
    std::sort(order_.begin(), order_.end(),
              [](const SpecContext* a, const SpecContext* b) { return a->serial < b->serial; });
  }

  ir::Node* constant(SpecContext* inst, ir::ConstValue v, const AbsValue& type, ir::Loc loc = {}) {
    ir::Node* c = inst->clone->constant(std::move(v), loc);
    out_.types[c->id()] = type;
    return c;
  }

  // The clone-side node for an operand of `inst`'s graph.
  ir::Node* operand(SpecContext* inst, const ir::Node* n) {
    if (n->is_constant()) {
      AbsValue type = s_.constant_value(inst, n);
      auto called = inst->value_calls.find(n);
      if (n->as_graph() && called != inst->value_calls.end() && called->second.size() == 1)
        return constant(inst, called->second[0]->clone, type);
      return constant(inst, n->value(), type, n->loc());
    }
    SpecContext* owner = n->graph() == inst->graph ? inst : s_.enclosing(inst->parent, n->graph(), n);
    // A parameter whose value is a constant is used as that constant.
    if (n->is_parameter()) {
      const AbsValue& v = owner->values.at(n);
      if (v.is_constant()) return constant(inst, *v.get_if<AbsScalar>()->value, v);
    }
    auto it = owner->clone_map.find(n);
    if (it == owner->clone_map.end()) s_.fail(n, "a node of @" + owner->graph->name() + " used before it was built");
    return it->second;
  }

  // The single graph instance a call node calls, when the clone may call it
  // directly: a plain (not partial, not J) graph callee whose context is
  // visible from here.
  SpecContext* direct_callee(SpecContext* inst, const ir::Node* n, const AbsValue& fn) {
    auto it = inst->calls.find(n);
    auto f = fn.get_if<AbsFunc>();
    if (it == inst->calls.end() || it->second.size() != 1 || !f || f->callees.size() != 1) return nullptr;
    if (f->callees[0].j || !f->callees[0].bound.empty()) return nullptr;
    SpecContext* target = it->second[0];
    if (!target->parent) return target;
    // A closure that flowed here as a value (a backpropagator returned by a
    // call) was made in the frame of that call; naming its graph here would
    // capture this frame instead, which differs when the call recursed into
    // the same instance. Only a callee written as a constant here is
    // created in this frame.
    if (!n->callee()->is_constant()) return nullptr;
    for (SpecContext* c = inst; c; c = c->parent)
      if (c == target->parent) return target;
    return nullptr;
  }

  void body(SpecContext* inst) {
    const ir::FuncGraph* g = inst->graph;
    for (const ir::Node* n : s_.order(g)) {
      if (!n->is_apply()) continue;
      const AbsValue& v = inst->values.at(n);
      AbsValue fn = s_.value_of(inst, n->callee());
      ir::Node* built = nullptr;
      if (v.is_constant() && !has_effect(inst, n, fn)) {
        built = constant(inst, *v.get_if<AbsScalar>()->value, v, n->loc());
      } else if (n->is_call_of(ir::IrOp::switch_) && n->num_args() == 3 && s_.value_of(inst, n->arg(0)).is_constant()) {
        built = operand(inst, n->arg(truthy(s_.value_of(inst, n->arg(0))) ? 1 : 2));
      } else {
        std::vector<ir::Node*> inputs;
        if (SpecContext* target = direct_callee(inst, n, fn))
          inputs.push_back(constant(inst, target->clone, abs_graph_func(target->graph, target->parent)));
        else
          inputs.push_back(operand(inst, n->callee()));
        for (size_t i = 0; i < n->num_args(); ++i) inputs.push_back(operand(inst, n->arg(i)));
        built = inst->clone->apply(std::move(inputs), n->name(), n->loc());
        out_.types[built->id()] = v;
      }
      inst->clone_map[n] = built;
    }
    inst->clone->set_output(operand(inst, g->output()));
  }

  // The switch's truth test on a constant condition (as the analysis).
  static bool truthy(const AbsValue& c) {
    const ir::ConstValue& v = *c.get_if<AbsScalar>()->value;
    if (auto b = std::get_if<bool>(&v)) return *b;
    if (auto i = std::get_if<int64_t>(&v)) return *i != 0;
    if (auto d = std::get_if<double>(&v)) return *d != 0.0;
    if (auto s = std::get_if<std::string>(&v)) return !s->empty();
    return false;
  }

  Specializer& s_;
  Specialized& out_;
  std::vector<SpecContext*> order_;
  std::unordered_set<SpecContext*> seen_;
};

}  // namespace

void build_specialized(Specializer& s, SpecContext* root, Specialized& out) { Builder(s, out).run(root); }

}  // namespace msl::jit
