// The C++ core of msl.dataset: file readers, image codecs and vision
// transforms on kernels::Tensor, free of the interpreter so that worker
// threads can run them.
//
// Design:
//  - Everything here is plain C++ over kernels::Tensor (whose storage has a
//    thread-safe reference count). No function touches MSL values, so the
//    pipeline hands lists of tensors to worker threads and wraps the results
//    on the interpreter thread (module_msl_dataset.cpp).
//  - Errors are DatasetError exceptions whose message names the file and,
//    for binary formats, the byte offset where the data went wrong: a data
//    set problem must be fixable from the message alone.
//  - Images are HWC: uint8 as decoded, float32 after Rescale/Normalize; a 2-D
//    (H, W) image is treated as one channel. This is MindSpore's layout, so
//    HWC2CHW is the explicit last step before a network.
//  - Random transforms take their randomness as an explicit per-row seed
//    drawn on the interpreter thread: results then do not depend on which
//    worker ran a row or how many workers there are.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/tensor.h"

namespace msl::dataset {

using kernels::Tensor;

struct DatasetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ------------------------------------------------------------- readers

// An IDX file (MNIST's format), gzipped or plain: magic 0x0000 <type> <ndim>,
// ndim big-endian uint32 dimensions, then the data. Only the unsigned-byte
// type (0x08) is accepted, which is what image data sets use.
Tensor read_idx(const std::string& path);

// CIFAR-10 binary batches: records of 1 label byte + 3x32x32 CHW pixels.
// Returns images (N, 32, 32, 3) uint8 HWC and labels (N,) int32.
void read_cifar10(const std::vector<std::string>& files, Tensor& images, Tensor& labels);

// The bytes of a file as a 1-D uint8 tensor; with `gunzip`, of the
// decompressed stream (a plain file passes through).
Tensor read_file_bytes(const std::string& path, bool gunzip = false);
// Writes the bytes of a uint8 tensor, gzip-compressed with `gzip` (tests
// build data set files with it: MSL files are text only).
void write_file_bytes(const std::string& path, const Tensor& bytes, bool gzip);

// One folder per class under `root`; classes sorted by name get labels 0,
// 1, ...; files with one of `extensions` (lower-case, with the dot) are
// listed sorted within their class.
struct FolderListing {
  std::vector<std::string> classes;
  std::vector<std::string> files;
  std::vector<int32_t> labels;
};
FolderListing list_image_folder(const std::string& root, const std::vector<std::string>& extensions);

// ------------------------------------------------------------- codecs

// Decodes JPEG or PNG bytes (chosen by their signature) to HWC uint8 RGB.
// Truncated or corrupt data is an error (libjpeg's "fill in gray and warn"
// included), and so is an image over max_image_pixels(), refused from its
// header before its pixels are allocated. Errors read "Decode: SOURCE:
// what is wrong"; SOURCE is `source` when given, else the file the bytes
// were read from (remember_image_file), else "image data in memory (N bytes)".
Tensor decode_image(const Tensor& bytes, const std::string& source = {});

// The most pixels (width x height) an image may declare; process-wide, as
// MindSpore's dataset config. 2^26: an 8192 x 8192 image, 192 MB decoded.
constexpr int64_t kDefaultMaxImagePixels = int64_t{1} << 26;
int64_t max_image_pixels();
void set_max_image_pixels(int64_t pixels);  // pixels >= 1, else DatasetError

// Records that `bytes` are the content of the file `path`, so that a decode
// error on them (or on a copy, on any thread) names the file. Kept by
// content (size and hash), for the last 65536 contents read: nothing holds
// the bytes alive, and files with the same bytes are all named.
void remember_image_file(const Tensor& bytes, const std::string& path);

// Writes an HWC (or HW) uint8 image with 1 or 3 channels.
void write_png(const std::string& path, const Tensor& image);
// The PNG file write_png writes, as bytes (TensorBoard image summaries).
std::string encode_png(const Tensor& image);
void write_jpeg(const std::string& path, const Tensor& image, int quality);

// ------------------------------------------------------------- transforms

enum class Interpolation { Linear, Nearest };

Tensor resize(const Tensor& img, int64_t h, int64_t w, Interpolation mode);
// Resize with MindSpore's int size: the shorter side becomes `size`.
void resize_shorter_side(int64_t ih, int64_t iw, int64_t size, int64_t& h, int64_t& w);
// Crops rows [top, top+h) and columns [left, left+w); parts outside the
// image read as `fill`.
Tensor crop(const Tensor& img, int64_t top, int64_t left, int64_t h, int64_t w, double fill = 0);
Tensor center_crop(const Tensor& img, int64_t h, int64_t w);
Tensor hflip(const Tensor& img);
// float32 x * scale + shift.
Tensor rescale(const Tensor& img, double scale, double shift);
// float32 (x - mean[c]) / std[c] per channel.
Tensor normalize(const Tensor& img, const std::vector<double>& mean, const std::vector<double>& std);
Tensor hwc_to_chw(const Tensor& img);
// Any tensor (a 0-d label too) converted to dtype `to` with the rules of
// Tensor.astype (kernels' cast: integers saturate, NaN becomes 0).
Tensor type_cast(const Tensor& t, kernels::DType to);

// One transform of a map() chain with its parameters, as parsed from the
// MSL description (module_msl_dataset.cpp).
struct ImageOp {
  enum Kind {
    Decode,
    Resize,
    CenterCrop,
    RandomCrop,
    RandomHFlip,
    RandomCropDecodeResize,
    Rescale,
    Normalize,
    HWC2CHW,
    TypeCast
  };
  Kind kind;
  int64_t h = 0, w = 0;  // output size; h > 0, w == 0: shorter side (Resize)
  Interpolation mode = Interpolation::Linear;
  int64_t pad[4] = {0, 0, 0, 0};  // left, top, right, bottom (RandomCrop)
  bool pad_if_needed = false;
  double fill = 0;
  double prob = 0.5;  // RandomHFlip
  double scale_lo = 0.08, scale_hi = 1.0, ratio_lo = 0.75, ratio_hi = 4.0 / 3.0;
  int max_attempts = 10;
  double a = 1, b = 0;                             // Rescale
  std::vector<double> mean, std;                   // Normalize
  kernels::DType dtype = kernels::DType::Float32;  // TypeCast

  // Whether the op draws from the per-row generator: a map of only
  // deterministic ops needs no seeds.
  bool is_random() const { return kind == RandomCrop || kind == RandomHFlip || kind == RandomCropDecodeResize; }
};

// Applies `ops` in order; random ops draw from a generator seeded by `seed`.
// The vision ops need an image; TypeCast takes any tensor.
Tensor apply_ops(const std::vector<ImageOp>& ops, Tensor img, uint64_t seed);

// Stacks equally shaped tensors along a new first axis (batching).
Tensor stack(const std::vector<Tensor>& items);
// The error stack() raises for rows of different shapes or dtypes, if any.
void check_stackable(const std::vector<kernels::TensorSpec>& rows);

}  // namespace msl::dataset
