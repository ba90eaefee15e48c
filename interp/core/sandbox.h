// The sandbox of an embedded interpreter (Interp::Options::sandbox, the
// embedding API's Config::sandbox): the script keeps the language, the
// standard library, tensors and training, and loses what reaches the host
// machine: files (open, os, checkpoint and data set files, save_graphs),
// the environment, input(), the working folder. Modules still import (the
// standard library imports os and msl._checkpoint at import time); each such
// native function is replaced by one that raises PermissionError naming it.
// sys.exit stays: in an embedded VM it ends the evaluation (Status::Exit),
// never the host process.
#pragma once

#include <string_view>

namespace msl {

class Interp;
struct Module;

// Applies the sandbox to module `name` ("builtins" for the builtins) right
// after it is made, when `I` is sandboxed.
void sandbox_module(Interp& I, std::string_view name, Module& m);

}  // namespace msl
