// Checkpoint files on disk: whole-file reads, crash-safe writes, the choice
// of format by extension, and the copy of tensor data to and from raw bytes.
// See checkpoint.h for the design.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>

#include "interp/checkpoint.h"

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

std::vector<NamedTensor> read_checkpoint(const std::string& path) {
  Format f;
  if (!format_from_path(path, f))
    throw FormatError(
        fmt::format("{}: unknown checkpoint format: the file name must end in .ckpt or .safetensors", path));
  std::string bytes = read_whole_file(path);
  return f == Format::Ckpt ? parse_ckpt(bytes, path) : parse_safetensors(bytes, path);
}

void write_checkpoint(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::vector<std::pair<std::string, std::string>>& metadata) {
  Format f;
  if (!format_from_path(path, f))
    throw FormatError(
        fmt::format("{}: unknown checkpoint format: the file name must end in .ckpt or .safetensors", path));
  // Serialize completely before touching the file system: a tensor that
  // cannot be saved must not cost the user the previous checkpoint.
  std::string bytes = f == Format::Ckpt ? serialize_ckpt(tensors) : serialize_safetensors(tensors, metadata);
  write_file_atomically(path, bytes);
}

// ------------------------------------------------------------------ files

std::string read_whole_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(errno, path);
  FdGuard guard{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) throw_errno(errno, path);
  if (S_ISDIR(st.st_mode)) throw_errno(EISDIR, path);
  std::string out;
  if (S_ISREG(st.st_mode) && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno(errno, path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw_errno(EISDIR, path);
  std::string dir = dir_of(path);
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  std::string tmp = dir + "/." + base + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw_errno(errno, path);
  FdGuard guard{fd};
  auto fail = [&](int err) {
    ::unlink(tmp.c_str());
    throw_errno(err, path);
  };
  // mkstemp creates the file 0600; keep the old file's mode, or the usual
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
  guard.fd = -1;
  if (::close(fd) != 0) fail(errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) fail(errno);
  // Make the rename itself durable; a failure here leaves a complete file
  // in place, so it is not reported.
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

// ---------------------------------------------------------------- tensors

std::string tensor_bytes(const Tensor& t) {
  Tensor c = t.contiguous();
  std::string out(c.nbytes(), '\0');
  if (out.empty()) return out;
  if (c.device()->type() == kernels::DeviceType::CPU)
    std::memcpy(out.data(), c.raw(), out.size());
  else
    c.device()->copy_to_host(out.data(), c.raw(), out.size());
  return out;
}

bool byte_size_of(const std::vector<int64_t>& dims, size_t itemsize, uint64_t& out) {
  if (dims.size() > static_cast<size_t>(kernels::kMaxDims)) return false;
  uint64_t n = itemsize;
  for (int64_t d : dims) {
    if (d < 0) return false;
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return false;
  }
  // Beyond 2^40 elements the tensor constructor refuses anyway; the file
  // length check catches every real case long before.
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
