// Data set file readers: IDX (MNIST, Fashion-MNIST), CIFAR-10 binary
// batches, raw file bytes and ImageFolder listings.
//
// IDX files are read through zlib's gzread, which passes plain files
// through unchanged, so `train-images-idx3-ubyte` and its `.gz` need no
// separate code. Every check reports the file and the byte offset (in the
// uncompressed stream) where the data stopped making sense. Only regular
// files are read, as by the checkpoint loaders: a FIFO would wait for a
// writer, and a device such as /dev/zero never ends.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <utility>

#include "interp/dataset/dataset_core.h"
#include "interp/io/regular_file.h"

namespace msl::dataset {

namespace fs = std::filesystem;

namespace {

// A data set file open for reading: a regular one, or DatasetError.
class DataFile {
 public:
  explicit DataFile(const std::string& path) : path_(path) {
    RegularFile f = open_regular_file(path);
    if (f.fd < 0 && f.error) throw DatasetError(fmt::format("cannot open '{}': {}", path, std::strerror(f.error)));
    if (f.fd < 0)
      throw DatasetError(
          fmt::format("'{}': not a regular file ({}); a data set file must be a regular file", path, f.kind));
    fd_ = f.fd;
    size_ = f.size;
  }
  ~DataFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  DataFile(const DataFile&) = delete;
  DataFile& operator=(const DataFile&) = delete;

  uint64_t size() const { return size_; }
  // Hands the descriptor over (to gzdopen, which closes it).
  int release() { return std::exchange(fd_, -1); }
  // Reads exactly n bytes from the start.
  void read(void* dst, size_t n) {
    int error = 0;
    size_t got = pread_fully(fd_, 0, dst, n, error);
    if (error) throw DatasetError(fmt::format("'{}': read error at byte {}: {}", path_, got, std::strerror(error)));
    if (got < n) throw DatasetError(fmt::format("'{}': the file ended at byte {} while reading it", path_, got));
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// A gzFile over a regular file (gzread passes plain files through); `size`
// is set to the file's size.
gzFile gzopen_regular(const std::string& path, uint64_t& size) {
  DataFile file(path);
  size = file.size();
  int fd = file.release();
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    ::close(fd);
    throw DatasetError(fmt::format("cannot open '{}': out of memory", path));
  }
  return f;
}

// Reads exactly n bytes or reports where the file ended.
class GzReader {
 public:
  explicit GzReader(const std::string& path) : path_(path), f_(gzopen_regular(path, size_)) {}
  ~GzReader() { gzclose(f_); }
  GzReader(const GzReader&) = delete;
  GzReader& operator=(const GzReader&) = delete;

  void read(void* dst, size_t n, const char* what) {
    size_t got = 0;
    auto* p = static_cast<char*>(dst);
    while (got < n) {
      unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - got, 1u << 30));
      int r = gzread(f_, p + got, chunk);
      if (r < 0) {
        int err = 0;
        const char* msg = gzerror(f_, &err);
        throw DatasetError(fmt::format("'{}': read error at byte {} ({}): {}", path_, pos_ + got, what, msg));
      }
      if (r == 0)
        throw DatasetError(fmt::format("'{}': file is truncated: expected {} bytes of {} at byte {}, found {}", path_,
                                       n, what, pos_, got));
      got += static_cast<size_t>(r);
    }
    pos_ += n;
  }
  uint64_t pos() const { return pos_; }
  // The file's size on disk (compressed, for a gzip file).
  uint64_t file_size() const { return size_; }
  // Whether the file is read as it is (not gzip); known after the first read.
  bool plain() { return gzdirect(f_) == 1; }
  bool at_end() {
    char c;
    return gzread(f_, &c, 1) == 0;
  }

 private:
  std::string path_;
  uint64_t size_ = 0;
  gzFile f_ = nullptr;
  uint64_t pos_ = 0;
};

uint32_t big_endian(const unsigned char* b) {
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
}

}  // namespace

Tensor read_idx(const std::string& path) {
  GzReader in(path);
  unsigned char magic[4];
  in.read(magic, 4, "the IDX magic number");
  if (magic[0] != 0 || magic[1] != 0)
    throw DatasetError(
        fmt::format("'{}': not an IDX file: bad magic number 0x{:02x}{:02x}{:02x}{:02x} at byte 0 "
                    "(expected 0x0000 followed by the type and rank)",
                    path, magic[0], magic[1], magic[2], magic[3]));
  if (magic[2] != 0x08)
    throw DatasetError(fmt::format("'{}': unsupported IDX element type 0x{:02x} at byte 2 (only 0x08, unsigned byte)",
                                   path, magic[2]));
  int ndim = magic[3];
  if (ndim < 1 || ndim > kernels::kMaxDims)
    throw DatasetError(
        fmt::format("'{}': invalid IDX rank {} at byte 3 (expected 1..{})", path, ndim, kernels::kMaxDims));
  kernels::Dims shape;
  uint64_t total = 1, nonzero = 1;
  for (int i = 0; i < ndim; ++i) {
    unsigned char b[4];
    uint64_t at = in.pos();
    in.read(b, 4, "a dimension");
    uint32_t d = big_endian(b);
    // (A product past 2^64 counts as too large, not as what it wraps to.)
    bool overflow = __builtin_mul_overflow(total, d, &total) | __builtin_mul_overflow(nonzero, d ? d : 1, &nonzero);
    // 8 GiB: far above any IDX data set, low enough that a corrupt header
    // fails here rather than in the allocator. The dimensions other than 0
    // count too: an empty tensor's strides are their product, which must
    // not overflow ([0, 2^32 - 1, 2^32 - 1, 2^32 - 1]).
    if (overflow || nonzero > (uint64_t{1} << 33))
      throw DatasetError(
          fmt::format("'{}': IDX dimension {} = {} at byte {} makes the data implausibly large", path, i, d, at));
    shape.push_back(d);
  }
  // The declared data must fit what the file can hold before it is
  // allocated: a plain file holds it byte for byte after the header, and
  // deflate expands at most 1032:1. So a 20-byte file declaring 8 GiB is an
  // error at once, not an 8 GiB allocation.
  uint64_t at = in.pos();
  if (in.plain() && total > in.file_size() - at)
    throw DatasetError(fmt::format("'{}': file is truncated: expected {} bytes of image/label data at byte {}, found {}",
                                   path, total, at, in.file_size() - at));
  if (!in.plain() && total / 1032 > in.file_size())
    throw DatasetError(
        fmt::format("'{}': the IDX header declares {} bytes of data at byte {}, more than a gzip file of {} bytes "
                    "can hold (deflate expands at most 1032:1)",
                    path, total, at, in.file_size()));
  Tensor t(kernels::DType::UInt8, shape);
  in.read(t.raw(), static_cast<size_t>(total), "image/label data");
  if (!in.at_end())
    throw DatasetError(fmt::format("'{}': unexpected data after byte {} (the header declares {} bytes of data)", path,
                                   in.pos(), total));
  return t;
}

void read_cifar10(const std::vector<std::string>& files, Tensor& images, Tensor& labels) {
  constexpr size_t kRecord = 1 + 3 * 32 * 32;
  std::vector<std::vector<unsigned char>> contents;
  int64_t n = 0;
  for (auto& path : files) {
    DataFile f(path);
    std::vector<unsigned char> bytes(static_cast<size_t>(f.size()));
    f.read(bytes.data(), bytes.size());
    if (bytes.size() % kRecord != 0)
      throw DatasetError(
          fmt::format("'{}': size {} is not a multiple of the CIFAR-10 record size {}: the record "
                      "at byte {} is truncated",
                      path, bytes.size(), kRecord, bytes.size() / kRecord * kRecord));
    for (size_t r = 0; r < bytes.size(); r += kRecord)
      if (bytes[r] > 9)
        throw DatasetError(fmt::format("'{}': label {} at byte {} is not a CIFAR-10 class (0..9)", path, bytes[r], r));
    n += static_cast<int64_t>(bytes.size() / kRecord);
    contents.push_back(std::move(bytes));
  }
  images = Tensor(kernels::DType::UInt8, {n, 32, 32, 3});
  labels = Tensor(kernels::DType::Int32, {n});
  auto* img = images.data<uint8_t>();
  auto* lab = labels.data<int32_t>();
  for (auto& bytes : contents) {
    for (size_t r = 0; r < bytes.size(); r += kRecord) {
      *lab++ = bytes[r];
      const unsigned char* chw = &bytes[r + 1];
      for (int p = 0; p < 32 * 32; ++p)
        for (int c = 0; c < 3; ++c) *img++ = chw[c * 32 * 32 + p];  // CHW -> HWC
    }
  }
}

Tensor read_file_bytes(const std::string& path, bool gunzip) {
  if (gunzip) {
    std::vector<char> data;
    uint64_t size = 0;
    gzFile f = gzopen_regular(path, size);
    char buf[1 << 16];
    int r;
    while ((r = gzread(f, buf, sizeof buf)) > 0) data.insert(data.end(), buf, buf + r);
    int err = 0;
    std::string msg = r < 0 ? gzerror(f, &err) : "";
    gzclose(f);
    if (r < 0) throw DatasetError(fmt::format("'{}': read error at byte {}: {}", path, data.size(), msg));
    Tensor t(kernels::DType::UInt8, {static_cast<int64_t>(data.size())});
    if (!data.empty()) std::memcpy(t.raw(), data.data(), data.size());
    return t;
  }
  DataFile f(path);
  Tensor t(kernels::DType::UInt8, {static_cast<int64_t>(f.size())});
  f.read(t.raw(), static_cast<size_t>(f.size()));
  return t;
}

void write_file_bytes(const std::string& path, const Tensor& bytes, bool gzip) {
  if (bytes.dtype() != kernels::DType::UInt8)
    throw DatasetError(
        fmt::format("_write_bytes: expected a uint8 tensor, got {}", kernels::dtype_name(bytes.dtype())));
  Tensor src = bytes.contiguous();
  size_t n = static_cast<size_t>(src.numel());
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    if (!f) throw DatasetError(fmt::format("cannot open '{}' for writing: {}", path, std::strerror(errno)));
    bool ok = n == 0 || gzwrite(f, src.raw(), static_cast<unsigned>(n)) == static_cast<int>(n);
    if (gzclose(f) != Z_OK || !ok) throw DatasetError(fmt::format("'{}': write error", path));
    return;
  }
  std::ofstream f(path, std::ios::binary);
  if (!f) throw DatasetError(fmt::format("cannot open '{}' for writing: {}", path, std::strerror(errno)));
  if (n && !f.write(static_cast<const char*>(src.raw()), static_cast<std::streamsize>(n)))
    throw DatasetError(fmt::format("'{}': write error", path));
}

FolderListing list_image_folder(const std::string& root, const std::vector<std::string>& extensions) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw DatasetError(fmt::format("ImageFolder: '{}' is not a directory", root));
  FolderListing out;
  for (auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory()) out.classes.push_back(e.path().filename().string());
  std::sort(out.classes.begin(), out.classes.end());
  for (size_t label = 0; label < out.classes.size(); ++label) {
    std::vector<std::string> files;
    for (auto& e : fs::directory_iterator(fs::path(root) / out.classes[label], ec)) {
      if (!e.is_regular_file()) continue;
      std::string ext = e.path().extension().string();
      std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
      if (std::find(extensions.begin(), extensions.end(), ext) != extensions.end()) files.push_back(e.path().string());
    }
    std::sort(files.begin(), files.end());
    for (auto& f : files) {
      out.files.push_back(f);
      out.labels.push_back(static_cast<int32_t>(label));
    }
  }
  if (ec) throw DatasetError(fmt::format("ImageFolder: cannot read '{}': {}", root, ec.message()));
  return out;
}

}  // namespace msl::dataset
