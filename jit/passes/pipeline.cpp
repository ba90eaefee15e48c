// The clean-up pipeline (see pipeline.h).
#include "jit/passes/pipeline.h"

#include <iostream>

#include "jit/passes/constant_fold.h"
#include "jit/passes/cse.h"
#include "jit/passes/dce.h"
#include "jit/passes/dead_graphs.h"
#include "jit/passes/env_elim.h"
#include "jit/passes/inline.h"
#include "jit/passes/partial_elim.h"
#include "jit/passes/simplify.h"
#include "jit/passes/tuple_elim.h"
#include "jit/target.h"
#include "lang/ir/printer.h"
#include "lang/ir/verifier.h"

namespace msl::jit {

using namespace msl::ir;

namespace {

struct NamedPass {
  const char* name;
  bool (*run)(IrModule&, FuncGraph&);
};

// clang-format off
const NamedPass kPasses[] = {
    {"inline",        run_inline},
    {"partial_elim",  run_partial_elim},
    {"tuple_elim",    run_tuple_elim},
    {"env_elim",      run_env_elim},
    {"simplify",      run_simplify},
    {"constant_fold", run_constant_fold},
    {"cse",           run_cse},
    {"dce",           run_dce},
    {"dead_graphs",   run_dead_graphs},
};
// clang-format on

void verify_nest(const FuncGraph& g, const std::string& when) {
  std::string report;
  for (FuncGraph* h : nested_graphs(g))
    for (const std::string& e : verify_graph(*h)) report += "\n  " + e;
  if (!report.empty()) throw PassError("invalid IR " + when + ":" + report);
}

}  // namespace

const std::vector<std::string>& pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const NamedPass& p : kPasses) out.push_back(p.name);
    return out;
  }();
  return names;
}

void optimize(IrModule& m, FuncGraph& g, const PassOptions& opts) {
  const std::string& pa = opts.print_after;
  if (!pa.empty() && pa != "all") {
    bool known = false;
    std::string list;
    for (const std::string& n : all_pass_names()) {
      known |= n == pa;
      list += (list.empty() ? "" : ", ") + n;
    }
    if (!known) throw PassError("unknown pass '" + pa + "' in print-after; the passes are: " + list + " (or all)");
  }
  if (opts.verify) verify_nest(g, "before the clean-up passes");
  for (int round = 0; round < kMaxPipelineRounds; ++round) {
    bool changed = false;
    for (const NamedPass& p : kPasses) {
      changed |= p.run(m, g);
      if (opts.verify && opts.verify_each_pass) verify_nest(g, std::string("after pass '") + p.name + "'");
      if (pa == "all" || pa == p.name) {
        std::string text = print_graph(g);
        if (opts.dump)
          opts.dump(p.name, text);
        else
          std::cerr << "# IR after " << p.name << "\n" << text;
      }
    }
    if (!changed) break;
  }
  if (opts.verify && !opts.verify_each_pass) verify_nest(g, "after the clean-up passes");
}

}  // namespace msl::jit
