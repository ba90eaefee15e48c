// Image codecs for msl.dataset: JPEG through libjpeg(-turbo), PNG through
// libpng's simplified png_image API, both to HWC uint8 RGB.
//
// What a decode checks, in order (docs/reliability.md lists the tests):
//  1. the signature picks the codec; PNG data must hold whole chunks up to
//     IEND (a cut anywhere is "truncated PNG data", found before libpng runs);
//  2. the header's width x height against max_image_pixels(), before
//     anything of the image's size is allocated: a 631-byte JPEG whose header
//     claims 16000x16000 is refused at once (it used to become 1.5 GB of
//     made-up gray pixels);
//  3. the data itself: any libjpeg or libpng error, and the libjpeg warnings
//     that mean pixels are missing or made up (premature end of data, bad
//     Huffman codes, lost restart markers). libjpeg treats those as warnings
//     and fills what it could not decode with gray; a data set wants an
//     error. Warnings that lose no pixel (extraneous bytes between
//     segments, an unknown JFIF revision, a bad ICC marker) pass.
// Every error is a DatasetError "Decode: SOURCE: what is wrong", SOURCE being
// the file the bytes were read from (see remember_image_file) or, for bytes
// made in memory, their size.
//
// libjpeg reports errors by calling error_exit, which must not return; the
// usual answer is setjmp/longjmp. The functions that call setjmp below hold
// no C++ objects with destructors (the decoder state and the output live in
// the caller's frame), so the longjmp skips nothing that needs cleanup; the
// caller turns the failure into a DatasetError. libpng's png_image API does
// the same internally and reports errors through return values. C++
// exceptions are not thrown through libjpeg's C frames.
#include <fmt/format.h>
#include <png.h>

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

// jpeglib.h needs size_t and FILE declared before it, jerror.h needs jpeglib.h.
#include <jpeglib.h>
// (the warning codes)
#include <jerror.h>

#include "interp/dataset/dataset_core.h"

namespace msl::dataset {

namespace {

std::atomic<int64_t> g_max_image_pixels{kDefaultMaxImagePixels};

// ------------------------------------------------------------- where bytes came from
//
// Encoded images travel from read_file to Decode as plain uint8 tensors,
// through shuffles, maps and copies, and kernels::Tensor has no room for a
// label. So a failed decode finds its file by content: remember_image_file
// records (size, 64-bit hash) -> paths for the last kKeptContents contents
// read, and only a failure looks its bytes up. A content key survives
// copies and keeps no data alive. Files with the same bytes share a key; the
// message then names them all (up to kPathsPerContent), since any of them
// fails the same way.
constexpr size_t kKeptContents = size_t{1} << 16;
constexpr size_t kPathsPerContent = 4;

struct ContentKey {
  size_t size;
  size_t hash;
  bool operator==(const ContentKey& o) const { return size == o.size && hash == o.hash; }
};
struct ContentKeyHash {
  size_t operator()(const ContentKey& k) const { return k.hash ^ (k.size * 0x9e3779b97f4a7c15ULL); }
};

ContentKey content_key(const uint8_t* data, size_t n) {
  return {n, std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(data), n))};
}

class ImageFiles {
 public:
  void remember(ContentKey key, const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    Entry& e = entries_[key];
    e.last_seq = next_seq_++;
    order_.push_back({key, e.last_seq});
    if (std::find(e.paths.begin(), e.paths.end(), path) == e.paths.end()) {
      if (e.paths.size() == kPathsPerContent) e.paths.erase(e.paths.begin());
      e.paths.push_back(path);
    }
    while (order_.size() > kKeptContents) {
      auto [old, seq] = order_.front();
      order_.pop_front();
      auto it = entries_.find(old);
      if (it != entries_.end() && it->second.last_seq == seq) entries_.erase(it);  // not read again since
    }
  }
  std::vector<std::string> find(ContentKey key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    return it == entries_.end() ? std::vector<std::string>() : it->second.paths;
  }

 private:
  struct Entry {
    std::vector<std::string> paths;  // in the order first read
    uint64_t last_seq = 0;
  };
  std::mutex mutex_;
  std::unordered_map<ContentKey, Entry, ContentKeyHash> entries_;
  std::deque<std::pair<ContentKey, uint64_t>> order_;  // (key, seq) per read, oldest first
  uint64_t next_seq_ = 0;
};

ImageFiles& image_files() {
  static auto* files = new ImageFiles;  // never destroyed: a worker may fail a decode during exit
  return *files;
}

// The SOURCE of a decode error message: "'a.jpg'", "'a.jpg' (the same
// bytes as 'b.jpg')" or "image data in memory (N bytes)".
std::string describe_source(const uint8_t* data, size_t n) {
  std::vector<std::string> paths = image_files().find(content_key(data, n));
  if (paths.empty()) return fmt::format("image data in memory ({} bytes)", n);
  std::string out = fmt::format("'{}'", paths[0]);
  for (size_t i = 1; i < paths.size(); ++i)
    out += fmt::format("{}'{}'", i == 1 ? " (the same bytes as " : ", ", paths[i]);
  return paths.size() > 1 ? out + ")" : out;
}

// Throws unless a width x height image fits the configured limit.
void check_image_size(int64_t w, int64_t h) {
  int64_t limit = max_image_pixels();
  if (w * h > limit)
    throw DatasetError(
        fmt::format("image is {}x{} = {} pixels, over the limit of {} (msl.dataset.config.set_max_image_pixels)", w, h,
                    w * h, limit));
}

// ------------------------------------------------------------- JPEG

struct JpegError {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
  const char* kind = "invalid JPEG data";
};

void jpeg_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Warnings after which every pixel is still the encoder's.
bool jpeg_warning_loses_nothing(int code) {
  return code == JWRN_EXTRANEOUS_DATA || code == JWRN_JFIF_MAJOR || code == JWRN_ADOBE_XFORM || code == JWRN_BOGUS_ICC;
}

// msg_level -1 is a warning, 0 and up are trace messages (ignored).
void jpeg_emit_message(j_common_ptr cinfo, int msg_level) {
  if (msg_level >= 0 || jpeg_warning_loses_nothing(cinfo->err->msg_code)) return;
  auto* err = reinterpret_cast<JpegError*>(cinfo->err);
  // JWRN_JPEG_EOF: the source ran dry (the memory source then feeds a fake
  // EOI marker); JWRN_HIT_MARKER: a scan ended before its data did.
  bool truncated = cinfo->err->msg_code == JWRN_JPEG_EOF || cinfo->err->msg_code == JWRN_HIT_MARKER;
  err->kind = truncated ? "truncated JPEG data" : "corrupt JPEG data";
  (*cinfo->err->format_message)(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// A decompressor whose libjpeg state is released with it, whatever happened.
struct JpegDecoder {
  jpeg_decompress_struct cinfo;
  JpegError err;
  bool created = false;
  JpegDecoder() = default;
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;
  ~JpegDecoder() {
    if (created) jpeg_destroy_decompress(&cinfo);
  }
};

// Reads the header (no allocation of the image's size yet). False with
// d.err set on failure.
bool jpeg_read_geometry(JpegDecoder& d, const unsigned char* data, size_t n) {
  d.cinfo.err = jpeg_std_error(&d.err.mgr);
  d.err.mgr.error_exit = jpeg_error_exit;
  d.err.mgr.emit_message = jpeg_emit_message;
  if (setjmp(d.err.jump)) return false;
  jpeg_create_decompress(&d.cinfo);
  d.created = true;
  jpeg_mem_src(&d.cinfo, data, static_cast<unsigned long>(n));
  jpeg_read_header(&d.cinfo, TRUE);
  d.cinfo.out_color_space = JCS_RGB;
  return true;
}

// Decodes into `out`, h x w x 3 bytes (the header's size). False with
// d.err set on failure.
bool jpeg_read_pixels(JpegDecoder& d, uint8_t* out, size_t h, size_t w) {
  if (setjmp(d.err.jump)) return false;
  jpeg_start_decompress(&d.cinfo);
  if (d.cinfo.output_height != h || d.cinfo.output_width != w || d.cinfo.output_components != 3) {
    std::snprintf(d.err.message, sizeof d.err.message,
                  "the output is %ux%u with %d channels, not the header's %zux%zu with 3", d.cinfo.output_width,
                  d.cinfo.output_height, d.cinfo.output_components, w, h);
    return false;
  }
  while (d.cinfo.output_scanline < d.cinfo.output_height) {
    JSAMPROW row = out + static_cast<size_t>(d.cinfo.output_scanline) * w * 3;
    jpeg_read_scanlines(&d.cinfo, &row, 1);
  }
  jpeg_finish_decompress(&d.cinfo);
  return true;
}

Tensor decode_jpeg(const unsigned char* data, size_t n) {
  JpegDecoder d;
  if (!jpeg_read_geometry(d, data, n)) throw DatasetError(fmt::format("{} (libjpeg: {})", d.err.kind, d.err.message));
  int64_t w = d.cinfo.image_width, h = d.cinfo.image_height;
  check_image_size(w, h);
  Tensor out(kernels::DType::UInt8, {h, w, 3});
  if (!jpeg_read_pixels(d, out.data<uint8_t>(), static_cast<size_t>(h), static_cast<size_t>(w)))
    throw DatasetError(fmt::format("{} (libjpeg: {})", d.err.kind, d.err.message));
  return out;
}

// ------------------------------------------------------------- PNG

uint32_t big_endian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// The chunk layout after the signature: length, type, data, CRC, ... up to
// IEND, all inside the data. This makes every truncation an error (libpng
// alone accepts a file cut after its last IDAT). Bytes after IEND are
// ignored, as by libpng. CRCs and contents are libpng's to check.
void check_png_chunks(const uint8_t* data, size_t n) {
  size_t pos = 8;
  std::string last = "the signature";
  for (;;) {
    if (n - pos < 8)
      throw DatasetError(
          fmt::format("truncated PNG data: the data ends at byte {}, after {}, without an IEND chunk", n, last));
    uint32_t len = big_endian32(data + pos);
    std::string type(reinterpret_cast<const char*>(data + pos + 4), 4);
    for (char c : type)
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')))
        throw DatasetError(fmt::format("corrupt PNG data: no chunk type at byte {} (after {})", pos + 4, last));
    if (len > 0x7fffffffu)
      throw DatasetError(
          fmt::format("corrupt PNG data: chunk '{}' at byte {} declares {} bytes (over 2^31 - 1)", type, pos, len));
    if (uint64_t{n - pos - 8} < uint64_t{len} + 4)
      throw DatasetError(fmt::format(
          "truncated PNG data: chunk '{}' at byte {} declares {} bytes and a CRC, but the data ends {} bytes after "
          "its header",
          type, pos, len, n - pos - 8));
    if (type == "IEND") return;
    pos += 12 + size_t{len};
    last = fmt::format("chunk '{}'", type);
  }
}

// A png_image whose libpng state is released with it.
struct PngImage {
  png_image image;
  PngImage() {
    std::memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
  }
  PngImage(const PngImage&) = delete;
  PngImage& operator=(const PngImage&) = delete;
  ~PngImage() { png_image_free(&image); }  // a no-op once finish_read has freed it
};

Tensor decode_png(const unsigned char* data, size_t n) {
  check_png_chunks(data, n);
  PngImage png;
  if (!png_image_begin_read_from_memory(&png.image, data, n))
    throw DatasetError(fmt::format("invalid PNG data (libpng: {})", png.image.message));
  // begin_read has read the chunks before the first IDAT; nothing of the
  // image's size is allocated until finish_read.
  check_image_size(png.image.width, png.image.height);
  png.image.format = PNG_FORMAT_RGB;
  Tensor out(kernels::DType::UInt8, {static_cast<int64_t>(png.image.height), static_cast<int64_t>(png.image.width), 3});
  if (!png_image_finish_read(&png.image, nullptr, out.raw(), 0, nullptr))
    throw DatasetError(fmt::format("invalid PNG data (libpng: {})", png.image.message));
  return out;
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

int64_t max_image_pixels() { return g_max_image_pixels.load(std::memory_order_relaxed); }

void set_max_image_pixels(int64_t pixels) {
  if (pixels < 1) throw DatasetError(fmt::format("set_max_image_pixels: expected a positive count, got {}", pixels));
  g_max_image_pixels.store(pixels, std::memory_order_relaxed);
}

void remember_image_file(const Tensor& bytes, const std::string& path) {
  if (bytes.dtype() != kernels::DType::UInt8 || bytes.ndim() != 1) return;
  Tensor src = bytes.contiguous();
  image_files().remember(content_key(src.data<uint8_t>(), static_cast<size_t>(src.numel())), path);
}

Tensor decode_image(const Tensor& bytes, const std::string& source) {
  if (bytes.dtype() != kernels::DType::UInt8 || bytes.ndim() != 1)
    throw DatasetError(fmt::format("Decode: expected the encoded image as a 1-D uint8 tensor, got shape {} {}",
                                   bytes.shape().str(), kernels::dtype_name(bytes.dtype())));
  Tensor src = bytes.contiguous();
  const auto* data = src.data<unsigned char>();
  size_t n = static_cast<size_t>(src.numel());
  static const unsigned char kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  try {
    if (n >= 8 && std::memcmp(data, kPng, 8) == 0) return decode_png(data, n);
    if (n >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF) return decode_jpeg(data, n);
    throw DatasetError(
        fmt::format("unsupported image format (the {} bytes start with neither the JPEG nor the PNG signature)", n));
  } catch (const DatasetError& e) {
    throw DatasetError(fmt::format("Decode: {}: {}", source.empty() ? describe_source(data, n) : source, e.what()));
  }
}

namespace {

// libpng's simplified-API description of a contiguous HWC (or HW) uint8 image.
png_image png_description(const Tensor& src, int channels) {
  png_image img;
  std::memset(&img, 0, sizeof img);
  img.version = PNG_IMAGE_VERSION;
  img.width = static_cast<png_uint_32>(src.dim(1));
  img.height = static_cast<png_uint_32>(src.dim(0));
  img.format = channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY;
  return img;
}

}  // namespace

void write_png(const std::string& path, const Tensor& image) {
  int c = image_channels(image, "_write_png");
  Tensor src = image.contiguous();
  png_image img = png_description(src, c);
  if (!png_image_write_to_file(&img, path.c_str(), 0, src.raw(), 0, nullptr))
    throw DatasetError(fmt::format("_write_png: cannot write '{}': {}", path, img.message));
}

std::string encode_png(const Tensor& image) {
  int c = image_channels(image, "encode_png");
  Tensor src = image.contiguous();
  png_image img = png_description(src, c);
  // The first call sizes the output, the second fills it.
  png_alloc_size_t size = 0;
  if (!png_image_write_to_memory(&img, nullptr, &size, 0, src.raw(), 0, nullptr))
    throw DatasetError(fmt::format("encode_png: {}", img.message));
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&img, out.data(), &size, 0, src.raw(), 0, nullptr))
    throw DatasetError(fmt::format("encode_png: {}", img.message));
  out.resize(size);
  return out;
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
