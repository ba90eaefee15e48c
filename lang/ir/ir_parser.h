// The IR text parser: reads the printer's format (printer.h) back into
// graphs, so IR tests can be written as text and a printed graph can be
// edited and reloaded.
//
// The parser works line by line in two passes:
//   1. every `subgraph @name(` header creates its graph, so a graph may be
//      referenced (`@g`) before its block;
//   2. each block is parsed in order. Nodes must be defined before use
//      (ANF text order); a free variable `@outer.%3` must name a node of a
//      graph whose block came earlier (the printer writes parents first).
// A `# In file F:LINE[:COL]` line sets the location of the node on the line
// before it (read ahead, since nodes are immutable); `# IR of: NAME (LOC)`
// sets the location of the next graph; other `#` lines are comments. The
// ` : types` tail of an Apply line is skipped.
//
// Malformed input never crashes: the first error is returned as
// `file:line:col: error: Message.` with the source line and a caret. On
// failure the module may hold partial graphs; parse into a fresh module.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lang/ir/ir_module.h"

namespace msl::ir {

struct IrParseResult {
  std::vector<FuncGraph*> graphs;  // in text order
  std::string error;               // the formatted diagnostic; empty on success
  bool ok() const { return error.empty(); }
};

IrParseResult parse_ir(std::string_view text, IrModule& m, std::string_view file_name = "<ir>");

}  // namespace msl::ir
