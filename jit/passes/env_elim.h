// Environment elimination: resolving AD's free-variable sensitivity
// environments (Myia's EnvInstance) where their construction is visible.
//
// A bprop returns the sensitivities of the free variables it closes over in
// an environment: env_new() is the empty one, env_setitem(e, k, v) adds v
// under the int key k, env_add(e1, e2) merges two (keywise grad_add), and
// env_getitem(e, k, d) reads key k, or d when it is absent. After inlining,
// the chains are visible and resolve statically (k, k2 int constants):
//   * env_getitem(env_setitem(e, k, v), k, d)       -> v
//   * env_getitem(env_setitem(e, k, v), k2 != k, d) -> env_getitem(e, k2, d)
//   * env_getitem(env_new(), k, d)                   -> d
//   * env_add(env_new(), e) and env_add(e, env_new()) -> e
//   * env_getitem(env_add(a, b), k, d)
//       -> grad_add(env_getitem(a, k, d), env_getitem(b, k, d))
//     only when d is a zeros_like(...) call: a key absent from both sides
//     then still reads as zero (0 + 0), which any other default would not.
//
// Effects are kept: a rewrite that would drop a value that is, or depends
// on, an effect no other path from the output keeps alive (anchors.h) is
// skipped. (A weight's gradient depends on activations that waited for a
// BatchNorm's statistics update, which the output's state chain keeps.)
//
// What it does not do: keys that are not int constants, or environments
// that arrive as parameters, stay as they are (they resolve at run time);
// it never reorders or merges env_setitem chains on their own.
#pragma once

#include "lang/ir/func_graph.h"
#include "lang/ir/ir_module.h"

namespace msl::jit {

// Environment elimination over `g` and its nested graphs. Returns true when
// anything changed.
bool run_env_elim(ir::IrModule& m, ir::FuncGraph& g);

}  // namespace msl::jit
