// The interactive REPL (spec §1): libedit line editing with persistent
// history, multi-line blocks, printing of expression values, Ctrl-C to
// interrupt the running statement, Ctrl-D to exit, tab completion, and the
// meta commands :help, :mode, :ir, :time, :quit.
#pragma once

#include <string>

#include "interp/core/interp.h"

namespace msl {

// Runs the REPL on the terminal until Ctrl-D or :quit; returns the exit status
// (0, or the code given to sys.exit). :mode shows and sets msl.context's
// mode (the command line's --mode at start), :ir NAME prints the graph IR
// of a function or Cell as graph mode compiles it.
int run_repl(Interp& I);

}  // namespace msl
