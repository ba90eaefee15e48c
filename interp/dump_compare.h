// `msl compare DIR_A DIR_B [--rtol R] [--atol A] [--format table|csv|json]`:
// matches the ops of two `msl --dump` folders and reports, per op, cosine
// similarity and the largest absolute and relative errors, then the first
// op whose outputs differ beyond atol + rtol * max |B| (dump_compare.cpp).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

namespace msl {

// The command's arguments after `compare`; the report goes to `out`, usage
// and input errors to `err`. Returns the exit status: 0 nothing differs, 1
// an op differs, 2 bad arguments or unreadable dumps.
int dump_compare_main(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace msl
