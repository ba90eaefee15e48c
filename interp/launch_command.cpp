// `msl launch` (launch_command.h).
#include "interp/launch_command.h"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels/available_cpus.h"

extern char** environ;

namespace msl {

namespace {

const char* kLaunchUsage =
    "usage: msl launch -n N [--hosts H1[:SLOTS],H2,...] [--timeout S] [--threads T] [--dry-run] FILE [ARGS...]\n"
    "  runs FILE as N processes of one data-parallel job (mpirun underneath)\n"
    "  -n N          number of processes (ranks)\n"
    "  --hosts LIST  machines to run on (default: this one), as mpirun's --host\n"
    "  --timeout S   seconds a collective waits for the other ranks (default 300)\n"
    "  --threads T   kernel threads per process (default: this machine's cores / N)\n"
    "  --dry-run     print the mpirun command instead of running it\n";

bool parse_int(const std::string& s, long lo, long hi, long& out) {
  char* end = nullptr;
  errno = 0;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) return false;
  out = v;
  return true;
}

}  // namespace

LaunchPlan plan_launch(const std::vector<std::string>& args, const std::string& msl_exe, int cores, bool root) {
  LaunchPlan plan;
  long n = 0, threads = 0, timeout = 0;
  std::string hosts;
  bool dry = false;
  size_t i = 0;
  auto value = [&](const std::string& opt) -> const std::string* {
    if (i + 1 >= args.size()) {
      plan.error = fmt::format("msl launch: {} needs a value", opt);
      return nullptr;
    }
    return &args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string* v = nullptr;
    if (a == "-n" || a == "-np") {
      if (!(v = value(a))) return plan;
      if (!parse_int(*v, 1, 65536, n)) plan.error = fmt::format("msl launch: -n must be 1..65536, got '{}'", *v);
    } else if (a == "--hosts" || a == "--host") {
      if (!(v = value(a))) return plan;
      hosts = *v;
    } else if (a == "--timeout") {
      if (!(v = value(a))) return plan;
      if (!parse_int(*v, 1, 86400 * 7, timeout))
        plan.error = fmt::format("msl launch: --timeout must be a number of seconds, got '{}'", *v);
    } else if (a == "--threads") {
      if (!(v = value(a))) return plan;
      if (!parse_int(*v, 1, 4096, threads))
        plan.error = fmt::format("msl launch: --threads must be 1..4096, got '{}'", *v);
    } else if (a == "--dry-run") {
      dry = true;
    } else if (a == "-h" || a == "--help") {
      plan.error = kLaunchUsage;
      return plan;
    } else if (!a.empty() && a[0] == '-') {
      plan.error = fmt::format("msl launch: unknown option '{}'\n{}", a, kLaunchUsage);
      return plan;
    } else {
      break;
    }
    if (!plan.error.empty()) return plan;
  }
  if (n == 0) {
    plan.error = fmt::format("msl launch: -n N (the number of processes) is required\n{}", kLaunchUsage);
    return plan;
  }
  if (i >= args.size()) {
    plan.error = fmt::format("msl launch: no script to run\n{}", kLaunchUsage);
    return plan;
  }
  std::vector<std::string>& av = plan.argv;
  av = {"mpirun", "-n", std::to_string(n)};
  // Open MPI refuses root unless told; containers commonly run as root.
  if (root) av.push_back("--allow-run-as-root");
  if (!hosts.empty()) {
    av.insert(av.end(), {"--host", hosts});
  } else if (n > cores) {
    // More ranks than cores on this machine: mpirun refuses unless
    // oversubscribing is allowed, and binding each rank to one core would
    // stack them; the ranks share the cores one thread each.
    av.insert(av.end(), {"--oversubscribe", "--bind-to", "none"});
  }
  if (timeout > 0) av.insert(av.end(), {"-x", fmt::format("MSL_COMM_TIMEOUT={}", timeout)});
  if (dry) av.insert(av.begin(), "echo");
  av.push_back(msl_exe);
  // Each rank's kernels get their share of this machine's cores (on other
  // hosts the same share of theirs is a guess; --threads sets it).
  if (threads == 0) threads = hosts.empty() ? std::max<long>(1, cores / n) : 0;
  if (threads > 0) av.insert(av.end(), {"--threads", std::to_string(threads)});
  av.push_back("run");
  for (; i < args.size(); ++i) av.push_back(args[i]);
  return plan;
}

int launch_command(const std::vector<std::string>& args, const std::string& msl_exe) {
  LaunchPlan plan = plan_launch(args, msl_exe, kernels::available_cpus(), ::geteuid() == 0);
  if (!plan.error.empty()) {
    std::fputs(plan.error.c_str(), stderr);
    if (plan.error.back() != '\n') std::fputc('\n', stderr);
    return 2;
  }
  std::vector<char*> argv;
  for (std::string& a : plan.argv) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  int err = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
  if (err != 0) {
    std::fprintf(stderr, "msl launch: cannot run %s: %s (install Open MPI: apt-get install openmpi-bin)\n", argv[0],
                 std::strerror(err));
    return 127;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::fprintf(stderr, "msl launch: the job of %s processes failed (mpirun exit status %d); the first failing rank's "
                       "error is above\n",
               plan.argv[2].c_str(), code);
  return code;
}

}  // namespace msl
