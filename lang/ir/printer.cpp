// The .ir printer: numbering, operand syntax and layout (see printer.h).
#include "lang/ir/printer.h"

#include <unordered_map>
#include <unordered_set>

namespace msl::ir {

namespace {

std::string loc_str(const Loc& l) {
  std::string s = *l.file + ":" + std::to_string(l.line);
  if (l.col) s += ":" + std::to_string(l.col);
  return s;
}

// Parameter names must stay identifiers and debug names must not close
// their parentheses, or the text would not parse back.
std::string clean(const std::string& s, bool ident) {
  std::string out = s;
  for (char& c : out)
    if (ident ? !(std::isalnum(static_cast<unsigned char>(c)) || c == '_') : (c == ')' || c == '\n' || c == '\r'))
      c = '_';
  return out;
}

class Printer {
 public:
  Printer(const PrintOptions& opts) : opts_(opts) {}

  void graph_nest(const FuncGraph& root) {
    for (FuncGraph* g : nested_graphs(root))
      if (printed_.insert(g).second) graph(*g);
  }
  std::string take() { return std::move(out_); }

 private:
  // Local names of a graph's parameters and Apply nodes, computed once per
  // graph (also for graphs only referenced through free variables).
  const std::unordered_map<const Node*, std::string>& names(const FuncGraph& g) {
    auto it = names_.find(&g);
    if (it != names_.end()) return it->second;
    auto& m = names_[&g];
    for (size_t i = 0; i < g.params().size(); ++i) {
      const Node* p = g.params()[i];
      std::string n = "%para" + std::to_string(i + 1);
      if (!p->name().empty()) n += "_" + clean(p->name(), true);
      m[p] = n;
    }
    int k = 0;
    for (Node* n : topo_order(g))
      if (n->is_apply()) m[n] = "%" + std::to_string(k++);
    return m;
  }

  std::string operand(const Node* n, const FuncGraph& cur) {
    if (n->is_constant()) return const_value_str(n->value());
    const FuncGraph* owner = n->graph();
    auto& m = names(*owner);
    auto it = m.find(n);
    std::string local = it != m.end() ? it->second : "%<unreachable:" + std::to_string(n->id()) + ">";
    return owner == &cur ? local : "@" + owner->name() + "." + local;
  }

  void graph(const FuncGraph& g) {
    if (!out_.empty()) out_ += "\n";
    out_ += "# IR of: " + g.name();
    if (g.loc().valid()) out_ += " (" + loc_str(g.loc()) + ")";
    out_ += "\nsubgraph @" + g.name() + "(";
    auto& m = names(g);
    for (size_t i = 0; i < g.params().size(); ++i) out_ += (i ? ", " : "") + m.at(g.params()[i]);
    out_ += ")";
    if (g.parent()) out_ += " parent=@" + g.parent()->name();
    if (!g.flags().empty()) out_ += " flags[" + attrs_str(g.flags()) + "]";
    out_ += " {\n";
    for (Node* n : topo_order(g)) {
      if (!n->is_apply()) continue;
      out_ += "  " + m.at(n);
      if (!n->name().empty()) out_ += "(" + clean(n->name(), false) + ")";
      out_ += " = " + operand(n->callee(), g) + "(";
      for (size_t i = 0; i < n->num_args(); ++i) out_ += (i ? ", " : "") + operand(n->arg(i), g);
      out_ += ")";
      if (opts_.type_of) {
        std::string t = opts_.type_of(n);
        if (!t.empty()) {
          out_ += " : (";
          for (size_t i = 0; i < n->num_args(); ++i) {
            std::string at = opts_.type_of(n->arg(i));
            out_ += (i ? ", " : "") + (at.empty() ? std::string("?") : at);
          }
          out_ += ") -> " + t;
        }
      }
      out_ += "\n";
      if (opts_.locations && n->loc().valid()) out_ += "      # In file " + loc_str(n->loc()) + "\n";
    }
    out_ += "  return(" + (g.output() ? operand(g.output(), g) : std::string("<missing>")) + ")\n}\n";
  }

  const PrintOptions& opts_;
  std::string out_;
  std::unordered_set<const FuncGraph*> printed_;
  std::unordered_map<const FuncGraph*, std::unordered_map<const Node*, std::string>> names_;
};

}  // namespace

std::string print_graph(const FuncGraph& g, const PrintOptions& opts) {
  Printer p(opts);
  p.graph_nest(g);
  return p.take();
}

std::string print_module(const IrModule& m, const PrintOptions& opts) {
  Printer p(opts);
  for (FuncGraph* g : m.graphs())
    if (!g->parent()) p.graph_nest(*g);
  for (FuncGraph* g : m.graphs()) p.graph_nest(*g);  // graphs under a malformed parent chain
  return p.take();
}

}  // namespace msl::ir
