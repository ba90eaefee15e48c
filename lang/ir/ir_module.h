// IrModule: the owner of all graphs and nodes of one compilation.
//
// Nodes and graphs are allocated here and live as long as the module, so
// the rest of the IR uses plain pointers and passes never free anything (a
// dead node is simply unreachable). Node ids are dense from 0, so a side
// table can be a vector indexed by id. Source file names are interned so a
// node's Loc is three words.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "lang/ir/func_graph.h"
#include "lang/ir/node.h"

namespace msl::ir {

class IrModule {
 public:
  IrModule();
  IrModule(const IrModule&) = delete;
  IrModule& operator=(const IrModule&) = delete;

  // A new empty graph. `name` is made unique within the module (and
  // sanitized to [A-Za-z0-9_] so the printer's `@name` parses back).
  FuncGraph* new_graph(std::string_view name, FuncGraph* parent = nullptr, Loc loc = {});
  Node* new_param(FuncGraph* g, std::string name = "", Loc loc = {});
  // `inputs` must be non-empty (inputs[0] is the callee).
  Node* new_apply(FuncGraph* g, std::vector<Node*> inputs, std::string name = "", Loc loc = {});
  // `g` may be null: a module-level constant.
  Node* new_constant(ConstValue v, FuncGraph* g = nullptr, Loc loc = {});

  // Takes a graph out of the module's list (a pass found it dead): it no
  // longer prints or counts as anyone's nested graph. Its memory stays, so
  // pointers to it remain valid.
  void remove_graph(FuncGraph* g);

  // Graphs in creation order.
  const std::vector<FuncGraph*>& graphs() const { return graph_list_; }
  FuncGraph* find_graph(std::string_view name) const;
  bool owns(const FuncGraph* g) const { return g && &g->module() == this; }
  // Unique for the process (never reused), unlike the module's address: a
  // key for caches that outlive modules.
  uint64_t serial() const { return serial_; }

  // One past the largest node id: the size of an id-indexed side table.
  uint32_t num_nodes() const { return static_cast<uint32_t>(nodes_.size()); }

  // A location whose file name (and scope, when not empty) are interned in
  // this module.
  Loc loc(std::string_view file, uint32_t line, uint32_t col = 0, std::string_view scope = {});
  // `l` with `scope` (interned here; empty: none).
  Loc with_scope(Loc l, std::string_view scope);

 private:
  uint64_t serial_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<FuncGraph>> graphs_;
  std::vector<FuncGraph*> graph_list_;
  std::unordered_map<std::string, FuncGraph*> by_name_;
  std::unordered_set<std::string> files_;
};

}  // namespace msl::ir
