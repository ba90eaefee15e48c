// An on-disk cache of whole compiled graphs, so that the second run of a
// script gets its compiled training step in milliseconds instead of
// lowering, differentiating, optimizing, expanding and fusing it again
// (ResNet-50's step: ~4 s).
//
// What a compiled graph depends on is the live object tree of the callable
// (graph mode resolves names against live objects: Cells and their
// hyperparameters, `training` flags, module globals, the code of every
// function reached), the argument signature, the mode and the msl binary.
// A wrong hit would silently run another program, so the key is built
// conservatively:
//   * fingerprint_of() walks the callable's objects with a memo (shared and
//     cyclic references print as back-references): scalars and strings by
//     value; Parameters by name, dtype and shape (never their values: those
//     are the graph's inputs), numbered in walk order; other tensors by
//     dtype, shape and a hash of their elements; functions by module,
//     qualified name, position, a hash of their module's source text,
//     defaults, closure cells, attributes, the module globals their text
//     names, and the attributes their text reads of a module so named
//     (`sys.argv`, by value); classes by name, module and their dictionary; instances
//     (Cells) by class and their attributes, sorted; gradient and jit
//     function objects by what they wrap; modules by name and a hash of
//     their file. Anything else (a file, an iterator, a set, an unknown
//     native object) makes the fingerprint fail: such a callable is simply
//     not cached on disk.
//   * the key adds the format version, the size and mtime of the file
//     holding the code (the executable, or libmsl.so in a host program), a
//     stamp (names, sizes, mtimes) of the standard library's files, the
//     target CPU, the mode, whether kernels are being dumped, the argument
//     signature and the argument count.
// Known gaps, accepted: a module reached other than by a name the body
// reads (`mods[0].flag`, a module passed as an argument) counts by its
// file's text, not by the values its globals hold now; library modules and the gradient-rule registry are
// assumed not to be modified at run time (the standard library's files
// are in the key). GraphCompiler walks the objects again before storing a
// graph it compiled and stores nothing if they changed meanwhile.
//
// `msl --log-level info` says what the cache did for each graph and why
// it did not store one; debug logging, which describes every compilation,
// turns the cache off, as --save-graphs, --print-after and --emit do.
//
// Entries live in $XDG_CACHE_HOME/msl/graphs (else ~/.cache/msl/graphs),
// next to the fused loops' objects, in jit::codegen::ObjectCache's container
// (magic, version, the whole key echoed, checksum, atomic rename): a
// missing, damaged or colliding file is a miss. The payload is the list of
// weight positions (for each Parameter the graph takes after its
// arguments, its index in the fingerprint walk's Parameter list, so a later
// run passes its own live Parameters) and the graph's bytes
// (jit/graph_serialize.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "interp/core/value.h"
#include "jit/codegen/object_cache.h"
#include "lang/ir/ir_module.h"

namespace msl {

class Interp;

struct Fingerprint {
  bool ok = false;
  std::string why;            // when !ok: what the walk could not describe
  std::string digest;         // 128 bits of SHA-256 of the walk's text, as hex
  std::vector<Value> params;  // the Parameters met, in walk order
};
// The fingerprint of callable `fn` and everything it reaches.
Fingerprint fingerprint_of(Interp& I, const Value& fn);
// The walk's text itself (what `digest` hashes), for tests and debugging.
std::string fingerprint_text(Interp& I, const Value& fn);

// How compiled graphs were had, over the whole process (msl --profile).
struct GraphCacheStats {
  int64_t compiled = 0;   // specialized, expanded and fused in this process
  int64_t disk_hits = 0;  // loaded from the disk cache
};
GraphCacheStats graph_cache_stats();
void count_graph_compiled();
void count_graph_loaded();

class GraphDiskCache {
 public:
  static constexpr uint32_t kKeyVersion = 1;

  GraphDiskCache() = default;  // disabled
  explicit GraphDiskCache(std::string dir) : store_(std::move(dir)) {}
  // The "graphs" folder beside the fused loops' (ObjectCache's "kernels").
  static GraphDiskCache from_environment();
  bool enabled() const { return store_.enabled(); }
  const std::string& dir() const { return store_.dir(); }

  // The start of every key: format versions, the executable, the
  // standard library's files (computed once).
  const std::string& build_key(Interp& I) const;
  // "target CPU features\n": what fused loops are generated for (starts
  // LLVM on first use).
  const std::string& target_key() const;

  struct Entry {
    ir::FuncGraph* graph = nullptr;
    std::vector<uint32_t> weights;  // indices into the fingerprint's params
  };
  // The entry under `key`, its graph built in `m`; nothing when missing or
  // unusable (`why` then says what was wrong with an existing file).
  std::optional<Entry> load(ir::IrModule& m, const std::string& key, std::string* why) const;
  // Stores flat graph `g` with its weight positions; false (with `why`)
  // when the graph cannot be serialized or the file cannot be written.
  bool store(const std::string& key, const ir::FuncGraph& g, const std::vector<uint32_t>& weights,
             std::string* why) const;
  std::string path(const std::string& key) const { return store_.path(key); }

 private:
  jit::codegen::ObjectCache store_;
  mutable std::string build_key_, target_key_;
};

}  // namespace msl
