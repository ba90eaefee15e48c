// The debug-mode graph executor: runs ANF IR graphs (lang/ir) node by node
// on the eager CPU kernels (kernels::execute).
//
// Design:
//   * Values. RtValue is the executor's own runtime value (it does not use
//     the interpreter's Value): None, bool, int64, double, str, a tensor, a
//     tuple (shared, immutable), a closure (graph + captured free-variable
//     values), a partial application, a kernel primitive or IR operator
//     reference, and the state token of the effect chain.
//   * Frames. A call of graph G makes a frame mapping G's nodes to values.
//     Nodes are evaluated in topo_order(G); a node of G needed only by a
//     nested graph (a free variable) is computed on demand when the closure
//     that captures it is made.
//   * Closures. A FuncGraph constant evaluates to a closure holding the
//     values of the graph's free_variables(), looked up (or computed) in the
//     current frame and the current closure's captures. Captured values, not
//     frames, so closures never form reference cycles with frames.
//   * Calls and tail calls. A non-tail call of a closure recurses in C++ and
//     counts towards ExecOptions::max_depth (an ExecError, never a stack
//     overflow). When a graph's output is an Apply of a closure or partial,
//     the call loop replaces the current frame instead (a trampoline), so a
//     loop lowered to a tail-recursive graph runs in constant C++ stack.
//   * Kernels. An Apply of a PrimRef runs kernels::execute; Python scalars
//     among the inputs become 0-d tensors of the first tensor input's dtype
//     (Int64 / Float32 / Bool when there is no tensor), as the eager binding
//     does; a state token among the inputs (the effect convention) is
//     dropped. Multi-output primitives give a tuple.
//   * Errors. Every failure (kernel ShapeError/DTypeError/ValueError, arity,
//     calling a non-callable, unsupported operators such as J and env_*)
//     is an ExecError carrying the message and the `file:line` of the node
//     that failed (the innermost one when the failure is inside a call).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "kernels/tensor.h"
#include "lang/ir/func_graph.h"
#include "lang/ir/node.h"

namespace msl::exec {

struct RtValue;
struct RtPartial;
struct RtEnvMap;

using RtTuple = std::shared_ptr<const std::vector<RtValue>>;
// Values captured by a closure, keyed by the free-variable node.
using RtCaptures = std::shared_ptr<const std::unordered_map<const ir::Node*, RtValue>>;

struct RtClosure {
  const ir::FuncGraph* graph = nullptr;
  RtCaptures captures;  // may be null (no free variables)
};

// The state token threaded through effects; `serial` counts update_state
// calls (useful in tests, meaningless otherwise).
struct StateToken {
  uint64_t serial = 0;
};

// A free-variable sensitivity environment (AD): primal node key -> sensitivity.
using RtEnv = std::shared_ptr<const RtEnvMap>;

struct RtValue {
  using Variant = std::variant<ir::NoneValue, bool, int64_t, double, std::string, kernels::Tensor, RtTuple, RtClosure,
                               std::shared_ptr<const RtPartial>, ir::PrimRef, ir::IrOp, StateToken, ir::HostRef, RtEnv>;
  Variant v;

  RtValue() = default;
  template <class T>
    requires std::is_constructible_v<Variant, T&&> && (!std::is_same_v<std::decay_t<T>, RtValue>)
  RtValue(T&& x) : v(std::forward<T>(x)) {}
  RtValue(int x) : v(static_cast<int64_t>(x)) {}
  RtValue(const char* s) : v(std::string(s)) {}

  template <class T>
  bool is() const { return std::holds_alternative<T>(v); }
  template <class T>
  const T& as() const { return std::get<T>(v); }
  template <class T>
  const T* get_if() const { return std::get_if<T>(&v); }

  bool is_none() const { return is<ir::NoneValue>(); }
  bool is_callable() const {
    return is<RtClosure>() || is<std::shared_ptr<const RtPartial>>() || is<ir::PrimRef>() || is<ir::IrOp>() ||
           is<ir::HostRef>();
  }
  const kernels::Tensor& tensor() const { return as<kernels::Tensor>(); }
  const std::vector<RtValue>& tuple() const { return *as<RtTuple>(); }
};

// partial(fn, args...): calling it calls fn(args..., more...).
struct RtPartial {
  RtValue fn;
  std::vector<RtValue> args;
};

struct RtEnvMap {
  std::map<int64_t, RtValue> items;
};

RtValue make_tuple(std::vector<RtValue> items);
// Readable text of a value (what `print` writes): 3, 2.5, True, None, "s"
// as s, tuples as (a, b), tensors in the IR constant form.
std::string to_string(const RtValue& v);
// A short type name for messages: "int", "tensor", "closure @f", ...
std::string type_name(const RtValue& v);

// Every execution failure. what() is "file:line: message" (the message
// alone when the node has no location).
class ExecError : public std::runtime_error {
 public:
  ExecError(const std::string& message, const std::string& location);
  const std::string& message() const { return message_; }
  const std::string& location() const { return location_; }  // "file:line" or ""

 private:
  std::string message_;
  std::string location_;
};

struct ExecOptions {
  // Maximum nesting of non-tail graph calls. Each level takes about 2 KiB of
  // C++ stack (1000 levels fit well inside the default 8 MiB).
  int max_depth = 1000;
  // Receives each print's line (without the newline); null: std::cout.
  std::function<void(const std::string&)> print;
  // How print shows a value; null: to_string (the host shows tensors as
  // MSL's print does).
  std::function<std::string(const RtValue&)> format;
  // Calls a host object (an interpreter function) with converted arguments;
  // null: calling a host object is an error. Exceptions propagate.
  std::function<RtValue(const ir::HostRef&, std::vector<RtValue>)> call_host;
  // Called inside the handler of any exception a host call throws, before
  // it propagates: the host adds the call's source position to its
  // traceback. May be null.
  std::function<void(const ir::Node* site)> host_failed;
  // J of a runtime value (a host object or a primitive reached as a value):
  // a callable with the J calling convention (lang/ad/grad.h). Null: error.
  std::function<RtValue(const RtValue&)> runtime_j;
};

// Runs `g` (a top-level graph: no free variables) with `args`.
RtValue run_graph(const ir::FuncGraph& g, std::vector<RtValue> args, ExecOptions opts = {});
// Calls any callable value (closure, partial, primitive, operator).
RtValue call_value(const RtValue& fn, std::vector<RtValue> args, ExecOptions opts = {});

namespace detail {
// Building blocks shared by the executor's files (exec_ops.cpp). They
// throw ExecError without a location (the executor adds the node's) or
// kernels::KernelError.
RtValue run_kernel(const ir::PrimRef& p, const std::vector<RtValue>& args);
// A back end's generated kernel on tensor arguments (moved in: an operand
// the frame released is held only here and may receive the result); a
// tuple when it has several outputs.
RtValue run_compiled(const ir::CompiledKernel& k, std::vector<RtValue> args);
// Every IR operator except J (the executor asks ExecOptions::runtime_j).
RtValue run_ir_op(ir::IrOp op, const std::vector<RtValue>& args, const ExecOptions& opts, uint64_t& state_serial);
// The sum of two sensitivities (grad_add): tensors, numbers, tuples
// (itemwise), environments (keywise); None is zero.
RtValue grad_add(const RtValue& a, const RtValue& b);
RtValue zeros_like(const RtValue& v);
// A condition: bool, int, or a one-element tensor.
bool truthy(const RtValue& v);
[[noreturn]] void fail(const std::string& message);
}  // namespace detail

}  // namespace msl::exec
