// Graphviz rendering of a graph nest (dot.h).
#include "lang/ir/dot.h"

#include <sstream>
#include <unordered_map>

#include "lang/ir/ir_module.h"

namespace msl::ir {

namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string to_dot(const FuncGraph& g) {
  std::ostringstream os;
  os << "digraph \"" << escape(g.name()) << "\" {\n  compound=true;\n  node [fontname=\"monospace\", fontsize=10];\n";
  std::unordered_map<const Node*, std::string> ids;
  auto id = [&](const Node* n) {
    auto it = ids.find(n);
    if (it != ids.end()) return it->second;
    std::string s = "n" + std::to_string(n->id());
    ids.emplace(n, s);
    return s;
  };
  auto operand = [&](const Node* n) -> std::string {
    if (n->is_constant()) return const_value_str(n->value());
    return n->name().empty() ? "%" + std::to_string(n->id()) : n->name();
  };
  std::vector<FuncGraph*> nest = nested_graphs(g);
  std::ostringstream edges;
  for (const FuncGraph* h : nest) {
    os << "  subgraph \"cluster_" << escape(h->name()) << "\" {\n    label=\"@" << escape(h->name()) << "\";\n";
    // An anchor for edges into the cluster (graph-constant uses).
    os << "    \"" << escape(h->name()) << "_anchor\" [shape=point, style=invis];\n";
    for (const Node* p : h->params())
      os << "    " << id(p) << " [shape=ellipse, label=\"" << escape(p->name().empty() ? "param" : p->name()) << "\"];\n";
    for (const Node* n : topo_order(*h)) {
      if (!n->is_apply()) continue;
      std::string label = (n->name().empty() ? "" : n->name() + " = ") + operand(n->callee()) + "(";
      for (size_t i = 0; i < n->num_args(); ++i) label += (i ? ", " : "") + operand(n->arg(i));
      label += ")";
      if (n->loc().valid()) label += "\n" + *n->loc().file + ":" + std::to_string(n->loc().line);
      os << "    " << id(n) << " [shape=box, label=\"" << escape(label) << "\"];\n";
      for (const Node* in : n->inputs()) {
        if (in->is_constant()) {
          if (const FuncGraph* r = in->as_graph())
            edges << "  " << id(n) << " -> \"" << escape(r->name()) << "_anchor\" [style=dotted, lhead=\"cluster_"
                  << escape(r->name()) << "\"];\n";
          continue;
        }
        edges << "  " << id(in) << " -> " << id(n) << (in->graph() != h ? " [style=dashed]" : "") << ";\n";
      }
    }
    if (const Node* out = h->output(); out && !out->is_constant()) {
      os << "    \"" << escape(h->name()) << "_return\" [shape=plaintext, label=\"return\"];\n";
      edges << "  " << id(out) << " -> \"" << escape(h->name()) << "_return\";\n";
    }
    os << "  }\n";
  }
  os << edges.str() << "}\n";
  return os.str();
}

}  // namespace msl::ir
