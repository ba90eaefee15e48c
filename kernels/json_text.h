// A JSON string literal for a byte string: the one quoting used wherever MSL
// writes JSON (safetensors headers, the profiler's timeline, msl compare's
// report).
#pragma once

#include <string>
#include <string_view>

namespace msl::kernels {

// `s` in double quotes, with `"` and `\` escaped, \n \r \t by name and
// other control bytes as \u00XX; other bytes (UTF-8) as they are.
std::string json_quote(std::string_view s);

}  // namespace msl::kernels
