// open() and its text file objects (class _io.TextIOWrapper, as in Python).
//
// A file keeps its own read buffer of raw bytes over a C FILE*, so that
// reading line by line is cheap and Python's universal-newline translation
// ("\r\n" and "\r" read as "\n") can look one byte ahead across buffer
// refills. Sizes given to read()/readline() count characters (code points),
// as in Python. Mixing reads and writes without seek() behaves as Python's
// does (see writing()).
//
// Text is passed through as UTF-8 without validation; other encodings are
// refused at open() rather than silently misread. Binary mode is not
// supported: MSL has no bytes type.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "interp/builtins/builtins.h"
#include "interp/builtins/format.h"
#include "interp/core/native_args.h"
#include "interp/builtins/unicode.h"

namespace msl {

namespace {

// The file class also carries io.UnsupportedOperation, raised by reads on
// write-only files and writes on read-only ones.
struct FileClass final : Class {
  Ref<Class> unsupported;
};

struct FileObj final : NativeData {
  FileObj(Ref<Class> c, Interp& I) : NativeData(std::move(c)), interp(&I) {}
  ~FileObj() override {
    if (fp) std::fclose(fp);
  }

  Interp* interp;  // the one that opened it: Ctrl-C during a read raises there
  FILE* fp = nullptr;
  std::string name, mode;
  bool readable = false, writable = false;
  bool translate = true;  // universal newlines on read (newline=None)
  std::string write_nl;   // what "\n" becomes on write ("\n" unless newline= says otherwise)
  std::string buf;        // raw bytes read but not yet consumed: buf[pos..]
  size_t pos = 0;
  bool at_eof = false;
  bool last_was_write = false;

  // Reads more raw bytes; false at end of file.
  bool fill() {
    if (at_eof) return false;
    if (pos > 0) {
      buf.erase(0, pos);
      pos = 0;
    }
    char chunk[8192];  // Python's text-layer chunk size: see writing()
    size_t n;
    for (;;) {
      errno = 0;
      n = std::fread(chunk, 1, sizeof chunk, fp);
      if (n > 0 || !std::ferror(fp) || errno != EINTR) break;
      // A signal ended the wait on a pipe or FIFO: KeyboardInterrupt after
      // Ctrl-C (interp/core/sigint.h), else read on.
      std::clearerr(fp);
      interp->poll();
    }
    if (n == 0) {
      at_eof = true;
      return false;
    }
    buf.append(chunk, n);
    return true;
  }
};

FileObj* self_file(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !a.pos[0].is(Kind::NativeData) || !dynamic_cast<FileObj*>(a.pos[0].obj()))
    raise_type_error(I, fmt::format("descriptor '{}' requires a file object", method));
  return static_cast<FileObj*>(a.pos[0].obj());
}

[[noreturn]] void unsupported(Interp& I, FileObj* f, const char* what) {
  I.raise(static_cast<FileClass*>(f->cls.get())->unsupported.get(), what);
}

FileObj* open_file(Interp& I, Args& a, const char* method) {
  FileObj* f = self_file(I, a, method);
  if (!f->fp) raise_value_error(I, "I/O operation on closed file.");
  return f;
}

FileObj* reading(Interp& I, Args& a, const char* method) {
  FileObj* f = open_file(I, a, method);
  if (!f->readable) unsupported(I, f, "not readable");
  if (f->last_was_write) {
    std::fflush(f->fp);
    std::fseek(f->fp, 0, SEEK_CUR);  // required between a write and a read
    f->last_was_write = false;
    f->at_eof = false;
  }
  return f;
}

FileObj* writing(Interp& I, Args& a, const char* method) {
  FileObj* f = open_file(I, a, method);
  if (!f->writable) unsupported(I, f, "not writable");
  if (!f->last_was_write) {
    // Like Python's TextIOWrapper, a write after reads lands where the
    // underlying stream is, i.e. after the last chunk read ahead (8192
    // bytes at a time), not at the logical read position.
    std::fseek(f->fp, 0, SEEK_CUR);
    f->buf.clear();
    f->pos = 0;
    f->at_eof = false;
    f->last_was_write = true;
  }
  return f;
}

// Appends one logical character (or translated newline) to `out`; false at EOF.
bool read_char(FileObj* f, std::string& out) {
  if (f->pos >= f->buf.size() && !f->fill()) return false;
  unsigned char c = static_cast<unsigned char>(f->buf[f->pos]);
  if (c == '\r' && f->translate) {
    ++f->pos;
    if (f->pos >= f->buf.size()) f->fill();
    if (f->pos < f->buf.size() && f->buf[f->pos] == '\n') ++f->pos;
    out.push_back('\n');
    return true;
  }
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
    ++f->pos;
    return true;
  }
  // A multi-byte character may straddle the buffer end.
  size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
  while (f->buf.size() - f->pos < need && f->fill()) {
  }
  size_t i = f->pos;
  unicode::decode(f->buf, i);
  out.append(f->buf, f->pos, i - f->pos);
  f->pos = i;
  return true;
}

// Reads up to `limit` characters (all when negative).
std::string read_text(FileObj* f, int64_t limit) {
  std::string out;
  if (limit < 0 && !f->translate) {
    // Fast path: the rest of the file as is.
    out.assign(f->buf, f->pos, std::string::npos);
    f->buf.clear();
    f->pos = 0;
    while (f->fill()) {
      out += f->buf;
      f->buf.clear();
    }
    return out;
  }
  for (int64_t n = 0; limit < 0 || n < limit; ++n) {
    // Copy runs of plain ASCII in one go.
    if (f->pos < f->buf.size()) {
      size_t i = f->pos, end = f->buf.size();
      if (limit >= 0) end = std::min(end, f->pos + static_cast<size_t>(limit - n));
      while (i < end && static_cast<unsigned char>(f->buf[i]) < 0x80 && f->buf[i] != '\r') ++i;
      if (i > f->pos) {
        out.append(f->buf, f->pos, i - f->pos);
        n += static_cast<int64_t>(i - f->pos) - 1;
        f->pos = i;
        continue;
      }
    }
    if (!read_char(f, out)) break;
  }
  return out;
}

std::string read_line(FileObj* f, int64_t limit) {
  std::string out;
  for (int64_t n = 0; limit < 0 || n < limit; ++n) {
    if (f->pos < f->buf.size()) {
      // Fast path: scan the buffer for the end of the line.
      size_t i = f->pos, end = f->buf.size();
      while (i < end && f->buf[i] != '\n' && f->buf[i] != '\r' && static_cast<unsigned char>(f->buf[i]) < 0x80 &&
             (limit < 0 || n + static_cast<int64_t>(i - f->pos) < limit))
        ++i;
      if (i > f->pos) {
        out.append(f->buf, f->pos, i - f->pos);
        n += static_cast<int64_t>(i - f->pos) - 1;
        f->pos = i;
        continue;
      }
    }
    if (!read_char(f, out)) break;
    if (out.back() == '\n' || (!f->translate && out.back() == '\r' && f->buf.compare(f->pos, 1, "\n") != 0)) break;
  }
  return out;
}

int64_t size_arg(Interp& I, const Value& v) {
  if (!given_not_none(v)) return -1;
  return arg_index(I, v);
}

// ------------------------------------------------------------------ methods

Value file_read(Interp& I, Args& a, Object*) {
  FileObj* f = reading(I, a, "read");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "read", rest, 0, 1, v);
  return str_value(read_text(f, size_arg(I, v[0])));
}

Value file_readline(Interp& I, Args& a, Object*) {
  FileObj* f = reading(I, a, "readline");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "readline", rest, 0, 1, v);
  return str_value(read_line(f, size_arg(I, v[0])));
}

Value file_readlines(Interp& I, Args& a, Object*) {
  FileObj* f = reading(I, a, "readlines");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "readlines", rest, 0, 1, v);
  int64_t hint = size_arg(I, v[0]);
  std::vector<Value> lines;
  int64_t total = 0;
  for (;;) {
    tick(I);
    std::string line = read_line(f, -1);
    if (line.empty()) break;
    total += static_cast<int64_t>(unicode::count(line));
    lines.push_back(str_value(std::move(line)));
    if (hint > 0 && total >= hint) break;
  }
  return new_list(std::move(lines));
}

// A write that failed: KeyboardInterrupt when Ctrl-C ended a wait on a
// full pipe (interp/core/sigint.h), else OSError.
[[noreturn]] void write_failed(Interp& I) {
  int err = errno ? errno : EIO;
  if (err == EINTR) I.poll();
  raise_os_error(I, err, "");
}

void write_text(Interp& I, FileObj* f, const std::string& s) {
  size_t n;
  errno = 0;
  if (f->write_nl == "\n" || s.find('\n') == std::string::npos) {
    n = std::fwrite(s.data(), 1, s.size(), f->fp);
    if (n != s.size()) write_failed(I);
    return;
  }
  std::string t;
  for (char c : s) {
    if (c == '\n')
      t += f->write_nl;
    else
      t.push_back(c);
  }
  n = std::fwrite(t.data(), 1, t.size(), f->fp);
  if (n != t.size()) write_failed(I);
}

Value file_write(Interp& I, Args& a, Object*) {
  FileObj* f = writing(I, a, "write");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "write", rest, 1, 1, v);
  if (!v[0].is(Kind::Str)) raise_type_error(I, fmt::format("write() argument must be str, not {}", I.type_name(v[0])));
  write_text(I, f, v[0].as<Str>()->s);
  return Value::integer(static_cast<int64_t>(v[0].as<Str>()->length()));
}

Value file_writelines(Interp& I, Args& a, Object*) {
  FileObj* f = writing(I, a, "writelines");
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "writelines", rest, 1, 1, v);
  Value it = I.iter(v[0]);
  Value line;
  while (I.next(it, line)) {
    tick(I);
    if (!line.is(Kind::Str))
      raise_type_error(I, fmt::format("write() argument must be str, not {}", I.type_name(line)));
    if (!f->fp) raise_value_error(I, "I/O operation on closed file.");
    write_text(I, f, line.as<Str>()->s);
  }
  return Value();
}

Value file_close(Interp& I, Args& a, Object*) {
  FileObj* f = self_file(I, a, "close");
  if (f->fp) {
    int rc = std::fclose(f->fp);
    f->fp = nullptr;
    f->buf.clear();
    f->pos = 0;
    if (rc != 0) raise_os_error(I, errno ? errno : EIO, "");
  }
  return Value();
}

Value file_flush(Interp& I, Args& a, Object*) {
  FileObj* f = open_file(I, a, "flush");
  if (f->last_was_write && std::fflush(f->fp) != 0) raise_os_error(I, errno ? errno : EIO, "");
  return Value();
}

Value file_tell(Interp& I, Args& a, Object*) {
  FileObj* f = open_file(I, a, "tell");
  long p = std::ftell(f->fp);
  if (p < 0) raise_os_error(I, errno, "");
  if (!f->last_was_write) p -= static_cast<long>(f->buf.size() - f->pos);
  return Value::integer(p);
}

Value file_seek(Interp& I, Args& a, Object*) {
  FileObj* f = open_file(I, a, "seek");
  Value v[2];
  Args rest = method_args(a);
  bind_positional(I, "seek", rest, 1, 2, v);
  int64_t offset = arg_index(I, v[0]);
  int64_t whence = given(v[1]) ? arg_index(I, v[1]) : 0;
  if (whence < 0 || whence > 2) raise_value_error(I, fmt::format("invalid whence ({}, should be 0, 1 or 2)", whence));
  if (whence == 1 && !f->last_was_write) offset -= static_cast<int64_t>(f->buf.size() - f->pos);
  if (f->last_was_write) std::fflush(f->fp);
  if (std::fseek(f->fp, offset, static_cast<int>(whence)) != 0) raise_os_error(I, errno, "");
  f->buf.clear();
  f->pos = 0;
  f->at_eof = false;
  f->last_was_write = false;
  return Value::integer(std::ftell(f->fp));
}

Value file_readable(Interp& I, Args& a, Object*) { return Value::boolean(open_file(I, a, "readable")->readable); }
Value file_writable(Interp& I, Args& a, Object*) { return Value::boolean(open_file(I, a, "writable")->writable); }
Value file_seekable(Interp& I, Args& a, Object*) {
  open_file(I, a, "seekable");
  return Value::boolean(true);
}

Value file_fileno(Interp& I, Args& a, Object*) { return Value::integer(fileno(open_file(I, a, "fileno")->fp)); }

// True when the file is a terminal (open("/dev/tty", "w")), as Python's.
Value file_isatty(Interp& I, Args& a, Object*) {
  return Value::boolean(isatty(fileno(open_file(I, a, "isatty")->fp)) == 1);
}

struct FileLineIter final : Iterator {
  Ref<FileObj> file;
  explicit FileLineIter(Ref<FileObj> f) : file(std::move(f)) {}
  bool next(Interp& I, Value& out) override {
    if (!file->fp) raise_value_error(I, "I/O operation on closed file.");
    if (!file->readable) unsupported(I, file.get(), "not readable");
    std::string line = read_line(file.get(), -1);
    if (line.empty()) return false;
    out = str_value(std::move(line));
    return true;
  }
  const char* type_name() const override { return "TextIOWrapper_iterator"; }
};

Value file_iter(Interp& I, Args& a, Object*) {
  FileObj* f = reading(I, a, "__iter__");
  return Value::object(new FileLineIter(Ref<FileObj>(f)));
}

Value file_next(Interp& I, Args& a, Object*) {
  FileObj* f = reading(I, a, "__next__");
  std::string line = read_line(f, -1);
  if (line.empty()) raise_exc(I, "StopIteration", "");
  return str_value(std::move(line));
}

Value file_enter(Interp& I, Args& a, Object*) {
  open_file(I, a, "__enter__");
  return a.pos[0];
}

Value file_exit(Interp& I, Args& a, Object* d) {
  file_close(I, a, d);
  return Value::boolean(false);
}

Value file_repr(Interp& I, Args& a, Object*) {
  FileObj* f = self_file(I, a, "__repr__");
  return str_value(
      fmt::format("<_io.TextIOWrapper name={} mode={} encoding='UTF-8'>", str_repr(f->name), str_repr(f->mode)));
}

Value file_closed(Interp& I, Args& a, Object*) { return Value::boolean(self_file(I, a, "closed")->fp == nullptr); }
Value file_name(Interp& I, Args& a, Object*) { return str_value(self_file(I, a, "name")->name); }
Value file_mode(Interp& I, Args& a, Object*) { return str_value(self_file(I, a, "mode")->mode); }
Value file_encoding(Interp& I, Args& a, Object*) {
  self_file(I, a, "encoding");
  return str_value("UTF-8");
}

bool utf8_compatible(std::string enc) {
  for (char& c : enc) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (char& c : enc)
    if (c == '_') c = '-';
  return enc == "utf-8" || enc == "utf8" || enc == "u8" || enc == "ascii" || enc == "us-ascii" || enc == "utf-8-sig";
}

}  // namespace

Value builtin_open(Interp& I, Args& a, Object* data) {
  Value v[7];
  bind_args(I, "open", a, {"file", "mode", "buffering", "encoding", "errors", "newline", "closefd"}, 1, v);
  if (!v[0].is(Kind::Str))
    raise_type_error(I, fmt::format("expected str, bytes or os.PathLike object, not {}", I.type_name(v[0])));
  std::string path = v[0].as<Str>()->s;
  if (path.find('\0') != std::string::npos) raise_value_error(I, "embedded null character");
  std::string mode = "r";
  if (given(v[1])) mode = arg_str(I, v[1], "open() argument 'mode'")->s;

  // Python's mode validation, in its order.
  int creating = 0, reading_ = 0, writing_ = 0, appending = 0, updating = 0, text = 0, binary = 0;
  for (char c : mode) {
    int* flag = nullptr;
    switch (c) {
      case 'x': flag = &creating; break;
      case 'r': flag = &reading_; break;
      case 'w': flag = &writing_; break;
      case 'a': flag = &appending; break;
      case '+': flag = &updating; break;
      case 't': flag = &text; break;
      case 'b': flag = &binary; break;
      default: break;
    }
    if (!flag || *flag) raise_value_error(I, fmt::format("invalid mode: {}", str_repr(mode)));
    *flag = 1;
  }
  if (text && binary) raise_value_error(I, "can't have text and binary mode at once");
  int kinds = creating + reading_ + writing_ + appending;
  if (kinds > 1) raise_value_error(I, "must have exactly one of create/read/write/append mode");
  if (kinds == 0) raise_value_error(I, "Must have exactly one of create/read/write/append mode and at most one plus");
  if (binary) raise_value_error(I, "binary mode is not supported: MSL files are text (UTF-8)");
  if (given_not_none(v[3])) {
    Str* enc = arg_str(I, v[3], "open() argument 'encoding'");
    if (!utf8_compatible(enc->s)) raise_exc(I, "LookupError", fmt::format("unknown encoding: {}", enc->s));
  }
  std::string newline_arg = "\x01";  // None
  if (given_not_none(v[5])) {
    newline_arg = arg_str(I, v[5], "open() argument 'newline'")->s;
    if (newline_arg != "" && newline_arg != "\n" && newline_arg != "\r" && newline_arg != "\r\n")
      raise_value_error(I, fmt::format("illegal newline value: {}", newline_arg));
  }

  const char* cmode = reading_    ? (updating ? "r+" : "r")
                      : writing_  ? (updating ? "w+" : "w")
                      : appending ? (updating ? "a+" : "a")
                                  : (updating ? "w+x" : "wx");
  // Opening a FIFO waits for its other end; Ctrl-C ends the wait with
  // KeyboardInterrupt (interp/core/sigint.h), another signal resumes it.
  FILE* fp;
  for (;;) {
    errno = 0;
    fp = std::fopen(path.c_str(), cmode);
    if (fp || errno != EINTR) break;
    I.poll();
  }
  if (!fp) raise_os_error(I, errno, path);
  struct stat st;
  if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::fclose(fp);
    raise_os_error(I, EISDIR, path);
  }
  // Python positions append-mode files at the end (C leaves "a+" reads at 0).
  if (appending) std::fseek(fp, 0, SEEK_END);
  Ref<FileObj> f(new FileObj(Ref<Class>(static_cast<Class*>(data)), I));
  f->fp = fp;
  f->name = path;
  f->mode = mode;
  f->readable = reading_ || updating;
  f->writable = !reading_ || updating;
  f->translate = newline_arg == "\x01";
  f->write_nl = (newline_arg == "\r" || newline_arg == "\r\n") ? newline_arg : "\n";
  return f.value();
}

void init_file_object(Interp& I) {
  Ref<FileClass> cls(new FileClass());
  cls->name = Ref<Str>(I.intern("TextIOWrapper"));
  cls->base = I.cls_object;
  cls->module_name = "_io";
  cls->is_builtin = true;
  cls->unsupported = I.new_class("UnsupportedOperation", I.exception_class("OSError").get(), "io", true);
  Class* c = cls.get();
  struct Entry {
    const char* name;
    NativeFn fn;
  };
  static const Entry kMethods[] = {
      {"read", file_read},
      {"readline", file_readline},
      {"readlines", file_readlines},
      {"write", file_write},
      {"writelines", file_writelines},
      {"close", file_close},
      {"flush", file_flush},
      {"tell", file_tell},
      {"seek", file_seek},
      {"readable", file_readable},
      {"writable", file_writable},
      {"seekable", file_seekable},
      {"fileno", file_fileno},
      {"isatty", file_isatty},
      {"__iter__", file_iter},
      {"__next__", file_next},
      {"__enter__", file_enter},
      {"__exit__", file_exit},
      {"__repr__", file_repr},
  };
  for (const Entry& e : kMethods) I.def_method(c, e.name, e.fn);
  static const Entry kProperties[] = {
      {"closed", file_closed}, {"name", file_name}, {"mode", file_mode}, {"encoding", file_encoding}};
  for (const Entry& e : kProperties) {
    auto p = make<Property>();
    p->fget = make<Native>(e.name, e.fn).value();
    c->dict.set(I.intern(e.name), p.value());
  }
  I.def_native(nullptr, "open", builtin_open, Ref<Object>(c));
}

}  // namespace msl
