// Lowering: an MSL function definition (ast::FunctionDef) to an ANF
// FuncGraph in an IrModule — the first step of graph mode.
//
// Scheme (MindSpore's parser / Myia's "classic ANF"):
//   * Variables are SSA: an assignment rebinds the name to the node computing
//     the value. Scopes form a chain (graph → enclosing graph), so a name
//     bound in an enclosing graph is used directly: a free variable.
//   * Operators are kernel primitive applications (`+` → add, `@` → matmul,
//     `<` → less, `-x` → neg, `not x` → logical_not); tuples are make_tuple /
//     tuple_getitem with a constant index.
//   * Names not bound locally go to the caller's Resolver: a kernel primitive
//     (keyword arguments naming a declared attribute become attributes;
//     a capitalized name such as `P.ReLU(...)` makes the primitive value),
//     another function (lowered once into the same module, called as a
//     graph constant), or unknown (an error).
//   * if/elif/else: each branch is a graph nested in the current one; the
//     names assigned in the branches are returned as a tuple and unpacked
//     after `switch(cond, @then, @else)()`. When a branch contains `return`,
//     the statements after the `if` are lowered into both branches and the
//     branch graphs return the function's result.
//   * while / for-range: a tail-recursive loop graph whose parameters are the
//     loop-carried variables (names assigned in the body that exist before
//     the loop): `loop(vars) = switch(cond, @body, @exit)()`, the body graph
//     ends in a call of `@loop` (as does `continue`), the exit graph (and
//     `break`) returns the variables as a tuple, unpacked after the loop.
//     An `if` whose branch leaves the body takes the rest of the body into
//     its branches. When the body returns from the function, the statements
//     after the loop become a continuation graph that the exit and `break`
//     call, and the loop's result is the function's (lower_loop.cpp).
//     A loop's else clause runs in the exit graph. Nothing is unrolled.
//   * for over a tuple/list of known length (a display, a local tuple, a
//     global list such as `self.layers`): unrolled, the body lowered once
//     per item (with break/continue/return: one graph per item, chained by
//     tail calls).
//     Also unrolled: enumerate()/zip() of such sequences and range() of
//     constants (in comprehensions and zip), and `x in seq` (an `or` of
//     `==`, a constant when both sides are).
//   * Dicts with constant keys (lower_dict.cpp): the tuple of the values,
//     the keys known here, so d[k], d.get, len(d), `k in d` and d.items()
//     are decided now; a dict the host asked for is returned as a dict.
//   * A def with *args, **kwargs or keyword-only parameters is lowered once
//     per call shape (lower_variadic.cpp): `args` is the tuple of the extra
//     positional arguments, `kwargs` the dict of the extra keywords;
//     `f(*xs, **d)` splices tuples and dicts of known length.
//   * Lists and tuples of known length (lower_sequence.cpp): `t1 + t2`,
//     `t * n`, `t[a:b]`, `a, *rest = t`, and `l.append(v)` (extend,
//     insert, pop, clear, reverse) rebinding a local list; on a list of
//     unknown length (loop-carried) these are errors, never lost updates.
//     f-strings are str.format host adapter calls.
//   * `raise` and `assert` (lower_raise.cpp): a Raise adapter call on the
//     effect chain, on the path that reaches it.
//   * Nested def and lambda: graphs nested in the current one (closures).
//   * Effects: `print(...)` becomes print(args..., u) and `assign(p, v)`
//     assign(p, v, u) on a per-graph chain of state tokens
//     (u' = update_state(u, effect)), and the graph's output depends on the
//     last state, so effects run in program order and no pass can drop
//     them. A call joins the chain (its first argument depends on u) when
//     its value is discarded (an expression statement: `optimizer(grads)`,
//     `self.log.append(y)`), when its callee is a graph with effects, or,
//     once the function has had an effect (or mentions print), any call;
//     if/loop calls likewise. A function with effects makes its callers'
//     calls of it effects, so an update deep in an optimizer Cell reached
//     from a plain function is kept.
//   * Anything else is a GraphModeError diagnostic naming the construct and
//     its position, with the help "move it out of construct or use PyNative
//     mode". Lowering of one function stops at its first error.
// Every Apply gets the source location of its AST node, and the debug name
// of the variable it is assigned to.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kernels/primitives.h"
#include "lang/ast.h"
#include "lang/diagnostics.h"
#include "lang/ir/ir_module.h"

namespace msl::ir {

struct ResolvedName;
// Called with a plain (`relu`) or dotted (`ops.relu`, `P.ReLU`, `self.fc1`)
// name that is not a local variable.
using Resolver = std::function<ResolvedName(const std::string&)>;
// Local names that stand for a global or attribute name, bound by a plain
// assignment (`weights = self.weights`): (local name, dotted name).
using StaticAliases = std::vector<std::pair<std::string, std::string>>;
// Evaluates a call expression at compile time (a call of a Kind::Static
// callee whose arguments are constants or global names, e.g.
// `ops.GradOperation()(f)`) and says what the value means. The aliases
// are the local names the expression may use, bound to their dotted names'
// values.
using Evaluator = std::function<ResolvedName(const ast::Expr&, const StaticAliases&)>;

// A host callable that stands for an expression the IR has no operator
// for: reading an attribute of a value (`x.shape`), calling a method of a
// value (`x.sum(axis=1)`), calling a library function with keyword
// arguments (`ops.softmax(x, axis=-1)`) and subscripting with slices, None,
// Ellipsis or computed indices (`x[:, i]`). The lowered call passes the
// expression's values as positional arguments; the adapter knows the rest
// (the attribute's name, the keywords, the shape of the index). Graph mode
// treats the adapter like any library function: specialization traces it
// at the argument types, expansion inlines the traced primitives, autodiff
// differentiates the trace, and what cannot be traced runs eagerly.
struct HostAdapter {
  enum class Kind {
    GetAttr,  // (value) -> value.attr
    Method,   // (value, args..., kwvalues...) -> value.attr(args..., **kw)
    Call,     // ([callee,] args..., kwvalues...) -> callee(args..., **kw)
    GetItem,  // (value, index values...) -> value[index]
    SetItem,  // (value, index values..., v) -> value with value[index] = v, a new value (value unchanged)
    MakeDict, // (values...) -> {keys[0]: values[0], ...}: a dict the graph returns to its caller
    Raise,    // (exception[, message]) -> raises exception (called with message when given); an effect
  };
  // One item of a subscript's index. Value and present slice bounds take
  // the next argument in order.
  struct IndexPart {
    enum class Kind { Value, None, Ellipsis, Slice } kind = Kind::Value;
    bool lower = false, upper = false, step = false;  // Slice: which bounds are given
  };
  Kind kind = Kind::Call;
  std::string attr;                   // GetAttr, Method
  ConstValue callee;                  // Call: the callee; NoneValue: it is the first argument
  std::vector<std::string> keywords;  // Method, Call: names of the last keywords.size() arguments
  std::vector<IndexPart> index;       // GetItem, SetItem
  bool index_is_tuple = false;        // GetItem, SetItem: x[a, b] rather than x[a]
  std::vector<ConstValue> keys;       // MakeDict: the constant keys, in insertion order
};
// Makes the host callable for an adapter (a HostRef constant).
using HostAdapterMaker = std::function<ConstValue(const HostAdapter&)>;

// What names mean inside one function: its file, its globals (the
// resolver) and compile-time evaluation. Functions from other files (or
// bound methods, whose `self` is known) bring their own context.
struct LowerContext {
  SourcePtr source;
  Resolver resolve;
  Evaluator evaluate;        // may be null: static calls are then errors
  HostAdapterMaker adapter;  // may be null: value attributes, keyword calls of host functions and
                             // slicing are then errors
  // The Cell scope of the nodes lowered here (Loc::scope); empty: none (a
  // function, a library helper: inlining gives them their caller's).
  std::string scope;
};
using ContextPtr = std::shared_ptr<const LowerContext>;

// What a name that is not a local variable means, as the caller sees it.
struct ResolvedName {
  enum class Kind {
    Unknown,
    Primitive,  // a kernel primitive (`attrs` set for a primitive object)
    Function,   // a function to lower into the same module (def or lambda)
    Constant,   // a compile-time value: number, string, tensor, host object
    Node,       // an existing node, e.g. a parameter of the root graph
    Static,     // a compile-time function: calls of it are evaluated
    Sequence,   // a Python list or tuple of values (`self.layers`): `items`
  };
  Kind kind = Kind::Unknown;
  kernels::Prim prim{};
  kernels::Attrs attrs;
  // Function:
  const ast::FunctionDef* def = nullptr;
  const ast::Lambda* lambda = nullptr;
  ContextPtr context;             // names in its body; null: the caller's
  const void* key = nullptr;      // identity for sharing; null: the definition
  std::string name;               // graph name; empty: the def's name
  size_t bound = 0;               // leading parameters bound by the context (`self`)
  std::vector<ConstValue> defaults;  // of the last defaults.size() parameters
  // One per keyword-only parameter: its default (nullopt: required).
  std::vector<std::optional<ConstValue>> kwonly_defaults;
  // A def with *args, **kwargs or keyword-only parameters is lowered once
  // per call shape (lower_variadic.cpp). Set when the caller is the host
  // with this many positional arguments (the root graph): the result is
  // then a graph of exactly that many parameters.
  std::optional<size_t> positional_arity;
  // Constant / Node:
  ConstValue value;
  Node* node = nullptr;
  // A dtype object (msl.float32): usable as a primitive's dtype attribute.
  std::optional<kernels::DType> dtype;
  // A class: a call of it whose arguments are all compile-time constants
  // (`ops.Softmax(axis=0)`, `msl.Tensor([1.0, 2.0])`) is evaluated then.
  bool is_class = false;
  // Sequence: what each item means. Graph mode iterates a Sequence in a
  // `for` loop (unrolled) and reads it as ints for attributes; as any other
  // value it is `value` (the host's list, if given). A Function may have
  // items too (a SequentialCell: called, it runs construct; iterated in a
  // `for` loop, its cells).
  std::vector<ResolvedName> items;
};

// Lowers function definitions into one module. Functions reached through the
// resolver are lowered once (per ResolvedName::key) and shared, so recursion
// and mutual calls produce one graph each.
class Lowerer {
 public:
  Lowerer(IrModule& m, SourcePtr source, Resolver resolve)
      : Lowerer(m, std::make_shared<LowerContext>(
                       LowerContext{std::move(source), std::move(resolve), nullptr, nullptr, {}})) {}
  Lowerer(IrModule& m, ContextPtr context) : module_(m), context_(std::move(context)) {}

  // Graphs of top-level functions are nested in `root` (null: top-level),
  // so they can use the root's parameters (e.g. network weights) as free
  // variables.
  void set_root(FuncGraph* root) { root_ = root; }

  // The graph of `def`, or null after an error (appended to errors(), once:
  // a function that failed, directly or through a function it calls, stays
  // failed). After an error the module may hold partial graphs (without an
  // output): print or run it only when errors() is empty.
  FuncGraph* lower(const ast::FunctionDef& def);
  // The graph of a resolved function (Kind::Function), same contract.
  FuncGraph* lower(const ResolvedName& fn);
  const std::vector<Diagnostic>& errors() const { return errors_; }
  // Whether callers put calls of `g` on their effect chain (it has effects
  // or calls a graph that has). A graph built around a lowered one outside
  // the lowering (graph mode's mixed-precision input casts) is marked like
  // the graph it calls, or its effects would hang off no chain.
  bool effectful(const FuncGraph* g) const { return effectful_.count(g) > 0; }
  void mark_effectful(const FuncGraph* g) { effectful_.insert(g); }

 private:
  IrModule& module_;
  ContextPtr context_;
  FuncGraph* root_ = nullptr;
  std::unordered_map<const void*, FuncGraph*> done_;
  std::unordered_map<const FuncGraph*, std::vector<Node*>> defaults_;
  std::unordered_set<const FuncGraph*> effectful_;
  std::unordered_set<const void*> failed_;
  std::vector<Diagnostic> errors_;
  std::unordered_map<const Node*, std::vector<ConstValue>> dicts_;
  std::unordered_map<const FuncGraph*, std::vector<ConstValue>> dict_results_;
  std::set<std::string> shape_keys_;
};

// Convenience: one function with its own Lowerer.
struct LowerResult {
  FuncGraph* graph = nullptr;
  std::vector<Diagnostic> errors;
};
LowerResult lower_function(IrModule& m, const SourcePtr& source, const ast::FunctionDef& def, const Resolver& resolve);

// The resolver `msl --emit=anf` uses: names of `defs` (top-level functions)
// → their definitions; `ops.X`, `msl.ops.X`, `P.X` and bare primitive names
// → kernel primitives by name (a capitalized `X` is matched in snake case,
// `ReLU` → relu, `ReduceSum` → reduce_sum).
Resolver default_resolver(const std::vector<const ast::FunctionDef*>& defs);

}  // namespace msl::ir
