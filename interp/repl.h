// The interactive REPL (spec §1): libedit line editing with persistent
// history, multi-line blocks, printing of expression values, Ctrl-C to
// interrupt the running statement, Ctrl-D to exit, tab completion, and the
// meta commands :help, :mode, :ir, :time, :quit.
#pragma once

#include "interp/interp.h"

namespace msl {

// Runs the REPL on the terminal until Ctrl-D or :quit; returns the exit status.
int run_repl(Interp& I);

}  // namespace msl
