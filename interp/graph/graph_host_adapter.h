// The host callables that graph mode calls for value attributes, methods,
// keyword calls of library functions and slicing (ir::HostAdapter).
#pragma once

#include "interp/core/interp.h"
#include "lang/ir/lower.h"

namespace msl {

// A HostRef constant for `spec`: a native function performing the
// expression on its arguments, named after it in IR dumps (`$.shape`,
// `$.sum(axis=)`, `$[_:, _]`).
ir::ConstValue make_host_adapter(Interp& I, const ir::HostAdapter& spec);

// The method an adapter function calls on its first argument (`x.append(y)`
// → "append"), or null when `fn` is no such adapter.
const std::string* adapter_method(const Value& fn);
// The attribute an adapter function reads (`x.dtype` → "dtype"), or null
// when `fn` is no such adapter.
const std::string* adapter_attribute(const Value& fn);
// Whether `fn` is the adapter of a `raise` statement (never traced: it
// runs when the graph reaches it).
bool adapter_raises(const Value& fn);

// Whether `fn` is a primitive instance marked add_prim_attr("side_effect_io",
// True), as MindSpore marks Print and the summary operators: it records or
// writes, so graph mode calls it only when the graph runs, on real values,
// and autodiff calls it in the forward pass with no gradient through it.
bool side_effect_primitive(Interp& I, const Value& fn);

// Whether graph mode may call host function `fn` at compile time, in a
// trace, to learn its result's type or expand it into primitives. False
// for what acts on the world or on host state: builtin methods of mutable
// objects (list.append, a file's write), open/input/print and the like,
// the os, sys, time and random modules. Such calls run only when the graph
// runs, in program order. `receiver`: the value a method adapter would be
// called on, when known.
bool traceable_host_call(Interp& I, const Value& fn, const Value* receiver = nullptr);

}  // namespace msl
