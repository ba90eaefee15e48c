// The sliding-window geometry shared by conv2d and the pooling primitives:
// parsing of stride/dilation/padding/pad_mode attributes and the output size.
//
// Conventions are MindSpore's: NCHW tensors; a dilation of 1 means none
// (oneDNN counts d-1); padding is [top, bottom, left, right], also accepted
// as one entry (all sides) or two ([h, w]); stride, dilation and kernel_size
// take one entry, two ([h, w]) or MindSpore's four ([1, 1, h, w]). pad_mode
// "pad" uses the padding, "valid" none, and "same" gives ceil(H / stride)
// outputs with the total padding split as TensorFlow does (the odd pixel at
// the bottom/right). Explicit padding with "valid"/"same" is an error, as in
// MindSpore, rather than silently ignored.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/attrs.h"

namespace msl::kernels {

enum class PadMode : uint8_t { Pad, Valid, Same };

struct Window2d {
  int64_t kh = 1, kw = 1;                  // kernel extent (before dilation)
  int64_t sh = 1, sw = 1;                  // strides
  int64_t dh = 1, dw = 1;                  // dilations, 1 = dense
  int64_t pt = 0, pb = 0, pl = 0, pr = 0;  // padding top, bottom, left, right
  int64_t ho = 0, wo = 0;                  // output size
  PadMode mode = PadMode::Pad;
};

// "(1, 2)" / "(1,)": a list attribute as error messages show it.
std::string ints_str(const std::vector<int64_t>& v);

// A two-entry attribute (h, w) from 1, 2 or 4 entries; `dflt` when absent.
// ValueError unless every entry is in [min_value, 2^31).
std::array<int64_t, 2> window_pair(const char* op, const Attrs& attrs, const char* name, int64_t dflt,
                                   int64_t min_value);

// The window of `op` over an (h, w) input with a (kh, kw) kernel. Reads
// stride, padding, pad_mode and (when `with_dilation`) dilation. ShapeError
// when the (dilated) kernel does not fit the padded input.
Window2d make_window(const char* op, const Attrs& attrs, int64_t h, int64_t w, int64_t kh, int64_t kw,
                     bool with_dilation);

}  // namespace msl::kernels
