// The IR printer, in MindSpore's `.ir` style. The IR parser (ir_parser.h)
// reads exactly this format back, so IR tests can be written as text.
//
//   # IR of: f (file.msl:3:1)
//   subgraph @f(%para1_x, %para2_y) {
//     %0(z) = mul(%para1_x, %para2_y)
//         # In file file.msl:4:5
//     %1 = reduce_sum[axes=(0,), keep_dims=False](%0)
//     %2 = partial(@g, %1)
//     %3 = %2(1.0)                     <- the callee may be any operand
//     return(%3)
//   }
//
//   # IR of: g
//   subgraph @g(%para1_a, %para2_b) parent=@f flags[is_bprop=True] {
//     %0 = add(%para1_a, @f.%0)        <- free variable: node %0 of @f
//     return(%0)
//   }
//
// The syntax:
//   * One `subgraph` block per graph; a graph's nested graphs follow it
//     (parents first), and `parent=@p` records the nesting. Graph flags are
//     written `flags[name=value, ...]`.
//   * Parameters are `%paraN_name` (N from 1; `%paraN` when unnamed).
//     Apply nodes are numbered `%0, %1, ...` per graph in topological order;
//     a debug name follows in parentheses: `%0(z)`.
//   * A node of another (enclosing) graph, i.e. a free variable, is written
//     `@owner.%N` or `@owner.%paraN_name`.
//   * Constants are printed inline, never as lines: `1`, `1.0`, `"s"`,
//     `None`, `True`, `@g` (a graph), `mul` / `make_tuple` (a primitive or
//     operator), `reduce_sum[axes=(0,), keep_dims=True]` (a primitive with
//     attributes), `Tensor[Float32](2, 2)[1.0, 2.0, 3.0, 4.0]`.
//   * A node with a source location is followed by `# In file F:LINE:COL`.
//   * With a type side table, an Apply line ends in
//     ` : (arg types) -> result type`; the parser skips it.
//   * Constants' debug names and locations and parameters' locations are
//     not printed.
#pragma once

#include <functional>
#include <string>

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::ir {

struct PrintOptions {
  // The type of a node as text (empty: unknown). When set, Apply lines end
  // in ` : (T1, T2) -> T`.
  std::function<std::string(const Node*)> type_of;
  bool locations = true;  // "# In file" lines
};

// `g` and the graphs nested in it.
std::string print_graph(const FuncGraph& g, const PrintOptions& opts = {});
// Every graph of the module: each top-level graph (creation order) followed
// by its nested graphs.
std::string print_module(const IrModule& m, const PrintOptions& opts = {});

}  // namespace msl::ir
