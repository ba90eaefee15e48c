// Simplifications that need the types a specialization found (jit/
// specialize.h): the shape- and dtype-preserving no-ops that gradient rules
// leave behind once they are traced at known shapes.
//
// What it does, on the specialized graph whose types are in `types`:
//   * reshape(x)[shape=s] -> x when x already has shape s;
//   * add(x, z), add(z, x), sub(x, z) -> x when z is zero (zeros_like(...),
//     an all-zero constant: a number, a tensor or a broadcast of one, or a
//     node this walk found to be zeros) and the result has x's type (no
//     broadcast or promotion happened);
//   * mul(x, o), mul(o, x) -> x when o is one (ones_like(...) or an all-ones
//     constant) and the result has x's type (o does not broadcast x to a
//     larger shape or promote it);
//   * zeros that an unused output's sensitivity leaves fold to zeros:
//     tuple_getitem(zeros_like(t), k) -> zeros_like(tuple_getitem(t, k))
//     for a tensor item (the rest of the tuple is no longer needed), and
//     mul(z, x), mul(x, z), neg(z), relu_grad(z, y), softmax_grad(y, z),
//     log_softmax_grad(y, z) -> z when z is zero and the result has z's
//     type. This removes the softmax that sparse_softmax_cross_entropy's
//     gradient computes for its second output, whose sensitivity is zeros
//     (a product with zeros is taken as zero even where the other factor
//     is inf or NaN, as the gradient of an unused output is);
//   * mixed precision's zeros: a reshape, broadcast or cast of zeros, and a
//     product with zeros that broadcasts, are known zeros (kept, but the
//     sums they enter fold); add(x, z) and grad_add(x, z) whose result only
//     differs from x in dtype (a bfloat16 gradient plus a float32 zero)
//     -> cast(x); cast(cast(x, wide), narrow) -> x when x has dtype narrow
//     and wide holds it exactly (bfloat16 through float32 and back);
//     grad_add(x, z), grad_add(z, x) -> x when z is zero; grad_add(a, b)
//     of two tensors of its type -> add(a, b), which fusion takes;
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
