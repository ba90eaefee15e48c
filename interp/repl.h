// The interactive REPL (spec §1): libedit line editing with persistent
// history, multi-line blocks, printing of expression values, Ctrl-C to
// interrupt the running statement, Ctrl-D to exit, tab completion, and the
// meta commands :help, :mode, :ir, :time, :quit.
#pragma once

#include <string>

#include "interp/core/interp.h"

namespace msl {

// Runs the REPL on the terminal until Ctrl-D or :quit; returns the exit status
// (0, or the code given to sys.exit). `mode` is the --mode of the command line,
// shown and changed by :mode.
int run_repl(Interp& I, const std::string& mode = "graph");

}  // namespace msl
