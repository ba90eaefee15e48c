// libFuzzer target: CIFAR-10 binary batches (read_cifar10 in
// interp/dataset/dataset_readers.cpp), read from files as Cifar10Dataset
// reads them. The first byte chooses how many files (1 + byte % 3) the rest
// is cut into, in equal parts. The one outcome that is not a bug is a
// DatasetError (the RuntimeError the user sees). What loads must have one
// image and label per 3073-byte record, in file order.
#include <cstring>

#include "interp/dataset/dataset_core.h"
#include "tests/fuzz/fuzz_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace msl;
  if (size == 0) return 0;
  size_t nfiles = 1 + data[0] % 3, len = size - 1;
  const char* rest = reinterpret_cast<const char*>(data + 1);
  std::vector<std::string> files;
  std::string all;
  for (size_t i = 0; i < nfiles; ++i) {
    size_t b = i * len / nfiles, e = (i + 1) * len / nfiles;
    files.push_back(fuzz::write_temp_file("data_batch_" + std::to_string(i + 1) + ".bin", {rest + b, e - b}));
  }
  kernels::Tensor images, labels;
  try {
    dataset::read_cifar10(files, images, labels);
  } catch (const dataset::DatasetError&) {
    return 0;
  }
  constexpr size_t kRecord = 1 + 3 * 32 * 32;
  int64_t n = static_cast<int64_t>(len / kRecord);
  if (images.shape() != kernels::Dims{n, 32, 32, 3} || labels.shape() != kernels::Dims{n})
    fuzz::fail("shapes " + images.shape().str() + " and " + labels.shape().str() + " for " + std::to_string(len) +
               " bytes");
  // Records run on across files (each file holds whole records).
  for (int64_t r = 0; r < n; ++r) {
    const uint8_t* rec = data + 1 + r * kRecord;
    if (labels.data<int32_t>()[r] != rec[0]) fuzz::fail("label " + std::to_string(r) + " differs");
    // Pixel (y, x, c) of the image is byte c*1024 + y*32 + x of the record's CHW data.
    const uint8_t* img = images.data<uint8_t>() + r * 3072;
    for (int c = 0; c < 3; ++c)
      if (img[(5 * 32 + 7) * 3 + c] != rec[1 + c * 1024 + 5 * 32 + 7]) fuzz::fail("pixel of image " + std::to_string(r));
  }
  return 0;
}
