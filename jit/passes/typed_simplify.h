// Simplifications that need the types a specialization found (jit/
// specialize.h): the shape- and dtype-preserving no-ops that gradient rules
// leave behind once they are traced at known shapes.
//
// What it does, on the specialized graph whose types are in `types`:
//   * reshape(x)[shape=s] -> x when x already has shape s;
//   * add(x, z), add(z, x), sub(x, z) -> x when z is zeros_like(...) or an
//     all-zero tensor constant and the result has x's type (no broadcast or
//     promotion happened);
//   * mul(x, o), mul(o, x) -> x when o is ones_like(...) and the result has
//     x's type;
//   * broadcast_to(reshape(x)) -> broadcast_to(x) when x has one element
//     (a reshape to (1, 1) before broadcasting a scalar changes nothing);
//   * ones_like(x), zeros_like(x) -> a constant when x is 0-d (a loss's
//     sensitivity: the loss itself is then dead unless returned).
// Nodes created by a rewrite have no entry in `types`; the rewrites only
// look at nodes the specialization typed, so they stay correct. Effects are
// untouched (none of these operations is one).
#pragma once

#include "jit/abstract.h"
#include "jit/specialize.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

bool run_typed_simplify(ir::IrModule& m, const Specialized& sp);

}  // namespace msl::jit
