// The host callables that graph mode calls for value attributes, methods,
// keyword calls of library functions and slicing (ir::HostAdapter).
#pragma once

#include "interp/interp.h"
#include "lang/ir/lower.h"

namespace msl {

// A HostRef constant for `spec`: a native function performing the
// expression on its arguments, named after it in IR dumps (`$.shape`,
// `$.sum(axis=)`, `$[_:, _]`).
ir::ConstValue make_host_adapter(Interp& I, const ir::HostAdapter& spec);

}  // namespace msl
