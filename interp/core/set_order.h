// Iteration order of sets.
//
// Sets store their elements in insertion order (the same ordered table as
// dict). CPython instead iterates a set in hash-table order, so `{3, 1, 2}`
// prints as `{1, 2, 3}`. Programs print sets of integers often enough that
// MSL reproduces that order: for a set of ints and bools the order is the
// slot order CPython's set table would have after inserting the same
// elements in the same order. Sets holding anything else (whose CPython
// order depends on randomised string hashes anyway) keep insertion order.
#pragma once

#include <vector>

#include "interp/core/object.h"

namespace msl {

// Indices into `map.entries()` of the live elements, in iteration order.
std::vector<size_t> set_iteration_order(const ValueMap& map);

}  // namespace msl
