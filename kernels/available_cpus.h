// How many CPUs this process can use, which is the kernels' default thread
// count: the CPUs its affinity mask allows (taskset, cpusets), capped by a
// cgroup v2 CPU quota (cpu.max, what container runtimes set for --cpus).
// More threads than that only wait for each other's time slices.
#pragma once

#include <string_view>

namespace msl::kernels {

// At least 1.
int available_cpus();

// CPUs a cgroup v2 cpu.max line allows ("150000 100000" -> 2, rounded up;
// a quota below one CPU still gives 1), or 0 for "max ..." and text that is
// not a quota.
int cpu_max_cpus(std::string_view text);

}  // namespace msl::kernels
