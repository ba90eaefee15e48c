// Lowering of the expressions the IR has no operator for, as calls of host
// adapters (HostAdapter in lower.h): attributes and methods of values,
// keyword arguments of host callables, subscripts other than a constant
// integer, and item assignment (`x[i] = v` rebinds x to a functional
// update). Graph mode specializes, expands and differentiates these calls
// like calls of library functions.
#include "lang/ir/lower.h"
#include "lang/ir/lower_impl.h"

namespace msl::ir {
namespace lower_detail {

bool FnLowerer::global_attribute(const ast::Expr& e, const Env& env, std::string& dotted) const {
  if (!dotted_name(e, env, dotted)) return false;
  if (!resolve_) return true;
  // The attributes of a Parameter (`self.w.T`, `self.w.sum()`) are read when
  // the graph runs: resolving them now would freeze the weight's current
  // value into the graph as a constant.
  for (size_t dot = dotted.find('.'); dot != std::string::npos; dot = dotted.find('.', dot + 1))
    if (resolve_(dotted.substr(0, dot)).kind == ResolvedName::Kind::Node) return false;
  return true;
}

Node* FnLowerer::adapter(const HostAdapter& h, const Span& s, const std::string& what) {
  if (!ctx_->adapter) unsupported(s, what);
  return constant(ctx_->adapter(h), s);
}

Node* FnLowerer::value_attribute(const ast::Attribute& a, FuncGraph* g, Env& env, const std::string& name) {
  Node* v = expr(*a.value, g, env);
  HostAdapter h;
  h.kind = HostAdapter::Kind::GetAttr;
  h.attr = a.attr;
  return g->apply({adapter(h, a.span, "attribute access on a value"), v}, name, loc(a.span));
}

Node* FnLowerer::method_call(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name) {
  const ast::Attribute& m = *c.func->as<ast::Attribute>();
  HostAdapter h;
  h.kind = HostAdapter::Kind::Method;
  h.attr = m.attr;
  std::vector<Node*> args{nullptr, expr(*m.value, g, env)};
  std::vector<Node*> kwvalues;
  for (const ast::Arg& a : c.args) {
    if (a.kind == ast::Arg::Kind::Star || a.kind == ast::Arg::Kind::DoubleStar) {
      // Of known length (lower_variadic.cpp): spliced in.
      std::vector<Node*> pos;
      std::vector<std::pair<std::string, Node*>> kw;
      splice_argument(a, g, env, pos, kw);
      args.insert(args.end(), pos.begin(), pos.end());
      for (auto& [k, v] : kw) {
        h.keywords.push_back(k);
        kwvalues.push_back(v);
      }
      continue;
    }
    if (a.kind == ast::Arg::Kind::Keyword) {
      h.keywords.push_back(a.name);
      kwvalues.push_back(expr(*a.value, g, env));
    } else {
      args.push_back(expr(*a.value, g, env));
    }
  }
  args.insert(args.end(), kwvalues.begin(), kwvalues.end());
  args[0] = adapter(h, c.func->span, "a method call on a value");
  return call_node(std::move(args), g, name, loc(c.span), &c);
}

Node* FnLowerer::keyword_call(Node* callee, std::vector<Node*> args,
                              std::vector<std::pair<std::string, Node*>> kwargs, const ast::Call& c, FuncGraph* g,
                              const std::string& name) {
  HostAdapter h;
  h.kind = HostAdapter::Kind::Call;
  // A known host callable (a library function, an operator object of
  // self) is part of the adapter; anything else is passed to it.
  bool known = callee->is_constant() && std::holds_alternative<HostRef>(callee->value());
  if (known) h.callee = callee->value();
  else args.insert(args.begin(), callee);
  for (auto& [k, v] : kwargs) {
    h.keywords.push_back(k);
    args.push_back(v);
  }
  args.insert(args.begin(), adapter(h, c.span, "keyword arguments in a call of a computed function"));
  return call_node(std::move(args), g, name, loc(c.span), &c);
}

bool FnLowerer::static_item(const ast::Subscript& s, const Env& env) const {
  if (!resolve_ || s.index->kind == ast::ExprKind::Slice || !is_static_arg(*s.index, env)) return false;
  std::string dotted;
  if (!global_attribute(*s.value, env, dotted)) return is_static_arg(*s.value, env);
  // A primitive or function has no items either.
  ResolvedName base = resolve_(dotted);
  return base.kind == ResolvedName::Kind::Constant || base.kind == ResolvedName::Kind::Sequence;
}

Node* FnLowerer::static_subscript(const ast::Subscript& s, const Env& env) {
  if (!ctx_->evaluate || !static_item(s, env)) return nullptr;
  return resolved_node(ctx_->evaluate(s, env.all_aliases()), "the value of this subscript", s.span);
}

Node* FnLowerer::subscript(const ast::Subscript& s, FuncGraph* g, Env& env, const std::string& name) {
  if (Node* folded = static_subscript(s, env)) return folded;
  Node* v = expr(*s.value, g, env);
  if (dict_keys(v)) return dict_item(v, expr(*s.index, g, env), s.span, g, name);
  if (Node* sliced = sequence_slice(v, s, g, env, name)) return sliced;  // t[1:] of a display
  const ast::Expr& ix = *s.index;
  bool neg = ix.kind == ast::ExprKind::Unary && ix.as<ast::Unary>()->op == ast::UnaryOp::Neg &&
             ix.as<ast::Unary>()->operand->kind == ast::ExprKind::Constant;
  const ast::Expr& lit = neg ? *ix.as<ast::Unary>()->operand : ix;
  bool int_index = lit.kind == ast::ExprKind::Constant && lit.as<ast::Constant>()->value_kind == ast::ConstKind::Int;
  if (int_index && (v->is_call_of(IrOp::make_tuple) || v->is_call_of(IrOp::make_list) || v->is_constant())) {
    // An item of a tuple display or of a host sequence (`self.layers[0]`).
    // Any other value may be a tuple or a tensor, which only the types
    // tell: the adapter below does what the interpreter does for either.
    int64_t i = lit.as<ast::Constant>()->int_value;
    return g->apply(IrOp::tuple_getitem, {v, constant(neg ? -i : i, ix.span)}, name, loc(s.span));
  }
  HostAdapter h;
  h.kind = HostAdapter::Kind::GetItem;
  std::vector<Node*> args{nullptr, v};
  index_parts(s, g, env, h, args);
  args[0] = adapter(h, s.span, "this subscript");
  return g->apply(args, name, loc(s.span));
}

void FnLowerer::index_parts(const ast::Subscript& s, FuncGraph* g, Env& env, HostAdapter& h,
                            std::vector<Node*>& args) {
  const ast::Expr& ix = *s.index;
  h.index_is_tuple = ix.kind == ast::ExprKind::Tuple;
  auto part = [&](const ast::Expr& p) {
    using P = HostAdapter::IndexPart::Kind;
    HostAdapter::IndexPart ip;
    const ast::Constant* c = p.kind == ast::ExprKind::Constant ? p.as<ast::Constant>() : nullptr;
    if (c && c->value_kind == ast::ConstKind::None) {
      ip.kind = P::None;
    } else if (c && c->value_kind == ast::ConstKind::Ellipsis) {
      ip.kind = P::Ellipsis;
    } else if (p.kind == ast::ExprKind::Slice) {
      const ast::Slice& sl = *p.as<ast::Slice>();
      ip.kind = P::Slice;
      ip.lower = sl.lower != nullptr;
      ip.upper = sl.upper != nullptr;
      ip.step = sl.step != nullptr;
      for (const ast::Expr* b : {sl.lower.get(), sl.upper.get(), sl.step.get()})
        if (b) args.push_back(expr(*b, g, env));
    } else {
      args.push_back(expr(p, g, env));
    }
    h.index.push_back(ip);
  };
  if (h.index_is_tuple) {
    for (const ast::ExprPtr& p : ix.as<ast::Tuple>()->elts) part(*p);
  } else {
    part(ix);
  }
}

void FnLowerer::store_subscript(const ast::Subscript& s, Node* v, FuncGraph* g, Env& env) {
  // Tensors are values in a graph: the write makes a new tensor and the
  // name now means it. Only a local name can be rebound that way.
  if (s.value->kind != ast::ExprKind::Name || !env.lookup(s.value->as<ast::Name>()->id))
    unsupported(s.span, "item assignment to anything but a local variable (x[i] = v)");
  const std::string& target = s.value->as<ast::Name>()->id;
  if (dict_keys(env.lookup(target))) return dict_store(s, env.lookup(target), v, g, env);
  HostAdapter h;
  h.kind = HostAdapter::Kind::SetItem;
  std::vector<Node*> args{nullptr, env.lookup(target)};
  index_parts(s, g, env, h, args);
  args.push_back(v);
  args[0] = adapter(h, s.span, "item assignment");
  env.vars[target] = g->apply(args, target, loc(s.span));
}

}  // namespace lower_detail
}  // namespace msl::ir
