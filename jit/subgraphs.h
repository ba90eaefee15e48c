// Identical sub-graph detection (the seed slides' project): in a
// specialized graph, the Cell instances whose nodes form isomorphic
// sub-graphs (same primitives, attributes, types and wiring) — ResNet's
// repeated bottleneck blocks, a Transformer's layers. A Cell instance's
// sub-graph is the nodes whose scope (ir::Loc::scope) is the instance's or
// inside it, forward and backward alike (gradient nodes keep their forward
// node's scope).
//
// Each instance's nodes, in the graph's topological order, are written as
// one canonical text (per node: the callee with its attributes, the result
// type, and each input as an earlier node of the same instance by
// position, a constant by value, or an outside value by type and order of
// first use); equal texts are isomorphic sub-graphs (up to the order the
// graph lists them in, which one Cell class's construct fixes). One pass
// over the nodes per nesting level and a hash table: linear, not pairwise
// isomorphism tests.
#pragma once

#include <string>
#include <vector>

#include "jit/specialize.h"

namespace msl::jit {

struct SubgraphMember {
  std::string scope;               // "Default/layer2-SequentialCell/1-ResidualBlock"
  std::vector<uint32_t> node_ids;  // its Apply nodes, in topological order
};

struct SubgraphGroup {
  std::string cell;       // the members' Cell class ("ResidualBlock")
  size_t nodes = 0;       // nodes per member
  std::string signature;  // a hash of the canonical text, hex
  std::vector<SubgraphMember> members;
  int parent = -1;        // the group whose members hold these members, or -1
};

// The Apply nodes of `g` (the "nodes" of the report).
size_t apply_count(const ir::FuncGraph& g);

// Groups of two or more identical Cell instances, largest sub-graphs first.
std::vector<SubgraphGroup> find_identical_subgraphs(const Specialized& sp);

// The groups as JSON: {"graph": name, "nodes": N, "groups": [{"cell",
// "nodes", "count", "signature", "parent", "members": [{"scope",
// "node_ids"}]}]}.
std::string subgraphs_json(const Specialized& sp, const std::vector<SubgraphGroup>& groups);

// The graph in Graphviz dot with every group folded: each outermost group
// is one box "<Cell> ×N" standing for its members, the other nodes as in
// the IR, so a deep network draws as its block structure.
std::string folded_dot(const Specialized& sp, const std::vector<SubgraphGroup>& groups);

}  // namespace msl::jit
