// Writes seed inputs for the loader fuzz targets: small valid files made by
// the project's own savers and encoders (save_checkpoint's serializers,
// the data set's PNG/JPEG writers and gzip writer), plus a few variants
// libjpeg and libpng write that those encoders do not (progressive and
// arithmetic JPEG, restart markers, interlaced, palette, 16-bit and alpha
// PNG). make_graph_cache_seeds.cpp does the same for the graph cache.
//
//   msl_fuzz_seeds OUT   -> OUT/corpus_<loader>/seed_<n> for each loader
//
// The fuzzer grows these; what it found is merged into
// tests/fuzz/corpus_<loader>/ (tests/fuzz/README.md).
#include <png.h>
#include <zlib.h>

#include <csetjmp>
#include <cstdio>
// jpeglib.h needs FILE and size_t declared before it.
#include <jpeglib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "interp/checkpoint/checkpoint.h"
#include "interp/dataset/dataset_core.h"

namespace fs = std::filesystem;
using namespace msl;
using kernels::DType;
using kernels::Tensor;

namespace {

fs::path g_out;

void put(const std::string& loader, const std::string& bytes) {
  fs::path dir = g_out / ("corpus_" + loader);
  fs::create_directories(dir);
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  std::ofstream(dir / ("seed_" + std::to_string(n)), std::ios::binary) << bytes;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Tensor ramp(DType dtype, const kernels::Dims& shape, int seed) {
  Tensor t(dtype, shape);
  auto* p = static_cast<uint8_t*>(t.raw());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = static_cast<uint8_t>(i * 37 + seed * 11 + (i >> 3));
  if (dtype == DType::Bool)
    for (size_t i = 0; i < t.nbytes(); ++i) p[i] &= 1;
  if (dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Float16 || dtype == DType::BFloat16)
    for (int64_t i = 0; i < t.numel(); ++i) kernels::store_from_double(t.raw(), dtype, i, 0.25 * double(i) - 1.5);
  return t;
}

void checkpoint_seeds() {
  using checkpoint::NamedTensor;
  std::vector<std::vector<NamedTensor>> sets = {
      {},
      {{"conv1.weight", ramp(DType::Float32, {2, 1, 3, 3}, 1)}, {"conv1.bias", ramp(DType::Float32, {2}, 2)}},
      {{"fc.weight", ramp(DType::Float16, {3, 2}, 3)},
       {"step", ramp(DType::Int32, {}, 4)},
       {"mask", ramp(DType::Bool, {5}, 5)},
       {"ids", ramp(DType::Int64, {2, 2}, 6)},
       {"empty", ramp(DType::Float64, {0, 3}, 7)},
       {"b16", ramp(DType::BFloat16, {4}, 8)},
       {"u8", ramp(DType::UInt8, {3}, 9)},
       {"i8", ramp(DType::Int8, {1, 1, 1}, 10)}},
      {{"learning_rate", ramp(DType::Float32, {}, 11)}, {"global_step", ramp(DType::Int32, {1}, 12)}},
  };
  for (const auto& set : sets)
    for (bool crc : {false, true}) {
      put("ckpt", checkpoint::serialize_ckpt(set, crc));
      put("safetensors", checkpoint::serialize_safetensors(set, {{"format", "ms"}}, crc));
    }
  put("safetensors", checkpoint::serialize_safetensors(sets[1], {}, false));
}

std::string be32(uint32_t v) {
  return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
}

void idx_seeds() {
  auto idx = [](const std::vector<uint32_t>& dims, int seed) {
    std::string s = {0, 0, 8, char(dims.size())};
    size_t n = 1;
    for (uint32_t d : dims) s += be32(d), n *= d;
    for (size_t i = 0; i < n; ++i) s += char(i * 7 + seed);
    return s;
  };
  std::vector<std::string> plain = {idx({5}, 1), idx({2, 4, 4}, 2), idx({1, 3, 2, 2}, 3), idx({0, 28, 28}, 4),
                                    idx({3, 28, 28}, 5)};
  for (const std::string& s : plain) {
    put("idx", s);
    Tensor t(DType::UInt8, {int64_t(s.size())});
    std::memcpy(t.raw(), s.data(), s.size());
    fs::path tmp = g_out / "tmp.gz";
    dataset::write_file_bytes(tmp.string(), t, true);
    put("idx", slurp(tmp));
    fs::remove(tmp);
  }
}

void cifar_seeds() {
  constexpr size_t kRecord = 3073;
  auto records = [](size_t n, int seed) {
    std::string s;
    for (size_t r = 0; r < n; ++r) {
      s += char((r + seed) % 10);
      for (size_t i = 1; i < kRecord; ++i) s += char(i * 13 + r + seed);
    }
    return s;
  };
  put("cifar", std::string(1, '\0') + records(1, 0));
  put("cifar", std::string(1, '\1') + records(2, 3));
  put("cifar", std::string(1, '\2') + records(3, 7));
  put("cifar", std::string(1, '\0'));
}

Tensor image(int h, int w, int c, int seed) {
  Tensor t(DType::UInt8, c == 1 ? kernels::Dims{h, w} : kernels::Dims{h, w, c});
  auto* p = t.data<uint8_t>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<uint8_t>((i * 29 + seed * 41) ^ (i / (w * c)));
  return t;
}

// A JPEG by libjpeg directly, for the variants write_jpeg does not make.
std::string jpeg_variant(int h, int w, int c, bool progressive, bool arithmetic, int restart_rows) {
  Tensor px = image(h, w, c, h + w);
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buf = nullptr;
  unsigned long len = 0;
  jpeg_mem_dest(&cinfo, &buf, &len);
  cinfo.image_width = w;
  cinfo.image_height = h;
  cinfo.input_components = c;
  cinfo.in_color_space = c == 3 ? JCS_RGB : JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 75, TRUE);
  if (progressive) jpeg_simple_progression(&cinfo);
  cinfo.arith_code = arithmetic ? TRUE : FALSE;
  cinfo.restart_in_rows = restart_rows;
  jpeg_start_compress(&cinfo, TRUE);
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = px.data<uint8_t>() + size_t(cinfo.next_scanline) * w * c;
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string out(reinterpret_cast<char*>(buf), len);
  std::free(buf);
  return out;
}

// A PNG by libpng's full API: interlacing, palettes, 16-bit samples, alpha.
std::string png_variant(int h, int w, int color_type, int bit_depth, bool interlace) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  std::string out;
  if (setjmp(png_jmpbuf(png))) std::abort();
  png_set_write_fn(
      png, &out,
      [](png_structp p, png_bytep d, png_size_t n) {
        static_cast<std::string*>(png_get_io_ptr(p))->append(reinterpret_cast<char*>(d), n);
      },
      nullptr);
  png_set_IHDR(png, info, w, h, bit_depth, color_type, interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_color palette[4] = {{0, 0, 0}, {255, 0, 0}, {0, 255, 0}, {10, 20, 250}};
  if (color_type == PNG_COLOR_TYPE_PALETTE) {
    png_set_PLTE(png, info, palette, 4);
    png_byte alpha[2] = {0, 128};
    png_set_tRNS(png, info, alpha, 2, nullptr);
  }
  png_write_info(png, info);
  int channels = color_type == PNG_COLOR_TYPE_RGB         ? 3
                 : color_type == PNG_COLOR_TYPE_RGB_ALPHA ? 4
                 : color_type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                                                           : 1;
  size_t row_bytes = png_get_rowbytes(png, info);
  std::vector<png_byte> rows(row_bytes * h);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<png_byte>(i * 31 + channels);
  if (color_type == PNG_COLOR_TYPE_PALETTE)
    for (auto& b : rows) b &= bit_depth == 8 ? 3 : 0x55;  // indices 0..3 (for 2-bit: 01 pairs)
  std::vector<png_bytep> ptrs(h);
  for (int y = 0; y < h; ++y) ptrs[y] = rows.data() + y * row_bytes;
  png_write_image(png, ptrs.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

void image_seeds() {
  fs::path tmp = g_out / "tmp.img";
  for (auto [h, w, c] : {std::tuple{1, 1, 3}, {3, 5, 1}, {8, 8, 3}, {9, 17, 3}, {16, 2, 1}}) {
    dataset::write_png(tmp.string(), image(h, w, c, 1));
    put("image", slurp(tmp));
    for (int q : {50, 95}) {
      dataset::write_jpeg(tmp.string(), image(h, w, c, 2), q);
      put("image", slurp(tmp));
    }
  }
  fs::remove(tmp);
  put("image", jpeg_variant(16, 24, 3, true, false, 0));
  put("image", jpeg_variant(9, 9, 1, true, false, 0));
  put("image", jpeg_variant(16, 16, 3, false, true, 0));
  put("image", jpeg_variant(32, 16, 3, false, false, 1));
  put("image", jpeg_variant(8, 40, 3, true, true, 1));
  put("image", png_variant(5, 7, PNG_COLOR_TYPE_RGB, 16, true));
  put("image", png_variant(6, 6, PNG_COLOR_TYPE_PALETTE, 8, false));
  put("image", png_variant(4, 9, PNG_COLOR_TYPE_PALETTE, 2, true));
  put("image", png_variant(3, 3, PNG_COLOR_TYPE_GRAY_ALPHA, 8, false));
  put("image", png_variant(4, 5, PNG_COLOR_TYPE_RGB_ALPHA, 16, false));
  put("image", png_variant(7, 3, PNG_COLOR_TYPE_GRAY, 1, true));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  g_out = argv[1];
  fs::create_directories(g_out);
  checkpoint_seeds();
  idx_seeds();
  cifar_seeds();
  image_seeds();
  return 0;
}
