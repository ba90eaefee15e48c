// The builtin library of the host interpreter: everything a program reaches
// without an import (print, len, the constructors int/str/list/...), the
// methods of the builtin types, file objects, and the native standard modules
// (math, time, os, os.path, sys, random). Interp's constructor calls these in
// the order listed, after the core types and exceptions exist.
//
// Everything here follows CPython 3.11: same results, same exception types,
// same messages, so a program behaves as it would under Python.
#pragma once

#include "interp/core/interp.h"

namespace msl {

// __new__ of int, float, str, bool, list, tuple, dict, set, frozenset, range,
// slice, property, staticmethod, classmethod; int/float methods.
void init_builtin_constructors(Interp& I);
// print, len, min, max, sorted, isinstance, open, ... (builtins.cpp).
void init_builtin_functions(Interp& I);
void init_str_methods(Interp& I);
void init_list_methods(Interp& I);  // list and tuple
void init_dict_methods(Interp& I);  // dict, dict views, set and frozenset
void init_file_object(Interp& I);   // the class of open()'s file objects
void init_help(Interp& I);          // help(obj) (help.cpp)
// Registers math, time, os, os.path, sys and random as native modules.
void register_std_modules(Interp& I);

// open(file, mode='r', buffering=-1, encoding=None, errors=None, newline=None):
// defined with the file type, which it receives as `data`.
Value builtin_open(Interp& I, Args& a, Object* data);

// Sorts `items` in place as list.sort does: stable, by `key` (None for
// identity) using `<` only, `reverse` keeping stability.
void sort_values(Interp& I, std::vector<Value>& items, const Value& key, bool reverse);

// callable(v).
bool value_is_callable(Interp& I, const Value& v);

// One line of the process's standard input into `line`, without its "\n";
// false at the end of the input (`line` then holds what preceded it). A
// read interrupted by a signal calls I.poll(), which raises KeyboardInterrupt
// after Ctrl-C (interp/core/sigint.h), and otherwise resumes. input(),
// sys.stdin and the REPL read through it.
bool read_stdin_line(Interp& I, std::string& line);

// sys.exit(code) and exit(code): unwinds to the driver with MslExit. An int
// becomes the exit status as CPython 3.11 makes it, truncated to a C int
// (the system then keeps its low 8 bits: 2**62 exits with 0, 256 + 3 with
// 3); None is 0; anything else is printed to stderr and exits with 1.
[[noreturn]] void exit_with(Interp& I, const Value& code);

}  // namespace msl
