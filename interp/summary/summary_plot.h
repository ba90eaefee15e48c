// Line plots of scalar series as images, for `msl summary` (people without
// TensorBoard): a frame, the polyline of the points scaled to fill it, and
// the y range and x range written at the frame's corners in a small bitmap
// font. No other text: the file's name says which tag it is.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels/tensor.h"

namespace msl::summary {

// An (height, width, 3) uint8 image of the (x, y) points (sorted by x by
// the caller; non-finite y values are skipped).
kernels::Tensor plot_lines(const std::vector<std::pair<double, double>>& points, int width = 640, int height = 400);

// The label text of a number as the plot writes it ("%.6g").
std::string plot_label(double v);

}  // namespace msl::summary
