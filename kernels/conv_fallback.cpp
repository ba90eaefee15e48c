// float64 convolutions by im2col/col2im and the fallback GEMM.
//
// Per image and group, the receptive fields become the columns of a
// [C/g * kh * kw, Ho * Wo] matrix, so all three ops are one GEMM each:
//   forward          y_g  = W_g · col
//   backprop_input   dcol = W_g^T · dy_g, then col2im adds dcol into dx
//   backprop_filter  dW_g += dy_g · col^T
// Images are independent in the first two, so with several images each
// thread takes whole images (the GEMMs then stay single-threaded); with one
// image the GEMM splits instead. backprop_filter sums over images into one
// partial dW per thread, added up at the end, so threads never share an
// accumulator and the result does not depend on scheduling races.
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/contraction_fallback.h"
#include "kernels/parallel.h"

namespace msl::kernels::fallback {

namespace {

struct Geo {
  int64_t n, c, h, w, o, cg, og, kh, kw, ho, wo, groups;
  int64_t rows() const { return cg * kh * kw; }  // rows of col
  int64_t cols() const { return ho * wo; }
};

Geo geo(const Dims& x, const Dims& wt, const Window2d& g, int64_t groups) {
  return Geo{x[0], x[1], x[2], x[3], wt[0], x[1] / groups, wt[0] / groups, wt[2], wt[3], g.ho, g.wo, groups};
}

// col[r, q] for group `grp` of image `img` (x read through its strides).
void im2col(const double* x, const Dims& xs, const Geo& d, const Window2d& g, int64_t img, int64_t grp, double* col) {
  for (int64_t c = 0; c < d.cg; ++c)
    for (int64_t i = 0; i < d.kh; ++i)
      for (int64_t j = 0; j < d.kw; ++j) {
        double* row = col + ((c * d.kh + i) * d.kw + j) * d.cols();
        const double* plane = x + img * xs[0] + (grp * d.cg + c) * xs[1];
        for (int64_t oh = 0; oh < d.ho; ++oh) {
          int64_t ih = oh * g.sh - g.pt + i * g.dh;
          double* out = row + oh * d.wo;
          if (ih < 0 || ih >= d.h) {
            std::fill(out, out + d.wo, 0.0);
            continue;
          }
          for (int64_t ow = 0; ow < d.wo; ++ow) {
            int64_t iw = ow * g.sw - g.pl + j * g.dw;
            out[ow] = iw >= 0 && iw < d.w ? plane[ih * xs[2] + iw * xs[3]] : 0.0;
          }
        }
      }
}

// dx (contiguous) += col2im(col) for group `grp` of image `img`.
void col2im(const double* col, const Geo& d, const Window2d& g, int64_t img, int64_t grp, double* dx) {
  for (int64_t c = 0; c < d.cg; ++c) {
    double* plane = dx + (img * d.c + grp * d.cg + c) * d.h * d.w;
    for (int64_t i = 0; i < d.kh; ++i)
      for (int64_t j = 0; j < d.kw; ++j) {
        const double* row = col + ((c * d.kh + i) * d.kw + j) * d.cols();
        for (int64_t oh = 0; oh < d.ho; ++oh) {
          int64_t ih = oh * g.sh - g.pt + i * g.dh;
          if (ih < 0 || ih >= d.h) continue;
          for (int64_t ow = 0; ow < d.wo; ++ow) {
            int64_t iw = ow * g.sw - g.pl + j * g.dw;
            if (iw >= 0 && iw < d.w) plane[ih * d.w + iw] += row[oh * d.wo + ow];
          }
        }
      }
  }
}

// Runs f(img, col_buffer) for every image, one thread per group of images
// when there are several, each with its own column buffer.
template <class F>
void for_images(int64_t n, int64_t col_size, F&& f) {
  int64_t grain = n >= num_threads() ? 1 : n + 1;
  parallel_for(n, grain, [&](int64_t b, int64_t e) {
    std::unique_ptr<double[]> col(new double[static_cast<size_t>(col_size)]);
    for (int64_t img = b; img < e; ++img) f(img, col.get());
  });
}

}  // namespace

void conv2d_f64(const Tensor& x, const Tensor& w, const Window2d& g, int64_t groups, const Tensor& y) {
  Geo d = geo(x.shape(), w.shape(), g, groups);
  Tensor wc = w.contiguous();
  const double* xp = x.data<double>();
  const double* wp = wc.data<double>();
  double* yp = y.data<double>();
  for_images(d.n, d.rows() * d.cols(), [&](int64_t img, double* col) {
    for (int64_t grp = 0; grp < d.groups; ++grp) {
      im2col(xp, x.strides(), d, g, img, grp, col);
      gemm<double>(d.og, d.cols(), d.rows(), wp + grp * d.og * d.rows(), d.rows(), 1, col, d.cols(), 1,
                   yp + (img * d.o + grp * d.og) * d.cols(), d.cols(), false);
    }
  });
}

void conv2d_backprop_input_f64(const Tensor& dy, const Tensor& w, const Window2d& g, int64_t groups, const Tensor& dx) {
  Geo d = geo(dx.shape(), w.shape(), g, groups);
  Tensor wc = w.contiguous(), dyc = dy.contiguous();
  const double* wp = wc.data<double>();
  const double* dyp = dyc.data<double>();
  double* dxp = dx.data<double>();
  std::memset(dxp, 0, dx.nbytes());
  for_images(d.n, d.rows() * d.cols(), [&](int64_t img, double* col) {
    for (int64_t grp = 0; grp < d.groups; ++grp) {
      // W_g^T: [rows, og] read through W_g's strides (row stride 1, column stride rows).
      gemm<double>(d.rows(), d.cols(), d.og, wp + grp * d.og * d.rows(), 1, d.rows(),
                   dyp + (img * d.o + grp * d.og) * d.cols(), d.cols(), 1, col, d.cols(), false);
      col2im(col, d, g, img, grp, dxp);
    }
  });
}

void conv2d_backprop_filter_f64(const Tensor& dy, const Tensor& x, const Window2d& g, int64_t groups,
                                const Tensor& dw) {
  Geo d = geo(x.shape(), dw.shape(), g, groups);
  Tensor dyc = dy.contiguous();
  const double* xp = x.data<double>();
  const double* dyp = dyc.data<double>();
  int64_t wsize = dw.numel();
  int64_t chunks = std::min<int64_t>(num_threads(), d.n);
  std::vector<std::vector<double>> partial(static_cast<size_t>(chunks));
  parallel_for(chunks, chunks > 1 ? 1 : 2, [&](int64_t cb, int64_t ce) {
    std::unique_ptr<double[]> col(new double[static_cast<size_t>(d.rows() * d.cols())]);
    for (int64_t ch = cb; ch < ce; ++ch) {
      std::vector<double>& acc = partial[static_cast<size_t>(ch)];
      acc.assign(static_cast<size_t>(wsize), 0.0);
      for (int64_t img = d.n * ch / chunks; img < d.n * (ch + 1) / chunks; ++img)
        for (int64_t grp = 0; grp < d.groups; ++grp) {
          im2col(xp, x.strides(), d, g, img, grp, col.get());
          // col^T: [cols, rows] read with row stride 1 and column stride cols.
          gemm<double>(d.og, d.rows(), d.cols(), dyp + (img * d.o + grp * d.og) * d.cols(), d.cols(), 1, col.get(), 1,
                       d.cols(), acc.data() + grp * d.og * d.rows(), d.rows(), true);
        }
    }
  });
  double* out = dw.data<double>();
  for (int64_t i = 0; i < wsize; ++i) {
    double s = 0;
    for (auto& p : partial) s += p[static_cast<size_t>(i)];
    out[i] = s;
  }
}

}  // namespace msl::kernels::fallback
