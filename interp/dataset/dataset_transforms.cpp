// Vision transforms of msl.dataset on HWC images (uint8 or float32),
// TypeCast (any tensor), and batching.
//
// The geometric transforms are written once over a pixel type T and keep
// the input dtype (a uint8 image stays uint8, rounded and saturated, as
// OpenCV does for MindSpore); Rescale and Normalize produce float32.
// Bilinear resize follows OpenCV's INTER_LINEAR geometry (pixel centres at
// +0.5, source coordinates clamped to the image), nearest follows
// INTER_NEAREST (floor of dst * in / out), so results match MindSpore's up
// to OpenCV's fixed-point rounding of uint8 weights.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "interp/dataset/dataset_core.h"
#include "kernels/strided_iter.h"

namespace msl::dataset {

using kernels::DType;

namespace {

struct Geometry {
  int64_t h, w, c;
  bool has_channels;
};

Geometry geometry(const Tensor& img, const char* op) {
  if (img.ndim() != 2 && img.ndim() != 3)
    throw DatasetError(
        fmt::format("{}: expected an image of shape (H, W) or (H, W, C), got {}", op, img.shape().str()));
  if (img.dtype() != DType::UInt8 && img.dtype() != DType::Float32)
    throw DatasetError(
        fmt::format("{}: expected a uint8 or float32 image, got {}", op, kernels::dtype_name(img.dtype())));
  return {img.dim(0), img.dim(1), img.ndim() == 3 ? img.dim(2) : 1, img.ndim() == 3};
}

Tensor like(const Geometry& g, DType dt, int64_t h, int64_t w) {
  if (g.has_channels) return Tensor(dt, {h, w, g.c});
  return Tensor(dt, {h, w});
}

template <class T>
T store(double v) {
  if constexpr (std::is_same_v<T, uint8_t>)  // round half up; clamped first, the cast is a floor (min/max: no branches)
    return static_cast<uint8_t>(std::min(std::max(v + 0.5, 0.0), 255.0));
  else
    return static_cast<T>(v);
}

template <class T>
void resize_impl(const Tensor& src, Tensor& dst, const Geometry& g, Interpolation mode) {
  const T* in = src.data<T>();
  T* out = dst.data<T>();
  int64_t oh = dst.dim(0), ow = dst.dim(1), c = g.c;
  double sy = static_cast<double>(g.h) / oh, sx = static_cast<double>(g.w) / ow;
  if (mode == Interpolation::Nearest) {
    for (int64_t y = 0; y < oh; ++y) {
      int64_t iy = std::min<int64_t>(static_cast<int64_t>(std::floor(y * sy)), g.h - 1);
      for (int64_t x = 0; x < ow; ++x) {
        int64_t ix = std::min<int64_t>(static_cast<int64_t>(std::floor(x * sx)), g.w - 1);
        std::memcpy(out + (y * ow + x) * c, in + (iy * g.w + ix) * c, sizeof(T) * c);
      }
    }
    return;
  }
  // Source coordinate, lower neighbour and weight of the upper one.
  auto axis = [](int64_t d, double scale, int64_t n, int64_t& i0, double& frac) {
    double f = (d + 0.5) * scale - 0.5;
    i0 = static_cast<int64_t>(std::floor(f));
    frac = f - i0;
    if (i0 < 0) i0 = 0, frac = 0;
    if (i0 >= n - 1) i0 = n - 1, frac = 0;
  };
  // The column table once per image (the per-pixel floors dominated).
  std::vector<int64_t> col0(static_cast<size_t>(ow)), col1(static_cast<size_t>(ow));
  std::vector<double> colf(static_cast<size_t>(ow));
  for (int64_t x = 0; x < ow; ++x) {
    int64_t x0;
    axis(x, sx, g.w, x0, colf[static_cast<size_t>(x)]);
    col0[static_cast<size_t>(x)] = x0 * c;
    col1[static_cast<size_t>(x)] = std::min(x0 + 1, g.w - 1) * c;
  }
  // One image row: the channel count a compile-time constant for 1 and 3.
  auto rows = [&](auto channels) {
    constexpr int64_t C = decltype(channels)::value;
    const int64_t cc = C > 0 ? C : c;
    for (int64_t y = 0; y < oh; ++y) {
      int64_t y0;
      double fy;
      axis(y, sy, g.h, y0, fy);
      int64_t y1 = std::min(y0 + 1, g.h - 1);
      const T* r0 = in + y0 * g.w * cc;
      const T* r1 = in + y1 * g.w * cc;
      T* o = out + y * ow * cc;
      for (int64_t x = 0; x < ow; ++x) {
        size_t xi = static_cast<size_t>(x);
        int64_t a = col0[xi], b = col1[xi];
        double fx = colf[xi];
        for (int64_t k = 0; k < cc; ++k) {
          double v00 = r0[a + k], v01 = r0[b + k], v10 = r1[a + k], v11 = r1[b + k];
          double top = v00 + (v01 - v00) * fx, bottom = v10 + (v11 - v10) * fx;
          o[x * cc + k] = store<T>(top + (bottom - top) * fy);
        }
      }
    }
  };
  if (c == 1)
    rows(std::integral_constant<int64_t, 1>{});
  else if (c == 3)
    rows(std::integral_constant<int64_t, 3>{});
  else
    rows(std::integral_constant<int64_t, 0>{});
}

template <class T>
void crop_impl(const Tensor& src, Tensor& dst, const Geometry& g, int64_t top, int64_t left, double fill) {
  const T* in = src.data<T>();
  T* out = dst.data<T>();
  int64_t oh = dst.dim(0), ow = dst.dim(1), c = g.c;
  T f = store<T>(fill);
  // Per output row: fill, the span of columns inside the image, fill
  // (random crops run per row of every batch, so no per-pixel test).
  int64_t x0 = std::clamp<int64_t>(-left, 0, ow), x1 = std::clamp<int64_t>(g.w - left, x0, ow);
  for (int64_t y = 0; y < oh; ++y) {
    T* row = out + y * ow * c;
    int64_t iy = top + y;
    if (iy < 0 || iy >= g.h) {
      std::fill(row, row + ow * c, f);
      continue;
    }
    std::fill(row, row + x0 * c, f);
    std::copy(in + (iy * g.w + left + x0) * c, in + (iy * g.w + left + x1) * c, row + x0 * c);
    std::fill(row + x1 * c, row + ow * c, f);
  }
}

template <class T>
void hflip_impl(const Tensor& src, Tensor& dst, const Geometry& g) {
  const T* in = src.data<T>();
  T* out = dst.data<T>();
  for (int64_t y = 0; y < g.h; ++y)
    for (int64_t x = 0; x < g.w; ++x)
      for (int64_t k = 0; k < g.c; ++k) out[(y * g.w + x) * g.c + k] = in[(y * g.w + (g.w - 1 - x)) * g.c + k];
}

// x * scale + shift to float32, in double as to_float computes it. The
// per-pixel loop of most pipelines, so it is vectorized (-O3) and cloned
// for AVX2; no clone may use FMA, whose single rounding of x * scale +
// shift would change results between machines. (clang before 18 cannot
// clone a template, nor knows `optimize`: the libFuzzer build's clang 14
// compiles the loop once.)
#if defined(__clang__) && __clang_major__ < 18
#define MSL_RESCALE_LOOP_CLONES
#else
#define MSL_RESCALE_LOOP_CLONES __attribute__((target_clones("avx2", "default"), optimize("O3")))
#endif
template <class T>
MSL_RESCALE_LOOP_CLONES void rescale_loop(const T* in, float* out, int64_t n, double scale, double shift) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(static_cast<double>(in[i]) * scale + shift);
}

template <class F>
Tensor to_float(const Tensor& img, const Geometry& g, F&& f) {
  Tensor src = img.contiguous();
  Tensor out = like(g, DType::Float32, g.h, g.w);
  float* o = out.data<float>();
  int64_t n = img.numel();
  if (img.dtype() == DType::UInt8) {
    const uint8_t* in = src.data<uint8_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(f(static_cast<double>(in[i]), i % g.c));
  } else {
    const float* in = src.data<float>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(f(static_cast<double>(in[i]), i % g.c));
  }
  return out;
}

}  // namespace

void resize_shorter_side(int64_t ih, int64_t iw, int64_t size, int64_t& h, int64_t& w) {
  if (ih <= iw) {
    h = size;
    w = static_cast<int64_t>(static_cast<double>(iw) * size / ih);
  } else {
    w = size;
    h = static_cast<int64_t>(static_cast<double>(ih) * size / iw);
  }
}

Tensor resize(const Tensor& img, int64_t h, int64_t w, Interpolation mode) {
  Geometry g = geometry(img, "Resize");
  if (h <= 0 || w <= 0 || h > 65535 || w > 65535)
    throw DatasetError(fmt::format("Resize: invalid output size ({}, {})", h, w));
  if (g.h == 0 || g.w == 0) throw DatasetError("Resize: the input image is empty");
  Tensor src = img.contiguous();
  Tensor out = like(g, img.dtype(), h, w);
  if (img.dtype() == DType::UInt8)
    resize_impl<uint8_t>(src, out, g, mode);
  else
    resize_impl<float>(src, out, g, mode);
  return out;
}

Tensor crop(const Tensor& img, int64_t top, int64_t left, int64_t h, int64_t w, double fill) {
  Geometry g = geometry(img, "Crop");
  if (h <= 0 || w <= 0 || h > 65535 || w > 65535)
    throw DatasetError(fmt::format("Crop: invalid crop size ({}, {})", h, w));
  Tensor src = img.contiguous();
  Tensor out = like(g, img.dtype(), h, w);
  if (img.dtype() == DType::UInt8)
    crop_impl<uint8_t>(src, out, g, top, left, fill);
  else
    crop_impl<float>(src, out, g, top, left, fill);
  return out;
}

// A crop larger than the image pads it with zeros (MindSpore's CenterCrop),
// the odd pixel of padding going after the image, as the odd pixel of a
// crop does: both offsets are the difference halved toward zero.
Tensor center_crop(const Tensor& img, int64_t h, int64_t w) {
  Geometry g = geometry(img, "CenterCrop");
  return crop(img, (g.h - h) / 2, (g.w - w) / 2, h, w, 0);
}

Tensor hflip(const Tensor& img) {
  Geometry g = geometry(img, "HorizontalFlip");
  Tensor src = img.contiguous();
  Tensor out = like(g, img.dtype(), g.h, g.w);
  if (img.dtype() == DType::UInt8)
    hflip_impl<uint8_t>(src, out, g);
  else
    hflip_impl<float>(src, out, g);
  return out;
}

Tensor rescale(const Tensor& img, double scale, double shift) {
  Geometry g = geometry(img, "Rescale");
  Tensor src = img.contiguous();
  Tensor out = like(g, DType::Float32, g.h, g.w);
  if (img.dtype() == DType::UInt8)
    rescale_loop(src.data<uint8_t>(), out.data<float>(), img.numel(), scale, shift);
  else
    rescale_loop(src.data<float>(), out.data<float>(), img.numel(), scale, shift);
  return out;
}

Tensor normalize(const Tensor& img, const std::vector<double>& mean, const std::vector<double>& std) {
  Geometry g = geometry(img, "Normalize");
  if (mean.size() != std.size() || (mean.size() != 1 && static_cast<int64_t>(mean.size()) != g.c))
    throw DatasetError(
        fmt::format("Normalize: mean ({} values) and std ({} values) must have one value per "
                    "channel ({}) or a single value",
                    mean.size(), std.size(), g.c));
  for (double s : std)
    if (!(s > 0)) throw DatasetError(fmt::format("Normalize: std values must be positive, got {}", s));
  return to_float(img, g, [&](double v, int64_t k) {
    size_t i = mean.size() == 1 ? 0 : static_cast<size_t>(k);
    return (v - mean[i]) / std[i];
  });
}

Tensor hwc_to_chw(const Tensor& img) {
  Geometry g = geometry(img, "HWC2CHW");
  Tensor src = img.contiguous();
  Tensor out(img.dtype(), {g.c, g.h, g.w});
  if (g.c == 1) {  // one channel: HWC and CHW are the same bytes
    if (out.nbytes()) std::memcpy(out.raw(), src.raw(), out.nbytes());
    return out;
  }
  size_t es = img.itemsize();
  const auto* in = static_cast<const char*>(src.raw());
  auto* o = static_cast<char*>(out.raw());
  for (int64_t k = 0; k < g.c; ++k)
    for (int64_t p = 0; p < g.h * g.w; ++p) std::memcpy(o + (k * g.h * g.w + p) * es, in + (p * g.c + k) * es, es);
  return out;
}

Tensor type_cast(const Tensor& t, DType to) {
  Tensor out(to, t.shape());
  kernels::strided_iter::copy_convert(t, out);
  return out;
}

namespace {

// The generator of one row's random ops: SplitMix64, whose whole state is
// the seed. A Mersenne Twister spent more time filling its 312-word state
// per row than a small image's crop and flip took.
struct RowRng {
  using result_type = uint64_t;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t{0}; }
  uint64_t state;
  uint64_t operator()() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
};

Tensor random_crop(const ImageOp& op, const Tensor& img, RowRng& gen) {
  Geometry g = geometry(img, "RandomCrop");
  // Padding enlarges the canvas; positions then index the padded image.
  int64_t ph = g.h + op.pad[1] + op.pad[3], pw = g.w + op.pad[0] + op.pad[2];
  int64_t extra_y = 0, extra_x = 0;
  if (op.pad_if_needed) {
    extra_y = std::max<int64_t>(0, op.h - ph);
    extra_x = std::max<int64_t>(0, op.w - pw);
    ph += 2 * extra_y;
    pw += 2 * extra_x;
  }
  if (ph < op.h || pw < op.w)
    throw DatasetError(
        fmt::format("RandomCrop: crop size ({}, {}) is larger than the (padded) image ({}, {})", op.h, op.w, ph, pw));
  int64_t top = std::uniform_int_distribution<int64_t>(0, ph - op.h)(gen);
  int64_t left = std::uniform_int_distribution<int64_t>(0, pw - op.w)(gen);
  return crop(img, top - op.pad[1] - extra_y, left - op.pad[0] - extra_x, op.h, op.w, op.fill);
}

// RandomResizedCrop's box search (Inception-style), then the resize.
Tensor random_resized_crop(const ImageOp& op, const Tensor& img, RowRng& gen) {
  Geometry g = geometry(img, "RandomCropDecodeResize");
  double area = static_cast<double>(g.h * g.w);
  std::uniform_real_distribution<double> scale(op.scale_lo, op.scale_hi);
  std::uniform_real_distribution<double> log_ratio(std::log(op.ratio_lo), std::log(op.ratio_hi));
  for (int attempt = 0; attempt < op.max_attempts; ++attempt) {
    double target = area * scale(gen);
    double ratio = std::exp(log_ratio(gen));
    auto cw = static_cast<int64_t>(std::lround(std::sqrt(target * ratio)));
    auto ch = static_cast<int64_t>(std::lround(std::sqrt(target / ratio)));
    if (cw > 0 && ch > 0 && cw <= g.w && ch <= g.h) {
      int64_t top = std::uniform_int_distribution<int64_t>(0, g.h - ch)(gen);
      int64_t left = std::uniform_int_distribution<int64_t>(0, g.w - cw)(gen);
      return resize(crop(img, top, left, ch, cw), op.h, op.w, op.mode);
    }
  }
  // Fallback: the largest centred box whose ratio is within bounds.
  double r = static_cast<double>(g.w) / g.h;
  int64_t cw = g.w, ch = g.h;
  if (r < op.ratio_lo)
    ch = std::max<int64_t>(1, std::lround(g.w / op.ratio_lo));
  else if (r > op.ratio_hi)
    cw = std::max<int64_t>(1, std::lround(g.h * op.ratio_hi));
  return resize(crop(img, (g.h - ch) / 2, (g.w - cw) / 2, ch, cw), op.h, op.w, op.mode);
}

}  // namespace

Tensor apply_ops(const std::vector<ImageOp>& ops, Tensor img, uint64_t seed) {
  RowRng rng{seed};
  for (const ImageOp& op : ops) {
    switch (op.kind) {
      case ImageOp::Decode: img = decode_image(img); break;
      case ImageOp::Resize: {
        int64_t h = op.h, w = op.w;
        if (w == 0) {
          Geometry g = geometry(img, "Resize");
          resize_shorter_side(g.h, g.w, op.h, h, w);
        }
        img = resize(img, h, w, op.mode);
        break;
      }
      case ImageOp::CenterCrop: img = center_crop(img, op.h, op.w); break;
      case ImageOp::RandomCrop: img = random_crop(op, img, rng); break;
      case ImageOp::RandomHFlip:
        if (std::uniform_real_distribution<double>(0, 1)(rng) < op.prob) img = hflip(img);
        break;
      case ImageOp::RandomCropDecodeResize: img = random_resized_crop(op, decode_image(img), rng); break;
      case ImageOp::Rescale: img = rescale(img, op.a, op.b); break;
      case ImageOp::Normalize: img = normalize(img, op.mean, op.std); break;
      case ImageOp::HWC2CHW:
        // One channel: HWC and CHW are the same bytes, so an image no one
        // else holds (the result of an earlier op) is relabelled, not copied.
        if (img.ndim() == 3 && img.dim(2) == 1 && (img.dtype() == DType::UInt8 || img.dtype() == DType::Float32) &&
            img.is_contiguous() && img.storage()->refcount.load() == 1)
          img = Tensor::view(img, {1, img.dim(0), img.dim(1)}, {img.dim(0) * img.dim(1), img.dim(1), 1}, img.offset());
        else
          img = hwc_to_chw(img);
        break;
      case ImageOp::TypeCast: img = type_cast(img, op.dtype); break;
    }
  }
  return img;
}

void check_stackable(const std::vector<kernels::TensorSpec>& rows) {
  if (rows.empty()) throw DatasetError("batch: no rows to stack");
  const kernels::TensorSpec& first = rows[0];
  for (size_t i = 1; i < rows.size(); ++i)
    if (rows[i].shape != first.shape || rows[i].dtype != first.dtype)
      throw DatasetError(
          fmt::format("batch: row {} has shape {} {} but row 0 has {} {}; resize or pad the column "
                      "to one shape before batching",
                      i, rows[i].shape.str(), kernels::dtype_name(rows[i].dtype), first.shape.str(),
                      kernels::dtype_name(first.dtype)));
}

Tensor stack(const std::vector<Tensor>& items) {
  std::vector<kernels::TensorSpec> specs;
  specs.reserve(items.size());
  for (const Tensor& t : items) specs.push_back(t.spec());
  check_stackable(specs);
  const Tensor& first = items[0];
  kernels::Dims shape;
  shape.push_back(static_cast<int64_t>(items.size()));
  for (int i = 0; i < first.ndim(); ++i) shape.push_back(first.dim(i));
  Tensor out(first.dtype(), shape);
  size_t bytes = first.nbytes();
  auto* o = static_cast<char*>(out.raw());
  for (size_t i = 0; i < items.size(); ++i) {
    Tensor src = items[i].contiguous();
    if (bytes) std::memcpy(o + i * bytes, src.raw(), bytes);
  }
  return out;
}

}  // namespace msl::dataset
