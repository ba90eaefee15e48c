// The debug-mode executor's value operations: kernel dispatch with scalar
// promotion, the IR operators (tuples, switch, partial, effects, print,
// zeros_like), conditions and value formatting. The graph walking and call
// machinery is in executor.cpp.
#include <cmath>
#include <iostream>
#include <span>

#include "jit/exec/executor.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"
#include "kernels/random_ops.h"
#include "lang/ir/python_scalar.h"

namespace msl::exec {

using kernels::DType;
using kernels::Tensor;

RtValue make_tuple(std::vector<RtValue> items) {
  return RtValue(RtTuple(std::make_shared<const std::vector<RtValue>>(std::move(items))));
}

std::string type_name(const RtValue& v) {
  struct V {
    std::string operator()(const ir::NoneValue&) const { return "None"; }
    std::string operator()(bool) const { return "bool"; }
    std::string operator()(int64_t) const { return "int"; }
    std::string operator()(double) const { return "float"; }
    std::string operator()(const std::string&) const { return "str"; }
    std::string operator()(const Tensor&) const { return "tensor"; }
    std::string operator()(const RtTuple&) const { return "tuple"; }
    std::string operator()(const RtClosure& c) const { return "closure @" + c.graph->name(); }
    std::string operator()(const std::shared_ptr<const RtPartial>&) const { return "partial"; }
    std::string operator()(const ir::PrimRef& p) const { return std::string("primitive ") + kernels::prim_name(p.prim); }
    std::string operator()(ir::IrOp op) const { return std::string("operator ") + ir::ir_op_name(op); }
    std::string operator()(const StateToken&) const { return "state"; }
    std::string operator()(const ir::HostRef& h) const { return "host " + h->name(); }
    std::string operator()(const RtEnv&) const { return "env"; }
  };
  return std::visit(V{}, v.v);
}

std::string to_string(const RtValue& v) {
  struct V {
    std::string operator()(const ir::NoneValue&) const { return "None"; }
    std::string operator()(bool b) const { return b ? "True" : "False"; }
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return ir::float_str(d); }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const Tensor& t) const { return ir::const_value_str(ir::ConstValue(t)); }
    std::string operator()(const RtTuple& t) const {
      std::string s = "(";
      for (size_t i = 0; i < t->size(); ++i) s += (i ? ", " : "") + to_string((*t)[i]);
      return s + (t->size() == 1 ? ",)" : ")");
    }
    std::string operator()(const RtClosure& c) const { return "<closure @" + c.graph->name() + ">"; }
    std::string operator()(const std::shared_ptr<const RtPartial>& p) const {
      return "<partial " + to_string(p->fn) + ">";
    }
    std::string operator()(const ir::PrimRef& p) const { return ir::const_value_str(ir::ConstValue(p)); }
    std::string operator()(ir::IrOp op) const { return ir::ir_op_name(op); }
    std::string operator()(const StateToken&) const { return "<state>"; }
    std::string operator()(const ir::HostRef& h) const { return "<" + h->name() + ">"; }
    std::string operator()(const RtEnv& e) const { return "<env of " + std::to_string(e->items.size()) + ">"; }
  };
  return std::visit(V{}, v.v);
}

ExecError::ExecError(const std::string& message, const std::string& location)
    : std::runtime_error(location.empty() ? message : location + ": " + message),
      message_(message),
      location_(location) {}

namespace detail {

void fail(const std::string& message) { throw ExecError(message, ""); }

bool truthy(const RtValue& v) {
  if (auto b = v.get_if<bool>()) return *b;
  if (auto i = v.get_if<int64_t>()) return *i != 0;
  if (auto t = v.get_if<Tensor>()) {
    if (t->numel() != 1)
      fail("the condition is a tensor of " + std::to_string(t->numel()) + " elements; it must have exactly one");
    return t->item() != 0.0;
  }
  fail("the condition must be a bool or a one-element tensor, got " + type_name(v));
}

namespace {

// Arithmetic and comparisons on Python numbers (and strings) only stay
// Python values (lang/ir/python_scalar.h).
bool scalar_op(kernels::Prim p, const std::vector<RtValue>& args, RtValue& out) {
  std::vector<ir::ConstValue> nums;
  for (const RtValue& a : args) {
    if (auto n = a.get_if<int64_t>()) nums.emplace_back(*n);
    else if (auto b = a.get_if<bool>()) nums.emplace_back(*b);
    else if (auto d = a.get_if<double>()) nums.emplace_back(*d);
    else if (auto s = a.get_if<std::string>()) nums.emplace_back(*s);
    else return false;
  }
  std::optional<ir::ConstValue> r;
  try {
    r = ir::python_scalar_op(p, nums);
  } catch (const ir::ScalarArithmeticError& e) {
    fail(e.what());
  }
  if (!r) return false;
  if (auto i = std::get_if<int64_t>(&*r)) out = RtValue(*i);
  else if (auto b = std::get_if<bool>(&*r)) out = RtValue(*b);
  else if (auto s = std::get_if<std::string>(&*r)) out = RtValue(*s);
  else out = RtValue(std::get<double>(*r));
  return true;
}

}  // namespace

RtValue run_compiled(const ir::CompiledKernel& k, std::vector<RtValue> args) {
  std::vector<kernels::Tensor> ins;
  ins.reserve(args.size());
  for (RtValue& a : args) {
    if (!a.is<kernels::Tensor>()) fail(k.name() + ": expected tensor arguments, got " + type_name(a));
    ins.push_back(std::get<kernels::Tensor>(std::move(a.v)));
  }
  std::vector<kernels::Tensor> outs = k.run(std::move(ins));
  if (outs.size() == 1) return RtValue(std::move(outs[0]));
  std::vector<RtValue> items;
  items.reserve(outs.size());
  for (kernels::Tensor& t : outs) items.push_back(RtValue(std::move(t)));
  return make_tuple(std::move(items));
}

RtValue run_kernel(const ir::PrimRef& p, const std::vector<RtValue>& given) {
  const char* name = kernels::prim_name(p.prim);
  if (RtValue r; p.attrs.empty() && scalar_op(p.prim, given, r)) return r;
  // `x.dtype == msl.float16` where the graph runs unspecialized: the host
  // compares (HostObject::equals).
  if ((p.prim == kernels::Prim::equal || p.prim == kernels::Prim::not_equal) && given.size() == 2)
    if (auto a = given[0].get_if<ir::HostRef>(), b = given[1].get_if<ir::HostRef>(); a && b)
      if (std::optional<bool> same = (*a)->equals(**b)) return RtValue(p.prim == kernels::Prim::equal ? *same : !*same);
  const kernels::PrimDef& def = kernels::prim_def(p.prim);
  std::vector<RtValue> args;
  for (size_t i = 0; i < given.size(); ++i) {
    // The effect convention: an in-place primitive's extra last input is
    // the state (None for a graph's initial state).
    if (def.kind == kernels::PrimKind::InPlace && def.inputs >= 0 && i == static_cast<size_t>(def.inputs)) continue;
    // A variadic primitive may get its inputs as one tuple (concat(xs)).
    if (def.inputs < 0 && given[i].is<RtTuple>()) {
      for (const RtValue& x : given[i].tuple()) args.push_back(x);
      continue;
    }
    args.push_back(given[i]);
  }
  // The dtype Python scalars take follows the first tensor input's
  // (kernels::python_number_dtype).
  const Tensor* first = nullptr;
  for (const RtValue& a : args)
    if (auto t = a.get_if<Tensor>()) {
      first = t;
      break;
    }
  DType first_dtype = first ? first->dtype() : DType::Float32;
  auto number_dtype = [&](kernels::PyNumber k) { return kernels::python_number_dtype(k, first ? &first_dtype : nullptr); };
  std::vector<Tensor> in;
  in.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const RtValue& a = args[i];
    if (auto t = a.get_if<Tensor>()) {
      in.push_back(*t);
    } else if (a.is<StateToken>()) {
      continue;  // the effect convention: the state rides along as the last input
    } else if (auto b = a.get_if<bool>()) {
      in.push_back(Tensor::scalar(number_dtype(kernels::PyNumber::Bool), *b ? 1.0 : 0.0));
    } else if (auto n = a.get_if<int64_t>()) {
      in.push_back(Tensor::scalar(number_dtype(kernels::PyNumber::Int), static_cast<double>(*n)));
    } else if (auto d = a.get_if<double>()) {
      in.push_back(Tensor::scalar(number_dtype(kernels::PyNumber::Float), *d));
    } else {
      fail(std::string(name) + ": argument " + std::to_string(i + 1) + " must be a tensor or a number, got " +
           type_name(a));
    }
  }
  std::vector<Tensor> out;
  if (kernels::is_random(p.prim) && (!p.attrs.has("seed") || !p.attrs.has("offset"))) {
    // A random primitive recorded without its draw (a traced dropout): each
    // run draws from the global generator, as each PyNative call does.
    kernels::Attrs attrs = p.attrs;
    std::vector<kernels::TensorSpec> specs;
    for (const Tensor& t : in) specs.push_back(t.spec());
    kernels::draw_random_attrs(p.prim, specs, attrs);
    kernels::execute(p.prim, std::span<const Tensor>(in), attrs, out);
  } else {
    kernels::execute(p.prim, std::span<const Tensor>(in), p.attrs, out);
  }
  if (out.size() == 1) return RtValue(std::move(out[0]));
  std::vector<RtValue> items;
  items.reserve(out.size());
  for (Tensor& t : out) items.emplace_back(std::move(t));
  return make_tuple(std::move(items));
}

namespace {

RtValue empty_env() { return RtValue(RtEnv(std::make_shared<const RtEnvMap>())); }

const RtEnvMap& env_arg(ir::IrOp op, const RtValue& v) {
  if (!v.is<RtEnv>()) fail(std::string(ir::ir_op_name(op)) + ": expected an environment, got " + type_name(v));
  return *v.as<RtEnv>();
}

int64_t key_arg(ir::IrOp op, const RtValue& v) {
  if (!v.is<int64_t>()) fail(std::string(ir::ir_op_name(op)) + ": the key must be an int, got " + type_name(v));
  return v.as<int64_t>();
}

void check_arity(ir::IrOp op, size_t n) {
  int arity = ir::ir_op_arity(op);
  if (arity >= 0 && n != static_cast<size_t>(arity))
    fail(std::string(ir::ir_op_name(op)) + " takes " + std::to_string(arity) + " arguments, got " + std::to_string(n));
}

const std::vector<RtValue>& tuple_arg(ir::IrOp op, const RtValue& v) {
  if (!v.is<RtTuple>()) fail(std::string(ir::ir_op_name(op)) + ": expected a tuple, got " + type_name(v));
  return v.tuple();
}

}  // namespace

RtValue zeros_like(const RtValue& v) {
  if (auto t = v.get_if<Tensor>()) return RtValue(Tensor::zeros(t->dtype(), t->shape(), t->device()));
  if (v.is<bool>()) return RtValue(false);
  if (v.is<int64_t>()) return RtValue(int64_t{0});
  if (v.is<double>()) return RtValue(0.0);
  if (v.is<RtTuple>()) {
    std::vector<RtValue> items;
    for (const RtValue& x : v.tuple()) items.push_back(zeros_like(x));
    return make_tuple(std::move(items));
  }
  // The sensitivity of a function value is an environment (of its free
  // variables' sensitivities): zero is the empty one.
  if (v.is_callable() || v.is<RtEnv>()) return empty_env();
  if (v.is_none() || v.is<StateToken>() || v.is<std::string>()) return RtValue();
  fail("zeros_like: unsupported value of type " + type_name(v));
}

RtValue ones_like(const RtValue& v) {
  if (auto t = v.get_if<Tensor>())
    return RtValue(ir::tensor_from_values(t->dtype(), t->shape(), std::vector<double>(static_cast<size_t>(t->numel()), 1.0))
                       .to_device(t->device()));
  if (v.is<bool>()) return RtValue(true);
  if (v.is<int64_t>()) return RtValue(int64_t{1});
  if (v.is<double>()) return RtValue(1.0);
  if (v.is<RtTuple>()) {
    std::vector<RtValue> items;
    for (const RtValue& x : v.tuple()) items.push_back(ones_like(x));
    return make_tuple(std::move(items));
  }
  fail("ones_like: unsupported value of type " + type_name(v));
}

RtValue grad_add(const RtValue& a, const RtValue& b) {
  if (a.is_none()) return b;
  if (b.is_none()) return a;
  if (auto x = a.get_if<Tensor>()) {
    if (auto y = b.get_if<Tensor>()) {
      if (x->shape() != y->shape())
        fail("grad_add: sensitivities of shapes " + x->shape().str() + " and " +
             y->shape().str() + " differ");
      return run_kernel(ir::PrimRef{kernels::Prim::add, {}}, {a, b});
    }
    if (b.is<int64_t>() || b.is<double>()) return run_kernel(ir::PrimRef{kernels::Prim::add, {}}, {a, b});
  }
  if (a.is<int64_t>() && b.is<int64_t>()) return RtValue(a.as<int64_t>() + b.as<int64_t>());
  auto num = [](const RtValue& v, double& out) {
    if (auto i = v.get_if<int64_t>()) return out = static_cast<double>(*i), true;
    if (auto d = v.get_if<double>()) return out = *d, true;
    if (auto b = v.get_if<bool>()) return out = *b ? 1.0 : 0.0, true;
    return false;
  };
  double x, y;
  if (num(a, x) && num(b, y)) return RtValue(x + y);
  if (a.is<Tensor>() || b.is<Tensor>()) {
    if (num(a, x)) return run_kernel(ir::PrimRef{kernels::Prim::add, {}}, {b, a});
  }
  if (a.is<RtTuple>() && b.is<RtTuple>()) {
    const auto& xs = a.tuple();
    const auto& ys = b.tuple();
    if (xs.size() != ys.size())
      fail("grad_add: tuples of " + std::to_string(xs.size()) + " and " + std::to_string(ys.size()) + " items");
    std::vector<RtValue> items;
    for (size_t i = 0; i < xs.size(); ++i) items.push_back(grad_add(xs[i], ys[i]));
    return make_tuple(std::move(items));
  }
  if (a.is<RtEnv>() && b.is<RtEnv>()) {
    auto out = std::make_shared<RtEnvMap>(*a.as<RtEnv>());
    for (const auto& [k, v] : b.as<RtEnv>()->items) {
      auto it = out->items.find(k);
      if (it == out->items.end())
        out->items.emplace(k, v);
      else
        it->second = grad_add(it->second, v);
    }
    return RtValue(RtEnv(std::move(out)));
  }
  fail("grad_add: cannot add sensitivities of types " + type_name(a) + " and " + type_name(b));
}

RtValue run_ir_op(ir::IrOp op, const std::vector<RtValue>& args, const ExecOptions& opts, uint64_t& state_serial) {
  using ir::IrOp;
  check_arity(op, args.size());
  switch (op) {
    case IrOp::make_tuple:
    case IrOp::make_list:
      return make_tuple(args);
    case IrOp::tuple_getitem:
    case IrOp::list_getitem: {
      const auto& items = tuple_arg(op, args[0]);
      auto idx = args[1].get_if<int64_t>();
      if (!idx) fail(std::string(ir::ir_op_name(op)) + ": the index must be an int, got " + type_name(args[1]));
      int64_t n = static_cast<int64_t>(items.size());
      int64_t i = *idx < 0 ? *idx + n : *idx;
      if (i < 0 || i >= n)
        fail(std::string(ir::ir_op_name(op)) + ": index " + std::to_string(*idx) + " out of range for a tuple of " +
             std::to_string(n));
      return items[static_cast<size_t>(i)];
    }
    case IrOp::tuple_len:
      return RtValue(static_cast<int64_t>(tuple_arg(op, args[0]).size()));
    case IrOp::is_none:
      return RtValue(args[0].is_none());
    case IrOp::switch_:
      return truthy(args[0]) ? args[1] : args[2];
    case IrOp::partial: {
      if (args.empty()) fail("partial takes at least 1 argument, got 0");
      if (!args[0].is_callable()) fail("partial: " + type_name(args[0]) + " is not callable");
      auto p = std::make_shared<RtPartial>();
      p->fn = args[0];
      p->args.assign(args.begin() + 1, args.end());
      return RtValue(std::shared_ptr<const RtPartial>(std::move(p)));
    }
    case IrOp::stop_gradient:
    case IrOp::depend:
      return args[0];
    case IrOp::zeros_like:
      return zeros_like(args[0]);
    case IrOp::ones_like:
      return ones_like(args[0]);
    case IrOp::update_state:
      return RtValue(StateToken{++state_serial});
    case IrOp::print: {
      // The effect convention: the last input is the state token (the
      // graph's initial state is None), never printed.
      if (args.empty()) fail("print takes its state as the last argument");
      std::string line;
      for (size_t i = 0; i + 1 < args.size(); ++i)
        line += (i ? " " : "") + (opts.format ? opts.format(args[i]) : to_string(args[i]));
      if (opts.print)
        opts.print(line);
      else
        std::cout << line << '\n';
      return RtValue();
    }
    case IrOp::tuple_setitem: {
      std::vector<RtValue> items = tuple_arg(op, args[0]);
      auto idx = args[1].get_if<int64_t>();
      int64_t n = static_cast<int64_t>(items.size());
      if (!idx || *idx < -n || *idx >= n)
        fail("tuple_setitem: index " + to_string(args[1]) + " out of range for a tuple of " + std::to_string(n));
      items[static_cast<size_t>(*idx < 0 ? *idx + n : *idx)] = args[2];
      return make_tuple(std::move(items));
    }
    case IrOp::grad_add:
      return grad_add(args[0], args[1]);
    case IrOp::env_new:
      return empty_env();
    case IrOp::env_getitem: {
      if (args[0].is_none()) return args[2];  // a zero environment
      const RtEnvMap& e = env_arg(op, args[0]);
      auto it = e.items.find(key_arg(op, args[1]));
      return it == e.items.end() ? args[2] : it->second;
    }
    case IrOp::env_setitem: {
      auto out = args[0].is_none() ? std::make_shared<RtEnvMap>() : std::make_shared<RtEnvMap>(env_arg(op, args[0]));
      out->items[key_arg(op, args[1])] = args[2];
      return RtValue(RtEnv(std::move(out)));
    }
    case IrOp::env_add:
      return grad_add(args[0].is_none() ? empty_env() : args[0], args[1].is_none() ? empty_env() : args[1]);
    case IrOp::J:
      break;
  }
  fail(std::string("the operator '") + ir::ir_op_name(op) + "' is not supported by the debug-mode executor yet");
}

}  // namespace detail
}  // namespace msl::exec
