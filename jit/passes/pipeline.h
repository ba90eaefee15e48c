// The clean-up pipeline: the named passes in order, run to a fixed point.
//
// optimize() runs, in this order,
//   inline, partial_elim, tuple_elim, env_elim, simplify, constant_fold,
//   cse, dce, dead_graphs
// over a graph and its nested graphs, and repeats the whole list until a
// round changes nothing or kMaxPipelineRounds rounds have run (each pass
// reports whether it changed anything; the bound keeps a pathological
// program from looping, and a round that stops early only leaves the graph
// less clean, never wrong). The order is one straight-line list, like
// tinygrad's: inlining exposes make_tuple/partial/env chains, the
// eliminations remove them, simplify turns AD's sums into kernels, and
// constant folding, CSE and DCE clean up what is left; dead_graphs retires
// the closures inlining has copied away (IrModule cannot delete graphs).
//
// Debugging: with `verify` (the default) the IR verifier (lang/ir/verifier.h)
// checks the nest before the first pass and after every pass, and a
// violation throws PassError naming the pass that broke it; without
// `verify_each_pass` only before the first and after the last (the
// verifier after every pass was 40% of compiling ResNet-50's gradient:
// graph mode verifies each pass only at debug log level). `print_after`
// names a pass (or "all"): after each run of it, `dump` receives the pass
// name and the printed graph nest (std::cerr when `dump` is null). This is
// what `msl --print-after=PASS` uses.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

inline constexpr int kMaxPipelineRounds = 50;

struct PassOptions {
  bool verify = true;
  std::string print_after;  // a pass name or "all"; empty: no dumps
  std::function<void(const std::string& pass, const std::string& ir_text)> dump;
  bool verify_each_pass = true;
};

// A compiler bug found by the verifier between passes, or bad options (an
// unknown pass name in print_after).
class PassError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The pass names in pipeline order.
const std::vector<std::string>& pass_names();
// Runs the pipeline on `g` and its nested graphs.
void optimize(ir::IrModule& m, ir::FuncGraph& g, const PassOptions& opts = {});

}  // namespace msl::jit
