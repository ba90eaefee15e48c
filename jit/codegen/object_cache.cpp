#include "jit/codegen/object_cache.h"

#include <fmt/format.h>
#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/SHA256.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

namespace msl::jit::codegen {

namespace {

constexpr char kMagic[8] = {'M', 'S', 'L', 'K', 'O', 'B', 'J', '\0'};

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

template <class T>
void put(std::string& s, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  s.append(b, sizeof(T));
}

// Reads a T at `pos` and advances it; false when the bytes run out.
template <class T>
bool get(std::string_view s, size_t& pos, T& v) {
  if (s.size() - pos < sizeof(T)) return false;
  std::memcpy(&v, s.data() + pos, sizeof(T));
  pos += sizeof(T);
  return true;
}

// An absolute directory named by environment variable `var`, or "".
std::string absolute_env(const char* var) {
  const char* v = std::getenv(var);
  return v && v[0] == '/' ? std::string(v) : std::string();
}

}  // namespace

ObjectCache ObjectCache::from_environment() {
  std::string xdg = absolute_env("XDG_CACHE_HOME");
  if (!xdg.empty()) return ObjectCache(xdg + "/msl/kernels");
  std::string home = absolute_env("HOME");
  if (!home.empty()) return ObjectCache(home + "/.cache/msl/kernels");
  return ObjectCache();
}

std::string ObjectCache::hash(std::string_view key) {
  std::array<uint8_t, 32> d =
      llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(key.data()), key.size()));
  std::string s;
  for (size_t i = 0; i < 16; ++i) s += fmt::format("{:02x}", d[i]);
  return s;
}

std::string ObjectCache::path(std::string_view key) const {
  return enabled() ? dir_ + "/" + hash(key) + ".o" : std::string();
}

std::string ObjectCache::encode(std::string_view key, std::string_view object) {
  std::string s(kMagic, sizeof kMagic);
  put<uint32_t>(s, kFormatVersion);
  put<uint32_t>(s, static_cast<uint32_t>(key.size()));
  s.append(key);
  put<uint64_t>(s, object.size());
  put<uint64_t>(s, fnv1a64(object));
  s.append(object);
  return s;
}

std::optional<std::string> ObjectCache::decode(std::string_view key, std::string_view file) {
  size_t pos = 0;
  uint32_t version = 0, key_len = 0;
  uint64_t len = 0, sum = 0;
  if (file.size() < sizeof kMagic || std::memcmp(file.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  pos = sizeof kMagic;
  if (!get(file, pos, version) || version != kFormatVersion) return std::nullopt;
  if (!get(file, pos, key_len) || key_len != key.size() || file.size() - pos < key_len) return std::nullopt;
  if (file.substr(pos, key_len) != key) return std::nullopt;  // a hash collision or a stale entry
  pos += key_len;
  if (!get(file, pos, len) || !get(file, pos, sum) || file.size() - pos != len) return std::nullopt;
  std::string_view object = file.substr(pos);
  if (fnv1a64(object) != sum) return std::nullopt;
  return std::string(object);
}

std::optional<std::string> ObjectCache::load(std::string_view key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream f(path(key), std::ios::binary);
  if (!f) return std::nullopt;
  f.seekg(0, std::ios::end);
  std::streamoff size = f.tellg();
  if (size <= 0 || static_cast<uint64_t>(size) > kMaxEntryBytes + key.size()) return std::nullopt;
  std::string bytes(static_cast<size_t>(size), '\0');
  f.seekg(0);
  if (!f.read(bytes.data(), size)) return std::nullopt;
  return decode(key, bytes);
}

bool ObjectCache::store(std::string_view key, std::string_view object) const {
  if (!enabled()) return false;
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return false;
  // Unique per process and call: concurrent writers never share a temporary.
  static std::atomic<uint64_t> counter{0};
  std::string final_path = path(key);
  std::string tmp = fmt::format("{}.tmp.{}.{}", final_path, static_cast<long>(::getpid()), counter++);
  std::string bytes = encode(key, object);
  // Synced before the rename, so that after a crash the name holds the
  // whole entry or the old one, never a file whose data was not written yet.
  bool written = false;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    written = done == bytes.size() && ::fsync(fd) == 0;
    written = ::close(fd) == 0 && written;
  }
  if (written && std::rename(tmp.c_str(), final_path.c_str()) == 0) {
    static std::atomic<uint64_t> stores{0};
    if (stores.fetch_add(1) % 32 == 0) prune();
    return true;
  }
  std::remove(tmp.c_str());
  return false;
}

size_t ObjectCache::prune() const {
  namespace fs = std::filesystem;
  if (!enabled()) return 0;
  struct Entry {
    fs::file_time_type written;
    uint64_t bytes;
    fs::path path;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir_, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".o" || p.stem().string().size() != 32) continue;  // entries only
    std::error_code e1, e2;
    uint64_t bytes = it->file_size(e1);
    fs::file_time_type written = it->last_write_time(e2);
    if (e1 || e2) continue;  // removed meanwhile
    entries.push_back({written, bytes, p});
    total += bytes;
  }
  if (total <= max_bytes_) return 0;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.written < b.written; });
  size_t removed = 0;
  for (const Entry& e : entries) {
    if (total <= max_bytes_ / 4 * 3) break;
    std::error_code e1;
    if (fs::remove(e.path, e1)) ++removed;  // another process may have removed it first
    total -= e.bytes;
  }
  return removed;
}

}  // namespace msl::jit::codegen
