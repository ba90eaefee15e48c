// `msl --emit=anf|anf-opt|grad FILE`: the graph stages of a file's
// top-level functions, printed without running the file. Names resolve
// statically (lang/ir/lower.h default_resolver: the file's functions and
// primitives by name). `grad` differentiates each function with respect to
// all its parameters (sensitivity ones_like(output)); the gradient rules
// come from the standard library, hence the interpreter.
#include <cstdio>

#include "interp/graph/graph_compiler.h"
#include "interp/graph/graph_compiler_impl.h"
#include "jit/passes/pipeline.h"
#include "lang/ir/lower.h"
#include "lang/ir/printer.h"
#include "lang/parser.h"

namespace msl {

int emit_graph_stage(Interp* I, const SourcePtr& source, const std::string& stage, const std::string& print_after) {
  std::vector<Diagnostic> errors;
  std::string out;
  ParseResult r = parse_module(source);
  errors = std::move(r.errors);
  if (r.module) {
    std::vector<const ast::FunctionDef*> defs;
    for (auto& s : r.module->body)
      if (s->kind == ast::StmtKind::FunctionDef) defs.push_back(s->as<ast::FunctionDef>());
    ir::IrModule m;
    ir::Lowerer lowerer(m, source, ir::default_resolver(defs));
    std::vector<ir::FuncGraph*> graphs;
    for (auto* d : defs) graphs.push_back(lowerer.lower(*d));
    for (auto& d : lowerer.errors()) errors.push_back(d);
    jit::PassOptions po;
    po.print_after = print_after;
    po.dump = [](const std::string& pass, const std::string& text) {
      std::fprintf(stderr, "# IR after %s\n%s\n", pass.c_str(), text.c_str());
    };
    try {
      if (errors.empty() && stage == "anf") {
        out = ir::print_module(m);
      } else if (errors.empty() && stage == "anf-opt") {
        for (ir::FuncGraph* g : graphs) jit::optimize(m, *g, po);
        for (ir::FuncGraph* g : graphs) out += ir::print_graph(*g) + "\n";
      } else if (errors.empty() && stage == "grad") {
        GraphCompiler& gc = compiler_of(*I);
        ad::GradTransformer gt(m, [&gc](const ir::PrimRef& p) { return gc.rule_for(p); });
        for (ir::FuncGraph* g : graphs) {
          ir::FuncGraph* gg = gt.grad_graph(g, false);
          jit::optimize(m, *gg, po);
          out += ir::print_graph(*gg) + "\n";
        }
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "msl: error: %s\n", e.what());
      return 1;
    }
  }
  for (auto& d : errors) std::fputs(format_diagnostic(d).c_str(), stderr);
  std::fputs(out.c_str(), stdout);
  return errors.empty() ? 0 : 1;
}

}  // namespace msl
