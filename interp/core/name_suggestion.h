// "Did you mean" for NameError and AttributeError, as Python 3.12 prints
// them: `NameError: name 'prnt' is not defined. Did you mean: 'print'?`.
//
// The exception remembers where its name was looked for (the module, whose
// globals and the builtins are the candidates, or the object, whose
// dir() names are), and the traceback printer asks for the suggestion only
// when it shows the exception: code that catches AttributeError pays
// nothing. The closest candidate is CPython's: a Levenshtein distance in
// which a change of case costs 1 and any other edit 2, within (len(name) +
// len(candidate) + 3) / 3, names of up to 40 characters and at most 750
// candidates, the first of equally close ones in sorted order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "interp/core/value.h"

namespace msl {

class Interp;

// The closest of `candidates` to `wrong` by the rule above, or "".
std::string closest_name(std::string_view wrong, const std::vector<std::string>& candidates);

// The names dir(obj) lists (a module's globals, a class's attributes with
// its bases', an instance's attributes and its class's), sorted, unique.
std::vector<std::string> names_of(Interp& I, const Value& obj);

// The suffix the traceback adds to the exception's line: ". Did you mean:
// 'print'?", or "" when the exception has nothing to suggest.
std::string suggestion_suffix(Interp& I, const Value& exc);

}  // namespace msl
