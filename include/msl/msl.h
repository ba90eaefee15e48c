// msl.h — the whole C++ embedding API of MSL, in one header.
//
// A host program talks to MSL through three things: a `VM` (one independent
// MSL world: its own modules, globals and builtins), `Value`s (what crosses
// the boundary in either direction) and two callbacks (where output and
// errors go). Nothing else of the implementation is visible here: the VM is
// a pimpl over the interpreter in interp/, so this header only needs the
// standard library and a host never recompiles when the interpreter changes.
//
// Values. The common scalar and sequence types are converted *by value* at
// the boundary: None, bool, int (64-bit), float (double), str (UTF-8) and
// lists/tuples of those become plain C++ data in a `Value`, and a `Value`
// built in C++ becomes a fresh MSL object when passed in. So a list returned
// by MSL is a snapshot: mutating the C++ copy does not touch the MSL list.
// Every other MSL object (functions, classes, instances, dicts, modules...)
// crosses as an opaque *handle*: a `Value` of type Object that keeps the
// object alive for as long as any copy of the handle exists and can be passed
// back in (as a call target, an argument, a global). A handle belongs to the
// VM that produced it; passing it to another VM is reported as a TypeError.
//
// Errors. As in Wren, the VM never prints and never exits the process. The
// text of print() goes to `Config::output`; every error (a syntax error in
// the source, an uncaught exception, a failing call) goes to
// `Config::on_error` as a structured `ErrorInfo` — kind, exception type,
// message, innermost file/line/column and the full traceback text that the
// `msl` command would print. `sys.exit(n)` does not exit: the running call
// returns `Status::Exit` with `exit_code == n`. Each entry point also returns
// a `Result` saying which of these happened, and `VM::last_error()` keeps
// the last report for hosts that prefer polling to callbacks.
//
// Native functions. A host registers `std::function`s that MSL code calls
// like any builtin. Arguments arrive converted as above. Throwing
// `msl::embed::Error{"ValueError", "message"}` raises that MSL exception
// (any builtin exception type, or an exception class defined in __main__),
// catchable with try/except in MSL; any other C++ exception becomes a
// RuntimeError carrying what(), and std::bad_alloc a MemoryError. No C++
// exception ever escapes a VM entry point.
//
// Threads. A VM is used by one thread at a time (its objects are reference
// counted without atomics), but not necessarily the thread that created it:
// every entry point re-anchors the interpreter's C-stack guard on the calling
// thread. The one call that may come from any thread at any time is
// `VM::interrupt()`: the evaluation running on the VM raises KeyboardInterrupt
// at its next loop iteration or function call and the entry point returns
// `Status::RuntimeError` (type "KeyboardInterrupt"). An interrupt that arrives
// when nothing runs is dropped, so a late watchdog cannot spoil the next call.
// Values holding handles must be copied and destroyed on the VM's thread
// too (scalars, strings and lists are plain data and may go anywhere).
//
// Re-entrancy. A native function may call back into its VM (run, call,
// globals). Such a nested call reports its own errors through the callback
// and returns its own Result; it does not raise in the calling MSL code.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace msl::embed {

namespace detail {
struct Handle;  // an MSL object kept alive for the host (defined in interp/embed_api.cpp)
}

// ------------------------------------------------------------------- values

class Value {
 public:
  enum class Type { None, Bool, Int, Float, Str, List, Tuple, Object };

  Value() = default;  // None
  Value(std::nullptr_t) {}  // None
  Value(bool b) : type_(Type::Bool), b_(b) {}
  // Any integer type; unsigned values above INT64_MAX wrap (MSL ints are 64-bit signed).
  template <class T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  Value(T i) : type_(Type::Int), i_(static_cast<int64_t>(i)) {}
  Value(double f) : type_(Type::Float), f_(f) {}
  Value(float f) : type_(Type::Float), f_(f) {}
  Value(const char* s) : type_(Type::Str), s_(s) {}
  Value(std::string s) : type_(Type::Str), s_(std::move(s)) {}
  Value(std::string_view s) : type_(Type::Str), s_(s) {}
  // A list (becomes a new MSL list when passed in).
  Value(std::vector<Value> items);
  static Value list(std::initializer_list<Value> items);
  static Value tuple(std::vector<Value> items);

  Type type() const { return type_; }
  bool is_none() const { return type_ == Type::None; }
  bool is_bool() const { return type_ == Type::Bool; }
  bool is_int() const { return type_ == Type::Int; }
  bool is_float() const { return type_ == Type::Float; }
  bool is_number() const { return type_ == Type::Int || type_ == Type::Float; }
  bool is_str() const { return type_ == Type::Str; }
  bool is_list() const { return type_ == Type::List; }
  bool is_tuple() const { return type_ == Type::Tuple; }
  bool is_object() const { return type_ == Type::Object; }

  // Accessors return a neutral value (false, 0, "", empty) for another type,
  // so a host can read without checking first when it knows what to expect.
  bool as_bool() const { return type_ == Type::Bool && b_; }
  int64_t as_int() const { return type_ == Type::Int ? i_ : type_ == Type::Bool ? b_ : 0; }
  // Ints convert to double, as MSL's float() does.
  double as_float() const;
  const std::string& as_str() const;
  // The items of a list or tuple.
  const std::vector<Value>& items() const;

  // The MSL type name: "NoneType", "int", "str", "list", ... and for handles
  // the class of the object ("function", "dict", "Point").
  std::string type_name() const;
  // A short debugging rendering without calling into any VM: scalars and
  // sequences as MSL's repr() would print them, handles as `<dict object>`.
  std::string to_string() const;

  // Structural equality for data; identity for handles.
  friend bool operator==(const Value& a, const Value& b);

 private:
  friend struct detail::Handle;
  friend class VM;
  Type type_ = Type::None;
  union {
    bool b_;
    int64_t i_ = 0;
    double f_;
  };
  std::string s_;
  std::shared_ptr<const std::vector<Value>> items_;
  std::shared_ptr<detail::Handle> handle_;
};

// --------------------------------------------------------------- errors

enum class ErrorKind {
  Compile,  // the source did not parse (SyntaxError, IndentationError)
  Runtime,  // an exception was raised and not caught
};

// What the error callback receives.
struct ErrorInfo {
  ErrorKind kind = ErrorKind::Runtime;
  std::string type;     // exception class name: "SyntaxError", "ZeroDivisionError", "KeyboardInterrupt"
  std::string message;  // str(exception); may be empty
  std::string file;     // innermost location: the file (or source name) ...
  int line = 0;         // ... 1-based line, 0 when unknown ...
  int col = 0;          // ... 1-based column in code points, 0 when unknown
  std::string text;     // the complete report (traceback or diagnostics), as `msl` prints it
};

// Thrown by a native function to raise an MSL exception of class `type`.
struct Error : std::exception {
  Error(std::string type, std::string message) : type(std::move(type)), message(std::move(message)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string type;
  std::string message;
};

// ------------------------------------------------------------------ results

enum class Status {
  Ok,
  CompileError,  // the source did not parse; nothing ran
  RuntimeError,  // an uncaught exception (reported through on_error)
  Exit,          // sys.exit(code) was called
};

struct Result {
  Status status = Status::Ok;
  Value value;        // eval/call: the value produced (None otherwise or on failure)
  int exit_code = 0;  // Status::Exit: the argument of sys.exit()
  bool ok() const { return status == Status::Ok; }
  explicit operator bool() const { return ok(); }
};

// ------------------------------------------------------------------- the VM

using NativeFunction = std::function<Value(std::span<const Value> args)>;

struct Config {
  // print() and sys.stdout output. Null: discarded. The callbacks are no
  // terminal: sys.stdout/stderr/stdin.isatty() are False in a VM (so
  // LossMonitor prints plain lines, never \r progress bars), and sys.stdin
  // reads as empty.
  std::function<void(std::string_view)> output;
  // sys.stderr output written by MSL code (not error reports). Null: goes to `output`.
  std::function<void(std::string_view)> error_output;
  // Every compile or runtime error. Null: only kept for last_error().
  std::function<void(const ErrorInfo&)> on_error;
  std::vector<std::string> argv;         // sys.argv
  std::vector<std::string> module_path;  // folders searched by `import` (like MSL_PATH)
  // The standard library's folder. Empty: share/msl/stdlib beside the
  // installed libmsl.so (or executable), else the build's source tree.
  std::string stdlib_dir;
  int recursion_limit = 1000;  // nested MSL calls before RecursionError
  // > 0: after this many loop iterations + calls (counted over the VM's
  // calls until the limit is hit, then from 0 again), the running call fails
  // with RuntimeError "step limit exceeded". The limited code cannot stop
  // that: no `except` clause matches it (`except BaseException:` neither),
  // a `finally` block may start but cannot end it with return, break or
  // continue, and every further step raises it again until it reaches the host.
  int64_t step_limit = 0;
  // > 0: the bytes the VM may hold: its objects and their contents
  // (everything it allocates while it runs) and tensor storage. An
  // allocation past it fails before it happens and raises MemoryError in
  // the script (which may catch it, as in Python); the host is unaffected.
  size_t memory_limit = 0;
  // > 0: the wall-clock time one evaluation (run, call, eval, ...) may take,
  // nested calls included. Past it, the evaluation fails with RuntimeError
  // "time limit exceeded", which the script cannot catch (as the step
  // limit). Checked at loop iterations and calls, and in time.sleep.
  std::chrono::milliseconds time_limit{0};
  // No access to the host machine: open(), input(), os (files, folders, the
  // working folder, the environment), checkpoint and data set files and
  // save_graphs raise PermissionError. sys.exit ends the evaluation
  // (Status::Exit), never the host process, sandboxed or not.
  bool sandbox = false;
  // > 0: the largest list, tuple or string (elements or bytes) the script
  // may build by repetition or materialisation (`[0] * n`, list(iterable))
  // before MemoryError. 0: the default, 2**28.
  size_t max_sequence = 0;
};

class VM {
 public:
  explicit VM(Config config = {});
  ~VM();
  VM(VM&&) noexcept;
  VM& operator=(VM&&) noexcept;
  VM(const VM&) = delete;
  VM& operator=(const VM&) = delete;

  // Runs `source` as a script in the __main__ module; `name` labels it in
  // tracebacks and error reports.
  Result run(std::string_view source, std::string_view name = "<embed>");
  // Reads and runs a file in __main__ (imports resolve next to it). A file
  // that cannot be read is a RuntimeError of type FileNotFoundError.
  Result run_file(const std::string& path);
  // Evaluates one expression in __main__'s globals; the value is in Result::value.
  Result eval(std::string_view expression);

  // Calls the global function (or any callable global) `name` of __main__.
  Result call(std::string_view name, std::span<const Value> args);
  Result call(std::string_view name, std::initializer_list<Value> args = {});
  // Calls a callable handle (a function returned by eval, a bound method...).
  Result call_value(const Value& callable, std::span<const Value> args);
  Result call_value(const Value& callable, std::initializer_list<Value> args = {});
  // Calls obj.method(args...).
  Result call_method(const Value& object, std::string_view method, std::initializer_list<Value> args = {});
  // Reads obj.attribute (properties and __getattr__ run).
  Result get_attr(const Value& object, std::string_view attribute);

  // A global of __main__ (nullopt when it is not defined); runs no MSL code.
  std::optional<Value> get_global(std::string_view name);
  // Defines or rebinds a global of __main__. False (and a TypeError report)
  // when `value` is a handle from another VM.
  bool set_global(std::string_view name, const Value& value);
  bool has_global(std::string_view name);

  // Makes `fn` callable from MSL as the builtin `name` (visible in every module).
  void define_function(std::string_view name, NativeFunction fn);
  // Makes `fn` callable as `module.name` after `import module` (a native
  // module created on first use; several functions may share one module).
  void define_module_function(std::string_view module, std::string_view name, NativeFunction fn);

  // repr(value) / str(value) as MSL computes them (user __repr__/__str__ run;
  // on error the error is reported and "" returned).
  std::string repr(const Value& value);
  std::string str(const Value& value);

  // Thread-safe: stops the evaluation currently running on this VM with a
  // KeyboardInterrupt. Does nothing when no evaluation is running.
  void interrupt();
  // Thread-safe: ends the evaluation currently running on this VM with
  // RuntimeError "evaluation aborted", which (unlike interrupt()) the script
  // cannot catch: no `except` matches it and no `finally` block can end it.
  // Does nothing when no evaluation is running.
  void abort();

  // The last error reported (also when no on_error callback is set).
  const std::optional<ErrorInfo>& last_error() const;

  static const char* version();  // "0.1.0"

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace msl::embed
