// The debug-mode executor's value operations: kernel dispatch with scalar
// promotion, the IR operators (tuples, switch, partial, effects, print,
// zeros_like), conditions and value formatting. The graph walking and call
// machinery is in graph_executor.cpp.
#include <iostream>
#include <span>

#include "interp/graph_executor.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

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

RtValue run_kernel(const ir::PrimRef& p, const std::vector<RtValue>& args) {
  const char* name = kernels::prim_name(p.prim);
  // The dtype Python scalars take: that of the first tensor input.
  const Tensor* first = nullptr;
  for (const RtValue& a : args)
    if (auto t = a.get_if<Tensor>()) {
      first = t;
      break;
    }
  std::vector<Tensor> in;
  in.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const RtValue& a = args[i];
    if (auto t = a.get_if<Tensor>()) {
      in.push_back(*t);
    } else if (a.is<StateToken>()) {
      continue;  // the effect convention: the state rides along as the last input
    } else if (auto b = a.get_if<bool>()) {
      in.push_back(Tensor::scalar(first ? first->dtype() : DType::Bool, *b ? 1.0 : 0.0));
    } else if (auto n = a.get_if<int64_t>()) {
      in.push_back(Tensor::scalar(first ? first->dtype() : DType::Int64, static_cast<double>(*n)));
    } else if (auto d = a.get_if<double>()) {
      in.push_back(Tensor::scalar(first ? first->dtype() : DType::Float32, *d));
    } else {
      fail(std::string(name) + ": argument " + std::to_string(i + 1) + " must be a tensor or a number, got " +
           type_name(a));
    }
  }
  std::vector<Tensor> out;
  kernels::execute(p.prim, std::span<const Tensor>(in), p.attrs, out);
  if (out.size() == 1) return RtValue(std::move(out[0]));
  std::vector<RtValue> items;
  items.reserve(out.size());
  for (Tensor& t : out) items.emplace_back(std::move(t));
  return make_tuple(std::move(items));
}

namespace {

RtValue zeros_like(const RtValue& v) {
  if (auto t = v.get_if<Tensor>()) return RtValue(Tensor::zeros(t->dtype(), t->shape()));
  if (v.is<bool>()) return RtValue(false);
  if (v.is<int64_t>()) return RtValue(int64_t{0});
  if (v.is<double>()) return RtValue(0.0);
  if (v.is<RtTuple>()) {
    std::vector<RtValue> items;
    for (const RtValue& x : v.tuple()) items.push_back(zeros_like(x));
    return make_tuple(std::move(items));
  }
  if (v.is_none()) return v;
  fail("zeros_like: unsupported value of type " + type_name(v));
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
    case IrOp::update_state:
      return RtValue(StateToken{++state_serial});
    case IrOp::print: {
      std::string line;
      bool first = true;
      for (const RtValue& a : args) {
        if (a.is<StateToken>()) continue;
        line += (first ? "" : " ") + to_string(a);
        first = false;
      }
      if (opts.print)
        opts.print(line);
      else
        std::cout << line << '\n';
      return RtValue();
    }
    case IrOp::J:
    case IrOp::env_new:
    case IrOp::env_getitem:
    case IrOp::env_setitem:
    case IrOp::env_add:
      break;
  }
  fail(std::string("the operator '") + ir::ir_op_name(op) + "' is not supported by the debug-mode executor yet");
}

}  // namespace detail
}  // namespace msl::exec
