// The interactive REPL (spec §1).
//
// On a terminal, lines are read with libedit (emacs key bindings, history
// kept in $MSL_HISTORY or ~/.msl_history, Tab bound to our completer). Lines
// accumulate until lang/'s interactive_input_status() calls the entry
// complete (brackets closed, a block ended by an empty line); the entry then
// runs in __main__ with Interp::run_interactive, which shows the value of
// every module-level expression statement with repr() and keeps it in `_`.
//
// Ctrl-C has two meanings, kept apart by the terminal mode:
//  * while typing, libedit has the terminal in raw mode and we also clear
//    ISIG, so Ctrl-C arrives as the character ^C, bound to a function that
//    discards the entry — no signal involved;
//  * while a statement runs, the terminal is back in cooked mode, Ctrl-C is
//    SIGINT, and the handler (interp/core/sigint.h) only calls
//    Interp::request_interrupt() (two atomic stores: async-signal-safe). The
//    running code raises KeyboardInterrupt at its next loop iteration or
//    call, or at once when it waits in input() or on a pipe; its traceback
//    is printed like any other error and the session goes on.
//
// When stdin is not a terminal, lines are read plainly (no banner, no
// prompts, no libedit), so a script can be piped through the same logic.
//
// Tab completion never runs user code: the object before the last dot must be
// a chain of plain names, resolved by looking into module globals, class
// dictionaries and instance attributes directly (no getattr, no properties,
// no __getattr__).
#include "interp/repl.h"
#include "interp/core/nodes.h"

#include <histedit.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "interp/builtins/builtins.h"
#include "interp/core/sigint.h"
#include "lang/parser.h"

namespace msl {

namespace {

const char* const kKeywords[] = {
    "False", "None",   "True",     "and",   "as",     "assert", "break",  "class",  "continue",
    "def",   "del",    "elif",     "else",  "except", "finally", "for",   "from",   "global",
    "if",    "import", "in",       "is",    "lambda", "nonlocal", "not",  "or",     "pass",
    "raise", "return", "try",      "while",
};

const char* const kHelp =
    "MSL interactive interpreter.\n"
    "  Type statements or expressions; the value of an expression is printed (and kept in _).\n"
    "  A line ending in ':' or inside an open bracket or triple-quoted string continues on\n"
    "  '...' lines; an empty line ends a block.\n"
    "Keys:\n"
    "  Tab      complete names, keywords and obj.attribute (indents at the start of a line)\n"
    "  Up/Down  browse history (kept in $MSL_HISTORY or ~/.msl_history)\n"
    "  Ctrl-C   discard the line being typed, or interrupt the running statement\n"
    "  Ctrl-D   exit (on an empty line)\n"
    "Meta commands:\n"
    "  :help                  this text\n"
    "  :time STMT             run STMT and print the wall-clock time it took\n"
    "  :mode [graph|pynative] show or set the execution mode\n"
    "  :ir NAME               print the ANF IR of a function or Cell\n"
    "  :quit                  leave (like Ctrl-D)\n";

bool is_ident_start(unsigned char c) { return c == '_' || std::isalpha(c) || c >= 0x80; }
bool is_ident_char(unsigned char c) { return is_ident_start(c) || std::isdigit(c); }

bool is_identifier(std::string_view s) {
  if (s.empty() || !is_ident_start(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return is_ident_char(static_cast<unsigned char>(c)); });
}

std::string_view trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return {};
  size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

std::string format_elapsed(double seconds) {
  if (seconds < 1.0) return fmt::format("[{:.3f} ms]", seconds * 1e3);
  return fmt::format("[{:.3f} s]", seconds);
}

class Repl {
 public:
  explicit Repl(Interp& I) : I_(I), main_(I.main_module()), interactive_(isatty(STDIN_FILENO)) {}
  ~Repl() { close_editor(); }

  int run();

  // libedit callbacks (they find the Repl through EL_CLIENTDATA).
  static char* prompt_cb(EditLine* el);
  static unsigned char complete_cb(EditLine* el, int ch);
  static unsigned char cancel_cb(EditLine* el, int ch);

 private:
  enum class Read { Line, Eof, Cancelled };

  void open_editor();
  void close_editor();
  Read read_line(bool continuation, std::string& out);
  void remember(const std::string& line);

  // Runs one entry; returns the exit code when it called sys.exit.
  std::optional<int> execute(const std::string& text, bool timed);
  // Handles a `:command`; returns the exit code for :quit.
  std::optional<int> meta(std::string_view line);
  void flush_interrupt();

  // Completion.
  unsigned char complete(EditLine* el, const std::string& before_cursor);
  bool resolve_chain(std::string_view expr, Value& out);
  Value static_attr(const Value& v, Str* name);
  void attribute_names(const Value& v, std::set<std::string>& out);
  void global_names(std::set<std::string>& out);

  void out(std::string_view s) { I_.write_out(s); }
  void err(std::string_view s) { I_.write_err(s); }

  Interp& I_;
  Ref<Module> main_;
  bool interactive_;

  EditLine* el_ = nullptr;
  History* hist_ = nullptr;
  std::string history_path_;
  bool continuation_ = false;
  bool cancelled_ = false;
};

// ---------------------------------------------------------------- editor

Repl* repl_of(EditLine* el) {
  void* p = nullptr;
  el_get(el, EL_CLIENTDATA, &p);
  return static_cast<Repl*>(p);
}

char* Repl::prompt_cb(EditLine* el) {
  static char primary[] = ">>> ";
  static char secondary[] = "... ";
  Repl* r = repl_of(el);
  return r && r->continuation_ ? secondary : primary;
}

unsigned char Repl::cancel_cb(EditLine* el, int) {
  if (Repl* r = repl_of(el)) r->cancelled_ = true;
  // Move the terminal's cursor past the text (by writing the part after the
  // cursor again) so that "^C" goes at the end of the line.
  const LineInfo* li = el_line(el);
  if (li->lastchar > li->cursor) {
    std::fwrite(li->cursor, 1, static_cast<size_t>(li->lastchar - li->cursor), stdout);
    std::fflush(stdout);
  }
  return CC_NEWLINE;
}

unsigned char Repl::complete_cb(EditLine* el, int) {
  Repl* r = repl_of(el);
  if (!r) return CC_ERROR;
  const LineInfo* li = el_line(el);
  std::string before(li->buffer, static_cast<size_t>(li->cursor - li->buffer));
  try {
    return r->complete(el, before);
  } catch (...) {
    return CC_ERROR;  // completion must never disturb the session
  }
}

void Repl::open_editor() {
  const char* hp = std::getenv("MSL_HISTORY");
  if (hp && *hp) {
    history_path_ = hp;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    history_path_ = std::string(home) + "/.msl_history";
  }
  hist_ = history_init();
  if (hist_) {
    HistEvent ev;
    history(hist_, &ev, H_SETSIZE, 1000);
    history(hist_, &ev, H_SETUNIQUE, 1);
    if (!history_path_.empty()) history(hist_, &ev, H_LOAD, history_path_.c_str());  // may not exist yet
  }
  el_ = el_init("msl", stdin, stdout, stderr);
  if (!el_) return;
  el_set(el_, EL_CLIENTDATA, this);
  el_set(el_, EL_EDITOR, "emacs");
  el_set(el_, EL_PROMPT, &Repl::prompt_cb);
  if (hist_) el_set(el_, EL_HIST, history, hist_);
  el_set(el_, EL_ADDFN, "msl-complete", "Complete a name or attribute", &Repl::complete_cb);
  el_set(el_, EL_BIND, "^I", "msl-complete", nullptr);
  el_set(el_, EL_ADDFN, "msl-cancel", "Discard the entry being typed", &Repl::cancel_cb);
  el_set(el_, EL_BIND, "^C", "msl-cancel", nullptr);
  // Ctrl-C must reach us as a character while editing (see the file comment).
  el_set(el_, EL_SETTY, "-d", "-isig", nullptr);
  el_source(el_, nullptr);  // the user's ~/.editrc, if any
}

void Repl::close_editor() {
  if (el_) el_end(el_);
  el_ = nullptr;
  if (hist_) history_end(hist_);
  hist_ = nullptr;
}

Repl::Read Repl::read_line(bool continuation, std::string& out) {
  if (!el_) {
    // Plain input (a pipe, a file, or a terminal libedit could not handle).
    if (interactive_) {
      out = continuation ? "... " : ">>> ";
      std::fputs(out.c_str(), stdout);
    }
    std::fflush(stdout);
    out.clear();
    bool got;
    try {
      got = read_stdin_line(I_, out);
    } catch (MslError&) {  // Ctrl-C while waiting for a line
      return Read::Cancelled;
    }
    if (!got && out.empty()) return Read::Eof;
    if (!out.empty() && out.back() == '\r') out.pop_back();
    return Read::Line;
  }
  continuation_ = continuation;
  for (;;) {
    cancelled_ = false;
    std::fflush(stdout);
    // el_gets prints the prompt before it switches the terminal to raw mode;
    // a key typed in that window (Ctrl-D in particular, which the cooked
    // line discipline turns into an end-of-file mark) would be lost. So the
    // terminal is switched first; el_gets finds it already prepared and
    // restores it when the line is done.
    el_set(el_, EL_PREP_TERM, 1);
    int count = 0;
    errno = 0;
    const char* s = el_gets(el_, &count);
    if (cancelled_) return Read::Cancelled;
    if (!s || count <= 0) {
      if (errno == EINTR) continue;
      return Read::Eof;
    }
    out.assign(s, static_cast<size_t>(count));
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return Read::Line;
  }
}

void Repl::remember(const std::string& line) {
  if (!hist_ || trim(line).empty()) return;
  HistEvent ev;
  history(hist_, &ev, H_ENTER, line.c_str());
  // Saved after every entry so that sys.exit() or a crash loses nothing;
  // failures (read-only home, no HOME) are ignored.
  if (!history_path_.empty()) history(hist_, &ev, H_SAVE, history_path_.c_str());
}

// ------------------------------------------------------------- executing

void Repl::flush_interrupt() {
  // An interrupt that arrived while no statement ran is dropped.
  try {
    I_.poll();
  } catch (MslError&) {
  }
}

std::optional<int> Repl::execute(const std::string& text, bool timed) {
  auto source = std::make_shared<SourceFile>("<stdin>", text);
  flush_interrupt();
  auto start = std::chrono::steady_clock::now();
  double elapsed = -1;
  try {
    I_.run_interactive(source, main_);  // shows expression values itself
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } catch (MslError& e) {
    std::string text;
    try {
      text = I_.format_exception(e.exc);
    } catch (...) {
      text = "error: the exception could not be formatted\n";
    }
    err(text);
  } catch (MslExit& e) {
    return e.code;
  } catch (std::bad_alloc&) {
    err("MemoryError: out of memory\n");
  }
  I_.handled_exceptions().clear();
  flush_interrupt();
  if (timed) {
    if (elapsed < 0) elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out(format_elapsed(elapsed) + "\n");
  }
  return std::nullopt;
}

std::optional<int> Repl::meta(std::string_view line) {
  std::string_view rest = trim(line.substr(1));
  size_t sp = rest.find_first_of(" \t");
  std::string_view cmd = rest.substr(0, sp);
  std::string_view arg = sp == std::string_view::npos ? std::string_view() : trim(rest.substr(sp));
  if (cmd == "help" || cmd == "h" || cmd == "?") {
    out(kHelp);
  } else if (cmd == "quit" || cmd == "q" || cmd == "exit") {
    return 0;
  } else if (cmd == "time") {
    if (arg.empty()) {
      err("usage: :time STMT\n");
      return std::nullopt;
    }
    return execute(std::string(arg) + "\n", true);
  } else if (cmd == "mode") {
    // The mode is msl.context's (GRAPH_MODE compiles Cells and msl.jit
    // functions): set and read through msl, under a name removed after.
    if (!arg.empty()) {
      if (arg != "graph" && arg != "pynative") {
        err(fmt::format("error: unknown mode '{}' (expected graph or pynative)\n", arg));
        return std::nullopt;
      }
      if (auto s = execute(fmt::format("import msl as __msl_repl__\n__msl_repl__.set_context(mode=__msl_repl__.{})\n"
                                       "del __msl_repl__\n",
                                       arg == "graph" ? "GRAPH_MODE" : "PYNATIVE_MODE"),
                           false))
        return s;
    }
    return execute(
        "import msl as __msl_repl__\n"
        "print('mode: ' + ('graph' if __msl_repl__.get_context('mode') == __msl_repl__.GRAPH_MODE else 'pynative'))\n"
        "del __msl_repl__\n",
        false);
  } else if (cmd == "ir") {
    if (arg.empty()) {
      err("usage: :ir NAME\n");
      return std::nullopt;
    }
    Value v;
    if (!resolve_chain(arg, v)) {
      err(fmt::format("error: name '{}' is not defined\n", arg));
      return std::nullopt;
    }
    // The graph is compiled for the callable's positional parameters: a
    // function's, a method's or a Cell's construct's but self.
    int64_t nargs = -1;
    Value fn = v;
    int64_t bound = 0;
    if (fn.is(Kind::BoundMethod)) {
      fn = fn.as<BoundMethod>()->func;
      bound = 1;
    } else if (fn.is(Kind::Instance)) {
      if (Value* c = I_.cls_of(fn)->lookup(I_.intern("construct"))) {
        fn = *c;
        bound = 1;
      }
    }
    if (fn.is(Kind::Function)) nargs = static_cast<int64_t>(fn.as<Function>()->code->nposargs) - bound;
    if (nargs < 0) {
      err(fmt::format("error: '{}' is not a function or a Cell\n", arg));
      return std::nullopt;
    }
    return execute(fmt::format("import msl._graph as __msl_graph__\nprint(__msl_graph__.ir_text({}, {}), end='')\n"
                               "del __msl_graph__\n",
                               arg, nargs),
                   false);
  } else {
    err(fmt::format("error: unknown command ':{}' (type :help for the list)\n", cmd));
  }
  return std::nullopt;
}

int Repl::run() {
  if (interactive_) {
    // libedit decodes keystrokes with the C library's multibyte functions:
    // without a UTF-8 locale, typing non-ASCII text would be garbled.
    const char* loc = std::setlocale(LC_CTYPE, "");
    if (!loc || std::strcmp(loc, "C") == 0 || std::strcmp(loc, "POSIX") == 0) std::setlocale(LC_CTYPE, "C.UTF-8");
    open_editor();
    out("MSL 0.1 \xe2\x80\x94 type :help for help, Ctrl-D to exit\n");
  }

  SigintScope sigint(I_);

  std::optional<int> status;
  std::string entry;
  while (!status) {
    std::string line;
    Read r = read_line(!entry.empty(), line);
    if (r == Read::Cancelled) {
      out("^C\nKeyboardInterrupt\n");
      entry.clear();
      continue;
    }
    if (r == Read::Eof) {
      if (interactive_) {
        out("\n");
        if (!entry.empty()) {  // Ctrl-D inside a block discards it
          entry.clear();
          continue;
        }
      } else if (!trim(entry).empty()) {
        status = execute(entry + "\n", false);  // a piped script may end inside a block
      }
      break;
    }
    if (entry.empty()) {
      std::string_view t = trim(line);
      if (t.empty()) continue;
      if (t[0] == ':') {
        remember(line);
        status = meta(t);
        continue;
      }
    }
    remember(line);
    entry += line;
    entry += '\n';
    if (interactive_input_status(entry) == InputStatus::Incomplete) continue;
    status = execute(entry, false);
    entry.clear();
  }

  close_editor();
  std::fflush(stdout);
  return status.value_or(0);
}

// ------------------------------------------------------------ completion

Value Repl::static_attr(const Value& v, Str* name) {
  if (v.is(Kind::Module)) return v.as<Module>()->get(name);
  if (v.is(Kind::Class)) {
    Value* p = v.as<Class>()->lookup(name);
    return p ? *p : Value::undef();
  }
  if (v.is(Kind::Instance) || v.is(Kind::Exception)) {
    if (Value* p = v.as<Instance>()->attrs.find(name)) return *p;
  }
  if (v.is(Kind::Function)) {
    if (Value* p = v.as<Function>()->attrs.find(name)) return *p;
  }
  Value* p = I_.cls_of(v)->lookup(name);
  if (!p || p->is(Kind::Property)) return Value::undef();  // a property would run code
  return *p;
}

bool Repl::resolve_chain(std::string_view expr, Value& out) {
  size_t start = 0;
  bool first = true;
  while (start <= expr.size()) {
    size_t dot = expr.find('.', start);
    std::string_view part = expr.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (!is_identifier(part)) return false;
    Str* name = I_.intern(part);
    if (first) {
      out = main_->get(name);
      if (out.is_undef()) out = I_.builtins_module()->get(name);
      first = false;
    } else {
      out = static_attr(out, name);
    }
    if (out.is_undef()) return false;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return !first;
}

void Repl::attribute_names(const Value& v, std::set<std::string>& out) {
  auto add_map = [&](const AttrMap& m) {
    for (auto& [k, val] : m.entries())
      if (!val.is_undef()) out.insert(k->s);
  };
  if (v.is(Kind::Module)) {
    for (GlobalSlot* s : v.as<Module>()->order)
      if (!s->value.is_undef()) out.insert(s->name->s);
    return;
  }
  if (v.is(Kind::Instance) || v.is(Kind::Exception)) add_map(v.as<Instance>()->attrs);
  if (v.is(Kind::Function)) add_map(v.as<Function>()->attrs);
  Class* cls = v.is(Kind::Class) ? v.as<Class>() : I_.cls_of(v);
  for (Class* c = cls; c; c = c->base.get()) add_map(c->dict);
}

void Repl::global_names(std::set<std::string>& out) {
  for (const char* k : kKeywords) out.insert(k);
  for (Module* m : {main_.get(), I_.builtins_module().get()})
    for (GlobalSlot* s : m->order)
      if (!s->value.is_undef()) out.insert(s->name->s);
}

unsigned char Repl::complete(EditLine* el, const std::string& before) {
  size_t start = before.size();
  while (start > 0) {
    unsigned char c = static_cast<unsigned char>(before[start - 1]);
    if (!is_ident_char(c) && c != '.') break;
    --start;
  }
  std::string word = before.substr(start);
  if (word.empty()) {
    if (trim(before).empty()) {  // Tab at the start of a line indents
      el_insertstr(el, "    ");
      return CC_REFRESH;
    }
    return CC_ERROR;
  }
  if (std::isdigit(static_cast<unsigned char>(word[0]))) return CC_ERROR;

  std::set<std::string> names;
  std::string prefix = word;
  size_t dot = word.rfind('.');
  if (dot != std::string::npos) {
    Value obj;
    if (!resolve_chain(std::string_view(word).substr(0, dot), obj)) return CC_ERROR;
    prefix = word.substr(dot + 1);
    attribute_names(obj, names);
  } else {
    global_names(names);
  }
  bool show_private = !prefix.empty() && prefix[0] == '_';
  std::vector<std::string> matches;
  for (const std::string& n : names) {
    if (n.compare(0, prefix.size(), prefix) != 0) continue;
    if (!show_private && !n.empty() && n[0] == '_') continue;
    matches.push_back(n);
  }
  if (matches.empty()) return CC_ERROR;

  // Insert the longest common prefix of the matches.
  std::string common = matches.front();
  for (const std::string& m : matches) {
    size_t i = 0;
    while (i < common.size() && i < m.size() && common[i] == m[i]) ++i;
    common.resize(i);
  }
  if (common.size() > prefix.size()) {
    el_insertstr(el, common.substr(prefix.size()).c_str());
    return CC_REFRESH;
  }
  if (matches.size() == 1) return CC_NORM;  // already complete

  // Nothing to add: list the candidates in columns under the line.
  size_t width = 0;
  for (const std::string& m : matches) width = std::max(width, m.size());
  width += 2;
  size_t cols = std::max<size_t>(1, 80 / width);
  std::string listing = "\n";
  const size_t kMaxShown = 300;
  for (size_t i = 0; i < matches.size() && i < kMaxShown; ++i) {
    listing += matches[i];
    if ((i + 1) % cols == 0 || i + 1 == matches.size()) listing += "\n";
    else listing += std::string(width - matches[i].size(), ' ');
  }
  if (matches.size() > kMaxShown) listing += fmt::format("\n... and {} more\n", matches.size() - kMaxShown);
  std::fputs(listing.c_str(), stdout);
  std::fflush(stdout);
  return CC_REDISPLAY;
}

}  // namespace

int run_repl(Interp& I) {
  Repl repl(I);
  return repl.run();
}

}  // namespace msl
