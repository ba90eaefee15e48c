// The J transform: reverse-mode automatic differentiation as a source
// transformation of ANF IR graphs (Myia / MindSpore style). Pure IR -> IR;
// nothing here runs a graph.
//
// Each primal graph G becomes a graph JG with the same parameters that
// returns make_tuple(value, bprop):
//   * J-values. JG computes the J-value of every node of G: a tensor's
//     J-value is the tensor itself; a function's J-value is its J-transformed
//     closure (calling it returns (value, bprop) instead of value).
//   * bprop is the closure of a graph BG nested in JG (flag is_bprop), with
//     one parameter `dout`, returning make_tuple(env, d_param1, ...). `env`
//     is the sensitivity of the function value itself: an environment
//     (env_new / env_setitem / env_getitem / env_add) mapping each free
//     variable m of G, keyed by the int64 constant m->id() of the PRIMAL
//     node, to its sensitivity.
//   * A call n = f(a1..ak) becomes pair = Jf(Ja1..Jak), Jn = pair[0],
//     bp = pair[1] in JG, and r = bp(sens_n) in BG, whose items are added
//     (IR op grad_add) to the sensitivities of f, a1, ..., ak.
//   * J of a nested graph is nested in J of its parent, so JG's nested
//     graphs read the J-values of their free variables directly.
//   * The sensitivity of a closure value is an env. When a contribution
//     reaches a constant graph @h that has free variables, it is split at
//     once: m gets env_getitem(env, key(m), zeros_like(Jm)) for each free
//     variable m of h. Because such a contribution can reach a node m of G
//     from a node that uses @h but comes earlier in topological order, the
//     backward pass orders G's nodes with "n uses @h" counted as "n uses the
//     free variables of h".
//   * Kernel primitive p[attrs]: J_p(x1..xn) = make_tuple(out, partial(@B_p,
//     x1..xn, out)) with out = p(x1..xn); B_p(x1..xn, out, dout) calls the
//     primitive's gradient RULE (from the rule_for callback) and returns
//     make_tuple(env_new(), dx1, ..., dxn). Variadic primitives (concat) pass
//     the inputs to the rule as one tuple and get a one-element tuple holding
//     the tuple of gradients back. For an in-place primitive called with the
//     effect state as an extra last input (assign(x, v, u)), the rule sees
//     the tensor inputs only and the state gets zeros_like(u).
//   * IR operators (tuples, switch, partial, env_*, grad_add, ...) are
//     differentiated inline; see ir_op_grads.cpp. Because the operators the
//     transform itself emits all have derivatives, J applies to its own
//     output (higher-order derivatives).
//   * partial(f, a1..ak): its J-value is partial(@Jpartial_k_m, Jf, Ja1..Jak)
//     where Jpartial_k_m (m: the number of arguments still missing, which must
//     be known statically) calls Jf and regroups its bprop's result so the
//     partial value obeys the J calling convention. Like any function value's,
//     the sensitivity of a partial value is an env: key -1 holds the
//     sensitivity of its function, key -1-i that of bound argument i
//     (negative keys never clash with node ids, and zeros_like of a partial
//     is the empty env, as for closures).
//   * A host object h (an interpreter function) as callee or value becomes
//     the node J(h) in JG: the runtime resolves it.
//   * Every node created for JG and BG carries the source location of the
//     primal node it comes from, so a failure in a gradient names the
//     forward line.
//
// What is not supported (a GradError says so): J of a computed function
// value (J(x) with x not a constant graph without free variables), an IR
// operator used as a value, partial over a function whose arity is not
// known statically (a host object, a computed closure, a variadic
// primitive), and recursion through J.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "lang/ir/ir_module.h"

namespace msl::ad {

// The gradient rule of a kernel primitive bound to its attributes, as an IR
// constant callable as rule(x1..xn, out, dout) -> (dx1, ..., dxn): a HostRef
// (the MSL rule of stdlib/msl/_bprop) in production, a FuncGraph in tests.
// Returning NoneValue means "no rule": transforming a call of p fails.
using RuleFor = std::function<ir::ConstValue(const ir::PrimRef&)>;

// Every failure of the transform. what() is "file:line: message" (the
// message alone when there is no location).
class GradError : public std::runtime_error {
 public:
  GradError(const std::string& message, const std::string& location);
  const std::string& message() const { return message_; }
  const std::string& location() const { return location_; }

 private:
  std::string message_;
  std::string location_;
};

// One per IrModule: caches J graphs so each primal graph (and each
// primitive with its attributes) is transformed once. New graphs are added
// to the module; primal graphs are never changed.
class GradTransformer {
 public:
  GradTransformer(ir::IrModule& m, RuleFor rule_for);
  ~GradTransformer();
  GradTransformer(const GradTransformer&) = delete;
  GradTransformer& operator=(const GradTransformer&) = delete;

  // J of `g`. A nested graph is transformed with its whole top-level nest,
  // and its J graph is nested in J of its parent.
  ir::FuncGraph* j_graph(ir::FuncGraph* g);
  // J_p for `p` called with `num_inputs` inputs (-1: the registry's count;
  // required for variadic primitives; one more than the count passes the
  // effect state of an in-place primitive).
  ir::FuncGraph* j_prim(const ir::PrimRef& p, int num_inputs = -1);
  // grad_g(x1..xn[, sens]) = make_tuple(out, make_tuple(d_x1, ..., d_xn)) for
  // a top-level graph `g`. Without sens_param the sensitivity is
  // ones_like(out). Cached like J graphs.
  ir::FuncGraph* grad_graph(ir::FuncGraph* g, bool sens_param);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace msl::ad
