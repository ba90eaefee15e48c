// Shared helpers of the lowering tests: parse MSL source, lower every
// top-level def with the default resolver, print without locations.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lang/ir/ir_module.h"
#include "lang/ir/lower.h"
#include "lang/ir/printer.h"
#include "lang/ir/verifier.h"
#include "lang/parser.h"

namespace msl::lower_test {

struct Lowered {
  std::unique_ptr<ir::IrModule> module = std::make_unique<ir::IrModule>();
  std::unique_ptr<ast::Module> ast;
  std::vector<Diagnostic> errors;
  std::vector<ir::FuncGraph*> graphs;  // one per top-level def (null on error)

  ir::FuncGraph* graph(const std::string& name) const { return module->find_graph(name); }
  // The module's text without locations and without "# IR of" lines.
  std::string text() const {
    ir::PrintOptions o;
    o.locations = false;
    std::string all = ir::print_module(*module, o), out;
    size_t pos = 0;
    while (pos < all.size()) {
      size_t nl = all.find('\n', pos);
      if (nl == std::string::npos) nl = all.size();
      std::string line = all.substr(pos, nl - pos);
      if (line.rfind("# IR of", 0) != 0 && !line.empty()) out += line + "\n";
      pos = nl + 1;
    }
    return out;
  }
  std::string error_text() const {
    std::string s;
    for (auto& d : errors) s += format_diagnostic(d);
    return s;
  }
};

// `wrap` (optional) makes the resolver from the default one, e.g. to add
// names the default resolver does not know; `adapter` (optional) makes the
// host adapters of value attributes, keyword calls and slicing.
inline Lowered lower_source(const std::string& text, const std::function<ir::Resolver(ir::Resolver)>& wrap = {},
                            ir::HostAdapterMaker adapter = {}) {
  Lowered r;
  auto src = std::make_shared<SourceFile>("t.msl", text);
  ParseResult p = parse_module(src);
  r.errors = std::move(p.errors);
  if (!p.module) return r;
  r.ast = std::move(p.module);
  std::vector<const ast::FunctionDef*> defs;
  for (auto& s : r.ast->body)
    if (s->kind == ast::StmtKind::FunctionDef) defs.push_back(s->as<ast::FunctionDef>());
  ir::Resolver resolve = ir::default_resolver(defs);
  ir::Lowerer l(*r.module, std::make_shared<ir::LowerContext>(
                              ir::LowerContext{src, wrap ? wrap(resolve) : resolve, nullptr, std::move(adapter), {}}));
  for (auto* d : defs) r.graphs.push_back(l.lower(*d));
  for (auto& d : l.errors()) r.errors.push_back(d);
  return r;
}

inline int count_calls(const ir::FuncGraph& g, kernels::Prim p) {
  int n = 0;
  for (ir::Node* x : ir::topo_order(g))
    if (x->is_call_of(p)) ++n;
  return n;
}
inline int count_calls(const ir::FuncGraph& g, ir::IrOp op) {
  int n = 0;
  for (ir::Node* x : ir::topo_order(g))
    if (x->is_call_of(op)) ++n;
  return n;
}

}  // namespace msl::lower_test
