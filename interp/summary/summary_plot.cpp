// Line plots of scalar series (summary_plot.h).
#include "interp/summary/summary_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace msl::summary {

namespace {

using kernels::DType;
using kernels::Tensor;

struct Canvas {
  Tensor img;
  int w, h;
  Canvas(int width, int height) : img(DType::UInt8, {height, width, 3}), w(width), h(height) {
    std::fill_n(img.data<uint8_t>(), static_cast<size_t>(w) * h * 3, uint8_t{255});
  }
  void dot(int x, int y, const uint8_t rgb[3]) {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    uint8_t* p = img.data<uint8_t>() + (static_cast<size_t>(y) * w + x) * 3;
    p[0] = rgb[0], p[1] = rgb[1], p[2] = rgb[2];
  }
  // Bresenham's line.
  void line(int x0, int y0, int x1, int y1, const uint8_t rgb[3]) {
    int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
      dot(x0, y0, rgb);
      if (x0 == x1 && y0 == y1) break;
      int e2 = 2 * err;
      if (e2 >= dy) err += dy, x0 += sx;
      if (e2 <= dx) err += dx, y0 += sy;
    }
  }
};

// A 3x5 font of the characters numbers print with: rows top to bottom,
// 3 bits each (4 = left column).
struct Glyph {
  char c;
  uint8_t rows[5];
};
constexpr Glyph kGlyphs[] = {
    {'0', {7, 5, 5, 5, 7}}, {'1', {2, 6, 2, 2, 7}}, {'2', {7, 1, 7, 4, 7}}, {'3', {7, 1, 7, 1, 7}},
    {'4', {5, 5, 7, 1, 1}}, {'5', {7, 4, 7, 1, 7}}, {'6', {7, 4, 7, 5, 7}}, {'7', {7, 1, 1, 1, 1}},
    {'8', {7, 5, 7, 5, 7}}, {'9', {7, 5, 7, 1, 7}}, {'.', {0, 0, 0, 0, 2}}, {'-', {0, 0, 7, 0, 0}},
    {'+', {0, 2, 7, 2, 0}}, {'e', {7, 5, 7, 4, 7}}, {'n', {0, 6, 5, 5, 5}}, {'a', {7, 1, 7, 5, 7}},
    {'i', {2, 0, 2, 2, 2}}, {'f', {3, 4, 6, 4, 4}},
};
constexpr int kScale = 2;  // each font pixel is 2x2

// Draws `text` with its top-left corner at (x, y).
void text(Canvas& c, int x, int y, const std::string& s) {
  static const uint8_t ink[3] = {40, 40, 40};
  for (char ch : s) {
    for (const Glyph& g : kGlyphs) {
      if (g.c != ch) continue;
      for (int r = 0; r < 5; ++r)
        for (int col = 0; col < 3; ++col)
          if (g.rows[r] & (4 >> col))
            for (int a = 0; a < kScale; ++a)
              for (int b = 0; b < kScale; ++b) c.dot(x + col * kScale + b, y + r * kScale + a, ink);
    }
    x += 4 * kScale;
  }
}
int text_width(const std::string& s) { return static_cast<int>(s.size()) * 4 * kScale; }

}  // namespace

std::string plot_label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

Tensor plot_lines(const std::vector<std::pair<double, double>>& points, int width, int height) {
  Canvas c(width, height);
  static const uint8_t frame[3] = {160, 160, 160}, pen[3] = {31, 119, 180};
  // Margins leave room for the labels: the y range on the left, the x range below.
  const int left = 90, right = width - 16, top = 16, bottom = height - 30;
  c.line(left, top, right, top, frame);
  c.line(right, top, right, bottom, frame);
  c.line(right, bottom, left, bottom, frame);
  c.line(left, bottom, left, top, frame);
  std::vector<std::pair<double, double>> pts;
  for (const auto& p : points)
    if (std::isfinite(p.first) && std::isfinite(p.second)) pts.push_back(p);
  if (pts.empty()) return c.img;
  double x0 = pts.front().first, x1 = pts.front().first, y0 = pts.front().second, y1 = pts.front().second;
  for (const auto& p : pts) {
    x0 = std::min(x0, p.first), x1 = std::max(x1, p.first);
    y0 = std::min(y0, p.second), y1 = std::max(y1, p.second);
  }
  auto px = [&](double x) { return x1 > x0 ? left + static_cast<int>(std::lround((x - x0) / (x1 - x0) * (right - left))) : (left + right) / 2; };
  auto py = [&](double y) { return y1 > y0 ? bottom - static_cast<int>(std::lround((y - y0) / (y1 - y0) * (bottom - top))) : (top + bottom) / 2; };
  for (size_t i = 0; i < pts.size(); ++i) {
    int x = px(pts[i].first), y = py(pts[i].second);
    if (i == 0) c.dot(x, y, pen);
    else c.line(px(pts[i - 1].first), py(pts[i - 1].second), x, y, pen);
  }
  std::string ymax = plot_label(y1), ymin = plot_label(y0), xmin = plot_label(x0), xmax = plot_label(x1);
  text(c, left - 6 - text_width(ymax), top, ymax);
  text(c, left - 6 - text_width(ymin), bottom - 10, ymin);
  text(c, left, bottom + 8, xmin);
  text(c, right - text_width(xmax), bottom + 8, xmax);
  return c.img;
}

}  // namespace msl::summary
