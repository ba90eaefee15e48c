// Where the standard library is when neither the host nor MSL_STDLIB says.
//
// The standard library is MSL source read at run time (stdlib/), so a
// program has to find it. An installed tree keeps it at a fixed place
// relative to the binaries:
//
//   <prefix>/bin/msl                       the command (links the library statically)
//   <prefix>/lib/libmsl.so                 the embedding library
//   <prefix>/share/msl/stdlib/msl/...      the standard library
//
// and may be moved as a whole, so no absolute path is compiled in for it.
// default_stdlib_dir() looks, in this order:
//   1. relative to the file that holds this code — libmsl.so for a host
//      linking the shared library (found with dladdr), else the executable;
//   2. relative to the running executable (/proc/self/exe);
//   3. the source tree's stdlib/ recorded at build time, so that binaries
//      run from the build tree (every test) use the sources they were built
//      from.
// A candidate counts only when it holds msl/__init__.msl. The folders of
// MSL_PATH / Config::module_path come before the standard library in
// sys.path either way; this only decides its last entry.
//
// Linux only (dladdr, /proc/self/exe), like the rest of the build.
#pragma once

#include <string>

namespace msl {

// The standard library's root folder (holding msl/), normalized; the
// compiled-in source path when nothing else is found. Computed once.
const std::string& default_stdlib_dir();

}  // namespace msl
