// Helpers of the specializer tests: IR text in, a specialized module out.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "jit/specialize.h"
#include "lang/ir/ir_parser.h"
#include "lang/ir/printer.h"
#include "lang/ir/verifier.h"

namespace msl::jit::test {

inline AbsValue f32(kernels::Dims shape) { return abs_tensor(kernels::DType::Float32, shape); }

// A module parsed from IR text (file name "t.ir"); `g` is its first graph.
struct Parsed {
  ir::IrModule m;
  ir::FuncGraph* g = nullptr;
  explicit Parsed(const std::string& text) {
    ir::IrParseResult r = ir::parse_ir(text, m, "t.ir");
    REQUIRE_MESSAGE(r.ok(), r.error);
    REQUIRE(ir::verify_module(m).empty());
    g = r.graphs.front();
  }
  // Specializes `g` and checks the whole module still verifies.
  Specialized run(const std::vector<AbsValue>& args, const SpecializeOptions& opts = {}) {
    Specialized s = specialize(m, *g, args, opts);
    for (const std::string& e : ir::verify_module(m)) FAIL_CHECK(e);
    return s;
  }
  // The message of the SpecializeError that specializing throws ("" if none).
  std::string error(const std::vector<AbsValue>& args, const SpecializeOptions& opts = {}) {
    try {
      specialize(m, *g, args, opts);
    } catch (const SpecializeError& e) {
      return e.what();
    }
    return "";
  }
};

// The specialized graphs as text, with types and without locations.
inline std::string typed_text(const Specialized& s) {
  ir::PrintOptions o = s.print_options();
  o.locations = false;
  return ir::print_graph(*s.graph, o);
}

// How many nodes of the specialized graphs nested in the root (their
// parameters, applies and operands) have no entry in the types table.
inline int untyped_nodes(const Specialized& s) {
  int n = 0;
  for (ir::FuncGraph* g : ir::nested_graphs(*s.graph))
    for (ir::Node* x : ir::topo_order(*g)) {
      n += s.types.count(x->id()) ? 0 : 1;
      for (ir::Node* in : x->inputs()) n += s.types.count(in->id()) ? 0 : 1;
    }
  return n;
}

}  // namespace msl::jit::test
