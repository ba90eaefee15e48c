// ANF IR nodes: the three kinds of value a FuncGraph is made of.
//
// The IR follows MindSpore's MindIR and Myia: a program is a set of
// FuncGraphs (functions in A-normal form), and a graph's body is the DAG of
// nodes reachable from its output.
//
//   Constant   a value known at compile time: None/bool/int/float/str, a
//              tensor, a kernel primitive with its attributes (PrimRef), an
//              IR-level operator (IrOp) or a reference to a FuncGraph.
//   Parameter  one formal parameter of a graph.
//   Apply      a call: inputs[0] is the callee (a constant primitive/operator
//              or graph, or any node computing a function, e.g. a closure),
//              inputs[1..] are the arguments.
//
// Nodes are small and immutable: kind, id, owning graph, source location,
// debug name and (Apply) a fixed input list or (Constant) the value. A pass
// never edits a node; it builds new nodes and a new output. Because inputs
// are fixed at construction, a node can only refer to nodes that existed
// before it, so a graph cannot become cyclic by construction (the verifier
// still checks). Analysis results — types, shapes, users — live in side
// tables keyed by Node::id(), never on the node (tinygrad's UOp habit): a
// pass that changes nothing invalidates nothing.
//
// Every node belongs to one IrModule (ir_module.h), which owns its memory, so
// plain `Node*` pointers are safe for the module's lifetime.
//
// Effects. The state token ("U" in MindSpore) is an ordinary value threaded
// through the program; the data structure knows nothing special about it.
// The convention the lowering, AD and executors follow:
//   * every effectful operation (IrOp::print, the kernel primitive `assign`)
//     takes the current state as its LAST input; for kernel primitives that
//     is one input beyond the registry's count (the verifier allows exactly
//     one extra input for PrimKind::InPlace primitives);
//   * the new state is `update_state(u, effect_result)`, and later effects
//     take that new state, so effects form a chain no pass may reorder;
//   * `depend(x, u)` yields x but orders its users after the state u (a
//     value read after an assignment);
//   * a graph with effects receives the state as a parameter and returns
//     it, e.g. make_tuple(value, state).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kernels/attrs.h"
#include "kernels/primitives.h"
#include "kernels/tensor.h"

namespace msl::ir {

class FuncGraph;
class IrModule;

// IR-level operators: structural operations that are not tensor kernels
// (tuples, control flow, AD, effects). Kernel primitives stay in
// kernels::Prim; the two name sets are disjoint so the printer can write
// either by bare name.
//   name, arity (-1: variadic, at least the number in the comment)
// clang-format off
#define MSL_IR_OPS(X) \
  X(switch_,       "switch",        3)  /* switch(cond, true_value, false_value): select a value (usually a branch graph) */ \
  X(make_tuple,    "make_tuple",   -1) \
  X(tuple_getitem, "tuple_getitem", 2)  /* tuple_getitem(t, int constant) */ \
  X(tuple_len,     "tuple_len",     1) \
  X(make_list,     "make_list",    -1) \
  X(list_getitem,  "list_getitem",  2) \
  X(partial,       "partial",      -1)  /* partial(fn, args...): a closure over leading arguments */ \
  X(J,             "J",             1)  /* J(fn): the (value, backpropagator) transform of fn */ \
  X(stop_gradient, "stop_gradient", 1) \
  X(zeros_like,    "zeros_like",    1) \
  X(ones_like,     "ones_like",     1)  /* ones of x's structure: the default output sensitivity */ \
  X(env_new,       "env_new",       0)  /* free-variable sensitivity environments (Myia) */ \
  X(env_getitem,   "env_getitem",   3)  /* env_getitem(env, key, default) */ \
  X(env_setitem,   "env_setitem",   3)  /* env_setitem(env, key, value) */ \
  X(env_add,       "env_add",       2) \
  X(update_state,  "update_state",  2)  /* update_state(u, effect): the next state token */ \
  X(depend,        "depend",        2)  /* depend(value, u): value, ordered after u */ \
  X(tuple_setitem, "tuple_setitem", 3)  /* tuple_setitem(t, int constant, v): t with item i replaced (AD) */ \
  X(grad_add,      "grad_add",      2)  /* grad_add(a, b): sum of two sensitivities of any type (AD's hyper_add) */ \
  X(print,         "print",        -1)  /* print(args..., u): effect; last input is the state */ \
  X(is_none,       "is_none",       1)  /* is_none(x): x is None (`x is None`; decided by x's type when specialized) */
// clang-format on

enum class IrOp : uint8_t {
#define MSL_X(e, name, arity) e,
  MSL_IR_OPS(MSL_X)
#undef MSL_X
};

const char* ir_op_name(IrOp op);
int ir_op_arity(IrOp op);  // -1: variadic
bool find_ir_op(std::string_view name, IrOp& out);

// A kernel primitive as a value: the primitive plus its attributes
// (MindSpore's Primitive object: `reduce_sum[axes=(0,), keep_dims=True]`).
struct PrimRef {
  kernels::Prim prim;
  kernels::Attrs attrs;
};

struct NoneValue {};

// A host-language object as an IR constant: an interpreter function, a
// library callable, a gradient rule. Opaque to the IR and its passes (they
// compare it by identity); the executor calls it through the host, and the
// AD transform differentiates it by tracing it at the argument shapes.
class CompiledKernel;
class HostObject {
 public:
  virtual ~HostObject() = default;
  // The printer writes `$name`; not necessarily unique.
  virtual std::string name() const = 0;
  // Non-null when this object is code a back end generated for the graph
  // (a fused loop): the executor runs it itself instead of asking the host.
  virtual const CompiledKernel* as_compiled_kernel() const { return nullptr; }
  // Python's `==` with `other` when the host knows it without running user
  // code (two dtypes, two classes: `x.dtype == msl.float16`, `type(n) ==
  // int`), for the specializer to fold and the executor to compute;
  // nullopt otherwise.
  virtual std::optional<bool> equals(const HostObject& other) const {
    (void)other;
    return std::nullopt;
  }
  // True when a call of it gives what no gradient flows through: a tensor's
  // dtype, shape or rank (`ops.cast(m, x.dtype)`), isinstance(x, Tensor).
  // AD then calls it as it is, with no backpropagator, and its arguments
  // get no sensitivity from it.
  virtual bool gradient_free() const { return false; }
};
using HostRef = std::shared_ptr<const HostObject>;

// A kernel a back end's pass generated and put into the graph as the callee
// of an Apply (jit::FusedElementwise): tensors in, tensors out, on the
// inputs' device. The inputs are handed over (moved), so a buffer nothing
// else holds may receive a result.
class CompiledKernel : public HostObject {
 public:
  const CompiledKernel* as_compiled_kernel() const final { return this; }
  virtual std::vector<kernels::Tensor> run(std::vector<kernels::Tensor> inputs) const = 0;
};

// The value of a Constant node. Tensors are reference-counted handles, so
// copying a ConstValue is cheap.
using ConstValue =
    std::variant<NoneValue, bool, int64_t, double, std::string, kernels::Tensor, PrimRef, IrOp, FuncGraph*, HostRef>;

// Where a node came from: a source position for error messages and the
// printer's "# In file" lines, and the Cell instance whose construct made it
// (its scope, "Default/network-WithLossCell/conv1-Conv2d" as MindSpore
// names them: the profiler's per-Cell table). `file` and `scope` point to
// strings interned by the IrModule (stable for its lifetime); a null file
// means "no location", a null scope "no Cell".
struct Loc {
  const std::string* file = nullptr;
  uint32_t line = 0;
  uint32_t col = 0;
  const std::string* scope = nullptr;
  bool valid() const { return file != nullptr && line != 0; }
};

enum class NodeKind : uint8_t { Constant, Parameter, Apply };

class Node {
 public:
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  NodeKind kind() const { return kind_; }
  bool is_constant() const { return kind_ == NodeKind::Constant; }
  bool is_parameter() const { return kind_ == NodeKind::Parameter; }
  bool is_apply() const { return kind_ == NodeKind::Apply; }

  // Unique within the module, dense from 0: the key of every side table.
  uint32_t id() const { return id_; }
  // The graph this node belongs to. A Constant may have none: constants are
  // values, legal as an input anywhere.
  FuncGraph* graph() const { return graph_; }
  const Loc& loc() const { return loc_; }
  const std::string& name() const { return name_; }  // debug name, may be empty

  // Apply: callee then arguments. Empty for other kinds.
  const std::vector<Node*>& inputs() const { return inputs_; }
  Node* callee() const { return inputs_.empty() ? nullptr : inputs_[0]; }
  size_t num_args() const { return inputs_.empty() ? 0 : inputs_.size() - 1; }
  Node* arg(size_t i) const { return inputs_[i + 1]; }

  // Constant only (NoneValue for other kinds).
  const ConstValue& value() const { return value_; }
  // Convenience queries on constants; all false/null for non-constants.
  const PrimRef* as_prim() const { return std::get_if<PrimRef>(&value_); }
  const IrOp* as_ir_op() const { return std::get_if<IrOp>(&value_); }
  FuncGraph* as_graph() const {
    auto p = std::get_if<FuncGraph*>(&value_);
    return p ? *p : nullptr;
  }
  const HostObject* as_host() const {
    auto p = std::get_if<HostRef>(&value_);
    return p ? p->get() : nullptr;
  }
  // True for an Apply whose callee is the constant primitive `p` / operator `op`.
  bool is_call_of(kernels::Prim p) const;
  bool is_call_of(IrOp op) const;

 private:
  friend class IrModule;
  Node(NodeKind kind, uint32_t id, FuncGraph* graph, Loc loc, std::string name)
      : kind_(kind), id_(id), graph_(graph), loc_(loc), name_(std::move(name)) {}

  NodeKind kind_;
  uint32_t id_;
  FuncGraph* graph_;
  Loc loc_;
  std::string name_;
  std::vector<Node*> inputs_;
  ConstValue value_;
};

// The constant's value as the printer writes it: `1`, `1.0`, `"s"`, `None`,
// `True`, `mul`, `reduce_sum[axes=(0,), keep_dims=True]`, `make_tuple`, `@g`,
// `Tensor[Float32](2)[1.0, 2.0]`, `$host_name`.
std::string const_value_str(const ConstValue& v);
// An attribute value as the printer writes it (the parser reads the same):
// True/False, 3, 3.0, (1, 2) / (1,) / (), "str", Float32.
std::string attr_value_str(const kernels::AttrValue& v);
std::string attrs_str(const kernels::Attrs& attrs);  // "a=1, b=True"
// A float with a decimal point or exponent so it reads back as a float:
// 1.0, 0.1, 1e+20, inf, -inf, nan.
std::string float_str(double v);
// A new contiguous tensor holding `values` (row-major) converted to `dtype`.
// Elements travel as doubles (here and in the printer), so int64 tensor
// constants are exact only up to 2^53: IR constants are small literals.
kernels::Tensor tensor_from_values(kernels::DType dtype, const kernels::Dims& shape, const std::vector<double>& values);

}  // namespace msl::ir
