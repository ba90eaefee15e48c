// Lowering of expressions: constants, names (local SSA bindings, then the
// resolver), operators as kernel primitives, tuples, constant-index
// subscripts, calls (primitives with attributes, functions, closures),
// lambda and conditional expressions. The scheme is described in lower.h.
#include <fmt/format.h>

#include <cctype>
#include <cmath>

#include "kernels/json_text.h"
#include "lang/ir/lower.h"
#include "lang/ir/lower_impl.h"
#include "lang/operator_prims.h"

namespace msl::ir {
namespace lower_detail {

namespace {
using kernels::Prim;

// Operators on tensors (lang/operator_prims.h). `&`, `|` and `^` mean the
// logical primitives only on bools, and graph mode may see Python ints.
bool binop_prim(ast::BinOp op, Prim& p) {
  bool bitwise = false;
  return binary_op_prim(op, p, &bitwise) && !bitwise;
}

const char* expr_construct(ast::ExprKind k) {
  switch (k) {
    case ast::ExprKind::FString: return "f-string";
    case ast::ExprKind::Dict: return "dict display";
    case ast::ExprKind::Set: return "set display";
    case ast::ExprKind::ListComp: return "list comprehension";
    case ast::ExprKind::SetComp: return "set comprehension";
    case ast::ExprKind::DictComp: return "dict comprehension";
    case ast::ExprKind::GeneratorExp: return "generator expression";
    case ast::ExprKind::Slice: return "slice";
    case ast::ExprKind::Starred: return "starred expression";
    default: return "this expression";
  }
}

// The last component of a dotted name.
std::string last_part(const std::string& dotted) {
  size_t dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}
}  // namespace

bool FnLowerer::dotted_name(const ast::Expr& e, const Env& env, std::string& out) const {
  if (e.kind == ast::ExprKind::Name) {
    const std::string& id = e.as<ast::Name>()->id;
    if (env.lookup(id)) {
      // A local value, not a global name, unless it holds one (Env::alias).
      const std::string* dotted = env.alias(id);
      if (!dotted) return false;
      out = *dotted;
      return true;
    }
    out = id;
    return true;
  }
  if (e.kind == ast::ExprKind::Attribute) {
    auto* a = e.as<ast::Attribute>();
    if (!dotted_name(*a->value, env, out)) return false;
    out += "." + a->attr;
    return true;
  }
  return false;
}

Node* FnLowerer::resolve_global(const std::string& dotted, const Span& s) {
  return resolved_node(resolve_ ? resolve_(dotted) : ResolvedName{}, "name '" + dotted + "'", s);
}

Node* FnLowerer::resolved_node(const ResolvedName& r, const std::string& what, const Span& s) {
  switch (r.kind) {
    case ResolvedName::Kind::Primitive:
      // Its inferred length is only an upper bound: a graph cannot hold it.
      if (r.prim == kernels::Prim::nonzero)
        fail(s, "the primitive nonzero (its output length depends on the values) is not supported in graph mode",
             "call ops.nonzero, which graph mode runs eagerly");
      return constant(PrimRef{r.prim, r.attrs}, s);
    case ResolvedName::Kind::Function:
      if (!r.def && !r.lambda) break;
      return constant(function_graph(r), s);
    case ResolvedName::Kind::Constant: return constant(r.value, s);
    case ResolvedName::Kind::Node:
      if (r.node) return r.node;
      break;
    case ResolvedName::Kind::Static:
      fail(s, what + " is a compile-time function: call it with constant or global arguments",
           "it runs when the graph compiles (ops.GradOperation()(f) with f a function of the file, NumPy and "
           "cv2 calls), so it cannot take tensors computed in the graph; use msl.ops on those");
    case ResolvedName::Kind::Sequence:
      // As a value, the host's list itself (passed to library calls).
      if (!std::holds_alternative<NoneValue>(r.value)) return constant(r.value, s);
      fail(s, what + " is a list or tuple of the host, usable in graph mode only as the sequence of a 'for' loop",
           "e.g. for layer in self.layers: x = layer(x)");
    case ResolvedName::Kind::Unknown: break;
  }
  fail(s, what + " is not defined in graph mode",
       "graph mode resolves names to local variables, primitives, functions and values of the file");
}

std::optional<std::string> Env::python_literal(const Node* n) {
  if (!n || !n->is_constant()) return std::nullopt;
  const ConstValue& v = n->value();
  if (std::holds_alternative<NoneValue>(v)) return "None";
  if (const bool* b = std::get_if<bool>(&v)) return std::string(*b ? "True" : "False");
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v)) {
    if (!std::isfinite(*d)) return std::nullopt;
    std::string s = fmt::format("{:.17g}", *d);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
  }
  // A JSON string literal is a Python one.
  if (const std::string* s = std::get_if<std::string>(&v)) return kernels::json_quote(*s);
  return std::nullopt;
}

bool FnLowerer::is_static_arg(const ast::Expr& e, const Env& env) const {
  std::string dotted;
  if (e.kind == ast::ExprKind::Constant) return true;
  // A variable bound to a constant number or string (an unrolled loop's i).
  if (e.kind == ast::ExprKind::Name && Env::python_literal(env.lookup(e.as<ast::Name>()->id))) return true;
  if (dotted_name(e, env, dotted)) return true;  // a global: the evaluator sees it too
  if (e.kind == ast::ExprKind::Call) return is_static_call(e, env);
  if (e.kind == ast::ExprKind::Tuple || e.kind == ast::ExprKind::List) {
    const auto& items = e.kind == ast::ExprKind::Tuple ? e.as<ast::Tuple>()->elts : e.as<ast::List>()->elts;
    for (auto& x : items)
      if (!is_static_arg(*x, env)) return false;
    return true;
  }
  // An item of a compile-time value at a compile-time index (`self.cfg["depth"]`).
  if (e.kind == ast::ExprKind::Subscript) return static_item(*e.as<ast::Subscript>(), env);
  // An f-string of compile-time values (f"layer{i}" for an unrolled i).
  if (e.kind == ast::ExprKind::FString) {
    for (const ast::FStringPart& p : e.as<ast::FString>()->parts)
      if (p.is_field && !is_static_arg(*p.expr, env)) return false;
    return true;
  }
  // Arithmetic on compile-time values (`np.ones((2, 3)) * 2`).
  if (e.kind == ast::ExprKind::Binary)
    return is_static_arg(*e.as<ast::Binary>()->left, env) && is_static_arg(*e.as<ast::Binary>()->right, env);
  if (e.kind == ast::ExprKind::Unary) return is_static_arg(*e.as<ast::Unary>()->operand, env);
  return false;
}

bool FnLowerer::is_static_call(const ast::Expr& e, const Env& env) const {
  if (e.kind != ast::ExprKind::Call || !ctx_->evaluate) return false;
  const ast::Call& c = *e.as<ast::Call>();
  std::string dotted;
  auto static_name = [&] {
    ResolvedName r = resolve_ ? resolve_(dotted) : ResolvedName{};
    return r.kind == ResolvedName::Kind::Static || r.is_class;
  };
  // Builtins that only compute from their arguments: with compile-time
  // arguments, a compile-time value (getattr(self, "layer" + str(i))).
  static const std::set<std::string> kPureBuiltins = {"getattr", "hasattr", "str", "int", "float", "bool", "len",
                                                      "abs", "min", "max", "round", "isinstance", "tuple", "list",
                                                      "sorted"};
  bool pure_builtin = c.func->kind == ast::ExprKind::Name && kPureBuiltins.count(c.func->as<ast::Name>()->id) &&
                      is_builtin_call(c, c.func->as<ast::Name>()->id.c_str(), env, resolve_);
  bool static_callee = pure_builtin || (dotted_name(*c.func, env, dotted) ? static_name() : is_static_call(*c.func, env));
  if (!static_callee) return false;
  for (auto& a : c.args)
    if (a.kind == ast::Arg::Kind::Star || a.kind == ast::Arg::Kind::DoubleStar || !is_static_arg(*a.value, env))
      return false;
  return true;
}

void FnLowerer::bind_graph_args(FuncGraph* g, std::vector<Node*>& args,
                                std::vector<std::pair<std::string, Node*>>& kwargs, const ast::Call& c) {
  const auto& params = g->params();
  auto dit = st_.defaults.find(g);
  const std::vector<Node*>* defaults = dit == st_.defaults.end() ? nullptr : &dit->second;
  size_t first_default = params.size() - (defaults ? defaults->size() : 0);
  if (args.size() > params.size())
    fail(c.span, "@" + g->name() + " takes " + std::to_string(params.size()) + " arguments, got " +
                     std::to_string(args.size()));
  std::vector<Node*> bound(params.size(), nullptr);
  for (size_t i = 0; i < args.size(); ++i) bound[i] = args[i];
  for (auto& [name, v] : kwargs) {
    size_t i = 0;
    while (i < params.size() && params[i]->name() != name) ++i;
    if (i == params.size()) fail(c.span, "@" + g->name() + " got an unexpected keyword argument '" + name + "'");
    if (bound[i]) fail(c.span, "@" + g->name() + " got multiple values for argument '" + name + "'");
    bound[i] = v;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (bound[i]) continue;
    if (i < first_default)
      fail(c.span, "@" + g->name() + " missing required argument '" + params[i]->name() + "'");
    bound[i] = (*defaults)[i - first_default];
  }
  args = std::move(bound);
}

Node* FnLowerer::expr(const ast::Expr& e, FuncGraph* g, Env& env, const std::string& name) {
  Loc l = loc(e.span);
  switch (e.kind) {
    case ast::ExprKind::Constant: {
      auto* c = e.as<ast::Constant>();
      switch (c->value_kind) {
        case ast::ConstKind::None: return constant(NoneValue{}, e.span);
        case ast::ConstKind::True: return constant(true, e.span);
        case ast::ConstKind::False: return constant(false, e.span);
        case ast::ConstKind::Int: return constant(c->int_value, e.span);
        case ast::ConstKind::Float: return constant(c->float_value, e.span);
        case ast::ConstKind::Str: return constant(c->str_value(), e.span);
        case ast::ConstKind::Ellipsis: unsupported(e.span, "'...'");
      }
      break;
    }
    case ast::ExprKind::Name: {
      const std::string& id = e.as<ast::Name>()->id;
      if (Node* n = env.lookup(id)) return n;
      return resolve_global(id, e.span);
    }
    case ast::ExprKind::Attribute: {
      std::string dotted;
      if (global_attribute(e, env, dotted)) return resolve_global(dotted, e.span);
      return value_attribute(*e.as<ast::Attribute>(), g, env, name);
    }
    case ast::ExprKind::Tuple: {
      std::vector<Node*> items;
      for (auto& x : e.as<ast::Tuple>()->elts) {
        if (x->kind == ast::ExprKind::Starred) unsupported(x->span, "starred expression");
        items.push_back(expr(*x, g, env));
      }
      return g->apply(IrOp::make_tuple, items, name, l);
    }
    case ast::ExprKind::List: {
      std::vector<Node*> items;
      for (auto& x : e.as<ast::List>()->elts) {
        if (x->kind == ast::ExprKind::Starred) unsupported(x->span, "starred expression");
        items.push_back(expr(*x, g, env));
      }
      return g->apply(IrOp::make_list, items, name, l);
    }
    case ast::ExprKind::Subscript: return subscript(*e.as<ast::Subscript>(), g, env, name);
    case ast::ExprKind::Binary: {
      auto* b = e.as<ast::Binary>();
      Prim p;
      if (!binop_prim(b->op, p)) unsupported(b->op_span, std::string("operator '") + ast::to_string(b->op) + "'");
      Node* x = expr(*b->left, g, env);
      Node* y = expr(*b->right, g, env);
      return binop(b->op, x, y, b->op_span, e.span, g, name);
    }
    case ast::ExprKind::Unary: {
      auto* u = e.as<ast::Unary>();
      if (u->op == ast::UnaryOp::Invert) unsupported(e.span, "operator '~'");
      Node* x = expr(*u->operand, g, env);
      if (u->op == ast::UnaryOp::Pos) return x;
      return g->apply(u->op == ast::UnaryOp::Neg ? Prim::neg : Prim::logical_not, {x}, name, l);
    }
    case ast::ExprKind::Compare: {
      // a < b < c is (a < b) and (b < c), each operand computed once.
      auto* c = e.as<ast::Compare>();
      Node* left = expr(*c->left, g, env);
      Node* acc = nullptr;
      for (size_t i = 0; i < c->ops.size(); ++i) {
        Prim p;
        if ((c->ops[i] == ast::CmpOp::Is || c->ops[i] == ast::CmpOp::IsNot) && c->ops.size() == 1) {
          // `x is None` on compile-time constants (attributes of self,
          // globals, defaults): decided now; on a value, when specialized.
          Node* right = expr(*c->comparators[i], g, env);
          bool none_l = left->is_constant() && std::holds_alternative<NoneValue>(left->value());
          bool none_r = right->is_constant() && std::holds_alternative<NoneValue>(right->value());
          bool both_const = left->is_constant() && right->is_constant();
          if ((none_l || none_r) && !both_const) {
            // `x is None` with x known only when the graph is specialized
            // (a parameter defaulting to None): decided then, by x's type.
            Node* test = g->apply(IrOp::is_none, {none_r ? left : right}, c->ops[i] == ast::CmpOp::Is ? name : "", l);
            if (c->ops[i] == ast::CmpOp::Is) return test;
            // Negated by a switch of constants, which specialization folds
            // as it folds the test (a primitive's result would not be).
            return g->apply(IrOp::switch_, {test, constant(false, e.span), constant(true, e.span)}, name, l);
          }
          if (!both_const) unsupported(e.span, "'is' between values known only at run time, neither of them None");
          bool same = none_l && none_r ? true
                      : none_l || none_r ? false
                                         : const_value_str(left->value()) == const_value_str(right->value());
          return constant(c->ops[i] == ast::CmpOp::Is ? same : !same, e.span);
        }
        bool last = i + 1 == c->ops.size();
        Node* r = nullptr;
        Node* right = nullptr;
        if (c->ops[i] == ast::CmpOp::In || c->ops[i] == ast::CmpOp::NotIn) {
          // Membership in a dict, a tuple of known length or a host
          // sequence (lower_dict.cpp); the right side is not an operand of
          // a following comparison in practice (a in b < c).
          if (c->ops.size() != 1) unsupported(e.span, "a chained comparison with 'in'");
          r = membership(left, *c->comparators[i], e.span, g, env);
          if (c->ops[i] == ast::CmpOp::NotIn) {
            auto t = static_truth(r);
            r = t ? constant(!*t, e.span) : g->apply(Prim::logical_not, {r}, name, l);
          }
          return r;
        }
        if (!compare_op_prim(c->ops[i], p))
          unsupported(e.span, std::string("operator '") + ast::to_string(c->ops[i]) + "'");
        right = expr(*c->comparators[i], g, env);
        std::optional<bool> same;
        if ((c->ops[i] == ast::CmpOp::Eq || c->ops[i] == ast::CmpOp::Ne) && left->is_constant() && right->is_constant())
          same = constant_equal(left->value(), right->value());  // `k == "bias"`: decided now
        r = same ? constant(c->ops[i] == ast::CmpOp::Eq ? *same : !*same, e.span)
                 : g->apply(p, {left, right}, last && !acc ? name : "", l);
        acc = acc ? g->apply(Prim::logical_and, {acc, r}, last ? name : "", l) : r;
        left = right;
      }
      return acc;
    }
    case ast::ExprKind::BoolOp: {
      // Both operands are computed (no short circuit): tensors and scalars
      // in graph mode have no side effects.
      auto* b = e.as<ast::BoolOp>();
      Prim p = b->op == ast::BoolOpKind::And ? Prim::logical_and : Prim::logical_or;
      Node* acc = expr(*b->values[0], g, env);
      for (size_t i = 1; i < b->values.size(); ++i)
        acc = g->apply(p, {acc, expr(*b->values[i], g, env)}, i + 1 == b->values.size() ? name : "", l);
      return acc;
    }
    case ast::ExprKind::Call: return call(*e.as<ast::Call>(), g, env, name);
    case ast::ExprKind::Lambda: return lambda(*e.as<ast::Lambda>(), g, env);
    case ast::ExprKind::IfExp: return if_exp(*e.as<ast::IfExp>(), g, env, name);
    case ast::ExprKind::ListComp: {
      auto* c = e.as<ast::ListComp>();
      return comprehension(*c->elt, c->generators, IrOp::make_list, e, g, env, name);
    }
    case ast::ExprKind::GeneratorExp: {
      auto* c = e.as<ast::GeneratorExp>();
      return comprehension(*c->elt, c->generators, IrOp::make_tuple, e, g, env, name);
    }
    case ast::ExprKind::Dict: return dict_display(*e.as<ast::Dict>(), g, env, name);
    case ast::ExprKind::FString: return fstring(*e.as<ast::FString>(), g, env, name);
    default: break;
  }
  unsupported(e.span, expr_construct(e.kind));
}

// [elt for target in SEQ if cond]: unrolled, as a `for` over SEQ is, into
// a list (a generator expression: a tuple) of one element per item. SEQ is
// range(...) of constants or a sequence of known length; the conditions
// must be decided when lowered (constants after binding the item).
Node* FnLowerer::comprehension(const ast::Expr& elt, const std::vector<ast::Comprehension>& gens, IrOp make,
                               const ast::Expr& e, FuncGraph* g, Env& env, const std::string& name) {
  if (gens.size() != 1) unsupported(e.span, "a comprehension with several 'for' clauses");
  const ast::Comprehension& gen = gens[0];
  // range(...) of constants or a sequence of known length (lower_loop.cpp).
  std::vector<Node*> items = sequence_items(*gen.iter, g, env, "a comprehension");
  std::vector<Node*> out{};
  for (Node* item : items) {
    Env inner{&env, {}};
    assign(*gen.target, item, g, inner);
    bool keep = true;
    for (const auto& cond : gen.ifs) {
      std::optional<bool> t = static_truth(expr(*cond, g, inner));
      if (!t) unsupported(cond->span, "a comprehension condition known only at run time");
      keep = keep && *t;
    }
    if (keep) out.push_back(expr(elt, g, inner));
  }
  return g->apply(make, out, name, loc(e.span));
}

Node* FnLowerer::binop(ast::BinOp op, Node* x, Node* y, const Span& op_span, const Span& span, FuncGraph* g,
                       const std::string& name) {
  if (Node* n = sequence_binop(op, x, y, span, g, name)) return n;  // (a, b) + (c,), [x] * 3
  Prim p;
  if (!binop_prim(op, p)) unsupported(op_span, std::string("operator '") + ast::to_string(op) + "'");
  return g->apply(p, {x, y}, name, loc(span));
}

kernels::AttrValue FnLowerer::attr_value(const ast::Expr& e, const std::string& kind, const Env& env) const {
  // A literal (a negative number included), or a global name whose value
  // is a constant (AXIS, msl.float32).
  auto global = [&](const ast::Expr& x, ResolvedName& out) {
    std::string dotted;
    if (!resolve_ || !dotted_name(x, env, dotted)) return false;
    out = resolve_(dotted);
    return out.kind == ResolvedName::Kind::Constant;
  };
  auto int_of = [&](const ast::Expr& x, int64_t& out) {
    bool neg = x.kind == ast::ExprKind::Unary && x.as<ast::Unary>()->op == ast::UnaryOp::Neg;
    const ast::Expr& lit = neg ? *x.as<ast::Unary>()->operand : x;
    if (lit.kind == ast::ExprKind::Constant && lit.as<ast::Constant>()->value_kind == ast::ConstKind::Int) {
      out = neg ? -lit.as<ast::Constant>()->int_value : lit.as<ast::Constant>()->int_value;
      return true;
    }
    ResolvedName r;
    if (!global(lit, r) || !std::holds_alternative<int64_t>(r.value)) return false;
    out = neg ? -std::get<int64_t>(r.value) : std::get<int64_t>(r.value);
    return true;
  };
  auto float_of = [&](const ast::Expr& x, double& out) {
    bool neg = x.kind == ast::ExprKind::Unary && x.as<ast::Unary>()->op == ast::UnaryOp::Neg;
    const ast::Expr& lit = neg ? *x.as<ast::Unary>()->operand : x;
    int64_t i;
    if (int_of(lit, i)) {
      out = static_cast<double>(neg ? -i : i);
      return true;
    }
    if (lit.kind == ast::ExprKind::Constant && lit.as<ast::Constant>()->value_kind == ast::ConstKind::Float) {
      out = neg ? -lit.as<ast::Constant>()->float_value : lit.as<ast::Constant>()->float_value;
      return true;
    }
    ResolvedName r;
    if (!global(lit, r) || !std::holds_alternative<double>(r.value)) return false;
    out = neg ? -std::get<double>(r.value) : std::get<double>(r.value);
    return true;
  };
  const ast::Constant* c = e.kind == ast::ExprKind::Constant ? e.as<ast::Constant>() : nullptr;
  int64_t i = 0;
  double d = 0;
  ResolvedName r;
  if (kind == "bool" && c && (c->value_kind == ast::ConstKind::True || c->value_kind == ast::ConstKind::False))
    return c->value_kind == ast::ConstKind::True;
  if (kind == "bool" && global(e, r) && std::holds_alternative<bool>(r.value)) return std::get<bool>(r.value);
  if (kind == "int" && int_of(e, i)) return i;
  if (kind == "float" && float_of(e, d)) return d;
  if (kind == "str" && c && c->value_kind == ast::ConstKind::Str) return c->str_value();
  if (kind == "dtype") {
    kernels::DType dt;
    if (c && c->value_kind == ast::ConstKind::Str && kernels::parse_dtype(c->str_value(), dt)) return dt;
    if (resolve_ && global(e, r) && r.dtype) return *r.dtype;
  }
  if (kind == "ints") {
    if (int_of(e, i)) return std::vector<int64_t>{i};
    std::string dotted;
    if (resolve_ && dotted_name(e, env, dotted)) {
      // A global list or tuple of ints (AXES = (0, 1)).
      ResolvedName seq = resolve_(dotted);
      if (seq.kind == ResolvedName::Kind::Sequence) {
        std::vector<int64_t> v;
        for (const ResolvedName& item : seq.items) {
          if (item.kind != ResolvedName::Kind::Constant || !std::holds_alternative<int64_t>(item.value))
            fail(e.span, "an attribute of kind 'ints' needs integer constants");
          v.push_back(std::get<int64_t>(item.value));
        }
        return v;
      }
    }
    if (e.kind == ast::ExprKind::Tuple || e.kind == ast::ExprKind::List) {
      const auto& elts = e.kind == ast::ExprKind::Tuple ? e.as<ast::Tuple>()->elts : e.as<ast::List>()->elts;
      std::vector<int64_t> v;
      for (auto& x : elts) {
        if (!int_of(*x, i)) fail(x->span, "an attribute of kind 'ints' needs integer constants");
        v.push_back(i);
      }
      return v;
    }
  }
  fail(e.span, "attribute value must be a constant of kind '" + kind + "'",
       "primitive attributes are compile-time constants");
}

Node* FnLowerer::call(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name) {
  Loc l = loc(c.span);
  std::string dotted;
  Node* callee = nullptr;
  if (Node* n = dict_builtin(c, g, env, name)) return n;  // before dict(k=v) is evaluated as a static call
  if (is_static_call(c, env)) {
    // `ops.GradOperation()(f)`, `msl.grad(f)`: made by the host at compile
    // time; what it makes (a function, a constant) is used here.
    return resolved_node(ctx_->evaluate(c, env.all_aliases()), "the value of this call", c.span);
  }
  if (global_attribute(*c.func, env, dotted)) {
    if (dotted == "print" && (!resolve_ || resolve_(dotted).kind != ResolvedName::Kind::Function))
      return print_call(c, g, env);
    ResolvedName r = resolve_ ? resolve_(dotted) : ResolvedName{};
    if (is_variadic(r)) {
      // *args / **kwargs / keyword-only parameters: a graph per call shape.
      std::vector<Node*> pos;
      std::vector<std::pair<std::string, Node*>> kw;
      call_arguments(c, g, env, pos, kw);
      return variadic_call(r, std::move(pos), std::move(kw), c.span, g, name, &c);
    }
    callee = resolved_node(r, "name '" + dotted + "'", c.func->span);
  } else if (c.func->kind == ast::ExprKind::Attribute) {
    if (Node* n = dict_method(c, g, env, name)) return n;
    if (Node* n = list_method(c, g, env, name)) return n;
    return method_call(c, g, env, name);
  } else {
    callee = expr(*c.func, g, env);
  }
  std::vector<Node*> args;
  std::vector<std::pair<std::string, Node*>> kwargs;
  kernels::Attrs attrs;
  const PrimRef* prim = callee->as_prim();
  FuncGraph* graph = callee->as_graph();
  // A primitive's positional arguments after its tensor inputs are its
  // attributes in declaration order (as in eager calls): concat([a, b], 0).
  size_t n_inputs = SIZE_MAX;
  if (prim) n_inputs = kernels::prim_def(prim->prim).inputs < 0 ? 1 : kernels::prim_def(prim->prim).inputs;
  size_t n_pos = 0;
  for (auto& a : c.args) {
    if (prim && a.kind == ast::Arg::Kind::Positional && n_pos++ >= n_inputs) {
      const auto& specs = kernels::prim_attrs(prim->prim);
      size_t k = n_pos - 1 - n_inputs;
      if (k >= specs.size())
        fail(a.span, std::string("primitive '") + kernels::prim_name(prim->prim) + "' takes at most " +
                         std::to_string(n_inputs + specs.size()) + " positional arguments");
      attrs.set(specs[k].name, attr_value(*a.value, specs[k].kind, env));
      continue;
    }
    if (a.kind == ast::Arg::Kind::Star || a.kind == ast::Arg::Kind::DoubleStar) {
      if (prim) unsupported(a.span, "'*' or '**' argument of a primitive");
      splice_argument(a, g, env, args, kwargs);  // of known length (lower_variadic.cpp)
      continue;
    }
    if (a.kind == ast::Arg::Kind::Keyword) {
      if (!prim) {
        kwargs.emplace_back(a.name, expr(*a.value, g, env));
        continue;
      }
      const kernels::AttrSpec* spec = nullptr;
      for (auto& s : kernels::prim_attrs(prim->prim))
        if (s.name == a.name) spec = &s;
      if (!spec)
        fail(a.span, "keyword argument '" + a.name + "' is not an attribute of primitive '" +
                         kernels::prim_name(prim->prim) + "'");
      attrs.set(a.name, attr_value(*a.value, spec->kind, env));
      continue;
    }
    args.push_back(expr(*a.value, g, env));
  }
  if (prim) {
    kernels::Attrs all = prim->attrs;
    for (auto& [k, v] : attrs.items()) all.set(k, v);
    // `P.ReLU(...)`: a capitalized primitive name makes the primitive value
    // (MindSpore's Primitive object), called later.
    if (!dotted.empty() && std::isupper(static_cast<unsigned char>(last_part(dotted)[0]))) {
      if (!args.empty()) fail(c.span, "primitive '" + dotted + "' takes only keyword attributes when created");
      return constant(PrimRef{prim->prim, all}, c.span);
    }
    const kernels::PrimDef& def = kernels::prim_def(prim->prim);
    if (def.inputs < 0 && args.size() == 1 &&
        (args[0]->is_call_of(IrOp::make_tuple) || args[0]->is_call_of(IrOp::make_list))) {
      // concat([a, b]): the list's items are the variadic inputs.
      std::vector<Node*> items(args[0]->inputs().begin() + 1, args[0]->inputs().end());
      args = std::move(items);
    }
    if (def.kind == kernels::PrimKind::InPlace) {
      // assign(x, v): an effect; the state rides along as the last input.
      Node* u = state_of(g);
      args.push_back(u ? u : constant(NoneValue{}, c.span));
      Node* n = g->apply(prim->prim, args, name, l, all);
      sequence(g, n);
      return n;
    }
    return g->apply(prim->prim, args, name, l, all);
  }
  if (graph) bind_graph_args(graph, args, kwargs, c);
  else if (!kwargs.empty()) return keyword_call(callee, std::move(args), std::move(kwargs), c, g, name);
  args.insert(args.begin(), callee);
  return call_node(std::move(args), g, name, l, &c);
}

Node* FnLowerer::call_node(std::vector<Node*> call, FuncGraph* g, const std::string& name, const Loc& l,
                           const ast::Call* c) {
  FuncGraph* callee = call[0]->as_graph();
  // A dict passed to a function is the host's dict: its keys do not travel
  // with the tuple of its values (lower_dict.cpp).
  for (size_t i = 1; i < call.size(); ++i)
    if (dict_keys(call[i])) call[i] = host_dict(call[i], g, c ? c->span : Span{});
  bool effect = (c && c == discarded_call_) || (callee && st_.effectful.count(callee));
  Node* n;
  if (!effects_ && !effect) {
    n = g->apply(call, name, l);
  } else {
    // The callee may have effects: the call takes its place on the effect chain.
    order_after_state(g, call);
    n = g->apply(call, name, l);
    sequence(g, n);
  }
  // A function returning a dict (lower_dict.cpp): so does the call.
  if (auto it = callee ? st_.dict_results.find(callee) : st_.dict_results.end(); it != st_.dict_results.end())
    st_.dicts[n] = it->second;
  return n;
}

// print(a, b, ...): an effect on the graph's chain, the state as last input.
Node* FnLowerer::print_call(const ast::Call& c, FuncGraph* g, Env& env) {
  std::vector<Node*> args;
  for (auto& a : c.args) {
    if (a.kind != ast::Arg::Kind::Positional) unsupported(a.span, "keyword or '*' argument of print");
    args.push_back(host_dict(expr(*a.value, g, env), g, a.span));
  }
  Node* u = state_of(g);
  args.push_back(u ? u : constant(NoneValue{}, c.span));
  Node* p = g->apply(IrOp::print, args, "", loc(c.span));
  sequence(g, p);
  return constant(NoneValue{}, c.span);
}

Node* FnLowerer::lambda(const ast::Lambda& lam, FuncGraph* g, Env& env) {
  const ast::Parameters& ps = lam.params;
  if (ps.vararg || ps.kwarg || !ps.kwonly.empty()) unsupported(lam.span, "lambda with '*' parameters");
  FuncGraph* lg = m_.new_graph(g->name() + "_lambda", g, loc(lam.span));
  Env lenv{&env, {}};
  for (auto& p : ps.positional) lenv.vars[p.name] = lg->add_param(p.name, loc(p.span));
  set_out(lg, expr(*lam.body, lg, lenv));
  return constant(lg, lam.span);
}

// `a if c else b`: two branch graphs and a switch, like an if statement.
Node* FnLowerer::if_exp(const ast::IfExp& e, FuncGraph* g, Env& env, const std::string& name) {
  Node* cond = expr(*e.test, g, env);
  if (auto taken = static_truth(cond)) return expr(*taken ? *e.body : *e.orelse, g, env, name);
  FuncGraph* t = m_.new_graph(g->name() + "_true", g, loc(e.body->span));
  FuncGraph* f = m_.new_graph(g->name() + "_false", g, loc(e.orelse->span));
  Env te{&env, {}}, fe{&env, {}};
  set_out(t, expr(*e.body, t, te));
  set_out(f, expr(*e.orelse, f, fe));
  Node* sw = g->apply(IrOp::switch_, {cond, constant(t, e.span), constant(f, e.span)}, "", loc(e.span));
  return g->apply({sw}, name, loc(e.span));
}

}  // namespace lower_detail

namespace {
// ReLU → relu, ReduceSum → reduce_sum, MatMul → mat_mul (then tried as
// matmul without underscores too).
std::string snake(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char ch = s[i];
    if (std::isupper(static_cast<unsigned char>(ch))) {
      bool prev_lower = i > 0 && std::islower(static_cast<unsigned char>(s[i - 1]));
      if (prev_lower) out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    } else {
      out += ch;
    }
  }
  return out;
}
}  // namespace

Resolver default_resolver(const std::vector<const ast::FunctionDef*>& defs) {
  return [defs](const std::string& dotted) {
    ResolvedName r;
    for (auto* d : defs)
      if (d->name == dotted) {
        r.kind = ResolvedName::Kind::Function;
        r.def = d;
        return r;
      }
    std::string base = dotted;
    for (const char* prefix : {"msl.ops.", "ops.", "P."})
      if (dotted.rfind(prefix, 0) == 0) base = dotted.substr(std::string(prefix).size());
    if (base.find('.') != std::string::npos) return r;
    std::string sn = snake(base), no_us;
    for (char ch : sn)
      if (ch != '_') no_us += ch;
    for (const std::string& cand : {base, sn, no_us})
      if (kernels::find_prim(cand, r.prim)) {
        r.kind = ResolvedName::Kind::Primitive;
        return r;
      }
    return r;
  };
}

}  // namespace msl::ir
