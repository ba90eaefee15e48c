// Unit tests of the image decoder (interp/dataset/dataset_codec.cpp) below the
// interpreter, on files the codecs write here and then cut or patch: every
// truncation of a JPEG and of a PNG is an error naming its source, never a
// decoded image with made-up pixels; a header claiming 16000x16000 is
// refused in well under a second without allocating what it claims; the
// limit is settable; a failed decode names the file its bytes were read
// from, on copies of them too. tests/ops/dataset/decode_errors.msl covers
// the same through msl.dataset, on worker threads.
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "../temp_dir.h"
#include "interp/dataset/dataset_core.h"

using msl::dataset::DatasetError;
using msl::dataset::decode_image;
using msl::kernels::DType;
using msl::kernels::Tensor;

using msl::test::TempDir;

namespace {

namespace fs = std::filesystem;

Tensor bytes_tensor(const std::string& s) {
  Tensor t(DType::UInt8, {static_cast<int64_t>(s.size())});
  if (!s.empty()) std::memcpy(t.raw(), s.data(), s.size());
  return t;
}

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// A 24x40 RGB test image.
Tensor test_image() {
  Tensor img(DType::UInt8, {24, 40, 3});
  auto* p = img.data<uint8_t>();
  for (int y = 0; y < 24; ++y)
    for (int x = 0; x < 40; ++x) {
      uint8_t* px = p + (y * 40 + x) * 3;
      px[0] = static_cast<uint8_t>((x * 7 + y * 3) % 256);
      px[1] = static_cast<uint8_t>((x * y) % 256);
      px[2] = static_cast<uint8_t>((200 - x * 2 + y) % 256);
    }
  return img;
}

// The decode error of `bytes`, or "decoded".
std::string decode_error(const std::string& bytes, const std::string& source = {}) {
  try {
    decode_image(bytes_tensor(bytes), source);
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "decoded";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// The JPEG with its frame header (SOF0..SOF2) claiming h x w.
std::string patch_jpeg_size(std::string jpg, uint16_t h, uint16_t w) {
  size_t i = 2;
  while (i + 9 < jpg.size()) {
    auto marker = static_cast<uint8_t>(jpg[i + 1]);
    size_t len = static_cast<uint8_t>(jpg[i + 2]) * 256u + static_cast<uint8_t>(jpg[i + 3]);
    if (marker >= 0xC0 && marker <= 0xC2) {
      jpg[i + 5] = static_cast<char>(h >> 8), jpg[i + 6] = static_cast<char>(h & 255);
      jpg[i + 7] = static_cast<char>(w >> 8), jpg[i + 8] = static_cast<char>(w & 255);
      return jpg;
    }
    i += 2 + len;
  }
  FAIL("no SOF marker");
  return jpg;
}

void put_be32(std::string& s, size_t at, uint32_t v) {
  for (int k = 0; k < 4; ++k) s[at + static_cast<size_t>(k)] = static_cast<char>((v >> (24 - 8 * k)) & 255);
}

// The PNG with IHDR claiming h x w, its CRC recomputed so that libpng
// accepts the chunk.
std::string patch_png_size(std::string png, uint32_t h, uint32_t w) {
  REQUIRE(png.compare(12, 4, "IHDR") == 0);
  put_be32(png, 16, w);
  put_be32(png, 20, h);
  put_be32(png, 29, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(png.data() + 12), 17)));
  return png;
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

struct Files {
  TempDir dir;
  std::string jpg, png;
  Files() {
    msl::dataset::write_jpeg(dir / "a.jpg", test_image(), 90);
    msl::dataset::write_png(dir / "a.png", test_image());
    jpg = file_bytes(dir / "a.jpg");
    png = file_bytes(dir / "a.png");
    REQUIRE(jpg.size() > 300);
    REQUIRE(png.size() > 100);
  }
};

}  // namespace

TEST_CASE("every truncation of a JPEG or a PNG is an error that names the source") {
  Files f;
  for (const std::string* data : {&f.jpg, &f.png}) {
    bool jpeg = data == &f.jpg;
    for (size_t n = 0; n < data->size(); ++n) {
      CAPTURE(n);
      std::string e = decode_error(data->substr(0, n), "'cut.img'");
      REQUIRE(starts_with(e, "Decode: 'cut.img': "));
      if (n >= (jpeg ? 3u : 8u))  // past the signature: the codec's own check
        CHECK(
            starts_with(e, jpeg ? "Decode: 'cut.img': truncated JPEG data" : "Decode: 'cut.img': truncated PNG data"));
    }
  }
  CHECK(decode_error(f.jpg.substr(0, f.jpg.size() / 2), "'x.jpg'") ==
        "Decode: 'x.jpg': truncated JPEG data (libjpeg: Premature end of JPEG file)");
  CHECK(decode_error(f.png.substr(0, f.png.size() - 12), "'x.png'") ==
        "Decode: 'x.png': truncated PNG data: the data ends at byte " + std::to_string(f.png.size() - 12) +
            ", after chunk 'IDAT', without an IEND chunk");
}

TEST_CASE("the whole files decode as before; bytes after a PNG's IEND are ignored") {
  Files f;
  Tensor want = test_image();
  Tensor png = decode_image(bytes_tensor(f.png));
  REQUIRE(png.shape() == want.shape());
  CHECK(std::memcmp(png.raw(), want.raw(), want.nbytes()) == 0);
  CHECK(decode_image(bytes_tensor(f.png + "trailing")).shape() == want.shape());
  Tensor jpg = decode_image(bytes_tensor(f.jpg));
  REQUIRE(jpg.shape() == want.shape());
  // The JPEG's pixels as the decoder gave them before it checked anything
  // (recorded then): the checks change no valid image.
  int64_t sum = 0, hash = 0;
  for (size_t i = 0; i < jpg.nbytes(); ++i) {
    sum += jpg.data<uint8_t>()[i];
    hash = (hash * 31 + jpg.data<uint8_t>()[i]) % 1000000007;
  }
  CHECK(sum == 376807);
  CHECK(hash == 303252844);
}

TEST_CASE("a header claiming more pixels than the data holds is an error, not gray pixels") {
  Files f;
  // 1000 x 1000 is under the limit: libjpeg used to decode the 24x40 data
  // into the top rows and fill the rest with gray, without an error.
  CHECK(decode_error(patch_jpeg_size(f.jpg, 1000, 1000), "'p.jpg'") ==
        "Decode: 'p.jpg': truncated JPEG data (libjpeg: Corrupt JPEG data: premature end of data segment)");
  CHECK(starts_with(decode_error(patch_png_size(f.png, 1000, 1000), "'p.png'"), "Decode: 'p.png': invalid PNG data"));
}

TEST_CASE("a header claiming 16000x16000 is refused at once, without allocating it") {
  Files f;
  std::string big_jpg = patch_jpeg_size(f.jpg, 16000, 16000), big_png = patch_png_size(f.png, 16000, 16000);
  const std::string over =
      "image is 16000x16000 = 256000000 pixels, over the limit of 67108864 (msl.dataset.config.set_max_image_pixels)";
  long before = peak_rss_kb();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 4; ++i) {
    CHECK(decode_error(big_jpg, "'big.jpg'") == "Decode: 'big.jpg': " + over);
    CHECK(decode_error(big_png, "'big.png'") == "Decode: 'big.png': " + over);
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 1.0);
  CHECK(peak_rss_kb() - before < 64 * 1024);  // each claims 768 MB decoded
}

TEST_CASE("the pixel limit is settable; an image at the limit decodes") {
  Files f;
  CHECK(msl::dataset::max_image_pixels() == msl::dataset::kDefaultMaxImagePixels);
  CHECK(msl::dataset::kDefaultMaxImagePixels == 67108864);
  msl::dataset::set_max_image_pixels(24 * 40 - 1);
  CHECK(decode_error(f.jpg, "'a.jpg'") ==
        "Decode: 'a.jpg': image is 40x24 = 960 pixels, over the limit of 959 "
        "(msl.dataset.config.set_max_image_pixels)");
  CHECK(starts_with(decode_error(f.png, "'a.png'"), "Decode: 'a.png': image is 40x24 = 960 pixels"));
  msl::dataset::set_max_image_pixels(24 * 40);
  CHECK(decode_error(f.jpg) == "decoded");
  CHECK(decode_error(f.png) == "decoded");
  CHECK_THROWS_AS(msl::dataset::set_max_image_pixels(0), DatasetError);
  msl::dataset::set_max_image_pixels(msl::dataset::kDefaultMaxImagePixels);
}

TEST_CASE("a failed decode names the file its bytes were read from, else says they came from memory") {
  Files f;
  std::string cut = f.jpg.substr(0, 200);
  { std::ofstream(f.dir / "cut.jpg", std::ios::binary) << cut; }
  Tensor read = msl::dataset::read_file_bytes(f.dir / "cut.jpg");
  msl::dataset::remember_image_file(read, f.dir / "cut.jpg");
  std::string path = f.dir / "cut.jpg";
  CHECK(decode_error(cut) ==
        "Decode: '" + path + "': truncated JPEG data (libjpeg: Premature end of JPEG file)");  // a copy
  CHECK(starts_with(decode_error(f.jpg.substr(0, 201)), "Decode: image data in memory (201 bytes): truncated JPEG"));
  CHECK(decode_error("abcd") ==
        "Decode: image data in memory (4 bytes): unsupported image format (the 4 bytes start with neither the JPEG "
        "nor the PNG signature)");
}
