// IrModule: allocation of graphs and nodes, graph-name uniqueness and
// file-name interning.
#include "lang/ir/ir_module.h"

#include <algorithm>
#include <atomic>

#include <stdexcept>

namespace msl::ir {

IrModule::IrModule() {
  static std::atomic<uint64_t> next{1};
  serial_ = next++;
}

namespace {
// Graph names appear as `@name` in printed IR; anything outside
// [A-Za-z0-9_] (e.g. from a lambda's `<lambda>`, or a dot, which would
// be read as `@graph.%node`) becomes '_'.
std::string sanitize(std::string_view name) {
  std::string s(name);
  for (char& c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
  if (s.empty()) s = "graph";
  return s;
}
}  // namespace

FuncGraph* IrModule::new_graph(std::string_view name, FuncGraph* parent, Loc loc) {
  std::string base = sanitize(name), unique = base;
  for (int i = 1; by_name_.count(unique); ++i) unique = base + "_" + std::to_string(i);
  auto id = static_cast<uint32_t>(graphs_.size());
  graphs_.emplace_back(new FuncGraph(this, id, unique, parent, loc));
  FuncGraph* g = graphs_.back().get();
  graph_list_.push_back(g);
  by_name_[unique] = g;
  return g;
}

Node* IrModule::new_param(FuncGraph* g, std::string name, Loc loc) {
  auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.emplace_back(new Node(NodeKind::Parameter, id, g, loc, std::move(name)));
  g->params_.push_back(nodes_.back().get());
  return nodes_.back().get();
}

Node* IrModule::new_apply(FuncGraph* g, std::vector<Node*> inputs, std::string name, Loc loc) {
  if (inputs.empty()) throw std::invalid_argument("IrModule::new_apply: an Apply needs a callee");
  for (Node* n : inputs)
    if (!n) throw std::invalid_argument("IrModule::new_apply: null input");
  auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.emplace_back(new Node(NodeKind::Apply, id, g, loc, std::move(name)));
  nodes_.back()->inputs_ = std::move(inputs);
  return nodes_.back().get();
}

Node* IrModule::new_constant(ConstValue v, FuncGraph* g, Loc loc) {
  auto id = static_cast<uint32_t>(nodes_.size());
  nodes_.emplace_back(new Node(NodeKind::Constant, id, g, loc, ""));
  nodes_.back()->value_ = std::move(v);
  return nodes_.back().get();
}

FuncGraph* IrModule::find_graph(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

Loc IrModule::loc(std::string_view file, uint32_t line, uint32_t col, std::string_view scope) {
  auto it = files_.insert(std::string(file)).first;
  return with_scope(Loc{&*it, line, col}, scope);
}

Loc IrModule::with_scope(Loc l, std::string_view scope) {
  l.scope = scope.empty() ? nullptr : &*files_.insert(std::string(scope)).first;
  return l;
}

void IrModule::remove_graph(FuncGraph* g) {
  auto it = std::find(graph_list_.begin(), graph_list_.end(), g);
  if (it == graph_list_.end()) return;
  graph_list_.erase(it);
  auto nt = by_name_.find(g->name());
  if (nt != by_name_.end() && nt->second == g) by_name_.erase(nt);
}

}  // namespace msl::ir
