// Values crossing between the host interpreter and the graph executor.
//
// The executor has its own value type (RtValue: tensors, numbers, tuples,
// closures...). When a compiled graph is called from MSL code its arguments
// convert to RtValues, and its results convert back. Host objects that have
// no graph meaning (a Cell instance, a library function, a class) travel
// through graphs as HostValue constants: the executor can call them (through
// the interpreter) but never looks inside. Graph closures returned to MSL
// code become callable GraphFunction objects.
#pragma once

#include <string>
#include <vector>

#include "jit/exec/executor.h"
#include "interp/core/interp.h"
#include "lang/ir/node.h"

namespace msl {

// A host value as an IR constant. Holds a reference, so the value lives as
// long as any graph or executor value that mentions it.
class HostValue : public ir::HostObject {
 public:
  HostValue(Value v, std::string name) : value_(std::move(v)), name_(std::move(name)) {}
  std::string name() const override { return name_; }
  const Value& value() const { return value_; }
  // Dtypes by dtype, classes by identity.
  std::optional<bool> equals(const ir::HostObject& other) const override;
  // Reading `.dtype`, `.shape` or `.ndim` (a graph's attribute adapter);
  // the builtins isinstance, issubclass, type, len, hasattr and callable.
  bool gradient_free() const override;

 private:
  Value value_;
  std::string name_;
};

// A Cell with a user-defined `bprop`: the value is its bound construct; J of
// it calls construct and uses bprop as the backpropagator.
class CustomBpropHost final : public HostValue {
 public:
  CustomBpropHost(Value construct, Value cell, std::string name)
      : HostValue(std::move(construct), std::move(name)), cell_(std::move(cell)) {}
  const Value& cell() const { return cell_; }

 private:
  Value cell_;
};

// A HostRef for `v`, named after it (its __name__ or type).
ir::HostRef host_ref(Interp& I, const Value& v);

// MSL value → executor value: None/bool/int/float/str, tensors (parameters
// included), tuples and lists (as tuples), graph functions (their closure);
// anything else as a HostValue.
exec::RtValue to_rt(Interp& I, const Value& v);
// Executor value → MSL value: tensors wrap as Tensor objects of `tensor_cls`;
// closures and partials become GraphFunction objects; an environment or a
// state token is an internal value and raises RuntimeError.
Value from_rt(Interp& I, Class* tensor_cls, const exec::RtValue& v);

// Whether `v` is a GraphFunction (a graph closure called from MSL code), and
// its executor value.
bool is_graph_function(const Value& v);
const exec::RtValue& graph_function_value(const Value& v);

// Raises the MSL exception for an ExecError (RuntimeError with the node's
// file:line) or passes an MslError through. Call only inside a catch block.
[[noreturn]] void raise_exec_error(Interp& I);

}  // namespace msl
