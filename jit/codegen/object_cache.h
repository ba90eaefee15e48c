// An on-disk cache of compiled object files, so that the second run of a
// script compiles nothing: LLVM's start-up, O3 pipeline and code generation
// cost 15-25 ms per fused program, loading a cached object well under one.
//
// Entries are keyed by a text that names everything the machine code depends
// on (the caller writes it: the unoptimized IR, the target triple, CPU and
// features, the LLVM version and a format version). The file name is a hash
// of that text; the file repeats the whole text, so a hash collision reads
// as a miss, never as someone else's code. Layout of `<dir>/<hash>.o`
// (integers in host byte order: the key names the target anyway):
//
//   8 bytes  magic "MSLKOBJ\0"
//   u32      format version (kFormatVersion)
//   u32      key length, then the key bytes
//   u64      payload length
//   u64      FNV-1a 64 checksum of the payload
//   payload  the relocatable object file
//
// Writes go to a temporary file in the same directory, synced and renamed
// into place, so a reader (another process included) sees a whole entry or
// none, also after a crash.
// A folder is kept under a size (max_bytes, 512 MB by default): the cache
// gains an entry for every program version and -c text it sees (the module
// trees), so a store now and then removes the entries written longest ago
// until the folder is under three quarters of it. An entry removed while
// still in use is written again at its next miss.
// The cache is best-effort by design: a missing, truncated, corrupt or
// mismatching file is a miss (the fresh compile overwrites it), and a
// directory that cannot be made or written turns storing off. Nothing here
// throws on bad files or directories.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace msl::jit::codegen {

class ObjectCache {
 public:
  static constexpr uint32_t kFormatVersion = 1;
  // Entries larger than this are not read (a fused loop's object is a few KB).
  static constexpr uint64_t kMaxEntryBytes = uint64_t{64} << 20;
  static constexpr uint64_t kDefaultMaxBytes = uint64_t{512} << 20;

  // A disabled cache: every load misses, every store does nothing.
  ObjectCache() = default;
  explicit ObjectCache(std::string dir, uint64_t max_bytes = kDefaultMaxBytes)
      : dir_(std::move(dir)), max_bytes_(max_bytes) {}
  // $XDG_CACHE_HOME/msl/kernels, else $HOME/.cache/msl/kernels (relative
  // values are ignored, as the XDG spec says); disabled when neither is set.
  static ObjectCache from_environment();

  bool enabled() const { return !dir_.empty(); }
  const std::string& dir() const { return dir_; }

  // 32 hex digits (128 bits of SHA-256) of the key: the file's stem.
  static std::string hash(std::string_view key);
  // Where `key`'s entry lives ("" when disabled).
  std::string path(std::string_view key) const;
  // The object stored under `key`, or nothing (missing or unusable file).
  std::optional<std::string> load(std::string_view key) const;
  // Stores `object` under `key`; false when it could not be written. The
  // first store of a process, and every 32nd after it (counted over all
  // folders), then trims this folder (prune).
  bool store(std::string_view key, std::string_view object) const;
  // Removes the entries written longest ago (by modification time) while
  // the folder's entries exceed max_bytes, down to three quarters of it;
  // returns how many went. Other files (temporaries of writers) stay.
  size_t prune() const;

  // The file's bytes for an entry (exposed for tests that damage files).
  static std::string encode(std::string_view key, std::string_view object);
  static std::optional<std::string> decode(std::string_view key, std::string_view file);

 private:
  std::string dir_;
  uint64_t max_bytes_ = kDefaultMaxBytes;
};

}  // namespace msl::jit::codegen
