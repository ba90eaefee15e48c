// A byte encoding of a parsed module's AST, so that a module imported again
// in a later run (the standard library on every `import msl`) is read back
// instead of lexed and parsed by ANTLR again: parsing is most of an import's
// cost (msl.nn's 66 files: ~250 ms parsed, a few ms read).
//
// The encoding is private to one build of msl (the module AST cache keys its
// entries on the executable), so it has no compatibility promises; it only
// has to round-trip exactly (`ast::dump` of the read tree equals the
// original's) and to refuse, never crash on, bytes it did not write: every
// read is bounds-checked, every tag and enum is validated and nesting is
// bounded, so a damaged entry reads as "no tree" and the caller parses.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "lang/ast.h"

namespace msl::ast {

// Bump when the encoding or the AST's fields change.
constexpr uint32_t kAstFormatVersion = 1;

std::string serialize(const Module& m);
// The module encoded in `bytes`, its nodes pointing into `source`; null when
// the bytes are not a whole, valid encoding.
std::unique_ptr<Module> deserialize(std::string_view bytes, SourcePtr source);

}  // namespace msl::ast
