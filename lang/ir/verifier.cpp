// The IR verifier (invariants listed in verifier.h).
#include "lang/ir/verifier.h"

#include <unordered_map>
#include <unordered_set>

namespace msl::ir {

namespace {

std::string where(const Node* n) {
  std::string s = "node " + std::to_string(n->id());
  if (!n->name().empty()) s += " (" + n->name() + ")";
  if (n->loc().valid()) s += " at " + *n->loc().file + ":" + std::to_string(n->loc().line);
  return s;
}

void check_callee_arity(const FuncGraph& g, const Node* n, std::vector<std::string>& errs) {
  const Node* callee = n->callee();
  if (!callee->is_constant()) return;
  int have = static_cast<int>(n->num_args());
  if (auto p = callee->as_prim()) {
    const kernels::PrimDef& def = kernels::prim_def(p->prim);
    if (def.inputs < 0) return;
    // Effectful (InPlace) primitives take the state token as one extra input.
    int want = def.inputs + (def.kind == kernels::PrimKind::InPlace ? 1 : 0);
    if (have != want)
      errs.push_back("@" + g.name() + ": " + where(n) + ": primitive " + def.name + " takes " + std::to_string(want) +
                     " argument(s), got " + std::to_string(have));
  } else if (auto op = callee->as_ir_op()) {
    int want = ir_op_arity(*op);
    if (want >= 0 && have != want)
      errs.push_back("@" + g.name() + ": " + where(n) + ": operator " + ir_op_name(*op) + " takes " +
                     std::to_string(want) + " argument(s), got " + std::to_string(have));
  } else if (!callee->as_graph() && !callee->as_host()) {
    // None/int/float/str/tensor constants cannot be called.
    errs.push_back("@" + g.name() + ": " + where(n) +
                   ": callee is a constant that is not callable: " + const_value_str(callee->value()));
  }
}

}  // namespace

std::vector<std::string> verify_graph(const FuncGraph& g) {
  std::vector<std::string> errs;
  const IrModule& m = g.module();
  std::string gn = "@" + g.name();
  auto err = [&](std::string s) { errs.push_back(gn + ": " + std::move(s)); };

  // 7. Parent chain.
  {
    std::unordered_set<const FuncGraph*> chain{&g};
    for (const FuncGraph* p = g.parent(); p; p = p->parent()) {
      if (!m.owns(p)) {
        err("parent @" + p->name() + " belongs to another module");
        break;
      }
      if (!chain.insert(p).second) {
        err("the parent chain is cyclic (through @" + p->name() + ")");
        return errs;  // ancestry is meaningless below; stop here
      }
    }
  }
  // 1. Output.
  if (!g.output()) err("has no output (return)");
  // 2. Parameters.
  std::unordered_set<const Node*> params;
  for (const Node* p : g.params()) {
    if (!p->is_parameter()) err(where(p) + " is listed as a parameter but is not one");
    if (p->graph() != &g) err("parameter " + where(p) + " belongs to another graph");
    if (!params.insert(p).second) err("parameter " + where(p) + " is listed twice");
  }
  if (!g.output()) return errs;

  // 4. Cycles: an explicit DFS with colors over the nodes g owns.
  enum Color : uint8_t { White, Grey, Black };
  std::unordered_map<const Node*, Color> color;
  std::vector<std::pair<const Node*, size_t>> stack;
  auto push = [&](const Node* n) {
    if (!n || n->graph() != &g || n->is_constant()) return;
    Color& c = color[n];
    if (c == Grey) {
      err("cycle through " + where(n));
    } else if (c == White) {
      c = Grey;
      stack.push_back({n, 0});
    }
  };
  push(g.output());
  while (!stack.empty() && errs.size() < 100) {
    auto& [n, i] = stack.back();
    if (i < n->inputs().size()) {
      const Node* in = n->inputs()[i++];
      push(in);
    } else {
      color[n] = Black;
      stack.pop_back();
    }
  }
  if (!stack.empty()) return errs;  // too many errors to continue safely

  // 3, 5, 6. Inputs, arity and graph references of each Apply. topo_order
  // is safe now that the body is known to be acyclic.
  auto check_operand = [&](const std::string& at, const Node* in) {
    if (!in) {
      err(at + " is null");
      return;
    }
    if (in->is_constant()) {
      if (FuncGraph* ref = in->as_graph(); ref && !m.owns(ref))
        err(at + " refers to graph @" + ref->name() + " of another module");
      else if (in->as_graph() == nullptr && std::holds_alternative<FuncGraph*>(in->value()))
        err(at + " is a null graph reference");
      return;
    }
    FuncGraph* owner = in->graph();
    if (!owner || !m.owns(owner)) {
      err(at + " (" + where(in) + ") belongs to no graph of this module");
    } else if (!g.is_nested_in(owner)) {
      err(at + " uses " + where(in) + " of @" + owner->name() + ", which does not enclose " + gn);
    } else if (in->is_parameter()) {
      bool listed = false;
      for (const Node* p : owner->params()) listed = listed || p == in;
      if (!listed) err(at + " uses parameter " + where(in) + " that @" + owner->name() + " does not list");
    }
  };
  for (const Node* n : topo_order(g)) {
    if (!n->is_apply()) continue;
    if (n->inputs().empty()) {
      err(where(n) + " is an Apply without a callee");
      continue;
    }
    for (size_t i = 0; i < n->inputs().size(); ++i)
      check_operand(where(n) + " input " + std::to_string(i), n->inputs()[i]);
    if (n->callee()) check_callee_arity(g, n, errs);
  }
  check_operand("the output", g.output());
  return errs;
}

std::vector<std::string> verify_module(const IrModule& m) {
  std::vector<std::string> errs;
  for (const FuncGraph* g : m.graphs()) {
    auto e = verify_graph(*g);
    errs.insert(errs.end(), e.begin(), e.end());
  }
  return errs;
}

}  // namespace msl::ir
