// Unit tests of the data set file readers (interp/dataset/dataset_readers.cpp)
// below the interpreter: an IDX header that declares more data than its
// file can hold fails before the data is allocated, plain or gzipped,
// while a highly compressed valid file still loads. The script tests in
// tests/ops/dataset/ (idx.msl, cifar.msl) cover the data sets' API and
// messages; the fuzz targets fuzz_idx and fuzz_cifar replay their corpora.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "../temp_dir.h"
#include "interp/dataset/dataset_core.h"
#include "kernels/device.h"

using namespace msl;
using kernels::DType;
using kernels::Tensor;
using msl::test::TempDir;

namespace {

std::string idx_header(const std::vector<uint32_t>& dims) {
  std::string s = {0, 0, 8, static_cast<char>(dims.size())};
  for (uint32_t d : dims) s += {char(d >> 24), char(d >> 16), char(d >> 8), char(d)};
  return s;
}

void write(const std::string& path, const std::string& bytes, bool gzip) {
  Tensor t(DType::UInt8, {static_cast<int64_t>(bytes.size())});
  std::memcpy(t.raw(), bytes.data(), bytes.size());
  dataset::write_file_bytes(path, t, gzip);
}

std::string idx_error(const std::string& path) {
  try {
    dataset::read_idx(path);
  } catch (const dataset::DatasetError& e) {
    return e.what();
  }
  return "loaded";
}

}  // namespace

// A 26-byte file whose header declares 8 GiB (2 x 65536 x 65536) used to
// allocate the 8 GiB tensor before reading found the file short.
TEST_CASE("an IDX header declaring more data than the file holds fails before the data is allocated") {
  TempDir dir;
  std::string bytes = idx_header({2, 65536, 65536}) + std::string(10, '\x7f');
  write(dir / "plain-idx3-ubyte", bytes, false);
  write(dir / "packed-idx3-ubyte.gz", bytes, true);
  kernels::cpu_allocator_reset_peak();
  size_t before = kernels::cpu_allocator_stats().peak_bytes_in_use;
  CHECK(idx_error(dir / "plain-idx3-ubyte") ==
        "'" + (dir / "plain-idx3-ubyte") +
            "': file is truncated: expected 8589934592 bytes of image/label data at byte 16, found 10");
  std::string gz = idx_error(dir / "packed-idx3-ubyte.gz");
  CHECK(gz.find("': the IDX header declares 8589934592 bytes of data at byte 16, more than a gzip file of ") !=
        std::string::npos);
  CHECK(gz.find(" bytes can hold (deflate expands at most 1032:1)") != std::string::npos);
  CHECK(kernels::cpu_allocator_stats().peak_bytes_in_use - before < (size_t{1} << 20));
}

// Found by fuzzing (UBSan, tests/fuzz/corpus_idx): an empty IDX tensor whose
// other dimensions multiply past 2^64 passed the size check (its total is 0)
// and overflowed the tensor's strides.
TEST_CASE("an IDX header whose dimensions other than 0 multiply past 8 GiB is refused") {
  TempDir dir;
  write(dir / "empty-idx3-ubyte", idx_header({0, 0xffffffff, 0xffffffff, 0xffffffff}), false);
  CHECK(idx_error(dir / "empty-idx3-ubyte") ==
        "'" + (dir / "empty-idx3-ubyte") +
            "': IDX dimension 2 = 4294967295 at byte 12 makes the data implausibly large");
  // 2^31 x 4 x 2^31 wraps to 0 in 64 bits (found by fuzzing): too large, not empty.
  write(dir / "wraps-idx3-ubyte", idx_header({0x80000000u, 4, 0x80000000u}), false);
  CHECK(idx_error(dir / "wraps-idx3-ubyte") ==
        "'" + (dir / "wraps-idx3-ubyte") +
            "': IDX dimension 2 = 2147483648 at byte 12 makes the data implausibly large");
  write(dir / "fine-idx3-ubyte", idx_header({0, 28, 28}), false);
  CHECK(dataset::read_idx(dir / "fine-idx3-ubyte").shape() == kernels::Dims{0, 28, 28});
}

TEST_CASE("a highly compressed gzipped IDX file still loads") {
  TempDir dir;
  // 1 MB of zeros deflate to about 1 KB, close to deflate's 1032:1 limit.
  write(dir / "zeros-idx3-ubyte.gz", idx_header({1, 1000, 1000}) + std::string(1000000, '\0'), true);
  Tensor t = dataset::read_idx(dir / "zeros-idx3-ubyte.gz");
  CHECK(t.shape() == kernels::Dims{1, 1000, 1000});
  CHECK(t.data<uint8_t>()[999999] == 0);
}
