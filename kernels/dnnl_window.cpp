// Window attribute parsing and output-size arithmetic for conv2d and pooling.
//
// Every entry is bounded by 2^31 so that products such as dilation * kernel
// stay far from int64 overflow; shapes themselves are bounded by Tensor.
#include "kernels/dnnl_window.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "kernels/errors.h"

namespace msl::kernels {

namespace {

constexpr int64_t kMaxWindowValue = int64_t(1) << 31;

PadMode parse_mode(const char* op, const Attrs& attrs) {
  std::string m = attrs.get_str("pad_mode", "pad");
  std::string low = m;
  std::transform(low.begin(), low.end(), low.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (low == "pad") return PadMode::Pad;
  if (low == "valid") return PadMode::Valid;
  if (low == "same") return PadMode::Same;
  throw ValueError(fmt::format("{}: pad_mode must be 'pad', 'valid' or 'same', got '{}'", op, m));
}

// Output size and (before, after) padding along one axis.
void axis(PadMode mode, int64_t in, int64_t k, int64_t s, int64_t d, int64_t pad_lo, int64_t pad_hi, int64_t& out,
          int64_t& lo, int64_t& hi, bool& fits) {
  int64_t eff = d * (k - 1) + 1;
  switch (mode) {
    case PadMode::Same: {
      out = (in + s - 1) / s;
      int64_t need = std::max<int64_t>(0, (out - 1) * s + eff - in);
      lo = need / 2;
      hi = need - lo;
      fits = true;
      break;
    }
    case PadMode::Valid:
    case PadMode::Pad: {
      lo = mode == PadMode::Pad ? pad_lo : 0;
      hi = mode == PadMode::Pad ? pad_hi : 0;
      int64_t span = in + lo + hi;
      fits = span >= eff;
      out = fits ? (span - eff) / s + 1 : 0;
      break;
    }
  }
}

}  // namespace

std::string ints_str(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::array<int64_t, 2> window_pair(const char* op, const Attrs& attrs, const char* name, int64_t dflt,
                                   int64_t min_value) {
  std::vector<int64_t> v = attrs.get_ints(name, {dflt});
  std::array<int64_t, 2> r{};
  if (v.size() == 1) {
    r = {v[0], v[0]};
  } else if (v.size() == 2) {
    r = {v[0], v[1]};
  } else if (v.size() == 4) {
    r = {v[2], v[3]};
  } else {
    throw ValueError(fmt::format("{}: {} must have 1, 2 or 4 entries, got {}", op, name, ints_str(v)));
  }
  for (int64_t x : v)
    if (x < min_value || x >= kMaxWindowValue)
      throw ValueError(fmt::format("{}: {} entries must be in [{}, 2^31), got {}", op, name, min_value, ints_str(v)));
  return r;
}

Window2d make_window(const char* op, const Attrs& attrs, int64_t h, int64_t w, int64_t kh, int64_t kw,
                     bool with_dilation) {
  if (kh >= kMaxWindowValue || kw >= kMaxWindowValue)
    throw ValueError(fmt::format("{}: the kernel ({}, {}) is too large", op, kh, kw));
  Window2d g;
  g.kh = kh;
  g.kw = kw;
  auto [sh, sw] = window_pair(op, attrs, "stride", 1, 1);
  g.sh = sh;
  g.sw = sw;
  if (with_dilation) {
    auto [dh, dw] = window_pair(op, attrs, "dilation", 1, 1);
    g.dh = dh;
    g.dw = dw;
  }
  g.mode = parse_mode(op, attrs);
  std::vector<int64_t> p = attrs.get_ints("padding", {0});
  int64_t pad[4];
  if (p.size() == 1) {
    pad[0] = pad[1] = pad[2] = pad[3] = p[0];
  } else if (p.size() == 2) {
    pad[0] = pad[1] = p[0];
    pad[2] = pad[3] = p[1];
  } else if (p.size() == 4) {
    for (int i = 0; i < 4; ++i) pad[i] = p[static_cast<size_t>(i)];
  } else {
    throw ValueError(fmt::format("{}: padding must have 1, 2 or 4 entries, got {}", op, ints_str(p)));
  }
  for (int64_t x : p)
    if (x < 0 || x >= kMaxWindowValue)
      throw ValueError(fmt::format("{}: padding entries must be in [0, 2^31), got {}", op, ints_str(p)));
  if (g.mode != PadMode::Pad && (pad[0] || pad[1] || pad[2] || pad[3]))
    throw ValueError(fmt::format("{}: padding must be 0 when pad_mode is '{}', got {}", op,
                                 g.mode == PadMode::Same ? "same" : "valid", ints_str(p)));
  bool fit_h = true, fit_w = true;
  axis(g.mode, h, kh, g.sh, g.dh, pad[0], pad[1], g.ho, g.pt, g.pb, fit_h);
  axis(g.mode, w, kw, g.sw, g.dw, pad[2], pad[3], g.wo, g.pl, g.pr, fit_w);
  if (!fit_h || !fit_w) {
    std::string dil = with_dilation ? fmt::format(" with dilation ({}, {})", g.dh, g.dw) : "";
    throw ShapeError(fmt::format("{}: the window ({}, {}){} does not fit the padded input ({}, {})", op, kh, kw, dil,
                                 h + g.pt + g.pb, w + g.pl + g.pr));
  }
  return g;
}

}  // namespace msl::kernels
