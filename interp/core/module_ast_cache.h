// An on-disk cache of imported modules' parsed trees, so that `import msl.nn`
// (66 standard-library files) reads 66 small entries instead of lexing and
// parsing ~380 KB of source with ANTLR on every run (~250 ms of ~330 ms).
// The msl command's own program, when small, is cached too
// (Interp::run_program).
//
// An entry is keyed on a hash of the module's text (not its path or mtime:
// the text is read anyway, for tracebacks, and identical text parses to the
// identical tree) and on the executable (executable_stamp: the tree's
// encoding and the parser's behaviour are those of one build). Entries live
// in $XDG_CACHE_HOME/msl/ast (else ~/.cache/msl/ast), in
// jit::codegen::ObjectCache's container (magic, version, whole key echoed,
// checksum, written to a temporary file, synced and renamed into place).
// A missing, damaged or mismatching entry is a miss: the module is parsed
// as without the cache and the entry written again. Only modules that parse
// without errors are stored, so a syntax error is always reported by the
// parser itself.
#pragma once

#include <memory>
#include <string>

#include "jit/codegen/object_cache.h"
#include "lang/ast.h"

namespace msl {

class ModuleAstCache {
 public:
  ModuleAstCache() = default;  // disabled
  explicit ModuleAstCache(std::string dir) : store_(std::move(dir)) {}
  // The "ast" folder beside the fused loops' ("kernels") and the graphs'.
  static ModuleAstCache from_environment();
  bool enabled() const { return store_.enabled(); }
  const std::string& dir() const { return store_.dir(); }

  // The tree stored for `source`'s text, its nodes pointing at `source`;
  // null on a miss.
  std::unique_ptr<ast::Module> load(const SourcePtr& source) const;
  // Stores the tree parsed from its source's text; false when it could not
  // be written (the cache is best-effort: callers go on either way).
  bool store(const ast::Module& m) const;
  // Where `source`'s entry lives, for tests that damage it.
  std::string path(const SourceFile& source) const { return store_.path(key(source)); }

 private:
  std::string key(const SourceFile& source) const;
  jit::codegen::ObjectCache store_;
};

}  // namespace msl
