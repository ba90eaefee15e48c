// `msl launch -n N [--hosts H1,H2,...] [--timeout S] [--threads T] FILE [ARGS...]`:
// runs FILE as N processes of one data-parallel job, through Open MPI's
// mpirun (as MindSpore's jobs start under mpirun or msrun). Plain
// `mpirun -n N msl run FILE` works too; the launcher adds what a user
// would otherwise look up: a thread count per process that shares the
// cores, the flags a root user or an oversubscribed machine needs, the
// collective timeout, and a last line saying how the job ended.
#pragma once

#include <string>
#include <vector>

namespace msl {

int launch_command(const std::vector<std::string>& args, const std::string& msl_exe);

// The mpirun command line launch_command runs (for tests and --dry-run).
struct LaunchPlan {
  std::vector<std::string> argv;
  std::string error;  // non-empty: a usage error
};
LaunchPlan plan_launch(const std::vector<std::string>& args, const std::string& msl_exe, int cores, bool root);

}  // namespace msl
