// Internal to the lowering (lower.h): the per-function state shared by the
// statement half (lower.cpp: bodies, control flow, nested graphs) and the
// expression half (lower_expr.cpp: operators, calls, name resolution).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <unordered_set>
#include <string>
#include <vector>

#include "lang/ir/lower.h"

namespace msl::ir::lower_detail {

// Thrown at the first error; caught in Lowerer::lower.
struct LowerError {
  Diagnostic diag;
};

// One lexical scope: the bindings made in one graph. Lookups walk outwards,
// so a binding of an enclosing graph becomes a free variable.
struct Env {
  Env() = default;
  Env(Env* outer, std::map<std::string, Node*> initial) : parent(outer), vars(std::move(initial)) {}
  Env* parent = nullptr;
  std::map<std::string, Node*> vars;
  // Variables assigned a global or attribute name (`weights = self.weights`):
  // the node they were bound to then and the dotted name, so that graph mode
  // treats the variable as that name (a compile-time function's argument,
  // as MindSpore's TrainOneStepCell passes `weights` to GradOperation) for
  // as long as it still holds that node.
  std::map<std::string, std::pair<Node*, std::string>> aliases;
  Node* lookup(const std::string& name) const {
    for (const Env* e = this; e; e = e->parent) {
      auto it = e->vars.find(name);
      if (it != e->vars.end()) return it->second;
    }
    return nullptr;
  }
  // The dotted name `name` stands for; null when it is not an alias (any
  // more: reassigned since).
  const std::string* alias(const std::string& name) const {
    Node* now = lookup(name);
    for (const Env* e = this; e; e = e->parent) {
      auto it = e->aliases.find(name);
      if (it != e->aliases.end()) return it->second.first == now ? &it->second.second : nullptr;
    }
    return nullptr;
  }
  // Every alias still in force, for the compile-time evaluator, and every
  // variable bound to a constant number, string, bool or None (an unrolled
  // loop's `i`), as its Python literal.
  StaticAliases all_aliases() const {
    StaticAliases out;
    std::set<std::string> seen;
    for (const Env* e = this; e; e = e->parent) {
      for (auto& [name, a] : e->aliases)
        if (seen.insert(name).second)
          if (const std::string* d = alias(name)) out.emplace_back(name, *d);
      for (auto& [name, n] : e->vars)
        if (!seen.count(name) && lookup(name) == n)
          if (std::optional<std::string> lit = python_literal(n)) {
            seen.insert(name);
            out.emplace_back(name, *lit);
          }
    }
    return out;
  }
  // `n`'s value as a Python literal when it is a constant number, string,
  // bool or None.
  static std::optional<std::string> python_literal(const Node* n);
};

using Stmts = std::vector<const ast::Stmt*>;
Stmts pointers(const ast::Body& body);

// The loop whose body is being lowered (lower_loop.cpp): where `continue`,
// `break` and falling off the end of the body go.
struct LoopFrame {
  // `continue`: a tail call of it with the next values (for an unrolled
  // loop: the next item's graph, or after the last the exit/continuation).
  FuncGraph* loop = nullptr;
  Node* counter = nullptr;  // for-range: the counter parameter (null: while)
  Node* step = nullptr;
  std::vector<std::string> carried;  // the loop-carried names, in parameter order
  // A loop whose body returns: the graph of the statements after the loop
  // (parameters: the carried names), tail-called by `break` and by the exit.
  // Null: `break` returns the carried values as the loop's result tuple.
  FuncGraph* after = nullptr;
};

// What every function lowered by one Lowerer shares.
struct LowerState {
  IrModule& m;
  FuncGraph* root;
  std::unordered_map<const void*, FuncGraph*>& done;
  std::unordered_map<const FuncGraph*, std::vector<Node*>>& defaults;  // per graph, of its last parameters
  // The effect chain of each graph (lower.h, "Effects"): its current state
  // token and the last effect (print or sequenced call) on it.
  std::unordered_map<const FuncGraph*, std::pair<Node*, Node*>> effects;
  // Graphs of functions whose bodies have effects (lower.h, "Effects").
  std::unordered_set<const FuncGraph*>& effectful;
  // Dicts (lower_dict.cpp): a dict is the tuple of its values, its
  // constant keys known here, per node; a graph that returns a dict makes
  // its calls dicts with the same keys.
  std::unordered_map<const Node*, std::vector<ConstValue>>& dicts;
  std::unordered_map<const FuncGraph*, std::vector<ConstValue>>& dict_results;
  // The keys of per-call-shape graphs of variadic defs (lower_variadic.cpp):
  // stable addresses for `done`.
  std::set<std::string>& shape_keys;
  // The function the host asked for (its dict result goes back as a dict).
  const void* entry = nullptr;
};

// The shape of a call of a def with *args, **kwargs or keyword-only
// parameters (lower_variadic.cpp): positional arguments beyond the named
// parameters (bound to *args as a tuple) and keywords no parameter takes
// (bound to **kwargs as a dict of constant keys).
struct CallShape {
  size_t extra_positional = 0;
  std::vector<std::string> extra_keywords;
};
bool is_variadic(const ResolvedName& r);
// Python's == between constant scalars (1 == 1.0 == True, "a" == "a"), or
// nullopt for anything else (tensors, host objects: only the types decide
// those). lower_dict.cpp.
std::optional<bool> constant_equal(const ConstValue& a, const ConstValue& b);

// `range(...)` of the builtin (not a local named range).
bool is_range_call(const ast::Expr& it, const Env& env);
// A call of the builtin `name` (not shadowed by a local or a function of
// the file).
bool is_builtin_call(const ast::Call& c, const char* name, const Env& env, const Resolver& resolve);

class FnLowerer {
 public:
  FnLowerer(LowerState& st, ContextPtr ctx)
      : st_(st), m_(st.m), ctx_(std::move(ctx)), src_(ctx_->source), resolve_(ctx_->resolve) {}

  // Fills `g` (already created) from `def`, with `env` as the scope of g;
  // the first `bound` parameters are left to the context (`self`).
  void lower_def_into(FuncGraph* g, const ast::FunctionDef& def, Env& env, size_t bound = 0,
                      const CallShape* shape = nullptr);
  // The graph of a resolved function: lowered on first use, then shared
  // (a variadic def: per call shape).
  FuncGraph* function_graph(const ResolvedName& r, const CallShape* shape = nullptr);
  // A graph of `arity` parameters calling variadic def `r` with them as
  // its positional arguments (the host's call of the root).
  FuncGraph* variadic_entry(const ResolvedName& r, size_t arity);

  // --- expressions (lower_expr.cpp)
  Node* expr(const ast::Expr& e, FuncGraph* g, Env& env, const std::string& name = "");
  // x op y as a kernel primitive application (an error for `<<`, `|`, ...).
  Node* binop(ast::BinOp op, Node* x, Node* y, const Span& op_span, const Span& span, FuncGraph* g,
              const std::string& name);
  Node* constant(ConstValue v, const Span& s) { return m_.new_constant(std::move(v), nullptr, loc(s)); }
  Loc loc(const Span& s) { return s.valid() && src_ ? m_.loc(src_->name(), s.line, s.col, ctx_->scope) : Loc{}; }
  [[noreturn]] void fail(const Span& s, const std::string& msg, const std::string& help = "") const;
  [[noreturn]] void unsupported(const Span& s, const std::string& what) const;

 private:
  // --- statements (lower.cpp). Return true when the statements set g's
  // output (return, break, continue, or control flow that contains them).
  bool stmts(const Stmts& ss, FuncGraph* g, Env& env);
  // The statements, then what falling off their end means here: the next
  // iteration inside a loop body, `return None` elsewhere.
  void finish(const Stmts& ss, FuncGraph* g, Env& env, const Span& s);
  void assign(const ast::Expr& target, Node* value, FuncGraph* g, Env& env);
  bool if_stmt(const ast::If& s, const Stmts& rest, FuncGraph* g, Env& env);
  FuncGraph* nested_def(const ast::FunctionDef& def, FuncGraph* g, Env& env);

  // --- loops (lower_loop.cpp)
  // while / for-range (true when the loop's body returns: the statements
  // after it are then lowered into its continuation), for over a sequence.
  bool loop_stmt(const ast::Stmt& s, const Stmts& rest, FuncGraph* g, Env& env);
  bool for_sequence(const ast::For& f, const Stmts& rest, FuncGraph* g, Env& env);
  // The items of a sequence of known length (`what` names the construct
  // iterating it in the error for one of unknown length).
  std::vector<Node*> sequence_items(const ast::Expr& seq, FuncGraph* g, Env& env, const char* what = "'for' loop");
  Node* comprehension(const ast::Expr& elt, const std::vector<ast::Comprehension>& gens, IrOp make,
                      const ast::Expr& e, FuncGraph* g, Env& env, const std::string& name);
  void loop_else(const ast::Body& orelse, FuncGraph* xg, Env& xenv, const LoopFrame& frame, const Span& s);
  void loop_continue(FuncGraph* g, Env& env, const Span& s);
  void loop_break(FuncGraph* g, Env& env, const Span& s);
  // g's output is the call (callee, args...), sequenced after g's effects.
  void tail_call(FuncGraph* g, std::vector<Node*> call, const Span& s);

  // --- expressions (lower_expr.cpp)
  Node* call(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name);
  // The call (callee, args...) of expression `c`, joining g's effect chain
  // when it is an effect or the function prints (lower.h, "Effects").
  Node* call_node(std::vector<Node*> call, FuncGraph* g, const std::string& name, const Loc& l,
                  const ast::Call* c);

  // --- variadic calls (lower_variadic.cpp)
  // The arguments of call `c` with `*xs` and `**d` of known length spliced
  // in; false when a splice is of a value of unknown length.
  void call_arguments(const ast::Call& c, FuncGraph* g, Env& env, std::vector<Node*>& pos,
                      std::vector<std::pair<std::string, Node*>>& kw);
  // `*xs` / `**d` of call argument `a`, appended to pos / kw.
  void splice_argument(const ast::Arg& a, FuncGraph* g, Env& env, std::vector<Node*>& pos,
                       std::vector<std::pair<std::string, Node*>>& kw);
  // A call of variadic def `r`: its graph for this call shape, the
  // arguments bound to its parameters.
  Node* variadic_call(const ResolvedName& r, std::vector<Node*> pos, std::vector<std::pair<std::string, Node*>> kw,
                      const Span& s, FuncGraph* g, const std::string& name, const ast::Call* c);

  // --- dicts (lower_dict.cpp)
  // The keys of dict `n`, or null when n is no dict.
  const std::vector<ConstValue>* dict_keys(const Node* n) const;
  Node* make_dict(std::vector<ConstValue> keys, std::vector<Node*> values, FuncGraph* g, const Span& s,
                  const std::string& name);
  Node* dict_display(const ast::Dict& d, FuncGraph* g, Env& env, const std::string& name);
  // d[key] for a constant key (a KeyError now when it is missing).
  Node* dict_item(Node* d, const Node* key, const Span& s, FuncGraph* g, const std::string& name);
  // d[key] = v: d's name is rebound to the updated dict.
  void dict_store(const ast::Subscript& s, Node* d, Node* v, FuncGraph* g, Env& env);
  // d.get/keys/values/items/copy/update(...), or null when `c` is no
  // method call on a dict.
  Node* dict_method(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name);
  // dict(...) and len(d): null when `c` is neither.
  Node* dict_builtin(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name);
  // `x in seq` for a dict (its keys), a tuple or list of known length or a
  // host sequence: an `or` of `==` (a constant when both sides are).
  Node* membership(Node* x, const ast::Expr& seq, const Span& s, FuncGraph* g, Env& env);
  // A value returned to the host: a dict becomes the host's dict.
  Node* returned_value(Node* v, FuncGraph* g, const Span& s);
  // Dict `v` as the host's dict (a MakeDict adapter call), for a call
  // argument or print; anything else as it is.
  Node* host_dict(Node* v, FuncGraph* g, const Span& s);

  // --- raise and assert (lower_raise.cpp)
  // The Raise adapter called with `args` (exception[, message]) on g's
  // effect chain.
  void raise_effect(std::vector<Node*> args, FuncGraph* g, const Span& s);
  void raise_stmt(const ast::Raise& r, FuncGraph* g, Env& env);
  void assert_stmt(const ast::Assert& a, FuncGraph* g, Env& env);

  // --- tuples and lists of known length (lower_sequence.cpp)
  // t1 + t2, t * n of displays; null when the operands are not such.
  Node* sequence_binop(ast::BinOp op, Node* x, Node* y, const Span& s, FuncGraph* g, const std::string& name);
  // t[a:b:c] of a display with constant bounds; null otherwise.
  Node* sequence_slice(Node* v, const ast::Subscript& s, FuncGraph* g, Env& env, const std::string& name);
  // `a, *rest = t` of a display.
  void starred_assign(const std::vector<ast::ExprPtr>& targets, Node* v, FuncGraph* g, Env& env, const Span& s);
  // l.append(v), l.extend(t), l.insert(i, v), l.pop([i]) on a local list of
  // known length rebind l (null when `c` is no such call); a mutating
  // list method on a list of unknown length is a GraphModeError.
  Node* list_method(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name);
  // f"...{x}...": str.format of the values, a host adapter call.
  Node* fstring(const ast::FString& f, FuncGraph* g, Env& env, const std::string& name);

  // --- host adapters (lower_host.cpp)
  // A dotted global name (`ops.relu`, `self.fc`) that no Parameter is a
  // prefix of: resolved now. Anything else is an attribute of a value.
  bool global_attribute(const ast::Expr& e, const Env& env, std::string& dotted) const;
  Node* adapter(const HostAdapter& h, const Span& s, const std::string& what);
  Node* value_attribute(const ast::Attribute& a, FuncGraph* g, Env& env, const std::string& name);
  Node* method_call(const ast::Call& c, FuncGraph* g, Env& env, const std::string& name);
  Node* keyword_call(Node* callee, std::vector<Node*> args, std::vector<std::pair<std::string, Node*>> kwargs,
                     const ast::Call& c, FuncGraph* g, const std::string& name);
  Node* subscript(const ast::Subscript& s, FuncGraph* g, Env& env, const std::string& name);
  // An item of a compile-time value at a constant index (`self.cfg["depth"]`,
  // `self.blocks[1]`), evaluated now; null when `s` is not one.
  Node* static_subscript(const ast::Subscript& s, const Env& env);
  // Whether `s` is such an item: a compile-time index (not a slice) into
  // host data (a global or attribute naming a constant or sequence, not a
  // Parameter, which is read when the graph runs) or into another
  // compile-time value.
  bool static_item(const ast::Subscript& s, const Env& env) const;
  // `x[index] = v` with x a local name: x is rebound to the functional
  // update (a SetItem adapter call), as MindSpore's graph mode does.
  void store_subscript(const ast::Subscript& s, Node* v, FuncGraph* g, Env& env);
  // The index parts of `s` into h.index, their values appended to args.
  void index_parts(const ast::Subscript& s, FuncGraph* g, Env& env, HostAdapter& h, std::vector<Node*>& args);
  Node* lambda(const ast::Lambda& l, FuncGraph* g, Env& env);
  Node* if_exp(const ast::IfExp& e, FuncGraph* g, Env& env, const std::string& name);
  Node* resolve_global(const std::string& dotted, const Span& s);
  // The truth of a condition known at compile time (a constant, `not`,
  // arithmetic, comparisons or and/or of constants: `if self.has_bias:`,
  // `if i % 2 == 1` for an unrolled `i`), or nullopt.
  // Such an `if` lowers only the branch taken, so the other may name
  // attributes that do not exist (MindSpore's behaviour).
  static std::optional<bool> static_truth(const Node* cond);
  // The number of items of `range(...)` when its arguments are compile-time
  // values and there are at most kMaxUnrolledRange; -1 otherwise.
  static constexpr int64_t kMaxUnrolledRange = 64;
  int64_t constant_range_count(const ast::Expr& range_call, const Env& env) const;
  // The value of `n` when it is Python arithmetic on constant numbers,
  // strings or None (`i % 2 == 1` with `i` an unrolled loop's item);
  // nullopt otherwise.
  static std::optional<ConstValue> static_value(const Node* n);
  // Effects: the current state of g (null: none yet), appending an effect,
  // and setting g's output after its effects.
  Node* state_of(FuncGraph* g);
  void sequence(FuncGraph* g, Node* effect);
  void set_out(FuncGraph* g, Node* out);
  // Orders a call (callee, args...) after g's effects so far.
  void order_after_state(FuncGraph* g, std::vector<Node*>& call);
  Node* print_call(const ast::Call& c, FuncGraph* g, Env& env);
  Node* resolved_node(const ResolvedName& r, const std::string& what, const Span& s);
  // A call that can be evaluated at compile time: its callee is a Static
  // function (or such a call) and its arguments are literals or globals.
  bool is_static_call(const ast::Expr& e, const Env& env) const;
  bool is_static_arg(const ast::Expr& e, const Env& env) const;
  // Keyword arguments and defaults of a call of graph `g`, as positionals.
  void bind_graph_args(FuncGraph* g, std::vector<Node*>& args,
                       std::vector<std::pair<std::string, Node*>>& kwargs, const ast::Call& c);
  bool dotted_name(const ast::Expr& e, const Env& env, std::string& out) const;
  kernels::AttrValue attr_value(const ast::Expr& e, const std::string& kind, const Env& env) const;

 private:
  LowerState& st_;
  // The function mentions print: every call is sequenced (the callee may
  // print too).
  bool effects_ = false;
  // Effects sequenced so far in this function: a count that grows while a
  // branch or loop body is lowered means the if/loop call is an effect.
  size_t effect_count_ = 0;
  // The call whose value an expression statement discards: an effect.
  const ast::Call* discarded_call_ = nullptr;
  LoopFrame* loop_ = nullptr;  // the innermost loop whose body is being lowered
  bool entry_ = false;         // lowering the function the host asked for (LowerState::entry)
  FuncGraph* fn_graph_ = nullptr;  // the graph of the function (not of a branch or loop in it)
  IrModule& m_;
  ContextPtr ctx_;
  SourcePtr src_;
  Resolver resolve_;
};

// Names bound by the statements (assignment targets, loop targets, nested
// defs), not descending into nested function bodies; sorted.
std::set<std::string> assigned_names(const ast::Body& body);
bool contains_return(const ast::Body& body);
// A return anywhere, or a break/continue of the loop the body belongs to
// (not of loops nested in it): control leaves the statement list.
bool contains_exit(const ast::Body& body);

}  // namespace msl::ir::lower_detail
