// Image codecs for msl.dataset: JPEG through libjpeg(-turbo), PNG through
// libpng's simplified png_image API, both to HWC uint8 RGB.
//
// libjpeg reports errors by calling error_exit, which must not return; the
// usual answer is setjmp/longjmp. The functions that call setjmp below hold
// no C++ objects with destructors of their own (the output buffer lives in
// the caller's frame), so the longjmp skips nothing that needs cleanup; the
// caller turns the failure into a DatasetError. libpng's png_image API
// reports errors through return values and needs no such care.
#include <fmt/format.h>
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

// jpeglib.h needs size_t and FILE declared before it.
#include <jpeglib.h>

#include "interp/dataset_core.h"

namespace msl::dataset {

namespace {

// 2^28 pixels (16384 x 16384): larger declared sizes are treated as corrupt
// headers rather than attempted.
constexpr int64_t kMaxPixels = int64_t{1} << 28;

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

void jpeg_silence(j_common_ptr, int) {}  // warnings (corrupt-but-decodable data) are not errors

// Returns false with err.message set on failure; fills out (H*W*3) and h, w.
bool decode_jpeg_raw(const unsigned char* data, size_t n, std::vector<uint8_t>& out, int64_t& h, int64_t& w,
                     JpegError& err) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  err.mgr.emit_message = jpeg_silence;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(n));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  h = cinfo.output_height;
  w = cinfo.output_width;
  if (h * w > kMaxPixels) {
    std::snprintf(err.message, sizeof err.message, "image size %lldx%lld exceeds the limit of %lld pixels",
                  static_cast<long long>(w), static_cast<long long>(h), static_cast<long long>(kMaxPixels));
    jpeg_destroy_decompress(&cinfo);
    return false;
  }
  out.resize(static_cast<size_t>(h * w * 3));
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = &out[static_cast<size_t>(cinfo.output_scanline) * static_cast<size_t>(w) * 3];
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return true;
}

bool encode_jpeg_raw(std::FILE* f, const uint8_t* pixels, int h, int w, int channels, int quality, JpegError& err) {
  jpeg_compress_struct cinfo;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit;
  if (setjmp(err.jump)) {
    jpeg_destroy_compress(&cinfo);
    return false;
  }
  jpeg_create_compress(&cinfo);
  jpeg_stdio_dest(&cinfo, f);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, quality, TRUE);
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    auto row = const_cast<JSAMPROW>(pixels + static_cast<size_t>(cinfo.next_scanline) * w * channels);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  return true;
}

// Image geometry check shared by the writers; returns the channel count.
int image_channels(const Tensor& image, const char* fname) {
  if (image.dtype() != kernels::DType::UInt8 || (image.ndim() != 2 && image.ndim() != 3))
    throw DatasetError(fmt::format("{}: expected an (H, W) or (H, W, C) uint8 image, got shape {} {}", fname,
                                   image.shape().str(), kernels::dtype_name(image.dtype())));
  int c = image.ndim() == 3 ? static_cast<int>(image.dim(2)) : 1;
  if (c != 1 && c != 3) throw DatasetError(fmt::format("{}: expected 1 or 3 channels, got {}", fname, c));
  if (image.dim(0) <= 0 || image.dim(1) <= 0 || image.dim(0) > 65535 || image.dim(1) > 65535)
    throw DatasetError(fmt::format("{}: invalid image size {}", fname, image.shape().str()));
  return c;
}

}  // namespace

Tensor decode_image(const Tensor& bytes) {
  if (bytes.dtype() != kernels::DType::UInt8 || bytes.ndim() != 1)
    throw DatasetError(fmt::format("Decode: expected the encoded image as a 1-D uint8 tensor, got shape {} {}",
                                   bytes.shape().str(), kernels::dtype_name(bytes.dtype())));
  Tensor src = bytes.contiguous();
  const auto* data = src.data<unsigned char>();
  size_t n = static_cast<size_t>(src.numel());
  static const unsigned char kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (n >= 8 && std::memcmp(data, kPng, 8) == 0) {
    png_image image;
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, n))
      throw DatasetError(fmt::format("Decode: invalid PNG data: {}", image.message));
    if (int64_t{image.width} * image.height > kMaxPixels) {
      png_image_free(&image);
      throw DatasetError(
          fmt::format("Decode: PNG size {}x{} exceeds the limit of {} pixels", image.width, image.height, kMaxPixels));
    }
    image.format = PNG_FORMAT_RGB;
    Tensor out(kernels::DType::UInt8, {static_cast<int64_t>(image.height), static_cast<int64_t>(image.width), 3});
    if (!png_image_finish_read(&image, nullptr, out.raw(), 0, nullptr)) {
      std::string msg = image.message;
      png_image_free(&image);
      throw DatasetError(fmt::format("Decode: invalid PNG data: {}", msg));
    }
    return out;
  }
  if (n >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) {
    std::vector<uint8_t> pixels;
    int64_t h = 0, w = 0;
    JpegError err;
    if (!decode_jpeg_raw(data, n, pixels, h, w, err))
      throw DatasetError(fmt::format("Decode: invalid JPEG data: {}", err.message));
    Tensor out(kernels::DType::UInt8, {h, w, 3});
    std::memcpy(out.raw(), pixels.data(), pixels.size());
    return out;
  }
  throw DatasetError(
      fmt::format("Decode: unsupported image format (the {} bytes start with neither the JPEG nor "
                  "the PNG signature)",
                  n));
}

void write_png(const std::string& path, const Tensor& image) {
  int c = image_channels(image, "_write_png");
  Tensor src = image.contiguous();
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(src.dim(1));
  img.height = static_cast<png_uint_32>(src.dim(0));
  img.format = c == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  if (!png_image_write_to_file(&img, path.c_str(), 0, src.raw(), 0, nullptr))
    throw DatasetError(fmt::format("_write_png: cannot write '{}': {}", path, img.message));
}

void write_jpeg(const std::string& path, const Tensor& image, int quality) {
  int c = image_channels(image, "_write_jpeg");
  Tensor src = image.contiguous();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw DatasetError(fmt::format("_write_jpeg: cannot open '{}': {}", path, std::strerror(errno)));
  JpegError err;
  bool ok = encode_jpeg_raw(f, src.data<uint8_t>(), static_cast<int>(src.dim(0)), static_cast<int>(src.dim(1)), c,
                            quality, err);
  std::fclose(f);
  if (!ok) throw DatasetError(fmt::format("_write_jpeg: cannot write '{}': {}", path, err.message));
}

}  // namespace msl::dataset
