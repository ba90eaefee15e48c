// Checkpoint files on disk: opening only regular files, range reads,
// crash-safe writes and the clean-up of temporary files that killed writers
// left, the choice of format by extension, CRC32, and the copy of tensor
// data to and from raw bytes. See checkpoint.h for the design.
#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>

#include "interp/checkpoint/checkpoint.h"
#include "interp/io/regular_file.h"

namespace msl::checkpoint {

static_assert(std::endian::native == std::endian::little,
              "checkpoint formats store little-endian data; a big-endian host needs byte swapping here");

using kernels::DType;
using kernels::Tensor;

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

[[noreturn]] void throw_errno(int err, const std::string& path) {
  throw SystemError(err, path, fmt::format("{}: {}", path, std::strerror(err)));
}

// Closes a file descriptor on scope exit unless released.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
};

std::string dir_of(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The temporary file name of a write of `base`, as mkstemp's template.
constexpr std::string_view kTempMark = ".tmp-";
constexpr size_t kTempRandom = 6;  // mkstemp's XXXXXX

// Whether `name` is `.BASE.tmp-XXXXXX` for some BASE (`base` when not empty).
bool is_temp_name(std::string_view name, std::string_view base = {}) {
  if (name.size() < 1 + kTempMark.size() + kTempRandom + 1 || name[0] != '.') return false;
  size_t mark = name.size() - kTempRandom - kTempMark.size();
  if (name.substr(mark, kTempMark.size()) != kTempMark) return false;
  return base.empty() || name.substr(1, mark - 1) == base;
}

// Removes the temporary files of earlier writes of `path` whose writers are
// gone. Errors are ignored: this is housekeeping, and the save itself must
// not fail because an old file could not be removed.
void remove_stale_temp_files_of(const std::string& path) {
  std::string dir = dir_of(path), base = base_of(path);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> found;
  while (const dirent* e = ::readdir(d))
    if (is_temp_name(e->d_name, base)) found.push_back(dir + "/" + e->d_name);
  ::closedir(d);
  for (const std::string& f : found) remove_stale_temp_file(f);
}

}  // namespace

bool format_from_path(const std::string& path, Format& out) {
  if (ends_with(path, ".ckpt")) {
    out = Format::Ckpt;
    return true;
  }
  if (ends_with(path, ".safetensors")) {
    out = Format::Safetensors;
    return true;
  }
  return false;
}

std::vector<NamedTensor> read_checkpoint(const std::string& path, bool* has_crc) {
  Format f;
  if (!format_from_path(path, f))
    throw FormatError(
        fmt::format("{}: unknown checkpoint format: the file name must end in .ckpt or .safetensors", path));
  InputFile file(path);
  return f == Format::Ckpt ? read_ckpt_file(file, has_crc) : read_safetensors_file(file, has_crc);
}

void write_checkpoint(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::vector<std::pair<std::string, std::string>>& metadata, bool crc) {
  Format f;
  if (!format_from_path(path, f))
    throw FormatError(
        fmt::format("{}: unknown checkpoint format: the file name must end in .ckpt or .safetensors", path));
  // Serialize completely before touching the file system: a tensor that
  // cannot be saved must not cost the user the previous checkpoint.
  std::string bytes = f == Format::Ckpt ? serialize_ckpt(tensors, crc) : serialize_safetensors(tensors, metadata, crc);
  write_file_atomically(path, bytes);
}

// ------------------------------------------------------------------ files

InputFile::InputFile(const std::string& path) : path_(path) {
  RegularFile f = open_regular_file(path);
  if (f.fd < 0 && f.error) throw_errno(f.error, path);
  if (f.fd < 0)
    throw FormatError(fmt::format("{}: not a regular file ({}); a checkpoint must be a regular file", path, f.kind));
  fd_ = f.fd;
  size_ = f.size;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void InputFile::read_at(uint64_t offset, void* out, size_t n) const {
  int error = 0;
  size_t got = pread_fully(fd_, offset, out, n, error);
  if (error) throw_errno(error, path_);
  if (got < n)
    throw FormatError(
        fmt::format("{}: the file ended at byte offset {} while reading it (it shrank while being "
                    "read?)",
                    path_, offset + got));
}

std::string InputFile::read_string(uint64_t offset, size_t n) const {
  std::string out(n, '\0');
  read_at(offset, out.data(), n);
  return out;
}

std::string read_whole_file(const std::string& path) {
  InputFile f(path);
  return f.read_string(0, static_cast<size_t>(f.size()));
}

bool remove_stale_temp_file(const std::string& path) {
  if (!is_temp_name(base_of(path))) return false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  FdGuard guard{fd};
  struct stat held;
  if (::fstat(fd, &held) != 0 || !S_ISREG(held.st_mode)) return false;
  // A live writer holds an exclusive flock until its rename; the kernel
  // drops it when the writer dies, however it dies. Why a lock and not the
  // age of the file or a pid in its name: a large save can take minutes, and
  // pids are reused and mean nothing on another host sharing the folder. A
  // file system without flock (some network mounts) fails here and the file
  // is left alone.
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) return false;
  // Remove what was locked, not whatever the name means now (the writer may
  // have renamed it away and another writer made a new one of that name).
  struct stat now;
  if (::lstat(path.c_str(), &now) != 0 || now.st_dev != held.st_dev || now.st_ino != held.st_ino) return false;
  return ::unlink(path.c_str()) == 0;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw_errno(EISDIR, path);
  remove_stale_temp_files_of(path);
  std::string dir = dir_of(path);
  std::string tmp;
  int fd = -1;
  // Lock the new temporary file at once. A cleaner may have locked it in
  // the instant between mkstemp and flock and removed it: then the name has
  // no links left, and the write starts over with a new one.
  for (int attempt = 0;; ++attempt) {
    tmp = dir + "/." + base_of(path) + std::string(kTempMark) + std::string(kTempRandom, 'X');
    fd = ::mkostemp(tmp.data(), O_CLOEXEC);  // a child process must not inherit the lock
    if (fd < 0) throw_errno(errno, path);
    struct stat mine;
    bool locked = ::flock(fd, LOCK_EX) == 0;
    if (!locked || (::fstat(fd, &mine) == 0 && mine.st_nlink > 0) || attempt == 3) break;
    ::close(fd);
  }
  FdGuard guard{fd};
  auto fail = [&](int err) {
    ::unlink(tmp.c_str());
    throw_errno(err, path);
  };
  // mkostemp creates the file 0600; keep the old file's mode, or the usual
  // 0644 for a new one.
  if (::fchmod(fd, exists ? (st.st_mode & 07777) : 0644) != 0) fail(errno);
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) fail(errno);
  // Rename while still holding the lock (closing would drop it, and the
  // complete temporary file would look stale for a moment).
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(errno);
  // The data is already durable (fsync); a close error cannot lose it.
  guard.fd = -1;
  ::close(fd);
  // Make the rename itself durable; a failure here leaves a complete file
  // in place, so it is not reported.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

uint32_t crc32_of(std::string_view data, uint32_t crc) {
  return static_cast<uint32_t>(
      ::crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), static_cast<z_size_t>(data.size())));
}

uint32_t crc32_combine_of(uint32_t crc_a, uint32_t crc_b, uint64_t length_b) {
  return static_cast<uint32_t>(::crc32_combine(crc_a, crc_b, static_cast<z_off_t>(length_b)));
}

void check_crc(const std::string& path, uint32_t stored, uint32_t actual) {
  if (stored != actual)
    throw FormatError(
        fmt::format("{}: the crc check failed: the file records CRC32 {} but its content has {}; "
                    "the file is damaged",
                    path, stored, actual));
}

// ---------------------------------------------------------------- tensors

namespace {

// Whether an IEEE value of `bits` (exponent mask `exp`) is NaN or infinite:
// all exponent bits set. Works on the raw bits, so float16 and bfloat16
// need no conversion.
template <class U>
bool any_non_finite(const std::string& bytes, U exp) {
  size_t n = bytes.size() / sizeof(U);
  for (size_t i = 0; i < n; ++i) {
    U v;
    std::memcpy(&v, bytes.data() + i * sizeof(U), sizeof(U));
    if ((v & exp) == exp) return true;
  }
  return false;
}

}  // namespace

const std::string* first_non_finite(const std::vector<NamedTensor>& tensors) {
  for (const NamedTensor& nt : tensors) {
    bool bad = false;
    switch (nt.tensor.dtype()) {
      case DType::Float64: bad = any_non_finite<uint64_t>(tensor_bytes(nt.tensor), 0x7ff0000000000000ull); break;
      case DType::Float32: bad = any_non_finite<uint32_t>(tensor_bytes(nt.tensor), 0x7f800000u); break;
      case DType::Float16: bad = any_non_finite<uint16_t>(tensor_bytes(nt.tensor), 0x7c00); break;
      case DType::BFloat16: bad = any_non_finite<uint16_t>(tensor_bytes(nt.tensor), 0x7f80); break;
      default: break;
    }
    if (bad) return &nt.name;
  }
  return nullptr;
}

std::string tensor_bytes(const Tensor& t) {
  Tensor c = t.to_host().contiguous();
  std::string out(c.nbytes(), '\0');
  if (!out.empty()) std::memcpy(out.data(), c.raw(), out.size());
  return out;
}

bool byte_size_of(const std::vector<int64_t>& dims, size_t itemsize, uint64_t& out, std::string* why) {
  auto fail = [&](std::string reason) {
    if (why) *why = std::move(reason);
    return false;
  };
  if (dims.size() > static_cast<size_t>(kernels::kMaxDims))
    return fail(fmt::format("{} dimensions, more than MSL's {}", dims.size(), kernels::kMaxDims));
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0) return fail(fmt::format("dimension {} is {}", i, dims[i]));
  uint64_t n = itemsize;
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) n = 0;  // empty, however large the rest
  for (int64_t d : dims)
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return fail(fmt::format("its size, {} x {} bytes, overflows 64 bits", itemsize, fmt::join(dims, " x ")));
  // A tensor holds at most 2^40 elements (kernels/tensor.cpp). The file's
  // length bounds every tensor with data long before; this catches an
  // empty one whose other dimensions are absurd ([0, 2^41]), which the
  // tensor's constructor would refuse with an error that names no file.
  constexpr uint64_t kMaxElements = uint64_t{1} << 40;
  uint64_t elements = 1;
  for (int64_t d : dims)
    if (d != 0 && (__builtin_mul_overflow(elements, static_cast<uint64_t>(d), &elements) || elements > kMaxElements))
      return fail(fmt::format("its dimensions other than 0 multiply to more than 2^40, the most elements a tensor "
                              "can have"));
  out = n;
  return true;
}

Tensor tensor_from_bytes(DType dtype, const kernels::Dims& shape, std::string_view data) {
  Tensor t(dtype, shape);
  if (data.size() != t.nbytes())
    throw FormatError(fmt::format("internal: {} bytes for a tensor of {} bytes", data.size(), t.nbytes()));
  if (!data.empty()) std::memcpy(t.raw(), data.data(), data.size());
  if (dtype == DType::Bool) {
    auto* p = static_cast<uint8_t*>(t.raw());
    for (size_t i = 0; i < data.size(); ++i) p[i] = p[i] != 0;
  }
  return t;
}

Tensor int16_tensor_from_bytes(const kernels::Dims& shape, std::string_view data) {
  Tensor t(DType::Int32, shape);
  if (data.size() != static_cast<size_t>(t.numel()) * 2)
    throw FormatError(fmt::format("internal: {} bytes for {} int16 values", data.size(), t.numel()));
  auto* out = t.data<int32_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    int16_t v;
    std::memcpy(&v, data.data() + 2 * i, 2);
    out[i] = v;
  }
  return t;
}

}  // namespace msl::checkpoint
