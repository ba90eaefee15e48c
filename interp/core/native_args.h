// Argument binding and error helpers shared by the natives of the builtin
// library (builtins, str/list/dict methods, files, std modules).
//
// CPython's builtins come in two families whose messages differ, and MSL
// copies whichever the function has in CPython 3.11:
//  - positional-only functions ("divmod expected 2 arguments, got 1"), bound
//    with `bind_positional`;
//  - functions that take keywords ("split() takes at most 2 arguments (3
//    given)", "'foo' is an invalid keyword argument for split()"), bound with
//    `bind_args`.
// Both fill a caller-provided array with the arguments in parameter order;
// absent optional parameters stay Undef, so `or_default` supplies defaults.
//
// Methods receive their receiver as args.pos[0]; `method_args` strips it so
// the binders see only the user's arguments, as CPython's messages do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "interp/core/interp.h"
#include "interp/core/object.h"

namespace msl {

// Results larger than this (bytes of a string, items of a list) raise
// MemoryError instead of being attempted: `"a".center(10**12)` must fail
// cleanly, not abort in the allocator. 2^31 bytes is far beyond any text an
// MSL program handles and well inside what a test machine can reserve.
constexpr size_t kMaxResultBytes = size_t(1) << 31;
constexpr size_t kMaxResultItems = size_t(1) << 27;

[[noreturn]] void raise_exc(Interp& I, std::string_view cls, std::string message);
[[noreturn]] void raise_type_error(Interp& I, std::string message);
[[noreturn]] void raise_value_error(Interp& I, std::string message);
[[noreturn]] void raise_memory_error(Interp& I);
// KeyError(key): the key itself is the argument, so str(e) is repr(key).
[[noreturn]] void raise_key_error(Interp& I, const Value& key);
// OSError for a failed system call on `filename`, as Python reports it:
// FileNotFoundError "[Errno 2] No such file or directory: 'x'" (the subclass
// chosen by errno), with errno, strerror and filename attributes.
// A second filename (os.rename) is shown as "'a' -> 'b'".
[[noreturn]] void raise_os_error(Interp& I, int err, const std::string& filename, const std::string& filename2 = "");
// Raises MemoryError when a result of `n` units (bytes or items) exceeds `limit`.
void check_result_size(Interp& I, uint64_t n, size_t limit = kMaxResultBytes);

// The arguments after the receiver.
Args method_args(Args& a);

// Binds the positional-only parameters of `fname`: between `min` and `max`
// positional arguments, no keywords. Writes them to out[0..count). Methods
// pass their class's name as `type`, which CPython puts in the keyword error
// ("list.pop() takes no keyword arguments").
void bind_positional(Interp& I, const char* fname, Args& a, size_t min, size_t max, Value* out,
                     const char* type = nullptr);
// Builtins that CPython declares METH_O: "len() takes exactly one argument (2 given)".
const Value& builtin_onearg(Interp& I, Args& a, const char* fname);

// Binds parameters `names` (the first `required` of them mandatory) from `a`
// into out[0..names.size()), as CPython's argument clinic does. The first
// `posonly` are positional-only; those listed after `npos` are keyword-only.
void bind_args(Interp& I, const char* fname, Args& a, std::initializer_list<const char*> names, size_t required,
               Value* out, size_t npos = SIZE_MAX, size_t posonly = 0);

inline const Value& or_default(const Value& v, const Value& dflt) { return v.is_undef() ? dflt : v; }
inline bool given(const Value& v) { return !v.is_undef(); }
inline bool given_not_none(const Value& v) { return !v.is_undef() && !v.is_none(); }

// Argument checks of methods that CPython declares METH_NOARGS / METH_O, whose
// messages name the class: "str.upper() takes no arguments (1 given)",
// "list.append() takes exactly one argument (0 given)".
void method_noargs(Interp& I, Args& a, const char* type, const char* method);
const Value& method_onearg(Interp& I, Args& a, const char* type, const char* method);
// PyArg_ParseTuple-style messages ("find() takes at least 1 argument (0
// given)"), used by the str search methods.
void bind_positional_legacy(Interp& I, const char* fname, Args& a, size_t min, size_t max, Value* out,
                            const char* type = nullptr);

// The receiver of a method of a builtin class, checked as CPython's
// descriptors do ("descriptor 'upper' for 'str' objects doesn't apply to a
// 'int' object").
Str* self_str(Interp& I, Args& a, const char* method);
List* self_list(Interp& I, Args& a, const char* method);
Tuple* self_tuple(Interp& I, Args& a, const char* method);
Dict* self_dict(Interp& I, Args& a, const char* method);
Set* self_set(Interp& I, Args& a, const char* method, const char* type_name = "set");

// An argument that must be a str (TypeError "<what> must be str, not int").
Str* arg_str(Interp& I, const Value& v, std::string_view what);
// An int-like argument (int, bool, __index__), with CPython's
// "'float' object cannot be interpreted as an integer".
int64_t arg_index(Interp& I, const Value& v);
// A real-number argument (int, bool, float, __float__) as double,
// TypeError "must be real number, not str".
double arg_float(Interp& I, const Value& v);

// Python's slice.indices(): the step (ValueError when zero) and start/stop
// clamped for a sequence of length n; slice_length counts the selection.
// Shared by list/str/tuple slicing and tensor indexing.
void slice_indices(Interp& I, const Slice* s, int64_t n, int64_t& start, int64_t& stop, int64_t& step);
int64_t slice_length(int64_t start, int64_t stop, int64_t step);

// A new str Value.
inline Value str_value(std::string s) { return Value::object(new Str(std::move(s))); }
Value new_list(std::vector<Value> items);
Value new_tuple(std::vector<Value> items);

// Calls poll() and count_step(): native loops over user-sized iterables stay
// interruptible (Ctrl-C) and bounded under the fuzzer's step limit.
inline void tick(Interp& I) {
  I.poll();
  I.count_step();
}

// True when `e` is an instance of the builtin exception class `cls`.
bool exception_matches(Interp& I, const MslError& e, std::string_view cls);

}  // namespace msl
