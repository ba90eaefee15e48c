// The builtin library of the host interpreter: everything a program reaches
// without an import (print, len, the constructors int/str/list/...), the
// methods of the builtin types, file objects, and the native standard modules
// (math, time, os, os.path, sys, random). Interp's constructor calls these in
// the order listed, after the core types and exceptions exist.
//
// Everything here follows CPython 3.11: same results, same exception types,
// same messages, so a program behaves as it would under Python.
#pragma once

#include "interp/interp.h"

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

}  // namespace msl
