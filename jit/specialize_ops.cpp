// Abstract inference of kernel primitives and IR operators: the transfer
// functions of the specializer, each mirroring what the debug-mode executor
// (jit/exec/exec_ops.cpp) computes on concrete values.
#include <cmath>
#include <span>

#include "jit/specialize_impl.h"
#include "kernels/errors.h"
#include "lang/ir/python_scalar.h"

namespace msl::jit {

using kernels::DType;
using kernels::Prim;
using kernels::TensorSpec;

namespace {

bool is_number(const AbsScalar& s) {
  return s.kind == ScalarKind::Bool || s.kind == ScalarKind::Int || s.kind == ScalarKind::Float;
}


bool is_comparison(Prim p) {
  return p == Prim::less || p == Prim::less_equal || p == Prim::greater || p == Prim::greater_equal ||
         p == Prim::equal || p == Prim::not_equal;
}

double const_number(const ir::ConstValue& v) {
  if (auto b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  if (auto i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

ir::ConstValue number_const(ScalarKind k, double v) {
  if (k == ScalarKind::Bool) return v != 0.0;
  if (k == ScalarKind::Int) return static_cast<int64_t>(v);
  return v;
}

bool truthy(const ir::ConstValue& v) {
  if (auto s = std::get_if<std::string>(&v)) return !s->empty();
  if (std::holds_alternative<ir::NoneValue>(v)) return false;
  return const_number(v) != 0.0;
}

// Python arithmetic on constants (lang/ir/python_scalar.h), in the kind
// the caller computed. Throws ValueError on a zero divisor, as the executor
// fails.
AbsValue fold_python(Prim p, const std::vector<AbsValue>& args, ScalarKind k) {
  std::vector<ir::ConstValue> nums;
  for (const AbsValue& a : args) nums.push_back(*a.get_if<AbsScalar>()->value);
  std::optional<ir::ConstValue> r;
  try {
    r = ir::python_scalar_op(p, nums);
  } catch (const ir::ScalarArithmeticError& e) {
    throw kernels::ValueError(e.what());
  }
  if (!r) throw kernels::ValueError(std::string("cannot fold ") + kernels::prim_name(p) + " of these constants");
  return AbsScalar{k, *r};
}

// The host object of a value that is one host object (not partially
// applied), or null. J of a host object that is data (a dtype in a
// gradient graph) is the object itself; HostObject::equals only answers
// for data.
const ir::HostRef* host_data_of(const AbsValue& v) {
  auto f = v.get_if<AbsFunc>();
  if (!f || f->callees.size() != 1) return nullptr;
  const AbsCallee& c = f->callees[0];
  return c.kind == AbsCallee::Kind::Host && c.bound.empty() ? &c.host : nullptr;
}

// logical_and/or/not of constant scalars, with Python's `and`/`or`/`not`
// (the operand that decides; `not` a bool); nullopt otherwise.
std::optional<AbsValue> fold_logical(Prim p, const std::vector<AbsValue>& args) {
  bool unary = p == Prim::logical_not && args.size() == 1;
  bool binary = (p == Prim::logical_and || p == Prim::logical_or) && args.size() == 2;
  if (!unary && !binary) return std::nullopt;
  for (const AbsValue& a : args)
    if (!a.is_constant()) return std::nullopt;
  bool first = truthy(*args[0].get_if<AbsScalar>()->value);
  if (unary) return abs_const(!first);
  if (p == Prim::logical_and) return first ? args[1] : args[0];
  return first ? args[0] : args[1];
}

}  // namespace


AbsValue Specializer::infer_prim(const ir::Node* site, const ir::PrimRef& p, const std::vector<AbsValue>& all) {
  const char* name = kernels::prim_name(p.prim);
  // The effect convention: the state rides along as the last input (an
  // in-place primitive's extra input; None for a graph's initial state);
  // a variadic primitive may get its inputs as one tuple (as the executor).
  const kernels::PrimDef& def = kernels::prim_def(p.prim);
  std::vector<AbsValue> args;
  for (size_t i = 0; i < all.size(); ++i) {
    const AbsValue& a = all[i];
    if (a.is<AbsState>()) continue;
    if (def.kind == kernels::PrimKind::InPlace && def.inputs >= 0 && i == static_cast<size_t>(def.inputs)) continue;
    if (def.inputs < 0)
      if (auto t = a.get_if<AbsTuple>()) {
        for (const AbsValue& x : t->items) args.push_back(x);
        continue;
      }
    args.push_back(a);
  }
  // `x.dtype == msl.float16`: two host objects the host can compare now
  // (HostObject::equals), so a branch on the dtype is decided per signature.
  if ((p.prim == Prim::equal || p.prim == Prim::not_equal) && args.size() == 2) {
    std::optional<bool> eq;
    const ir::HostRef *a = host_data_of(args[0]), *b = host_data_of(args[1]);
    if (a && b) eq = (*a)->equals(**b);
    // A string or None constant against a constant (`k == "bias"` over a
    // dict's keys): Python's ==, which the kernels have no dtype for.
    const AbsScalar *x = args[0].get_if<AbsScalar>(), *y = args[1].get_if<AbsScalar>();
    auto textual = [](const AbsScalar* s) { return s->kind == ScalarKind::Str || s->kind == ScalarKind::None; };
    if (x && y && x->value && y->value && (textual(x) || textual(y)))
      eq = x->kind == y->kind && ir::const_value_str(*x->value) == ir::const_value_str(*y->value);
    if (eq) return abs_const(p.prim == Prim::equal ? *eq : !*eq);
  }
  // String constants: concatenation, repetition, comparisons ("n=" + str(n)).
  if (args.size() == 2 && args[0].is_constant() && args[1].is_constant() && p.attrs.empty()) {
    const ir::ConstValue v[2] = {*args[0].get_if<AbsScalar>()->value, *args[1].get_if<AbsScalar>()->value};
    if (std::holds_alternative<std::string>(v[0]) || std::holds_alternative<std::string>(v[1]))
      if (std::optional<ir::ConstValue> r = ir::python_scalar_op(p.prim, v)) return abs_const(*r);
  }
  // A string of unknown value (a host call's result): a string, when the
  // executor computes it (python_scalar.h).
  if (args.size() == 2 && (p.prim == Prim::add || p.prim == Prim::mul)) {
    const AbsScalar *a = args[0].get_if<AbsScalar>(), *b = args[1].get_if<AbsScalar>();
    if (a && b && (a->kind == ScalarKind::Str || b->kind == ScalarKind::Str)) return abs_scalar(ScalarKind::Str);
  }
  // `and`, `or`, `not` of constants (decided by types: `mask is not None and
  // x.dtype == msl.float16`) fold with Python's meaning, so a branch on
  // them is decided too.
  if (std::optional<AbsValue> folded = fold_logical(p.prim, args)) return *folded;
  const AbsTensor* first = nullptr;
  bool all_scalars = !args.empty(), all_constant = true;
  for (size_t i = 0; i < args.size(); ++i) {
    const AbsValue& a = args[i];
    if (a.is<AbsAny>()) return AbsAny{};
    if (auto t = a.get_if<AbsTensor>()) {
      if (!first) first = t;
      all_scalars = false;
      continue;
    }
    auto s = a.get_if<AbsScalar>();
    if (!s || !is_number(*s))
      fail(site, std::string(name) + ": argument " + std::to_string(i + 1) + " must be a tensor or a number, got " +
                     to_string(a));
    all_constant = all_constant && s->value.has_value();
  }

  try {
    if (all_scalars && p.attrs.empty() && is_scalar_arithmetic(p.prim, args.size())) {
      // Python's rules: bools count as ints, int op int is an int except
      // true division, comparisons are bools.
      bool all_int = true;
      for (const AbsValue& a : args) all_int = all_int && a.get_if<AbsScalar>()->kind != ScalarKind::Float;
      ScalarKind k = is_comparison(p.prim)             ? ScalarKind::Bool
                     : p.prim == Prim::div || !all_int ? ScalarKind::Float
                                                       : ScalarKind::Int;
      if (!all_constant) return abs_scalar(k);
      return fold_python(p.prim, args, k);
    }
    // The executor's rule (kernels::python_number_dtype).
    std::vector<TensorSpec> specs;
    for (const AbsValue& a : args) {
      if (auto t = a.get_if<AbsTensor>()) {
        specs.push_back({t->dtype, t->shape, t->device});
        continue;
      }
      ScalarKind k = a.get_if<AbsScalar>()->kind;
      kernels::PyNumber n = k == ScalarKind::Bool  ? kernels::PyNumber::Bool
                            : k == ScalarKind::Int ? kernels::PyNumber::Int
                                                   : kernels::PyNumber::Float;
      specs.push_back({kernels::python_number_dtype(n, first ? &first->dtype : nullptr), {}});
    }
    std::vector<TensorSpec> out;
    kernels::infer(p.prim, specs, p.attrs, out);
    if (out.size() == 1) return abs_tensor(out[0]);
    std::vector<AbsValue> items;
    for (const TensorSpec& s : out) items.push_back(abs_tensor(s));
    return abs_tuple(std::move(items));
  } catch (const kernels::KernelError& e) {
    fail(site, e.what());
  }
}

namespace {

AbsValue zeros_or_ones(const AbsValue& v, bool ones, bool& ok) {
  if (v.is<AbsTensor>() || v.is<AbsAny>()) return v;
  if (auto s = v.get_if<AbsScalar>()) {
    if (is_number(*s)) return AbsScalar{s->kind, number_const(s->kind, ones ? 1.0 : 0.0)};
    if (!ones) return abs_const(ir::NoneValue{});
  }
  if (auto t = v.get_if<AbsTuple>()) {
    std::vector<AbsValue> items;
    for (const AbsValue& x : t->items) items.push_back(zeros_or_ones(x, ones, ok));
    return abs_tuple(std::move(items));
  }
  if (!ones) {
    // The zero sensitivity of a function is an empty environment.
    if (v.is<AbsFunc>() || v.is<AbsEnv>()) return AbsEnv{};
    if (v.is<AbsState>()) return abs_const(ir::NoneValue{});
  }
  ok = false;
  return v;
}

bool is_none(const AbsValue& v) {
  auto s = v.get_if<AbsScalar>();
  return s && s->kind == ScalarKind::None;
}

// grad_add of two sensitivities (the executor's grad_add): None is zero,
// tensors of one shape add, a number adds to a tensor, tuples add per item.
std::optional<AbsValue> grad_add_abs(const AbsValue& a, const AbsValue& b) {
  if (is_none(a)) return b;
  if (is_none(b)) return a;
  if (a.is<AbsAny>() || b.is<AbsAny>()) return AbsValue(AbsAny{});
  auto ta = a.get_if<AbsTensor>();
  auto tb = b.get_if<AbsTensor>();
  auto sa = a.get_if<AbsScalar>();
  auto sb = b.get_if<AbsScalar>();
  if (ta && tb) {
    if (ta->shape != tb->shape) return std::nullopt;
    if (ta->device != tb->device) return std::nullopt;
    return abs_tensor(kernels::promote_types(ta->dtype, tb->dtype), ta->shape, ta->device);
  }
  if (ta && sb && is_number(*sb)) return a;
  if (tb && sa && is_number(*sa)) return b;
  if (sa && sb && is_number(*sa) && is_number(*sb))
    return abs_scalar(sa->kind == ScalarKind::Int && sb->kind == ScalarKind::Int ? ScalarKind::Int : ScalarKind::Float);
  auto xa = a.get_if<AbsTuple>();
  auto xb = b.get_if<AbsTuple>();
  if (xa && xb) {
    if (xa->items.size() != xb->items.size()) return std::nullopt;
    std::vector<AbsValue> items;
    for (size_t i = 0; i < xa->items.size(); ++i) {
      std::optional<AbsValue> r = grad_add_abs(xa->items[i], xb->items[i]);
      if (!r) return std::nullopt;
      items.push_back(std::move(*r));
    }
    return abs_tuple(std::move(items));
  }
  if (a.is<AbsEnv>() && b.is<AbsEnv>()) return AbsValue(AbsEnv{});
  return std::nullopt;
}

}  // namespace

AbsValue Specializer::infer_op(const ir::Node* site, ir::IrOp op, const std::vector<AbsValue>& args) {
  using ir::IrOp;
  const std::string name = ir::ir_op_name(op);
  int arity = ir::ir_op_arity(op);
  if (arity >= 0 && args.size() != static_cast<size_t>(arity))
    fail(site, name + " takes " + std::to_string(arity) + " arguments, got " + std::to_string(args.size()));
  // The tuple operand of tuple_getitem/tuple_len/tuple_setitem.
  auto tuple_arg = [&](const AbsValue& v) -> const AbsTuple& {
    auto t = v.get_if<AbsTuple>();
    if (!t) fail(site, name + ": expected a tuple, got " + to_string(v));
    return *t;
  };
  // A constant index into a tuple of n items, made non-negative.
  auto index_arg = [&](const AbsValue& v, size_t n) -> size_t {
    auto s = v.get_if<AbsScalar>();
    if (!s || s->kind != ScalarKind::Int) fail(site, name + ": the index must be an int, got " + to_string(v));
    if (!s->value) fail(site, name + ": the index must be a constant");
    int64_t i = std::get<int64_t>(*s->value);
    int64_t len = static_cast<int64_t>(n);
    if (i < -len || i >= len)
      fail(site, name + ": index " + std::to_string(i) + " out of range for a tuple of " + std::to_string(n));
    return static_cast<size_t>(i < 0 ? i + len : i);
  };

  switch (op) {
    case IrOp::make_tuple:
    case IrOp::make_list: return abs_tuple(args);
    case IrOp::tuple_getitem:
    case IrOp::list_getitem: {
      if (args[0].is<AbsAny>() || args[1].is<AbsAny>()) return AbsAny{};
      const AbsTuple& t = tuple_arg(args[0]);
      return t.items[index_arg(args[1], t.items.size())];
    }
    case IrOp::tuple_len:
      if (args[0].is<AbsAny>()) return abs_scalar(ScalarKind::Int);
      return abs_const(static_cast<int64_t>(tuple_arg(args[0]).items.size()));
    case IrOp::tuple_setitem: {
      if (args[0].is<AbsAny>() || args[1].is<AbsAny>()) return AbsAny{};
      AbsTuple t = tuple_arg(args[0]);
      t.items[index_arg(args[1], t.items.size())] = args[2];
      return AbsValue(std::move(t));
    }
    case IrOp::switch_: {
      const AbsValue& c = args[0];
      if (auto s = c.get_if<AbsScalar>(); s && s->value) return truthy(*s->value) ? args[1] : args[2];
      if (auto t = c.get_if<AbsTensor>(); t && t->shape.product() != 1)
        fail(site, "the condition is a tensor of " + std::to_string(t->shape.product()) +
                       " elements; it must have exactly one");
      if (!c.is<AbsTensor>() && !c.is<AbsAny>()) {
        auto s = c.get_if<AbsScalar>();
        if (!s || !is_number(*s))
          fail(site, "the condition must be a bool or a one-element tensor, got " + to_string(c));
      }
      // Not known at compile time: either branch.
      JoinFailure why;
      std::optional<AbsValue> j = join(args[1], args[2], &why);
      if (!j) {
        std::string at = line_of(site);
        fail(site, "the branches of the if" + (at.empty() ? "" : " at " + at) + " have different types: " + why.left +
                       " and " + why.right);
      }
      return *j;
    }
    case IrOp::partial: {
      if (args.empty()) fail(site, "partial takes at least 1 argument, got 0");
      if (args[0].is<AbsAny>()) return AbsAny{};
      auto f = args[0].get_if<AbsFunc>();
      if (!f) fail(site, "partial: a value of type " + to_string(args[0]) + " is not callable");
      AbsFunc out = *f;
      for (AbsCallee& c : out.callees) c.bound.insert(c.bound.end(), args.begin() + 1, args.end());
      return AbsValue(std::move(out));
    }
    case IrOp::J: {
      if (args[0].is<AbsAny>()) return AbsAny{};
      auto f = args[0].get_if<AbsFunc>();
      if (!f) fail(site, "J: a value of type " + to_string(args[0]) + " is not a function");
      AbsFunc out = *f;
      for (AbsCallee& c : out.callees) c.j += 1;
      return AbsValue(std::move(out));
    }
    case IrOp::stop_gradient:
    case IrOp::depend: return args[0];
    case IrOp::is_none: {
      // Known from the type: only None's scalar kind is None.
      if (args[0].is<AbsAny>()) return abs_scalar(ScalarKind::Bool);
      auto sc = args[0].get_if<AbsScalar>();
      return abs_const(sc != nullptr && sc->kind == ScalarKind::None);
    }
    case IrOp::zeros_like:
    case IrOp::ones_like: {
      bool ok = true;
      AbsValue r = zeros_or_ones(args[0], op == IrOp::ones_like, ok);
      if (!ok) fail(site, name + ": unsupported value of type " + to_string(args[0]));
      return r;
    }
    case IrOp::grad_add: {
      std::optional<AbsValue> r = grad_add_abs(args[0], args[1]);
      if (!r)
        fail(site, "grad_add: cannot add sensitivities of types " + to_string(args[0]) + " and " + to_string(args[1]));
      return *r;
    }
    case IrOp::env_new:
    case IrOp::env_setitem:
    case IrOp::env_add: return AbsEnv{};
    case IrOp::env_getitem: return args[2];  // the stored sensitivity has the default's type
    case IrOp::update_state: return AbsState{};
    case IrOp::print: return abs_const(ir::NoneValue{});  // as the executor: print's result is None
  }
  fail(site, "the operator '" + name + "' is not supported by the specializer");
}

}  // namespace msl::jit
