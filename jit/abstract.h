// Abstract values: what the specializer (specialize.h) knows about a value
// at compile time, without running the program.
//
// The lattice is MindSpore's AbstractBase family reduced to what MSL graphs
// carry (Myia's abstract values have the same shape):
//
//   AbsTensor  dtype, static shape and device    Tensor[Float32](2, 3)
//              (printed after the shape when     Tensor[Float32](2, 3)@Debug
//              not the CPU)
//   AbsScalar  a Python scalar's kind, and its   Int64, Int64=3, Bool=True,
//              value when it is a constant       Float32=0.5, String, None
//   AbsTuple   one abstract value per item       (Tensor[Float32](2), Int64)
//   AbsFunc    the set of functions a value may  Func
//              be: graphs (with the context
//              their free variables resolve in),
//              primitives, IR operators, host
//              objects, each possibly partially
//              applied or under J
//   AbsEnv     a sensitivity environment (AD)    Env
//   AbsState   the effect state token            State
//   AbsAny     unknown (a host call without a    Any
//              described result)
//   AbsBottom  not known yet: the result of a    Pending
//              recursive call still being
//              evaluated; never in a finished
//              result
//
// A Python float prints as Float32, the dtype it takes in a kernel when no
// tensor decides (the executor's rule); its constant is kept as a double.
//
// join() is the least upper bound used where control flow merges (the two
// branches of an if, the iterations of a loop): equal values join to
// themselves, scalar constants of one kind broaden to the kind, function
// sets unite, and tensors must agree exactly — MindSpore's rule that both
// branches of an if and every iteration of a loop keep a tensor's dtype and
// shape. A failed join reports where inside the value the two differ.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "kernels/tensor.h"
#include "lang/ir/func_graph.h"

namespace msl::jit {

struct AbsValue;

struct AbsTensor {
  kernels::DType dtype = kernels::DType::Float32;
  kernels::Dims shape;
  // Part of the type: a graph specialized for CPU arguments is not reused
  // for another device's.
  kernels::DeviceType device = kernels::DeviceType::CPU;
};

enum class ScalarKind : uint8_t { Bool, Int, Float, Str, None };

struct AbsScalar {
  ScalarKind kind = ScalarKind::None;
  // The value when known: bool, int64_t, double, std::string or NoneValue,
  // matching `kind`.
  std::optional<ir::ConstValue> value;
};

struct AbsTuple {
  std::vector<AbsValue> items;
};

// The specialization a graph's free variables resolve in (an instance of
// its parent graph). Opaque outside the specializer; compared by identity.
struct SpecContext;

// One function an AbsFunc may be.
struct AbsCallee {
  enum class Kind : uint8_t { Graph, Prim, Op, Host };
  Kind kind = Kind::Graph;
  ir::FuncGraph* graph = nullptr;        // Graph
  const SpecContext* context = nullptr;  // Graph: null for top-level graphs
  ir::PrimRef prim{};                    // Prim
  ir::IrOp op{};                         // Op
  ir::HostRef host;                      // Host
  std::vector<AbsValue> bound;           // leading arguments bound by partial()
  int j = 0;                             // how many times J was applied: a call returns (value, backpropagator)
  // Graph: the graph constant this value came from and the instance that
  // evaluated it (MindSpore's tracking id). Part of the identity, so each
  // use of a graph as a value is specialized on its own and the constant
  // can refer to the clone its calls reached.
  const ir::Node* origin = nullptr;
  const SpecContext* origin_context = nullptr;
};

struct AbsFunc {
  std::vector<AbsCallee> callees;  // at least one; no duplicates
};

struct AbsEnv {};
struct AbsState {};
struct AbsAny {};
struct AbsBottom {};

struct AbsValue {
  std::variant<AbsBottom, AbsTensor, AbsScalar, AbsTuple, AbsFunc, AbsEnv, AbsState, AbsAny> v;

  AbsValue() = default;
  template <class T>
  requires(!std::is_same_v<std::decay_t<T>, AbsValue>) AbsValue(T x) : v(std::move(x)) {}

  template <class T>
  bool is() const {
    return std::holds_alternative<T>(v);
  }
  template <class T>
  const T* get_if() const {
    return std::get_if<T>(&v);
  }
  bool is_bottom() const { return is<AbsBottom>(); }
  // A scalar whose value is known.
  bool is_constant() const;
};

bool operator==(const AbsValue& a, const AbsValue& b);
inline bool operator!=(const AbsValue& a, const AbsValue& b) { return !(a == b); }
bool operator==(const AbsCallee& a, const AbsCallee& b);

// Builders for the common cases.
AbsValue abs_tensor(kernels::DType dtype, kernels::Dims shape,
                    kernels::DeviceType device = kernels::DeviceType::CPU);
inline AbsValue abs_tensor(const kernels::TensorSpec& s) { return abs_tensor(s.dtype, s.shape, s.device); }
AbsValue abs_scalar(ScalarKind kind);
// A constant scalar: bool, int64_t, double, std::string or NoneValue (other
// constants have no scalar kind: see abstract_of_constant in specialize).
AbsValue abs_const(const ir::ConstValue& value);
AbsValue abs_tuple(std::vector<AbsValue> items);
AbsValue abs_graph_func(ir::FuncGraph* g, const SpecContext* context = nullptr);

// The scalar kind of a constant, or nullopt for tensors, functions and
// other non-scalars.
std::optional<ScalarKind> scalar_kind_of(const ir::ConstValue& v);

// How MindSpore prints a type after `:` on an IR line.
std::string to_string(const AbsValue& a);
std::string to_string(ScalarKind k);

// A string that differs whenever two values differ (functions by graph
// and context identity, primitives by attributes): the memo key of a call
// signature.
std::string identity_key(const AbsValue& a);

// Why a join failed: the tuple indices leading to the first mismatch and
// the two mismatching parts as printed.
struct JoinFailure {
  std::vector<size_t> path;
  std::string left, right;
};

// The least upper bound of `a` and `b`, or nullopt (with `why` filled when
// given) when they cannot merge. AbsBottom is the identity; AbsAny absorbs.
std::optional<AbsValue> join(const AbsValue& a, const AbsValue& b, JoinFailure* why = nullptr);

}  // namespace msl::jit
