// Helpers of the pass tests: IR text in, IR text out.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "lang/ir/ir_module.h"
#include "lang/ir/ir_parser.h"
#include "lang/ir/printer.h"
#include "lang/ir/verifier.h"

namespace msl::jit::test {

struct PassResult {
  bool changed = false;
  std::string text;  // print_module after the pass
};

// Parses `text`, runs `pass` on its first graph, checks the verifier is
// clean, and returns whether the pass changed anything and the printed module.
template <class Pass>
PassResult run_on_text(const std::string& text, Pass pass) {
  ir::IrModule m;
  ir::IrParseResult r = ir::parse_ir(text, m, "t.ir");
  REQUIRE_MESSAGE(r.ok(), r.error);
  REQUIRE(verify_module(m).empty());
  PassResult out;
  out.changed = pass(m, *r.graphs.front());
  for (const std::string& e : verify_module(m)) FAIL_CHECK(e);
  out.text = print_module(m);
  return out;
}

// The module text after a parse -> print round trip (the canonical form).
inline std::string canon(const std::string& text) {
  ir::IrModule m;
  ir::IrParseResult r = ir::parse_ir(text, m, "t.ir");
  REQUIRE_MESSAGE(r.ok(), r.error);
  return print_module(m);
}

}  // namespace msl::jit::test
