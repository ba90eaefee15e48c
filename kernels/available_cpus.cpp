#include "kernels/available_cpus.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace msl::kernels {

namespace {

int affinity_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The smallest quota on the way from this process's cgroup up to the root
// (a parent's limit bounds its children), or 0 when none is set. Only the
// unified (v2) hierarchy mounted at /sys/fs/cgroup is read.
int cgroup_quota_cpus() {
  std::istringstream lines(read_file("/proc/self/cgroup"));
  std::string line, path;
  while (std::getline(lines, line)) {
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  }
  if (path.empty() || path[0] != '/') return 0;
  int best = 0;
  for (;;) {
    int n = cpu_max_cpus(read_file("/sys/fs/cgroup" + path + "/cpu.max"));
    if (n > 0) best = best > 0 ? std::min(best, n) : n;
    if (path == "/") break;
    size_t slash = path.find_last_of('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
  return best;
}

}  // namespace

int cpu_max_cpus(std::string_view text) {
  auto number = [&](int64_t& v) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || v <= 0) return false;
    text.remove_prefix(static_cast<size_t>(end - text.data()));
    return true;
  };
  int64_t quota = 0, period = 0;
  if (!number(quota) || !number(period)) return 0;
  return static_cast<int>(std::max<int64_t>(1, (quota + period - 1) / period));
}

int available_cpus() {
  int n = affinity_cpus();
  if (n <= 0) n = 1;
  int quota = cgroup_quota_cpus();
  return quota > 0 ? std::min(n, quota) : n;
}

}  // namespace msl::kernels
