// The os and os.path modules: the file-system calls scripts use to find and
// manage data and checkpoints. Errors are OSError subclasses chosen by errno
// with Python's "[Errno 2] No such file or directory: 'x'" text.
//
// os.path follows CPython's posixpath.py line by line (join, split,
// splitext, normpath, relpath), since scripts compare and print the paths it
// returns. os.listdir sorts its result: Python's order is the directory's,
// which is arbitrary; sorted output keeps runs reproducible.
//
// os.path is a native module of its own ("os.path"); importing os imports it
// and stores it as os.path, so `import os.path` and `os.path.join` reach the
// same module object.
#include <dirent.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "interp/builtins/builtins.h"
#include "interp/core/native_args.h"

extern char** environ;

namespace msl {

namespace {

// A path argument: str only (MSL has no bytes or PathLike).
std::string path_arg(Interp& I, const Value& v, const char* fname) {
  if (!v.is(Kind::Str))
    raise_type_error(I, fmt::format("{}: path should be string, bytes or os.PathLike, not {}", fname, I.type_name(v)));
  if (v.as<Str>()->s.find('\0') != std::string::npos)
    raise_value_error(I, fmt::format("{}: embedded null character in path", fname));
  return v.as<Str>()->s;
}

std::string cwd() {
  std::string buf(4096, '\0');
  while (!getcwd(buf.data(), buf.size())) {
    if (errno != ERANGE || buf.size() > (1u << 20)) return ".";
    buf.resize(buf.size() * 2);
  }
  buf.resize(std::char_traits<char>::length(buf.c_str()));
  return buf;
}

// ------------------------------------------------------------ posixpath

std::string join2(std::string path, const std::string& b) {
  if (!b.empty() && b[0] == '/')
    path = b;
  else if (path.empty() || path.back() == '/')
    path += b;
  else
    path += "/" + b;
  return path;
}

std::string rstrip_slashes(const std::string& head) {
  if (head.empty() || head.find_first_not_of('/') == std::string::npos) return head;
  size_t e = head.find_last_not_of('/');
  return head.substr(0, e + 1);
}

std::pair<std::string, std::string> split_path(const std::string& p) {
  size_t i = p.rfind('/');
  i = i == std::string::npos ? 0 : i + 1;
  return {rstrip_slashes(p.substr(0, i)), p.substr(i)};
}

std::pair<std::string, std::string> splitext(const std::string& p) {
  size_t sep = p.rfind('/');
  size_t dot = p.rfind('.');
  long sep_i = sep == std::string::npos ? -1 : static_cast<long>(sep);
  long dot_i = dot == std::string::npos ? -1 : static_cast<long>(dot);
  if (dot_i > sep_i) {
    // Leading dots of the file name do not start an extension.
    for (long i = sep_i + 1; i < dot_i; ++i)
      if (p[static_cast<size_t>(i)] != '.') return {p.substr(0, dot), p.substr(dot)};
  }
  return {p, ""};
}

std::string normpath(const std::string& path) {
  if (path.empty()) return ".";
  int initial = path[0] == '/' ? 1 : 0;
  if (initial && path.compare(0, 2, "//") == 0 && path.compare(0, 3, "///") != 0) initial = 2;
  std::vector<std::string> comps;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string comp = path.substr(start, end - start);
    start = end + 1;
    if (comp.empty() || comp == ".") continue;
    if (comp != ".." || (!initial && comps.empty()) || (!comps.empty() && comps.back() == ".."))
      comps.push_back(comp);
    else if (!comps.empty())
      comps.pop_back();
  }
  std::string out(static_cast<size_t>(initial), '/');
  for (size_t i = 0; i < comps.size(); ++i) out += (i ? "/" : "") + comps[i];
  return out.empty() ? "." : out;
}

std::string abspath(const std::string& p) {
  if (!p.empty() && p[0] == '/') return normpath(p);
  return normpath(join2(cwd(), p));
}

std::string expanduser(const std::string& p) {
  if (p.empty() || p[0] != '~') return p;
  size_t i = p.find('/');
  if (i == std::string::npos) i = p.size();
  if (i != 1) return p;  // ~user is not supported: left as is, like Python for unknown users
  const char* home = std::getenv("HOME");
  if (!home) return p;
  std::string h = home;
  if (h.size() > 1 && h.back() == '/') h.pop_back();
  std::string out = h + p.substr(i);
  return out.empty() ? "/" : out;
}

// A path with an embedded NUL names no file (Python's exists() says False).
bool stat_ok(const std::string& p, struct stat& st) {
  return p.find('\0') == std::string::npos && ::stat(p.c_str(), &st) == 0;
}

Value path_join(Interp& I, Args& a, Object*) {
  if (!a.kw.empty()) raise_type_error(I, "join() takes no keyword arguments");
  if (a.pos.empty()) raise_type_error(I, "join() missing 1 required positional argument: 'a'");
  std::string out;
  for (size_t i = 0; i < a.pos.size(); ++i) {
    if (!a.pos[i].is(Kind::Str))
      raise_type_error(
          I, fmt::format("join() argument must be str, bytes, or os.PathLike object, not '{}'", I.type_name(a.pos[i])));
    out = i == 0 ? a.pos[i].as<Str>()->s : join2(out, a.pos[i].as<Str>()->s);
  }
  return str_value(std::move(out));
}

std::string one_path(Interp& I, Args& a, const char* fname) {
  Value v[1];
  bind_positional(I, fname, a, 1, 1, v);
  return path_arg(I, v[0], fname);
}

Value path_exists(Interp& I, Args& a, Object*) {
  struct stat st;
  Value v[1];
  bind_positional(I, "exists", a, 1, 1, v);
  if (!v[0].is(Kind::Str)) return Value::boolean(false);
  return Value::boolean(stat_ok(v[0].as<Str>()->s, st));
}

Value path_isdir(Interp& I, Args& a, Object*) {
  struct stat st;
  Value v[1];
  bind_positional(I, "isdir", a, 1, 1, v);
  if (!v[0].is(Kind::Str)) return Value::boolean(false);
  return Value::boolean(stat_ok(v[0].as<Str>()->s, st) && S_ISDIR(st.st_mode));
}

Value path_isfile(Interp& I, Args& a, Object*) {
  struct stat st;
  Value v[1];
  bind_positional(I, "isfile", a, 1, 1, v);
  if (!v[0].is(Kind::Str)) return Value::boolean(false);
  return Value::boolean(stat_ok(v[0].as<Str>()->s, st) && S_ISREG(st.st_mode));
}

Value path_islink(Interp& I, Args& a, Object*) {
  struct stat st;
  Value v[1];
  bind_positional(I, "islink", a, 1, 1, v);
  if (!v[0].is(Kind::Str)) return Value::boolean(false);
  return Value::boolean(::lstat(v[0].as<Str>()->s.c_str(), &st) == 0 && S_ISLNK(st.st_mode));
}

Value path_getsize(Interp& I, Args& a, Object*) {
  std::string p = one_path(I, a, "getsize");
  struct stat st;
  if (!stat_ok(p, st)) raise_os_error(I, errno, p);
  return Value::integer(static_cast<int64_t>(st.st_size));
}

Value path_getmtime(Interp& I, Args& a, Object*) {
  std::string p = one_path(I, a, "getmtime");
  struct stat st;
  if (!stat_ok(p, st)) raise_os_error(I, errno, p);
  return Value::number(static_cast<double>(st.st_mtim.tv_sec) + static_cast<double>(st.st_mtim.tv_nsec) * 1e-9);
}

Value path_basename(Interp& I, Args& a, Object*) { return str_value(split_path(one_path(I, a, "basename")).second); }

Value path_dirname(Interp& I, Args& a, Object*) { return str_value(split_path(one_path(I, a, "dirname")).first); }

Value path_split(Interp& I, Args& a, Object*) {
  auto [head, tail] = split_path(one_path(I, a, "split"));
  return new_tuple({str_value(head), str_value(tail)});
}

Value path_splitext(Interp& I, Args& a, Object*) {
  auto [root, ext] = splitext(one_path(I, a, "splitext"));
  return new_tuple({str_value(root), str_value(ext)});
}

Value path_normpath(Interp& I, Args& a, Object*) { return str_value(normpath(one_path(I, a, "normpath"))); }
Value path_abspath(Interp& I, Args& a, Object*) { return str_value(abspath(one_path(I, a, "abspath"))); }
Value path_expanduser(Interp& I, Args& a, Object*) { return str_value(expanduser(one_path(I, a, "expanduser"))); }

Value path_isabs(Interp& I, Args& a, Object*) {
  std::string p = one_path(I, a, "isabs");
  return Value::boolean(!p.empty() && p[0] == '/');
}

Value path_realpath(Interp& I, Args& a, Object*) {
  std::string p = abspath(one_path(I, a, "realpath"));
  char* r = ::realpath(p.c_str(), nullptr);
  if (!r) return str_value(p);  // Python (strict=False) also returns a path for missing files
  std::string out = r;
  std::free(r);
  return str_value(out);
}

std::vector<std::string> nonempty_parts(const std::string& p) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    if (end > start) out.push_back(p.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

Value path_relpath(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_args(I, "relpath", a, {"path", "start"}, 1, v);
  std::string path = path_arg(I, v[0], "relpath");
  if (path.empty()) raise_value_error(I, "no path specified");
  std::string start = given_not_none(v[1]) ? path_arg(I, v[1], "relpath") : ".";
  std::vector<std::string> s = nonempty_parts(abspath(start)), p = nonempty_parts(abspath(path));
  size_t i = 0;
  while (i < s.size() && i < p.size() && s[i] == p[i]) ++i;
  std::string out;
  for (size_t k = i; k < s.size(); ++k) out = out.empty() ? ".." : join2(out, "..");
  for (size_t k = i; k < p.size(); ++k) out = out.empty() ? p[k] : join2(out, p[k]);
  return str_value(out.empty() ? "." : out);
}

// ------------------------------------------------------------------- os

Value os_getcwd(Interp& I, Args& a, Object*) {
  bind_positional(I, "getcwd", a, 0, 0, nullptr);
  return str_value(cwd());
}

Value os_chdir(Interp& I, Args& a, Object*) {
  std::string p = one_path(I, a, "chdir");
  if (::chdir(p.c_str()) != 0) raise_os_error(I, errno, p);
  return Value();
}

std::vector<std::string> list_dir(Interp& I, const std::string& p) {
  DIR* d = ::opendir(p.c_str());
  if (!d) raise_os_error(I, errno, p);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Value os_listdir(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "listdir", a, 0, 1, v);
  std::string p = given_not_none(v[0]) ? path_arg(I, v[0], "listdir") : ".";
  std::vector<Value> out;
  for (auto& n : list_dir(I, p)) out.push_back(str_value(std::move(n)));
  return new_list(std::move(out));
}

mode_t mode_arg(Interp& I, const Value& v) { return given(v) ? static_cast<mode_t>(arg_index(I, v)) : 0777; }

Value os_mkdir(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_args(I, "mkdir", a, {"path", "mode"}, 1, v);
  std::string p = path_arg(I, v[0], "mkdir");
  if (::mkdir(p.c_str(), mode_arg(I, v[1])) != 0) raise_os_error(I, errno, p);
  return Value();
}

Value os_makedirs(Interp& I, Args& a, Object*) {
  Value v[3];
  bind_args(I, "makedirs", a, {"name", "mode", "exist_ok"}, 1, v);
  std::string p = path_arg(I, v[0], "makedirs");
  bool exist_ok = given(v[2]) && I.truthy(v[2]);
  mode_t mode = mode_arg(I, v[1]);
  struct stat st;
  if (stat_ok(p, st)) {
    if (exist_ok && S_ISDIR(st.st_mode)) return Value();
    raise_os_error(I, EEXIST, p);
  }
  // Create each missing ancestor, as os.makedirs does.
  std::string norm = p;
  while (norm.size() > 1 && norm.back() == '/') norm.pop_back();
  for (size_t i = 1; i <= norm.size(); ++i) {
    if (i != norm.size() && norm[i] != '/') continue;
    std::string prefix = norm.substr(0, i);
    if (stat_ok(prefix, st)) continue;
    if (::mkdir(prefix.c_str(), i == norm.size() ? mode : 0777) != 0 && errno != EEXIST) raise_os_error(I, errno, p);
  }
  if (!stat_ok(p, st)) raise_os_error(I, errno, p);
  return Value();
}

Value os_remove(Interp& I, Args& a, Object*) {
  std::string p = one_path(I, a, "remove");
  struct stat st;
  if (::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) raise_os_error(I, EISDIR, p);
  if (::unlink(p.c_str()) != 0) raise_os_error(I, errno, p);
  return Value();
}

Value os_rmdir(Interp& I, Args& a, Object*) {
  std::string p = one_path(I, a, "rmdir");
  if (::rmdir(p.c_str()) != 0) raise_os_error(I, errno, p);
  return Value();
}

Value os_rename(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_args(I, "rename", a, {"src", "dst"}, 2, v);
  std::string src = path_arg(I, v[0], "rename"), dst = path_arg(I, v[1], "rename");
  if (std::rename(src.c_str(), dst.c_str()) != 0) raise_os_error(I, errno, src, dst);
  return Value();
}

Value os_getenv(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_args(I, "getenv", a, {"key", "default"}, 1, v);
  if (!v[0].is(Kind::Str)) raise_type_error(I, fmt::format("str expected, not {}", I.type_name(v[0])));
  const char* val = std::getenv(v[0].as<Str>()->s.c_str());
  if (!val) return or_default(v[1], Value());
  return str_value(val);
}

Value os_cpu_count(Interp& I, Args& a, Object*) {
  bind_positional(I, "cpu_count", a, 0, 0, nullptr);
  unsigned n = std::thread::hardware_concurrency();
  return n ? Value::integer(n) : Value();
}

Value os_getpid(Interp& I, Args& a, Object*) {
  bind_positional(I, "getpid", a, 0, 0, nullptr);
  return Value::integer(::getpid());
}

// os.walk(top): eager, top-down, names sorted; unreadable folders are skipped
// as Python does by default (onerror=None).
void walk(Interp& I, const std::string& top, std::vector<Value>& out, int depth) {
  if (depth > 256) return;
  tick(I);
  DIR* d = ::opendir(top.c_str());
  if (!d) return;
  std::vector<std::string> dirs, files;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st;
    bool is_dir = stat_ok(join2(top, n), st) && S_ISDIR(st.st_mode);
    (is_dir ? dirs : files).push_back(std::move(n));
  }
  ::closedir(d);
  std::sort(dirs.begin(), dirs.end());
  std::sort(files.begin(), files.end());
  std::vector<Value> dv, fv;
  for (auto& n : dirs) dv.push_back(str_value(n));
  for (auto& n : files) fv.push_back(str_value(n));
  out.push_back(new_tuple({str_value(top), new_list(std::move(dv)), new_list(std::move(fv))}));
  for (auto& n : dirs) {
    std::string sub = join2(top, n);
    struct stat st;
    if (::lstat(sub.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) continue;  // followlinks=False
    walk(I, sub, out, depth + 1);
  }
}

Value os_walk(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_args(I, "walk", a, {"top"}, 1, v);
  std::vector<Value> out;
  walk(I, path_arg(I, v[0], "walk"), out, 0);
  return new_list(std::move(out));
}

Value environ_snapshot(Interp& I) {
  auto d = make<Dict>();
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    d->map.set(I, str_value(kv.substr(0, eq)), str_value(kv.substr(eq + 1)));
  }
  return d.value();
}

}  // namespace

void init_module_os_path(Interp& I, Module& m) {
  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kFunctions[] = {
      {"join", path_join},         {"exists", path_exists},         {"isdir", path_isdir},
      {"isfile", path_isfile},     {"islink", path_islink},         {"getsize", path_getsize},
      {"getmtime", path_getmtime}, {"basename", path_basename},     {"dirname", path_dirname},
      {"split", path_split},       {"splitext", path_splitext},     {"normpath", path_normpath},
      {"abspath", path_abspath},   {"expanduser", path_expanduser}, {"isabs", path_isabs},
      {"realpath", path_realpath}, {"relpath", path_relpath},
  };
  for (const Entry& e : kFunctions) I.def_native(&m, e.name, e.fn);
  m.set(I.intern("sep"), str_value("/"));
}

void init_module_os(Interp& I, Module& m) {
  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kFunctions[] = {
      {"getcwd", os_getcwd},     {"chdir", os_chdir},    {"listdir", os_listdir}, {"mkdir", os_mkdir},
      {"makedirs", os_makedirs}, {"remove", os_remove},  {"unlink", os_remove},   {"rmdir", os_rmdir},
      {"rename", os_rename},     {"replace", os_rename}, {"getenv", os_getenv},   {"cpu_count", os_cpu_count},
      {"getpid", os_getpid},     {"walk", os_walk},
  };
  for (const Entry& e : kFunctions) I.def_native(&m, e.name, e.fn);
  m.set(I.intern("sep"), str_value("/"));
  m.set(I.intern("altsep"), Value());
  m.set(I.intern("extsep"), str_value("."));
  m.set(I.intern("pathsep"), str_value(":"));
  m.set(I.intern("linesep"), str_value("\n"));
  m.set(I.intern("curdir"), str_value("."));
  m.set(I.intern("pardir"), str_value(".."));
  m.set(I.intern("devnull"), str_value("/dev/null"));
  m.set(I.intern("name"), str_value("posix"));
  m.set(I.intern("environ"), environ_snapshot(I));
  // The import system registers "os" before running this, so importing the
  // submodule here finds its parent and stores itself as os.path.
  Ref<Module> path = I.import_module("os.path", nullptr);
  m.set(I.intern("path"), path.value());
}

}  // namespace msl
