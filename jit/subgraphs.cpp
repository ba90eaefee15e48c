// Identical sub-graph detection and the folded drawing (subgraphs.h).
#include "jit/subgraphs.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "kernels/json_text.h"

namespace msl::jit {

namespace {

using ir::Node;

// The scope without its last level ("" for a top-level scope).
std::string parent_scope(const std::string& s) {
  size_t cut = s.rfind('/');
  return cut == std::string::npos ? std::string() : s.substr(0, cut);
}

// "ResidualBlock" of ".../1-ResidualBlock".
std::string cell_class(const std::string& s) {
  size_t slash = s.rfind('/');
  std::string last = s.substr(slash == std::string::npos ? 0 : slash + 1);
  size_t dash = last.find('-');
  return dash == std::string::npos ? last : last.substr(dash + 1);
}

// The canonical text of one instance's nodes (subgraphs.h).
std::string canonical_text(const Specialized& sp, const std::vector<const Node*>& nodes) {
  std::unordered_map<const Node*, size_t> inside, outside;
  for (size_t i = 0; i < nodes.size(); ++i) inside.emplace(nodes[i], i);
  std::string text;
  for (const Node* n : nodes) {
    text += ir::const_value_str(n->callee()->value());
    text += " -> ";
    text += sp.type_of(n);
    text += " (";
    for (size_t k = 0; k < n->num_args(); ++k) {
      const Node* in = n->arg(k);
      if (auto it = inside.find(in); it != inside.end()) {
        text += fmt::format("#{}", it->second);
      } else if (in->is_constant() && !std::holds_alternative<kernels::Tensor>(in->value())) {
        text += ir::const_value_str(in->value());
      } else {
        auto [e, fresh] = outside.emplace(in, outside.size());
        text += fmt::format("e{}:{}", e->second, sp.type_of(in));
      }
      text += ", ";
    }
    text += ")\n";
  }
  return text;
}

}  // namespace

std::vector<SubgraphGroup> find_identical_subgraphs(const Specialized& sp) {
  // Each Apply node goes to its scope and every scope enclosing it.
  std::vector<Node*> order = ir::topo_order(*sp.graph);
  std::map<std::string, std::vector<const Node*>> by_scope;
  std::unordered_map<std::string, size_t> first_seen;
  for (size_t i = 0; i < order.size(); ++i) {
    const Node* n = order[i];
    if (!n->is_apply() || !n->loc().scope) continue;
    for (std::string s = *n->loc().scope; !s.empty(); s = parent_scope(s)) {
      by_scope[s].push_back(n);
      first_seen.emplace(s, i);
    }
  }
  // Instances with equal canonical texts. The root ("Default") is the
  // whole graph: one instance, never a group.
  std::unordered_map<std::string, std::vector<std::string>> by_text;
  for (const auto& [scope, nodes] : by_scope)
    if (scope.find('/') != std::string::npos) by_text[canonical_text(sp, nodes)].push_back(scope);
  std::vector<SubgraphGroup> groups;
  for (auto& [text, scopes] : by_text) {
    if (scopes.size() < 2) continue;
    std::sort(scopes.begin(), scopes.end(),
              [&](const std::string& a, const std::string& b) { return first_seen.at(a) < first_seen.at(b); });
    SubgraphGroup g;
    g.cell = cell_class(scopes[0]);
    g.nodes = by_scope.at(scopes[0]).size();
    g.signature = fmt::format("{:016x}", std::hash<std::string>{}(text));
    for (const std::string& s : scopes) {
      SubgraphMember m;
      m.scope = s;
      for (const Node* n : by_scope.at(s)) m.node_ids.push_back(n->id());
      g.members.push_back(std::move(m));
    }
    groups.push_back(std::move(g));
  }
  std::sort(groups.begin(), groups.end(), [&](const SubgraphGroup& a, const SubgraphGroup& b) {
    if (a.nodes != b.nodes) return a.nodes > b.nodes;
    return first_seen.at(a.members[0].scope) < first_seen.at(b.members[0].scope);
  });
  // A group nests in another when each of its members lies in a distinct
  // member of that one (a block's convolutions in the blocks).
  std::unordered_map<std::string, int> group_of;
  for (size_t i = 0; i < groups.size(); ++i)
    for (const SubgraphMember& m : groups[i].members) group_of[m.scope] = static_cast<int>(i);
  for (SubgraphGroup& g : groups) {
    std::set<std::string> parents;
    int parent = -2;
    for (const SubgraphMember& m : g.members) {
      std::string p = parent_scope(m.scope);
      auto it = group_of.find(p);
      int h = it == group_of.end() ? -1 : it->second;
      parent = parent == -2 ? h : (parent == h ? h : -1);
      parents.insert(p);
    }
    g.parent = parents.size() == g.members.size() ? std::max(parent, -1) : -1;
  }
  return groups;
}

size_t apply_count(const ir::FuncGraph& g) {
  size_t n = 0;
  for (const Node* node : ir::topo_order(g)) n += node->is_apply();
  return n;
}

std::string subgraphs_json(const Specialized& sp, const std::vector<SubgraphGroup>& groups) {
  size_t applies = apply_count(*sp.graph);
  std::string out = fmt::format("{{\"graph\": {}, \"nodes\": {}, \"groups\": [", kernels::json_quote(sp.graph->name()),
                                applies);
  for (size_t i = 0; i < groups.size(); ++i) {
    const SubgraphGroup& g = groups[i];
    out += fmt::format("{}\n  {{\"cell\": {}, \"nodes\": {}, \"count\": {}, \"signature\": \"{}\", \"parent\": {}, "
                       "\"members\": [",
                       i ? "," : "", kernels::json_quote(g.cell), g.nodes, g.members.size(), g.signature,
                       g.parent < 0 ? std::string("null") : std::to_string(g.parent));
    for (size_t k = 0; k < g.members.size(); ++k) {
      std::string ids;
      for (uint32_t id : g.members[k].node_ids) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
      out += fmt::format("{}\n    {{\"scope\": {}, \"node_ids\": [{}]}}", k ? "," : "",
                         kernels::json_quote(g.members[k].scope), ids);
    }
    out += "]}";
  }
  out += "\n]}\n";
  return out;
}

std::string folded_dot(const Specialized& sp, const std::vector<SubgraphGroup>& groups) {
  // Every node of a member of an outermost group is drawn as that member's
  // box; the rest as themselves.
  std::unordered_map<uint32_t, std::string> unit;
  std::string out = "digraph " + kernels::json_quote(sp.graph->name()) + " {\n  node [shape=box, fontsize=10];\n";
  for (size_t i = 0; i < groups.size(); ++i) {
    const SubgraphGroup& g = groups[i];
    if (g.parent >= 0) continue;
    for (size_t k = 0; k < g.members.size(); ++k) {
      std::string id = fmt::format("g{}_{}", i, k);
      bool drawn = false;
      for (uint32_t n : g.members[k].node_ids)
        if (unit.emplace(n, id).second) drawn = true;
      if (drawn)
        out += fmt::format("  {} [label={}, style=filled, fillcolor=lightblue];\n", id,
                           kernels::json_quote(fmt::format("{} x{} ({} nodes)\n{}", g.cell, g.members.size(), g.nodes,
                                                           g.members[k].scope)));
    }
  }
  std::set<std::pair<std::string, std::string>> edges;
  for (const Node* n : ir::topo_order(*sp.graph)) {
    if (!n->is_apply()) continue;
    auto own = unit.find(n->id());
    std::string to = own != unit.end() ? own->second : fmt::format("n{}", n->id());
    if (own == unit.end())
      out += fmt::format("  {} [label={}];\n", to, kernels::json_quote(ir::const_value_str(n->callee()->value())));
    for (size_t k = 0; k < n->num_args(); ++k) {
      const Node* in = n->arg(k);
      if (!in->is_apply()) continue;
      auto it = unit.find(in->id());
      std::string from = it != unit.end() ? it->second : fmt::format("n{}", in->id());
      if (from != to && edges.emplace(from, to).second) out += fmt::format("  {} -> {};\n", from, to);
    }
  }
  return out + "}\n";
}

}  // namespace msl::jit
