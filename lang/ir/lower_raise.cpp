// Lowering of `raise` and `assert` in graph mode (spec §7: a raise of a
// constant message is allowed; MindSpore's graph mode raises when the
// graph reaches it). The exception is raised by a host adapter call on
// the function's effect chain, so it happens in program order and only on
// the path that reaches it: inside an `if` whose condition the types
// decide (`if x.shape[0] > 5: raise ...`), the branch not taken is folded
// away when specialized and nothing remains; `assert c, msg` is the same
// as `if not c: raise AssertionError(msg)`.
#include "lang/ir/lower.h"
#include "lang/ir/lower_impl.h"

namespace msl::ir {
namespace lower_detail {

void FnLowerer::raise_effect(std::vector<Node*> args, FuncGraph* g, const Span& s) {
  HostAdapter h;
  h.kind = HostAdapter::Kind::Raise;
  args.insert(args.begin(), adapter(h, s, "'raise' statement"));
  order_after_state(g, args);
  sequence(g, g->apply(args, "", loc(s)));
}

void FnLowerer::raise_stmt(const ast::Raise& r, FuncGraph* g, Env& env) {
  if (!r.exc) unsupported(r.span, "'raise' without an exception (a re-raise)");
  if (r.cause) unsupported(r.cause->span, "'raise ... from ...'");
  raise_effect({expr(*r.exc, g, env)}, g, r.span);
}

void FnLowerer::assert_stmt(const ast::Assert& a, FuncGraph* g, Env& env) {
  Node* cond = expr(*a.test, g, env);
  std::optional<bool> known = static_truth(cond);
  if (known && *known) return;
  auto fail_into = [&](FuncGraph* fg, Env& fenv) {
    std::vector<Node*> args{resolve_global("AssertionError", a.span)};
    if (a.msg) args.push_back(expr(*a.msg, fg, fenv));
    raise_effect(std::move(args), fg, a.span);
  };
  if (known) {  // assert False: raises whenever reached
    fail_into(g, env);
    return;
  }
  // switch(cond, @ok, @failed)(), an effect (as an if whose branch raises).
  Loc l = loc(a.span);
  FuncGraph* ok = m_.new_graph(g->name() + "_assert_ok", g, l);
  set_out(ok, constant(NoneValue{}, a.span));
  FuncGraph* failed = m_.new_graph(g->name() + "_assert_failed", g, l);
  Env fenv{&env, {}};
  fail_into(failed, fenv);
  set_out(failed, constant(NoneValue{}, a.span));
  if (Node* u = state_of(g)) cond = g->apply(IrOp::depend, {cond, u}, "", l);
  Node* sw = g->apply(IrOp::switch_, {cond, constant(ok, a.span), constant(failed, a.span)}, "", l);
  sequence(g, g->apply({sw}, "", l));
}

}  // namespace lower_detail
}  // namespace msl::ir
