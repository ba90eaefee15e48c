#include "interp/core/module_ast_cache.h"

#include <filesystem>
#include <functional>
#include <string_view>

#include "interp/core/executable_stamp.h"
#include "lang/ast_serialize.h"

namespace msl {

ModuleAstCache ModuleAstCache::from_environment() {
  jit::codegen::ObjectCache kernels = jit::codegen::ObjectCache::from_environment();
  if (!kernels.enabled()) return ModuleAstCache();
  return ModuleAstCache(std::filesystem::path(kernels.dir()).parent_path().string() + "/ast");
}

// The text's length and a 64-bit hash of it: std::hash reads the standard
// library's 380 KB ~10x faster than SHA-256 (which would be a tenth of an
// import's time), and the cache is private to one user and one build, with
// no adversary to forge a colliding text.
std::string ModuleAstCache::key(const SourceFile& source) const {
  const std::string& text = source.text();
  return "msl module AST, format " + std::to_string(ast::kAstFormatVersion) + "\nexe " + executable_stamp() +
         "\ntext " + std::to_string(text.size()) + " " + std::to_string(std::hash<std::string_view>{}(text)) + "\n";
}

std::unique_ptr<ast::Module> ModuleAstCache::load(const SourcePtr& source) const {
  if (!enabled()) return nullptr;
  std::optional<std::string> bytes = store_.load(key(*source));
  if (!bytes) return nullptr;
  return ast::deserialize(*bytes, source);
}

bool ModuleAstCache::store(const ast::Module& m) const {
  if (!enabled() || !m.source) return false;
  return store_.store(key(*m.source), ast::serialize(m));
}

}  // namespace msl
