// FuncGraph: one function in A-normal form, and the analyses over graphs
// that every pass needs (computed on demand, never cached on the graph).
//
// A graph has a name, its parameters, an output node (the `return` value),
// an optional parent (the enclosing graph of a nested function or lambda),
// flags (e.g. is_bprop) and a source location. Its body is not stored: it is
// the set of nodes owned by the graph that are reachable from the output, so
// dead nodes vanish without any bookkeeping.
//
// Nesting and closures: a node owned by graph G that is used inside graph H
// nested in G (directly or through deeper nesting) is a free variable of H.
// The nesting tree is given by parent(); free_variables() computes the set.
//
// Graphs are created and owned by an IrModule (ir_module.h); the builder
// methods here forward to it.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lang/ir/node.h"

namespace msl::ir {

class FuncGraph {
 public:
  FuncGraph(const FuncGraph&) = delete;
  FuncGraph& operator=(const FuncGraph&) = delete;

  IrModule& module() const { return *module_; }
  uint32_t id() const { return id_; }
  // Unique within the module (the module appends _1, _2... on clashes), so
  // the printer's `@name` identifies the graph.
  const std::string& name() const { return name_; }
  const Loc& loc() const { return loc_; }
  const std::vector<Node*>& params() const { return params_; }
  Node* output() const { return output_; }
  void set_output(Node* out) { output_ = out; }
  FuncGraph* parent() const { return parent_; }
  void set_parent(FuncGraph* p) { parent_ = p; }
  // Graph-level flags and attributes, e.g. {is_bprop=True}.
  kernels::Attrs& flags() { return flags_; }
  const kernels::Attrs& flags() const { return flags_; }
  // True when `anc` is this graph or encloses it.
  bool is_nested_in(const FuncGraph* anc) const;

  // Builders (forward to the module).
  Node* add_param(std::string name = "", Loc loc = {});
  Node* apply(std::vector<Node*> inputs, std::string name = "", Loc loc = {});
  Node* apply(kernels::Prim p, std::vector<Node*> args, std::string name = "", Loc loc = {}, kernels::Attrs attrs = {});
  Node* apply(IrOp op, std::vector<Node*> args, std::string name = "", Loc loc = {});
  Node* constant(ConstValue v, Loc loc = {});

 private:
  friend class IrModule;
  FuncGraph(IrModule* m, uint32_t id, std::string name, FuncGraph* parent, Loc loc)
      : module_(m), id_(id), name_(std::move(name)), loc_(loc), parent_(parent) {}

  IrModule* module_;
  uint32_t id_;
  std::string name_;
  Loc loc_;
  std::vector<Node*> params_;
  Node* output_ = nullptr;
  FuncGraph* parent_ = nullptr;
  kernels::Attrs flags_;
};

// The nodes owned by `g` reachable from its output (and its parameters,
// which come first, in order), inputs before users. Traversal stops at
// nodes owned by other graphs (free variables) and never enters the bodies
// of graphs referenced by constants. Constants owned by `g` are included;
// graph-less constants are not.
std::vector<Node*> topo_order(const FuncGraph& g);

// The graphs whose parent is `g`, in module creation order.
std::vector<FuncGraph*> children(const FuncGraph& g);
// `g` and every graph nested in it, parents before children (preorder).
std::vector<FuncGraph*> nested_graphs(const FuncGraph& g);

// Nodes owned by strict ancestors of `g` that are used by `g` or by any graph
// nested in `g` — or by graphs those reference as constants (transitively),
// since making such a closure needs its captures — in first-use order: the
// values a closure of `g` captures.
std::vector<Node*> free_variables(const FuncGraph& g);

// Who uses a node: (user, input index) pairs.
using Users = std::vector<std::pair<Node*, int>>;
using UsersMap = std::unordered_map<const Node*, Users>;
// Users of every node referenced from `g` and its nested graphs (a side
// table: rebuilt on demand, never stored on nodes).
UsersMap compute_users(const FuncGraph& g);

// Deep copy of `g` and every graph nested in it. Nodes of `g`'s enclosing
// graphs stay shared (the clone has the same free variables); references to
// cloned graphs are redirected to the clones. The clone is named
// `name` (or g's name; made unique by the module) and has g's parent.
FuncGraph* clone_graph(const FuncGraph& g, std::string name = "");

}  // namespace msl::ir
