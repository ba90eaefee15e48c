// libFuzzer target: PNG and JPEG data through the data set decoder
// (decode_image in interp/dataset/dataset_codec.cpp: libpng and libjpeg with
// the project's checks), as vision.Decode and ImageFolderDataset(decode=True)
// call it. The one outcome that is not a bug is a DatasetError (the
// RuntimeError the user sees), which must name its source ("Decode:
// image data in memory (N bytes): ..."). A decoded image is H x W x 3 uint8
// within the pixel limit.
//
// The pixel limit is set to 2^22 (a 2048 x 2048 image) instead of the
// default 2^26, so that inputs whose header claims a huge image cost
// milliseconds, not a 192 MB allocation each; the limit's own check is the
// same code at any value (tests/unit/interp/dataset_codec_test.cpp tests
// the default).
#include <cstring>

#include "interp/dataset/dataset_core.h"
#include "tests/fuzz/fuzz_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace msl;
  constexpr int64_t kLimit = int64_t{1} << 22;
  static const bool limited = (dataset::set_max_image_pixels(kLimit), true);
  (void)limited;
  kernels::Tensor bytes(kernels::DType::UInt8, {static_cast<int64_t>(size)});
  if (size) std::memcpy(bytes.raw(), data, size);
  kernels::Tensor img;
  try {
    img = dataset::decode_image(bytes);
  } catch (const dataset::DatasetError& e) {
    std::string want = "Decode: image data in memory (" + std::to_string(size) + " bytes): ";
    if (std::strncmp(e.what(), want.c_str(), want.size()) != 0)
      fuzz::fail(std::string("a decode error that does not name its source: ") + e.what());
    return 0;
  }
  if (img.dtype() != kernels::DType::UInt8 || img.ndim() != 3 || img.dim(2) != 3 || img.dim(0) < 1 ||
      img.dim(1) < 1 || img.dim(0) * img.dim(1) > kLimit)
    fuzz::fail("decoded to " + img.shape().str());
  return 0;
}
