// Tuple simplification: taking items out of tuples whose construction is
// visible.
//
// What it does, for a constant int index i (negative indices count from
// the end, as at run time, where the length is known):
//   * tuple_getitem(make_tuple(a0, ..., an), i)     -> ai
//   * tuple_getitem(depend(make_tuple(a0, ..., an), u), i) -> depend(ai, u)
//   * tuple_getitem(tuple_setitem(t, i, v), i)      -> v
//   * tuple_getitem(tuple_setitem(t, i, v), j != i) -> tuple_getitem(t, j)
//     (indices compared only when both are non-negative)
//   * tuple_setitem(make_tuple(a0, ..., an), i, v)  -> make_tuple with ai = v
//     (AD's sensitivity of one item of a built tuple)
//   * tuple_len(make_tuple(a0, ..., an))            -> n + 1
//   * tuple_len(tuple_setitem(t, i, v))             -> tuple_len(t)
// Rewrites cascade within one run (node_rewriter.h). The two rewrites that
// look through tuple_setitem(t, i, v) without knowing t's length assume i
// is in range, as AD's indices are; an out-of-range i then no longer fails
// at run time.
//
// Effects are kept: a rewrite that would drop the only use of a tuple item
// that is, or depends on, an effect (print, update_state, depend, assign) is
// skipped, as in DCE, so an effect chain never loses its link to the output.
// An item the output keeps alive by another path (found by a walk from the
// output that follows only the items these rewrites keep) may be dropped:
// AD pairs a Cell's output, state chain included, with its backpropagator,
// and taking the backpropagator out must not wait for the pair.
//
// What it does not do: tuple_getitem of a call whose graph returns a
// make_tuple (inlining exposes the make_tuple first), out-of-range or
// non-constant indices (left for run time, where the error has a location),
// and lists (make_list/list_getitem are user-visible mutable-looking values
// the lowering owns).
#pragma once

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// Tuple simplification over `g` and its nested graphs. Returns true when
// anything changed.
bool run_tuple_elim(ir::IrModule& m, ir::FuncGraph& g);

}  // namespace msl::jit
