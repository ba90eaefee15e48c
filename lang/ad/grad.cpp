// The J transform's driver: which graphs are transformed together (a
// top-level graph and everything nested in it), the forward pass building
// JG, and the backward pass building BG in reverse topological order.
// The conventions are described in grad.h.
//
// A nest is transformed in three steps:
//   1. create every J graph of the nest with its parameters (empty bodies)
//      and cache it, so references to any graph of the nest, recursive ones
//      included, resolve before any body exists;
//   2. build the forward bodies, parents first, so a nested graph finds the
//      J-values of its free variables in J of its ancestors;
//   3. build the backward graphs; each reads only its own JG (and, through
//      free variables, the J-values of enclosing graphs).
// Graphs of other nests met as constants are transformed on demand
// (recursively); a failed transform drops every J graph cached since the
// outermost call, so no cache entry refers to a half-built graph.
#include "lang/ad/grad.h"

#include "lang/ad/grad_impl.h"

namespace msl::ad {

using ir::FuncGraph;
using ir::IrOp;
using ir::Loc;
using ir::Node;

GradError::GradError(const std::string& message, const std::string& location)
    : std::runtime_error(location.empty() ? message : location + ": " + message),
      message_(message),
      location_(location) {}

std::string loc_str(const Loc& loc) {
  if (!loc.valid()) return "";
  return *loc.file + ":" + std::to_string(loc.line);
}

void fail(const std::string& message, const Loc& loc) { throw GradError(message, loc_str(loc)); }

namespace {
// A node's location, or the fallback (its graph's) when it has none.
Loc loc_or(const Node* n, const Loc& fallback) { return n->loc().valid() ? n->loc() : fallback; }
}  // namespace

// ---- public API ----

GradTransformer::GradTransformer(ir::IrModule& m, RuleFor rule_for)
    : impl_(std::make_unique<Impl>(m, std::move(rule_for))) {}
GradTransformer::~GradTransformer() = default;

FuncGraph* GradTransformer::j_graph(FuncGraph* g) { return impl_->j_graph(g); }
FuncGraph* GradTransformer::j_prim(const ir::PrimRef& p, int num_inputs) { return impl_->j_prim(p, num_inputs, {}); }
FuncGraph* GradTransformer::grad_graph(FuncGraph* g, bool sens_param) { return impl_->grad_graph(g, sens_param); }

// ---- nests ----

FuncGraph* GradTransformer::Impl::j_graph(FuncGraph* g) {
  if (!g) throw GradError("J of a null graph", "");
  if (!m.owns(g)) fail("@" + g->name() + " belongs to another module", g->loc());
  if (building.count(g))
    fail("J of @" + g->name() + ", whose own transform is in progress (recursion through J), is not supported",
         g->loc());
  if (auto it = jgraphs.find(g); it != jgraphs.end()) return it->second;
  FuncGraph* root = g;
  for (size_t limit = m.graphs().size(); root->parent() && limit; --limit) root = root->parent();
  if (root->parent()) fail("the parent chain of @" + g->name() + " is cyclic", g->loc());
  if (jgraphs.count(root))
    fail("@" + g->name() + " was added to the nest of @" + root->name() + " after that nest was transformed", g->loc());
  size_t mark = added.size();
  ++depth;
  try {
    transform_nest(root);
  } catch (...) {
    if (--depth == 0) {
      for (size_t i = mark; i < added.size(); ++i) {
        building.erase(jgraphs[added[i]]);
        jgraphs.erase(added[i]);
      }
      added.resize(mark);
    }
    throw;
  }
  --depth;
  auto it = jgraphs.find(g);
  if (it == jgraphs.end()) fail("@" + g->name() + " is not in the nest of @" + root->name(), g->loc());
  return it->second;
}

void GradTransformer::Impl::transform_nest(FuncGraph* root) {
  std::vector<FuncGraph*> nest = ir::nested_graphs(*root);
  std::vector<GraphCtx> ctxs(nest.size());
  for (size_t i = 0; i < nest.size(); ++i) {
    FuncGraph* g = nest[i];
    FuncGraph* jparent = g == root ? nullptr : jgraphs.at(g->parent());
    FuncGraph* jg = m.new_graph("J_" + g->name(), jparent, g->loc());
    for (Node* p : g->params()) jval[p] = jg->add_param(p->name(), loc_or(p, g->loc()));
    jgraphs[g] = jg;
    added.push_back(g);
    building.insert(jg);
    ctxs[i].g = g;
    ctxs[i].jg = jg;
  }
  for (GraphCtx& c : ctxs) build_forward(c);
  for (GraphCtx& c : ctxs) build_backward(c);
  for (GraphCtx& c : ctxs) building.erase(c.jg);
}

const std::vector<Node*>& GradTransformer::Impl::fvs(const FuncGraph* g) {
  auto it = fv_cache.find(g);
  if (it != fv_cache.end()) return it->second;
  return fv_cache.emplace(g, ir::free_variables(*g)).first->second;
}

// ---- J-values ----

// A call of a host function whose result no gradient flows through
// (HostObject::gradient_free).
static bool gradient_free(const Node* n) {
  const ir::HostObject* h = n->callee()->is_constant() ? n->callee()->as_host() : nullptr;
  return h && h->gradient_free();
}

Node* GradTransformer::Impl::jvalue(FuncGraph* where, Node* x, const Loc& loc, int nargs) {
  if (!x->is_constant()) {
    auto it = jval.find(x);
    if (it == jval.end())
      fail("the value of node " + std::to_string(x->id()) + " of @" + (x->graph() ? x->graph()->name() : "?") +
               " is used outside the graphs that can see it",
           loc);
    return it->second;
  }
  if (FuncGraph* h = x->as_graph()) return where->constant(j_graph(h), loc);
  if (const ir::PrimRef* p = x->as_prim()) return where->constant(j_prim(*p, nargs, loc), loc);
  if (x->as_host()) return op_apply(where, IrOp::J, {where->constant(x->value(), loc)}, loc);
  if (const IrOp* op = x->as_ir_op())
    fail(std::string("the operator '") + ir::ir_op_name(*op) + "' used as a value cannot be differentiated", loc);
  return where->constant(x->value(), loc);  // numbers, strings, None, tensors: their own J-value
}

bool GradTransformer::Impl::wants_sens(const Node* x) {
  if (!x->is_constant()) return true;
  FuncGraph* h = x->as_graph();
  return h && !fvs(h).empty();
}

Node* GradTransformer::Impl::key_of(GraphCtx& c, const Node* m, const Loc& loc) {
  return c.bg->constant(static_cast<int64_t>(m->id()), loc);
}

void GradTransformer::Impl::add_sens(GraphCtx& c, Node* x, Node* contrib, const Loc& loc) {
  if (x->is_constant()) {
    // A closure's sensitivity is an env: hand each captured value its part.
    FuncGraph* h = x->as_graph();
    if (!h) return;
    for (Node* fv : fvs(h)) {
      Node* zero = op_apply(c.bg, IrOp::zeros_like, {jvalue(c.bg, fv, loc)}, loc);
      add_sens(c, fv, op_apply(c.bg, IrOp::env_getitem, {contrib, key_of(c, fv, loc), zero}, loc), loc);
    }
    return;
  }
  std::vector<Node*>& v = c.contribs[x];
  if (v.empty() && x->graph() != c.g) c.fv_order.push_back(x);
  v.push_back(contrib);
}

Node* GradTransformer::Impl::sens_sum(GraphCtx& c, const Node* x, const Loc& loc) {
  auto it = c.contribs.find(x);
  if (it == c.contribs.end() || it->second.empty()) return nullptr;
  Node* s = it->second[0];
  // Each sum is located at the use the added contribution comes from, so a
  // failing sum names that forward line.
  for (size_t i = 1; i < it->second.size(); ++i) {
    Node* add = it->second[i];
    s = op_apply(c.bg, IrOp::grad_add, {s, add}, add->loc().valid() ? add->loc() : loc);
  }
  return s;
}

// ---- forward ----

void GradTransformer::Impl::build_forward(GraphCtx& c) {
  FuncGraph* jg = c.jg;
  for (Node* n : ir::topo_order(*c.g)) {
    if (!n->is_apply()) continue;
    Loc loc = loc_or(n, c.g->loc());
    Node* callee = n->callee();
    if (const IrOp* op = callee->as_ir_op()) {
      jval[n] = forward_ir_op(c, n, *op);
      continue;
    }
    if (gradient_free(n)) {
      // Called on the values themselves: a constant argument (a class in
      // isinstance(x, Tensor)) as it is, not its J-value.
      std::vector<Node*> ins{jg->constant(callee->value(), loc)};
      for (size_t i = 0; i < n->num_args(); ++i) {
        Node* a = n->arg(i);
        ins.push_back(a->is_constant() ? jg->constant(a->value(), loc) : jvalue(jg, a, loc));
      }
      jval[n] = jg->apply(std::move(ins), n->name(), loc);
      continue;
    }
    std::vector<Node*> ins{jvalue(jg, callee, loc, static_cast<int>(n->num_args()))};
    for (size_t i = 0; i < n->num_args(); ++i) ins.push_back(jvalue(jg, n->arg(i), loc));
    Node* pair = jg->apply(std::move(ins), "", loc);
    jval[n] = op_apply(jg, IrOp::tuple_getitem, {pair, jg->constant(int64_t{0}, loc)}, loc, n->name());
    c.bprop_of[n] = op_apply(jg, IrOp::tuple_getitem, {pair, jg->constant(int64_t{1}, loc)}, loc);
  }
  Node* out = c.g->output();
  if (!out) fail("@" + c.g->name() + " has no output", c.g->loc());
  Loc oloc = loc_or(out, c.g->loc());
  c.bg = m.new_graph("B_" + c.g->name(), jg, c.g->loc());
  c.bg->flags().set("is_bprop", true);
  jg->set_output(op_apply(jg, IrOp::make_tuple, {jvalue(jg, out, oloc), jg->constant(c.bg, oloc)}, oloc));
}

// ---- backward ----

// G's nodes in the order their sensitivities are final: reverse topological,
// where a node that uses a graph constant @h also counts as a user of h's
// free variables owned by G (h's env reaches them through that node).
std::vector<Node*> GradTransformer::Impl::backward_order(const GraphCtx& c) {
  std::vector<Node*> nodes = ir::topo_order(*c.g);
  auto deps = [&](const Node* n) {
    std::vector<Node*> out;
    for (Node* in : n->inputs()) {
      if (!in->is_constant()) {
        if (in->graph() == c.g) out.push_back(in);
      } else if (FuncGraph* h = in->as_graph()) {
        for (Node* fv : fvs(h))
          if (fv->graph() == c.g) out.push_back(fv);
      }
    }
    return out;
  };
  enum State : uint8_t { Open = 1, Done = 2 };
  std::unordered_map<const Node*, uint8_t> state;
  std::vector<Node*> post;
  struct Item {
    Node* n;
    std::vector<Node*> deps;
    size_t next;
  };
  std::vector<Item> stack;
  for (Node* root : nodes) {
    if (root->is_constant() || state.count(root)) continue;
    state[root] = Open;
    stack.push_back({root, deps(root), 0});
    while (!stack.empty()) {
      Item& top = stack.back();
      if (top.next < top.deps.size()) {
        Node* d = top.deps[top.next++];
        auto it = state.find(d);
        if (it == state.end()) {
          state[d] = Open;
          stack.push_back({d, deps(d), 0});  // invalidates `top`
        } else if (it->second == Open) {
          fail("a closure in @" + c.g->name() + " captures a value that depends on calling it", loc_or(d, c.g->loc()));
        }
        continue;
      }
      state[top.n] = Done;
      post.push_back(top.n);
      stack.pop_back();
    }
  }
  return {post.rbegin(), post.rend()};
}

void GradTransformer::Impl::build_backward(GraphCtx& c) {
  FuncGraph* bg = c.bg;
  const Loc& gloc = c.g->loc();
  Node* out = c.g->output();
  Loc oloc = loc_or(out, gloc);
  Node* dout = bg->add_param("dout", oloc);
  add_sens(c, out, dout, oloc);
  for (Node* n : backward_order(c)) {
    if (!n->is_apply()) continue;
    Loc loc = loc_or(n, gloc);
    Node* s = sens_sum(c, n, loc);
    if (!s) continue;  // no sensitivity reaches n: nothing to propagate
    if (const IrOp* op = n->callee()->as_ir_op()) {
      backward_ir_op(c, n, *op, s);
      continue;
    }
    if (gradient_free(n)) continue;
    Node* r = bg->apply({c.bprop_of.at(n), s}, "", loc);
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      Node* in = n->inputs()[i];
      if (!wants_sens(in)) continue;
      add_sens(c, in, op_apply(bg, IrOp::tuple_getitem, {r, bg->constant(static_cast<int64_t>(i), loc)}, loc), loc);
    }
  }
  // make_tuple(env, d_param1, ...): the free variables' sensitivities go
  // into the env, in the order they first got one.
  Node* env = op_apply(bg, IrOp::env_new, {}, oloc);
  for (Node* fv : c.fv_order) {
    Loc floc = loc_or(fv, oloc);
    env = op_apply(bg, IrOp::env_setitem, {env, key_of(c, fv, floc), sens_sum(c, fv, floc)}, floc);
  }
  std::vector<Node*> items{env};
  for (Node* p : c.g->params()) {
    Loc ploc = loc_or(p, gloc.valid() ? gloc : oloc);
    Node* s = sens_sum(c, p, ploc);
    items.push_back(s ? s : op_apply(bg, IrOp::zeros_like, {jval.at(p)}, ploc));
  }
  bg->set_output(op_apply(bg, IrOp::make_tuple, std::move(items), oloc));
}

}  // namespace msl::ad
