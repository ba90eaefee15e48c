// Drives the `msl` REPL through a pseudo-terminal, as a user at a keyboard
// would: prompts and continuation lines, printed values, tracebacks that do
// not end the session, Tab completion of names and attributes, Ctrl-C while a
// statement runs and while typing, meta commands, persistent history across
// sessions, Ctrl-D and sys.exit() exit statuses.
//
// With --progress it runs `msl run SCRIPT` on the terminal instead, SCRIPT
// being tests/repl/train_progress.msl: the streams are terminals there, and
// LossMonitor draws its progress line with carriage returns.
//
// usage: msl_repl_pty_test PATH/TO/msl HOME_DIR
//        msl_repl_pty_test --progress PATH/TO/msl SCRIPT
//
// Each step waits (with a timeout) for the text it expects in the terminal
// output, after removing carriage returns and terminal escape sequences
// (expect_raw: in the bytes as written); a failure prints the step, what was
// awaited and the tail of the output.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

const char* g_msl = nullptr;
std::string g_home;
int g_failures = 0;

class Session {
 public:
  // Runs `msl ARGS...` (no ARGS: the REPL) on a new 100x24 terminal.
  explicit Session(const char* name, std::vector<std::string> args = {}) : name_(name) {
    struct winsize ws {};
    ws.ws_row = 24;
    ws.ws_col = 100;
    pid_ = forkpty(&fd_, nullptr, nullptr, &ws);
    if (pid_ < 0) {
      std::perror("forkpty");
      std::exit(2);
    }
    if (pid_ == 0) {
      if (!g_home.empty()) setenv("HOME", g_home.c_str(), 1);
      unsetenv("MSL_HISTORY");
      if (!getenv("TERM")) setenv("TERM", "xterm", 1);
      std::vector<char*> argv{const_cast<char*>(g_msl)};
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(g_msl, argv.data());
      std::perror("exec msl");
      _exit(127);
    }
  }

  ~Session() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (fd_ >= 0) close(fd_);
  }

  void send(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = write(fd_, s.data() + off, s.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        fail("write to the terminal", std::strerror(errno));
        return;
      }
      off += static_cast<size_t>(n);
    }
  }

  // Waits for `text` in the output after what earlier expectations consumed.
  bool expect(const std::string& step, const std::string& text, double timeout_s = 15) {
    return wait_for(step, "'" + printable(text) + "'", timeout_s, [&](const std::string& out, size_t from, size_t& end) {
      size_t at = out.find(text, from);
      if (at == std::string::npos) return false;
      end = at + text.size();
      return true;
    });
  }

  bool expect_regex(const std::string& step, const std::string& pattern, double timeout_s = 15) {
    std::regex re(pattern);
    return wait_for(step, "/" + pattern + "/", timeout_s, [&](const std::string& out, size_t from, size_t& end) {
      std::smatch m;
      std::string rest = out.substr(from);
      if (!std::regex_search(rest, m, re)) return false;
      end = from + static_cast<size_t>(m.position(0) + m.length(0));
      return true;
    });
  }

  bool prompt(const std::string& step) { return expect(step + " (prompt)", ">>> "); }

  // Waits for `text` in the raw output (carriage returns and escapes kept),
  // after what earlier expect_raw calls consumed.
  bool expect_raw(const std::string& step, const std::string& text, double timeout_s = 15) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      size_t at = raw_.find(text, raw_pos_);
      if (at != std::string::npos) {
        raw_pos_ = at + text.size();
        return true;
      }
      if (std::chrono::steady_clock::now() >= deadline || eof_) break;
      pump(100);
    }
    fail(step, "did not see '" + printable(text) + "' in the raw output" +
                   (eof_ ? " (msl closed the terminal)" : " within the timeout"));
    return false;
  }

  // The raw output so far: what the program wrote, as the terminal got it.
  const std::string& raw() const { return raw_; }

  // Waits for the process to exit; returns its exit status (or -1).
  int wait_exit(const std::string& step, double timeout_s = 15) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      pump(50);
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        reaped_ = true;
        pump(50);
        if (WIFEXITED(status)) return WEXITSTATUS(status);
        fail(step, "msl ended by signal " + std::to_string(WTERMSIG(status)));
        return -1;
      }
    }
    fail(step, "msl did not exit within the timeout");
    return -1;
  }

  void fail(const std::string& step, const std::string& why) {
    ++g_failures;
    std::string tail = clean_.size() > 1500 ? clean_.substr(clean_.size() - 1500) : clean_;
    std::fprintf(stderr, "FAIL [%s] %s: %s\n--- terminal output (tail, cleaned) ---\n%s\n--- end ---\n", name_,
                 step.c_str(), why.c_str(), tail.c_str());
  }

 private:
  template <class Match>
  bool wait_for(const std::string& step, const std::string& what, double timeout_s, Match match) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      size_t end = 0;
      if (match(clean_, pos_, end)) {
        pos_ = end;
        return true;
      }
      if (std::chrono::steady_clock::now() >= deadline || eof_) break;
      pump(100);
    }
    fail(step, "did not see " + what + (eof_ ? " (msl closed the terminal)" : " within the timeout"));
    return false;
  }

  // Reads whatever output is available within `ms` milliseconds.
  void pump(int ms) {
    if (eof_) return;
    struct pollfd p {fd_, POLLIN, 0};
    if (poll(&p, 1, ms) <= 0) return;
    char buf[4096];
    ssize_t n = read(fd_, buf, sizeof buf);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) return;
      eof_ = true;  // EIO once the child has closed the terminal
      return;
    }
    raw_.append(buf, static_cast<size_t>(n));
    clean_ = clean(raw_);
  }

  // Drops carriage returns, BEL and terminal escape sequences (libedit redraws).
  static std::string clean(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == '\r' || c == '\a') continue;
      if (c == '\x1b') {
        if (i + 1 < s.size() && s[i + 1] == '[') {
          i += 2;
          while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
        } else {
          ++i;
        }
        continue;
      }
      out += c;
    }
    return out;
  }

  static std::string printable(const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == '\n') out += "\\n";
      else if (static_cast<unsigned char>(c) < 0x20) out += "^" + std::string(1, static_cast<char>(c + 64));
      else out += c;
    }
    return out;
  }

  const char* name_;
  pid_t pid_ = -1;
  int fd_ = -1;
  bool eof_ = false;
  bool reaped_ = false;
  std::string raw_, clean_;
  size_t pos_ = 0, raw_pos_ = 0;
};

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

void first_session() {
  Session s("session 1");
  s.expect("banner", "MSL 0.1");
  s.expect("banner", "type :help for help, Ctrl-D to exit");
  s.prompt("start");

  // An expression statement's value is printed.
  s.send("1 + 2\n");
  s.expect("1 + 2", "\n3\n");
  s.prompt("after 1 + 2");
  s.send("'a' * 3\n");
  s.expect("string repr", "\n'aaa'\n");
  s.prompt("after string");
  s.send("x = None\n");
  s.prompt("assignment prints nothing");
  s.send("x\n");
  s.prompt("None prints nothing");

  // A block continues with '...' until an empty line.
  s.send("def add(a, b):\n");
  s.expect("block header", "... ");
  s.send("    return a + b\n");
  s.expect("block body", "... ");
  s.send("\n");
  s.prompt("block closed");
  s.send("add(2, 40)\n");
  s.expect("call the function", "\n42\n");
  s.prompt("after call");
  // An open bracket continues too.
  s.send("[1,\n");
  s.expect("open bracket", "... ");
  s.send(" 2]\n");
  s.expect("bracket closed", "\n[1, 2]\n");
  s.prompt("after list");

  // An error prints a traceback and the session goes on.
  s.send("1/0\n");
  s.expect("traceback", "ZeroDivisionError");
  s.prompt("after error");
  s.send("x = 5; x\n");
  s.expect("session continues", "\n5\n");
  s.prompt("after x");
  s.send("undefined_thing\n");
  s.expect("name error", "NameError");
  s.prompt("after name error");

  // Tab completion of a builtin name and of a module attribute.
  s.send("pri\t");
  s.expect("complete pri", "print");
  s.send("('done')\n");
  s.expect("completed print runs", "\ndone\n");
  s.prompt("after print");
  s.send("import math\n");
  s.prompt("after import");
  s.send("math.sq\t");
  s.expect("complete math.sq", "math.sqrt");
  s.send("(16)\n");
  s.expect("completed math.sqrt runs", "\n4.0\n");
  s.prompt("after sqrt");
  s.send("counter_value = 1\n");
  s.prompt("after counter");
  s.send("counter_v\t");
  s.expect("complete a global", "counter_value");
  s.send(" + 1\n");
  s.expect("completed global runs", "\n2\n");
  s.prompt("after global");

  // Ctrl-C interrupts a running statement, not the session.
  s.send("while True: pass\n");
  s.expect("loop header", "... ");
  s.send("\n");
  sleep_ms(400);
  s.send("\x03");
  s.expect("Ctrl-C while running", "KeyboardInterrupt");
  s.prompt("after interrupt");
  s.send("x + 1\n");
  s.expect("works after interrupt", "\n6\n");
  s.prompt("after x + 1");

  // Ctrl-C while typing discards the line.
  s.send("this is not run");
  sleep_ms(100);
  s.send("\x03");
  s.expect("Ctrl-C while typing", "KeyboardInterrupt");
  s.prompt("after discarded line");
  s.send("7 * 6\n");
  s.expect("works after discard", "\n42\n");
  s.prompt("after 7 * 6");

  // Meta commands.
  s.send(":time sum(range(1000))\n");
  s.expect("time value", "\n499500\n");
  s.expect_regex("time elapsed", "\\[[0-9]+\\.[0-9]+ m?s\\]");
  s.prompt("after :time");
  s.send(":help\n");
  s.expect("help", ":time STMT");
  s.expect("help", ":quit");
  s.prompt("after :help");
  // :mode is msl.context's mode, which the program then sees.
  s.send(":mode pynative\n");
  s.expect(":mode", "mode: pynative");
  s.prompt("after :mode");
  s.send("import msl; msl.get_context('mode') == msl.PYNATIVE_MODE\n");
  s.expect("the context follows :mode", "\nTrue\n");
  s.prompt("after get_context");
  s.send(":mode graph\n");
  s.expect(":mode graph", "mode: graph");
  s.prompt("after :mode graph");
  // :ir prints the graph a function compiles to: `add` is a + b.
  s.send(":ir add\n");
  s.expect(":ir", "subgraph @add(");
  s.expect(":ir body", "= add(%para1_");
  s.prompt("after :ir");
  s.send(":ir no_such_function\n");
  s.expect(":ir of an unknown name", "name 'no_such_function' is not defined");
  s.prompt("after :ir unknown");
  // help() shows the signature; a misspelt name gets a suggestion.
  s.send("help(add)\n");
  s.expect("help", "Help on function add in module __main__:");
  s.expect("help signature", "add(a, b)");
  s.prompt("after help");
  s.send("ad(1, 2)\n");
  s.expect("did you mean", "NameError: name 'ad' is not defined. Did you mean: 'add'?");
  s.prompt("after did you mean");
  s.send(":bogus\n");
  s.expect("unknown meta command", "unknown command ':bogus'");
  s.prompt("after :bogus");

  // The last entry, recalled from history by the next session.
  s.send("'hist' + 'ory'\n");
  s.expect("history marker", "\n'history'\n");
  s.prompt("before Ctrl-D");

  // Ctrl-D exits with status 0.
  s.send("\x04");
  int status = s.wait_exit("Ctrl-D");
  if (status != 0 && status != -1) s.fail("Ctrl-D", "exit status " + std::to_string(status) + ", expected 0");
}

void second_session() {
  std::ifstream hist(g_home + "/.msl_history");
  std::stringstream ss;
  ss << hist.rdbuf();
  // libedit's history file escapes blanks (strvis): `add(2, 40)` is stored as `add(2,\04040)`.
  if (ss.str().find("add(2,") == std::string::npos) {
    ++g_failures;
    std::fprintf(stderr, "FAIL history file %s/.msl_history lacks 'add(2, 40)'; it holds:\n%s\n", g_home.c_str(),
                 ss.str().c_str());
  }

  Session s("session 2");
  s.prompt("start");
  // Ctrl-P recalls the previous session's last line.
  s.send("\x10");
  sleep_ms(100);
  s.send("\n");
  s.expect("history recall", "\n'history'\n");
  s.prompt("after recall");
  s.send(":quit\n");
  int status = s.wait_exit(":quit");
  if (status != 0 && status != -1) s.fail(":quit", "exit status " + std::to_string(status) + ", expected 0");
}

void exit_session() {
  Session s("session 3");
  s.prompt("start");
  s.send("import sys\n");
  s.prompt("after import");
  s.send("sys.exit(3)\n");
  int status = s.wait_exit("sys.exit(3)");
  if (status != 3 && status != -1) s.fail("sys.exit(3)", "exit status " + std::to_string(status) + ", expected 3");
}

// `msl run train_progress.msl` on a terminal: sys.stdout/stderr/stdin and a
// file opened on /dev/tty are terminals, and LossMonitor redraws one line per
// epoch with \r (the terminal turns each \n into \r\n), completes it at the
// epoch's last step and ends it before TimeMonitor's line.
void progress_session(const char* script) {
  Session s("msl run", {"run", script});
  s.expect("isatty", "isatty: True True True True\n");
  const char* kSteps[] = {"\repoch 1/2 [=====>              ] 1/4 loss 2.5000 ",
                          "\repoch 1/2 [==========>         ] 2/4 loss 2.0250 ",
                          "\repoch 1/2 [===============>    ] 3/4 loss 1.6402 ",
                          "\repoch 1/2 [====================] 4/4 loss 1.3286 ",
                          "\x1b[K\r\nTrain epoch time: ",
                          "\repoch 2/2 [==========>         ] 2/4 loss 0.8717 ",
                          "\repoch 2/2 [====================] 4/4 loss 0.5719 ",
                          "\x1b[K\r\nTrain epoch time: ",
                          "\r\ndone\r\n"};
  for (const char* step : kSteps)
    if (!s.expect_raw("progress line", step)) break;
  if (s.raw().find("ETA") == std::string::npos) s.fail("progress line", "no ETA before the last step");
  if (s.raw().find("loss is") != std::string::npos) s.fail("progress line", "MindSpore's log lines on a terminal");
  int status = s.wait_exit("msl run");
  if (status != 0 && status != -1) s.fail("msl run", "exit status " + std::to_string(status) + ", expected 0");
}

}  // namespace

int main(int argc, char** argv) {
  signal(SIGPIPE, SIG_IGN);
  if (argc == 4 && std::string(argv[1]) == "--progress") {
    g_msl = argv[2];
    progress_session(argv[3]);
    if (g_failures) return 1;
    std::printf("progress line checks passed\n");
    return 0;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s PATH/TO/msl HOME_DIR\n       %s --progress PATH/TO/msl SCRIPT\n", argv[0], argv[0]);
    return 2;
  }
  g_msl = argv[1];
  g_home = argv[2];
  mkdir(g_home.c_str(), 0700);
  std::remove((g_home + "/.msl_history").c_str());

  first_session();
  second_session();
  exit_session();

  if (g_failures) {
    std::fprintf(stderr, "%d REPL check(s) failed\n", g_failures);
    return 1;
  }
  std::printf("all REPL checks passed\n");
  return 0;
}
