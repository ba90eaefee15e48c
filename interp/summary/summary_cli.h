// `msl summary DIR [--out DIR]`: the scalars of the TensorBoard event files
// under DIR as a table (tag, step, value; sorted by tag, then step, in
// file order for equal steps) on stdout, and one PNG line plot per tag,
// named after the tag ('/' and other characters outside [A-Za-z0-9_.-]
// become '_'), written into --out (default DIR). Exit status 0, 1 when a
// file is unreadable or corrupt (the error on stderr), 2 for usage errors.
#pragma once

#include <string>
#include <vector>

namespace msl::summary {

// `args`: what follows `msl summary`.
int summary_command(const std::vector<std::string>& args);

// The file name of the plot of `tag`.
std::string plot_file_name(const std::string& tag);

}  // namespace msl::summary
