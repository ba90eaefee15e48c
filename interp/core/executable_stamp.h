// What identifies the build of msl running now, for on-disk caches whose
// entries only that build may read back (compiled graphs, parsed modules).
#pragma once

#include <string>

namespace msl {

// The size and modification time of the file holding this code, so a
// rebuilt msl never reads entries of another build: libmsl.so for a host
// program that links it (its executable stays the same when the library is
// upgraded), else the executable itself (/proc/self/exe: a statically
// linked msl, whose dladdr name may be a bare or relative argv[0]).
// "unknown" when neither can be examined. Computed once per process.
const std::string& executable_stamp();

}  // namespace msl
