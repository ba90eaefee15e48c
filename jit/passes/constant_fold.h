// Constant folding.
//
// What it does: an Apply whose callee is a kernel primitive and whose
// arguments are all constants is evaluated at compile time with
// kernels::execute and replaced by a tensor constant holding the result.
// Folding cascades within one run (mul(add(t, 2), 3) becomes one constant
// when t is a constant tensor).
//
// Constant: a Constant node holding a tensor, an int, a float or a bool.
// Scalars become 0-d tensors exactly as the executor does at run time
// (jit/exec/exec_ops.cpp): of the first tensor argument's dtype, else
// Int64 / Float32 / Bool for int / float / bool. The result is a tensor, as
// a kernel's result at run time is.
//
// What it does not do:
//   * fold random primitives (random_uniform, random_normal, dropout): a
//     draw belongs to run time; nor InPlace primitives (assign) or anything
//     else on the effect chain;
//   * fold primitives with several outputs, or whose result has more than
//     kMaxFoldElements elements (a big constant bloats the IR and the
//     compile cache more than the computation costs);
//   * report errors: a call that throws (bad shapes, bad attributes) is
//     left as it is, so the error surfaces at run time with its location;
//   * fold arithmetic on numbers alone (`-1`, `2 * 3`; is_scalar_arithmetic
//     in specialize.h): Python arithmetic has a number as result, and the
//     specializer folds it;
//   * fold IR operators (make_tuple, tuple_getitem, switch...) or calls of
//     graphs: that is the job of simplification and inlining passes.
#pragma once

#include <cstdint>

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

inline constexpr int64_t kMaxFoldElements = 1024;

// Constant folding over `g` and the graphs nested in it. Returns true when
// anything was folded.
bool run_constant_fold(ir::IrModule& m, ir::FuncGraph& g);

}  // namespace msl::jit
