// msl_script_runner: runs one script test of tests/lang/ and checks it
// against the annotations written in the script itself, in the manner of
// Wren's test runner (test/<area>/<case>.wren with `// expect:` comments).
//
//   msl_script_runner <path-to-msl> <test.msl>
//
// runs `<msl> run <basename of test.msl> ARGS…` with the test's folder as the
// working directory (so relative imports and files next to the test work, and
// sys.argv[0] is just the file name), captures stdout, stderr and the exit
// status, and checks these annotations (each may sit at the end of a code line
// or on a line of its own):
//
//   # expect: TEXT                 the next line of stdout is exactly TEXT; every
//                                  stdout line must be accounted for
//   # expect error line N: MSG     a syntax/compile error: exit 1, and stderr has
//                                  `FILE:N:COL: error: MSG` (several allowed)
//   # expect runtime error: T: M   exit 1 and the last non-empty stderr line is `T: M`
//   # expect traceback line N [in FUNC]
//                                  the traceback has a frame `FILE:N:COL in FUNC`;
//                                  several such lines must match frames in order
//   # expect exit: N               the exit status is N (sys.exit tests)
//   # expect stderr: TEXT          the next line of stderr is exactly TEXT (when
//                                  present, stderr lines are checked like stdout)
//   # args: A B C                  extra command-line arguments after the script
//   # env: NAME=VALUE              set an environment variable for the run
//
// With no error/exit annotation the exit status must be 0 and stderr empty.
// The child is killed after 20 seconds. The runner prints nothing but one
// summary line on success; on failure it prints what differed (expected vs
// actual, with the test file's line numbers) and exits 1. Usage errors exit 2.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

constexpr int kTimeoutSeconds = 20;
// Output beyond this is not kept (a runaway print loop must not eat memory).
constexpr size_t kMaxCapture = 8u << 20;

struct Expectation {
  int source_line;  // line of the annotation in the test file
  std::string text;
};

struct SyntaxErrorExpectation {
  int source_line;
  int error_line;
  std::string message;
};

struct TracebackExpectation {
  int source_line;
  int frame_line;
  std::string function;  // empty: any
};

struct TestSpec {
  std::vector<Expectation> stdout_lines;
  std::vector<Expectation> stderr_lines;
  std::vector<SyntaxErrorExpectation> syntax_errors;
  std::optional<Expectation> runtime_error;
  std::vector<TracebackExpectation> traceback;
  std::optional<int> exit_code;
  std::vector<std::string> args;
  std::vector<std::string> env;
};

struct RunResult {
  std::string out;
  std::string err;
  int exit_code = -1;
  int signal = 0;  // non-zero: the child died of this signal
  bool timed_out = false;
};

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      if (!cur.empty() && cur.back() == '\r') cur.pop_back();
      lines.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) lines.push_back(cur);  // a last line without '\n'
  return lines;
}

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> words;
  std::istringstream in{std::string(s)};
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

bool parse_int(std::string_view s, int& out) {
  if (s.empty()) return false;
  bool neg = false;
  size_t i = 0;
  if (s[0] == '-') {
    neg = true;
    i = 1;
  }
  if (i == s.size()) return false;
  long v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
    if (v > 1000000000) return false;
  }
  out = static_cast<int>(neg ? -v : v);
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Text after `marker` on the line (one following space is part of the marker).
std::optional<std::string_view> after(std::string_view line, std::string_view marker) {
  size_t pos = line.find(marker);
  if (pos == std::string_view::npos) return std::nullopt;
  return line.substr(pos + marker.size());
}

// Reads the annotations. Problems with the annotations themselves are
// reported in `problems` (a malformed test fails rather than passing vacuously).
TestSpec parse_annotations(const std::string& source, std::vector<std::string>& problems) {
  TestSpec spec;
  std::vector<std::string> lines = split_lines(source);
  for (size_t i = 0; i < lines.size(); ++i) {
    const int lineno = static_cast<int>(i) + 1;
    std::string_view line = lines[i];
    if (auto rest = after(line, "# expect error line ")) {
      size_t colon = rest->find(':');
      int n = 0;
      if (colon == std::string_view::npos || !parse_int(trim(rest->substr(0, colon)), n)) {
        problems.push_back("line " + std::to_string(lineno) + ": malformed `# expect error line N: MESSAGE`");
        continue;
      }
      spec.syntax_errors.push_back({lineno, n, std::string(trim(rest->substr(colon + 1)))});
    } else if (auto rest = after(line, "# expect runtime error: ")) {
      if (spec.runtime_error) problems.push_back("line " + std::to_string(lineno) + ": a second `# expect runtime error`");
      spec.runtime_error = Expectation{lineno, std::string(trim(*rest))};
    } else if (auto rest = after(line, "# expect traceback line ")) {
      std::vector<std::string> words = split_words(*rest);
      int n = 0;
      if (words.empty() || !parse_int(words[0], n) || (words.size() != 1 && (words.size() != 3 || words[1] != "in"))) {
        problems.push_back("line " + std::to_string(lineno) + ": malformed `# expect traceback line N [in FUNC]`");
        continue;
      }
      spec.traceback.push_back({lineno, n, words.size() == 3 ? words[2] : ""});
    } else if (auto rest = after(line, "# expect exit: ")) {
      int n = 0;
      if (!parse_int(trim(*rest), n)) {
        problems.push_back("line " + std::to_string(lineno) + ": malformed `# expect exit: N`");
        continue;
      }
      spec.exit_code = n;
    } else if (auto rest = after(line, "# expect stderr:")) {
      std::string_view text = *rest;
      if (!text.empty() && text.front() == ' ') text.remove_prefix(1);
      spec.stderr_lines.push_back({lineno, std::string(text)});
    } else if (auto rest = after(line, "# expect:")) {
      // `# expect:` followed by nothing expects an empty line.
      std::string_view text = *rest;
      if (!text.empty() && text.front() == ' ') text.remove_prefix(1);
      spec.stdout_lines.push_back({lineno, std::string(text)});
    } else if (auto rest = after(line, "# args:")) {
      for (auto& w : split_words(*rest)) spec.args.push_back(w);
    } else if (auto rest = after(line, "# env: ")) {
      std::string kv(trim(*rest));
      if (kv.find('=') == std::string::npos) {
        problems.push_back("line " + std::to_string(lineno) + ": malformed `# env: NAME=VALUE`");
        continue;
      }
      spec.env.push_back(kv);
    }
  }
  if (!spec.syntax_errors.empty() && spec.runtime_error)
    problems.push_back("both `# expect error line` and `# expect runtime error`: pick one");
  if (!spec.traceback.empty() && !spec.runtime_error)
    problems.push_back("`# expect traceback line` without `# expect runtime error`");
  return spec;
}

// Reads everything from both pipes until the child closes them or the
// deadline passes; then reaps the child (killing its process group on timeout).
RunResult run_child(const std::string& msl, const std::string& dir, const std::string& script,
                    const TestSpec& spec) {
  RunResult r;
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) {
    std::perror("msl_script_runner: pipe");
    std::exit(2);
  }
  std::vector<std::string> argv_store = {msl};
  // Environment variables the CTest variants set, each passed on as an
  // msl option:
  //   MSL_TEST_MODE=pynative|graph  --mode: the `modes` label runs the ops
  //                                 scripts with the other default mode;
  //   MSL_TEST_DEVICE=gpu           --device: the GPU check
  //                                 (scripts/gpu_check.sh) runs them so;
  //   MSL_TEST_GRAPH_TARGET=cuda    --graph-target: the `cuda_target` label
  //                                 compiles their graphs for the GPU.
  constexpr std::pair<const char*, const char*> kEnvOptions[] = {
      {"MSL_TEST_MODE", "--mode"}, {"MSL_TEST_DEVICE", "--device"}, {"MSL_TEST_GRAPH_TARGET", "--graph-target"}};
  for (auto [var, option] : kEnvOptions) {
    if (const char* value = std::getenv(var); value && *value) {
      argv_store.push_back(option);
      argv_store.push_back(value);
    }
  }
  argv_store.push_back("run");
  argv_store.push_back(script);
  for (auto& a : spec.args) argv_store.push_back(a);
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) {
    std::perror("msl_script_runner: fork");
    std::exit(2);
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own group, so a timeout kills anything it started
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);  // scripts never read stdin
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(out_pipe[1]);
    close(err_pipe[0]);
    close(err_pipe[1]);
    if (chdir(dir.c_str()) != 0) {
      std::fprintf(stderr, "msl_script_runner: cannot chdir to %s: %s\n", dir.c_str(), std::strerror(errno));
      _exit(127);
    }
    for (const auto& kv : spec.env) {
      size_t eq = kv.find('=');
      setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
    }
    execv(argv[0], argv.data());
    std::fprintf(stderr, "msl_script_runner: cannot run %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, to win the race with exec
  close(out_pipe[1]);
  close(err_pipe[1]);

  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::seconds(kTimeoutSeconds);
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    int n = poll(fds, 2, static_cast<int>(left));
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int k = 0; k < 2; ++k) {
      if (fds[k].fd < 0 || fds[k].revents == 0) continue;
      ssize_t got = read(fds[k].fd, buf, sizeof buf);
      if (got > 0) {
        if (sinks[k]->size() < kMaxCapture) sinks[k]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(fds[k].fd);
        fds[k].fd = -1;
        --open_fds;
      }
    }
  }
  if (r.timed_out) kill(-pid, SIGKILL);
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);

  int status = 0;
  // The pipes may close before the child exits; wait for it within the
  // deadline too (a child that closed its stdout and then hangs).
  while (true) {
    pid_t w = waitpid(pid, &status, r.timed_out ? 0 : WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) break;
    if (Clock::now() >= deadline) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      continue;
    }
    usleep(2000);
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// Collects failure messages; prints them all at the end.
struct Report {
  std::string test;
  std::vector<std::string> failures;
  void fail(std::string msg) { failures.push_back(std::move(msg)); }
};

std::string backticked(const std::string& s) { return "`" + s + "`"; }

void check_lines(Report& rep, const char* stream, const std::vector<Expectation>& expected,
                 const std::vector<std::string>& actual) {
  size_t n = std::max(expected.size(), actual.size());
  size_t first_bad = n;
  for (size_t i = 0; i < n; ++i) {
    bool same = i < expected.size() && i < actual.size() && expected[i].text == actual[i];
    if (!same) {
      first_bad = i;
      break;
    }
  }
  if (first_bad == n) return;
  std::ostringstream msg;
  msg << stream << " differs";
  if (first_bad < expected.size() && first_bad < actual.size())
    msg << " at " << stream << " line " << first_bad + 1 << " (expected at test line "
        << expected[first_bad].source_line << ")";
  else if (first_bad < expected.size())
    msg << ": missing " << stream << " line " << first_bad + 1 << " (expected at test line "
        << expected[first_bad].source_line << ")";
  else
    msg << ": unexpected extra " << stream << " line " << first_bad + 1;
  msg << "\n";
  // Show the region around the first difference, side by side.
  size_t from = first_bad >= 3 ? first_bad - 3 : 0;
  size_t to = std::min(n, first_bad + 8);
  for (size_t i = from; i < to; ++i) {
    std::string e = i < expected.size() ? backticked(expected[i].text) : "(none)";
    std::string a = i < actual.size() ? backticked(actual[i]) : "(none)";
    bool same = i < expected.size() && i < actual.size() && expected[i].text == actual[i];
    msg << (same ? "      " : "  >>  ") << stream << " " << i + 1;
    if (i < expected.size()) msg << " [test line " << expected[i].source_line << "]";
    msg << "\n        expected: " << e << "\n        actual:   " << a << "\n";
  }
  if (to < n) msg << "      … (" << n - to << " more lines)\n";
  msg << "    (" << expected.size() << " expected lines, " << actual.size() << " actual lines)";
  rep.fail(msg.str());
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Does `file` (as printed in a diagnostic) name the test script?
bool names_script(std::string_view file, const std::string& base) {
  return file == base || ends_with(file, "/" + base);
}

// Parses `FILE:LINE:COL` at the start of `s` (after leading spaces); returns
// the rest of the string after COL.
bool parse_location(std::string_view s, std::string_view& file, int& line, std::string_view& rest) {
  s = trim(s);
  // FILE may itself contain ':' (unlikely); take the last `:digits:digits` run.
  for (size_t pos = s.find(':'); pos != std::string_view::npos; pos = s.find(':', pos + 1)) {
    size_t a = pos + 1, b = a;
    while (b < s.size() && std::isdigit(static_cast<unsigned char>(s[b]))) ++b;
    if (b == a || b >= s.size() || s[b] != ':') continue;
    size_t c = b + 1, d = c;
    while (d < s.size() && std::isdigit(static_cast<unsigned char>(s[d]))) ++d;
    if (d == c) continue;
    file = s.substr(0, pos);
    int n = 0;
    if (!parse_int(s.substr(a, b - a), n)) continue;
    line = n;
    rest = s.substr(d);
    return true;
  }
  return false;
}

std::string indent_block(const std::string& text, size_t max_lines = 40) {
  std::vector<std::string> lines = split_lines(text);
  std::ostringstream o;
  size_t start = lines.size() > max_lines ? lines.size() - max_lines : 0;
  if (start > 0) o << "    … (" << start << " earlier lines)\n";
  for (size_t i = start; i < lines.size(); ++i) o << "    | " << lines[i] << "\n";
  if (lines.empty()) o << "    (empty)\n";
  return o.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: msl_script_runner <path-to-msl> <test.msl>\n");
    return 2;
  }
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path msl = fs::absolute(argv[1], ec);
  fs::path test = fs::absolute(argv[2], ec);
  std::ifstream in(test, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "msl_script_runner: cannot read %s\n", test.c_str());
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string source = ss.str();

  // The test's name as CTest shows it: <feature>/<case>.
  Report rep;
  rep.test = (test.parent_path().filename() / test.filename()).string();

  std::vector<std::string> problems;
  TestSpec spec = parse_annotations(source, problems);
  for (auto& p : problems) rep.fail("bad annotation: " + p);

  const std::string base = test.filename().string();
  RunResult r = run_child(msl.string(), test.parent_path().string(), base, spec);
  std::vector<std::string> out_lines = split_lines(r.out);
  std::vector<std::string> err_lines = split_lines(r.err);

  const bool expects_error = !spec.syntax_errors.empty() || spec.runtime_error.has_value();
  if (r.timed_out) {
    rep.fail("timed out after " + std::to_string(kTimeoutSeconds) + " s (killed)");
  } else if (r.signal != 0) {
    rep.fail("crashed: killed by signal " + std::to_string(r.signal) + " (" + strsignal(r.signal) +
             "); no input may crash the interpreter");
  } else {
    int want = spec.exit_code ? *spec.exit_code : expects_error ? 1 : 0;
    if (r.exit_code != want)
      rep.fail("exit status: expected " + std::to_string(want) + ", got " + std::to_string(r.exit_code));
  }

  check_lines(rep, "stdout", spec.stdout_lines, out_lines);

  if (!spec.stderr_lines.empty()) {
    check_lines(rep, "stderr", spec.stderr_lines, err_lines);
  } else if (!expects_error && !spec.exit_code && !r.err.empty()) {
    rep.fail("stderr should be empty");
  }

  // Syntax errors: each expected `FILE:N:COL: error: MSG` must be on stderr;
  // an error diagnostic on a line that no annotation names is a failure too.
  if (!spec.syntax_errors.empty()) {
    std::vector<std::pair<int, std::string>> seen;  // (line, message) of each diagnostic
    for (auto& l : err_lines) {
      std::string_view file, rest;
      int line = 0;
      if (!parse_location(l, file, line, rest) || !names_script(file, base)) continue;
      if (rest.substr(0, 9) != ": error: ") continue;
      seen.emplace_back(line, std::string(trim(rest.substr(9))));
    }
    for (auto& e : spec.syntax_errors) {
      bool found = false;
      std::string same_line;
      for (auto& [line, msg] : seen) {
        if (line != e.error_line) continue;
        if (msg == e.message) found = true;
        else same_line = msg;
      }
      if (!found) {
        std::string m = "missing diagnostic (test line " + std::to_string(e.source_line) + "): " + base + ":" +
                        std::to_string(e.error_line) + ":COL: error: " + e.message;
        if (!same_line.empty()) m += "\n    got on that line instead: error: " + same_line;
        rep.fail(m);
      }
    }
    for (auto& [line, msg] : seen) {
      bool expected = false;
      for (auto& e : spec.syntax_errors) expected = expected || e.error_line == line;
      if (!expected)
        rep.fail("unexpected diagnostic: " + base + ":" + std::to_string(line) + ":COL: error: " + msg);
    }
  }

  if (spec.runtime_error) {
    std::string last;
    for (auto it = err_lines.rbegin(); it != err_lines.rend(); ++it) {
      if (!trim(*it).empty()) {
        last = std::string(trim(*it));
        break;
      }
    }
    if (last != spec.runtime_error->text)
      rep.fail("runtime error (test line " + std::to_string(spec.runtime_error->source_line) +
               "):\n    expected: " + backticked(spec.runtime_error->text) + "\n    actual:   " + backticked(last));
    // Traceback frames `FILE:N:COL in FUNC`, matched in order as a subsequence.
    std::vector<std::pair<int, std::string>> frames;
    for (auto& l : err_lines) {
      std::string_view file, rest;
      int line = 0;
      if (!parse_location(l, file, line, rest) || rest.substr(0, 4) != " in ") continue;
      frames.emplace_back(line, std::string(trim(rest.substr(4))));
    }
    size_t k = 0;
    for (auto& t : spec.traceback) {
      while (k < frames.size() &&
             !(frames[k].first == t.frame_line && (t.function.empty() || frames[k].second == t.function)))
        ++k;
      if (k == frames.size()) {
        std::string m = "traceback (test line " + std::to_string(t.source_line) + "): no frame at line " +
                        std::to_string(t.frame_line) + (t.function.empty() ? "" : " in " + t.function) +
                        " (in order after the frames matched before it); frames seen:";
        for (auto& [line, fn] : frames) m += " " + std::to_string(line) + " in " + fn + ";";
        if (frames.empty()) m += " none";
        rep.fail(m);
        break;
      }
      ++k;
    }
  }

  if (rep.failures.empty()) {
    std::printf("PASS %s (%zu stdout lines checked)\n", rep.test.c_str(), spec.stdout_lines.size());
    return 0;
  }
  std::printf("FAIL %s\n", rep.test.c_str());
  for (auto& f : rep.failures) std::printf("  - %s\n", f.c_str());
  std::string cmd = "    (cd " + test.parent_path().string() + " && " + msl.string() + " run " + base;
  for (auto& a : spec.args) cmd += " " + a;
  std::printf("  command:\n%s)\n", cmd.c_str());
  std::printf("  stdout (exit status %d):\n%s", r.exit_code, indent_block(r.out).c_str());
  std::printf("  stderr:\n%s", indent_block(r.err).c_str());
  std::printf("FAIL %s (%zu problem%s)\n", rep.test.c_str(), rep.failures.size(),
              rep.failures.size() == 1 ? "" : "s");
  return 1;
}
