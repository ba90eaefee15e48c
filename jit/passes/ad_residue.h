// What must not survive the clean-up of a gradient: queries for tests and
// the driver's diagnostics.
//
// After the J transform (lang/ad/) and optimize() (pipeline.h), the
// gradient of straight-line code is plain primitive applications. What
// would show that the clean-up fell short is AD machinery left behind:
//   * J applications (a transform not expanded);
//   * env_new / env_getitem / env_setitem / env_add applications
//     (free-variable sensitivities not resolved);
//   * partial applications (backpropagator closures not called away);
//   * graph constants (closures still built or called).
// These queries only report; they change nothing.
#pragma once

#include <cstddef>
#include <vector>

#include "lang/ir/func_graph.h"

namespace msl::jit {

// The residue nodes of `g` and its nested graphs, in graph order (parents
// first) and topological order within a graph. An Apply of J, env_* or
// partial is reported as the Apply; a graph constant as the constant node,
// once per use (graph-less constants are shared, so a node may repeat).
// The same operators used as values (not called) are reported as
// constants too.
std::vector<const ir::Node*> ad_residue(const ir::FuncGraph& g);

// The number of Apply nodes of `g` and its nested graphs whose callee is a
// kernel primitive constant.
size_t count_primitive_applies(const ir::FuncGraph& g);

}  // namespace msl::jit
