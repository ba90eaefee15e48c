// libFuzzer target: IDX files, plain or gzipped (MNIST's format; read_idx in
// interp/dataset/dataset_readers.cpp), read from a file as MnistDataset
// reads them. The one outcome that is not a bug is a DatasetError (the
// RuntimeError the user sees). A plain file that loads must hold exactly
// the header and the tensor's bytes.
#include <cstring>

#include "interp/dataset/dataset_core.h"
#include "tests/fuzz/fuzz_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace msl;
  std::string path = fuzz::write_temp_file("input-idx3-ubyte", {reinterpret_cast<const char*>(data), size});
  kernels::Tensor t;
  try {
    t = dataset::read_idx(path);
  } catch (const dataset::DatasetError&) {
    return 0;
  }
  bool gzipped = size >= 2 && data[0] == 0x1f && data[1] == 0x8b;
  if (gzipped) return 0;
  size_t header = 4 + 4 * static_cast<size_t>(t.ndim());
  if (t.dtype() != kernels::DType::UInt8 || t.ndim() != data[3] || header + t.nbytes() != size ||
      (t.nbytes() && std::memcmp(t.raw(), data + header, t.nbytes()) != 0))
    fuzz::fail("a plain IDX file loaded into a tensor of other bytes or size: " + t.shape().str());
  for (int i = 0; i < t.ndim(); ++i) {
    const uint8_t* b = data + 4 + 4 * i;
    int64_t d = (int64_t{b[0]} << 24) | (int64_t{b[1]} << 16) | (int64_t{b[2]} << 8) | b[3];
    if (t.dim(i) != d) fuzz::fail("a dimension differs from the header's: " + t.shape().str());
  }
  return 0;
}
