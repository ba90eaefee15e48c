// Printing tensors: MindSpore's frame around NumPy's str() of the values,
//   Tensor(shape=[2, 3], dtype=Float32, value=
//   [[1.  2.  3. ]
//    [4.  5.  6.5]])
// and `Tensor(shape=[], dtype=Float32, value= 1.5)` for 0-d tensors. A
// tracer (interp/tensor/trace.h) has no values and prints the same frame without
// them: `Tracer(shape=[2, 3], dtype=Float32)`.
//
// The values follow NumPy 1.24's array2string with its defaults (precision
// 8, floatmode 'maxprec', threshold 1000, edgeitems 3, linewidth 75), ported
// function by function (FloatingFormat.fillFormat, _formatArray,
// _extendLine) so that output matches NumPy character for character:
//  - floats print their shortest round-trip digits in their own precision
//    (float32 0.1 is "0.1"), cut to 8 fractional digits by correct rounding
//    when longer; fixed notation unless the magnitudes ask for scientific;
//    all elements padded to common integer/fraction widths;
//  - float16 and bfloat16 use the shortest digits that round-trip in 16 bits;
//  - 0-d tensors print like NumPy scalars ("1.0", "1e+16").
// Shortest digits come from std::to_chars (float32, float64) or a search
// over precisions checked by round trip (16-bit types); correctly rounded
// digits come from printf, which rounds the exact binary value.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "interp/tensor/tensor_object.h"

namespace msl {

using kernels::DType;
using kernels::Tensor;

namespace {

constexpr int kPrecision = 8;
constexpr int64_t kThreshold = 1000;
constexpr int64_t kEdgeItems = 3;
constexpr size_t kLineWidth = 75;

// A decimal number: value = digits[0].digits[1:] x 10^exp.
struct Decimal {
  bool neg = false;
  std::string digits;  // no leading zeros (just "0" for zero); may have trailing zeros
  int exp = 0;
};

// Parses printf/to_chars scientific output "-1.2345e+02" into a Decimal.
Decimal parse_sci(const char* s) {
  Decimal d;
  if (*s == '-') {
    d.neg = true;
    ++s;
  }
  while (*s && *s != 'e') {
    if (*s != '.') d.digits.push_back(*s);
    ++s;
  }
  if (*s == 'e') d.exp = std::atoi(s + 1);
  return d;
}

void strip_trailing_zeros(Decimal& d) {
  while (d.digits.size() > 1 && d.digits.back() == '0') d.digits.pop_back();
}

float round_to_16(DType t, float f) {
  return t == DType::Float16 ? kernels::half_to_float(kernels::float_to_half(f))
                             : kernels::bf16_to_float(kernels::float_to_bf16(f));
}

// The shortest digits that read back as the same value of dtype t.
Decimal shortest(double x, DType t) {
  char buf[64];
  if (t == DType::Float64) {
    auto r = std::to_chars(buf, buf + sizeof buf - 1, x, std::chars_format::scientific);
    *r.ptr = 0;
  } else if (t == DType::Float32) {
    auto r = std::to_chars(buf, buf + sizeof buf - 1, static_cast<float>(x), std::chars_format::scientific);
    *r.ptr = 0;
  } else {
    float target = static_cast<float>(x);
    for (int p = 1; p <= 9; ++p) {
      std::snprintf(buf, sizeof buf, "%.*e", p - 1, x);
      if (round_to_16(t, std::strtof(buf, nullptr)) == target) break;
    }
  }
  Decimal d = parse_sci(buf);
  strip_trailing_zeros(d);
  if (d.digits == "0") d.exp = 0;
  return d;
}

// Digits of x correctly rounded (ties to even, on the exact binary value) to
// `frac` digits after the point (positional) or after the first digit
// (scientific).
Decimal rounded(double x, int frac, bool scientific) {
  char buf[512];
  if (scientific) {
    std::snprintf(buf, sizeof buf, "%.*e", frac, x);
    return parse_sci(buf);
  }
  std::snprintf(buf, sizeof buf, "%.*f", frac, x);
  Decimal r;
  const char* s = buf;
  if (*s == '-') {
    r.neg = true;
    ++s;
  }
  std::string all;
  int int_len = 0;
  bool seen_point = false;
  for (; *s; ++s) {
    if (*s == '.') {
      seen_point = true;
      continue;
    }
    all.push_back(*s);
    if (!seen_point) ++int_len;
  }
  size_t first = all.find_first_not_of('0');
  if (first == std::string::npos) {
    r.digits = "0";
  } else {
    r.digits = all.substr(first);
    r.exp = int_len - 1 - static_cast<int>(first);
  }
  return r;
}

// NumPy's Dragon4 in "unique" mode with a cutoff: the shortest digits when
// they have at most `frac` digits after the point (positional) or after the
// first digit (scientific), else the exact value correctly rounded there.
// With `whole_digits` (NumPy's min_digits=0 in positional mode) the digits
// always reach the units position: 56736 in float16 prints as 56736, not as
// its shortest form 56740.
Decimal digits_with_cutoff(double x, DType t, int frac, bool scientific, bool whole_digits = false) {
  Decimal d = shortest(x, t);
  int n = static_cast<int>(d.digits.size());
  int have = scientific ? n - 1 : n - 1 - d.exp;
  if (have <= frac && !(whole_digits && !scientific && n < d.exp + 1)) return d;
  d = rounded(x, scientific ? frac : std::min(frac, std::max(have, 0)), scientific);
  strip_trailing_zeros(d);
  if (d.digits == "0") d.exp = 0;
  return d;
}

// Positional text of d split at the point: integer part (with sign) and fraction.
void positional_parts(const Decimal& d, bool neg, std::string& ip, std::string& fp) {
  ip = neg ? "-" : "";
  fp.clear();
  int n = static_cast<int>(d.digits.size());
  if (d.exp < 0) {
    ip += "0";
    fp.assign(static_cast<size_t>(-d.exp - 1), '0');
    fp += d.digits;
  } else {
    for (int i = 0; i <= d.exp; ++i) ip.push_back(i < n ? d.digits[static_cast<size_t>(i)] : '0');
    if (n > d.exp + 1) fp = d.digits.substr(static_cast<size_t>(d.exp + 1));
  }
}

std::string exp_text(int e, int min_digits) {
  std::string digits = std::to_string(std::abs(e));
  while (static_cast<int>(digits.size()) < min_digits) digits.insert(digits.begin(), '0');
  return std::string(e < 0 ? "-" : "+") + digits;
}

// NumPy's FloatingFormat (floatmode 'maxprec', sign '-').
struct FloatFormat {
  DType dtype;
  bool exp_format = false;
  int precision = kPrecision;
  size_t pad_left = 0, pad_right = 0;
  int exp_size = -1;

  FloatFormat(DType t, const std::vector<double>& data) : dtype(t) {
    std::vector<double> finite;
    for (double x : data)
      if (std::isfinite(x)) finite.push_back(x);
    double max_val = 0, min_val = 0;
    bool any_nonzero = false;
    for (double x : finite) {
      if (x == 0) continue;
      double a = std::fabs(x);
      if (!any_nonzero) max_val = min_val = a;
      max_val = std::max(max_val, a);
      min_val = std::min(min_val, a);
      any_nonzero = true;
    }
    if (any_nonzero) {
      double ratio = max_val / min_val;  // computed in the tensor's own precision, as NumPy does
      if (t == DType::Float32) ratio = static_cast<double>(static_cast<float>(max_val) / static_cast<float>(min_val));
      if (t == DType::Float16 || t == DType::BFloat16)
        ratio = round_to_16(t, static_cast<float>(max_val) / static_cast<float>(min_val));
      if (max_val >= 1e8 || min_val < 0.0001 || ratio > 1000.) exp_format = true;
    }
    if (finite.empty()) {
      pad_left = pad_right = 0;
      exp_size = -1;
    } else if (exp_format) {
      size_t max_frac = 0, max_int = 0, max_exp = 0;
      for (double x : finite) {
        Decimal d = digits_with_cutoff(x, t, kPrecision, true);
        max_int = std::max(max_int, size_t{1} + (std::signbit(x) ? 1 : 0));
        max_frac = std::max(max_frac, d.digits.size() - 1);
        max_exp = std::max(max_exp, exp_text(d.exp, 2).size());
      }
      exp_size = static_cast<int>(max_exp) - 1;
      precision = static_cast<int>(max_frac);
      pad_left = max_int;
      pad_right = static_cast<size_t>(exp_size) + 2 + static_cast<size_t>(precision);
    } else {
      std::string ip, fp;
      for (double x : finite) {
        positional_parts(digits_with_cutoff(x, t, kPrecision, false), std::signbit(x), ip, fp);
        pad_left = std::max(pad_left, ip.size());
        pad_right = std::max(pad_right, fp.size());
      }
    }
    if (finite.size() != data.size()) {
      bool neginf = false;
      for (double x : data)
        if (std::isinf(x) && x < 0) neginf = true;
      size_t offset = pad_right + 1;
      size_t nanlen = 3, inflen = 3 + (neginf ? 1 : 0);
      if (nanlen > offset) pad_left = std::max(pad_left, nanlen - offset);
      if (inflen > offset) pad_left = std::max(pad_left, inflen - offset);
    }
  }

  std::string operator()(double x) const {
    if (!std::isfinite(x)) {
      std::string r = std::isnan(x) ? "nan" : (x < 0 ? "-inf" : "inf");
      size_t width = pad_left + pad_right + 1;
      return std::string(width > r.size() ? width - r.size() : 0, ' ') + r;
    }
    if (exp_format) {
      // NumPy passes min_digits = precision here: exactly `precision` digits, correctly rounded.
      Decimal d = rounded(x, precision, true);
      std::string ip = std::string(std::signbit(x) ? "-" : "") + d.digits[0];
      std::string fp = d.digits.substr(1);
      while (static_cast<int>(fp.size()) < precision) fp.push_back('0');
      std::string out(pad_left > ip.size() ? pad_left - ip.size() : 0, ' ');
      return out + ip + "." + fp + "e" + exp_text(d.exp, exp_size);
    }
    std::string ip, fp;
    positional_parts(digits_with_cutoff(x, dtype, precision, false, true), std::signbit(x), ip, fp);
    std::string out(pad_left > ip.size() ? pad_left - ip.size() : 0, ' ');
    out += ip + "." + fp;
    out.append(pad_right > fp.size() ? pad_right - fp.size() : 0, ' ');
    return out;
  }
};

// NumPy's str() of a float scalar: positional for 1e-4 <= |x| < 1e16 (and
// zero) keeping one zero after the point, else scientific without zeros.
std::string scalar_float_str(double x, DType t) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x < 0 ? "-inf" : "inf";
  Decimal d = shortest(x, t);
  double a = std::fabs(x);
  std::string sign = std::signbit(x) ? "-" : "";
  if (a == 0 || (a >= 1e-4 && a < 1e16)) {
    std::string ip, fp;
    positional_parts(d, std::signbit(x), ip, fp);
    return ip + "." + (fp.empty() ? "0" : fp);
  }
  std::string frac = d.digits.substr(1);
  return sign + d.digits[0] + (frac.empty() ? "" : "." + frac) + "e" + exp_text(d.exp, 2);
}

// Element formatting for one tensor (NumPy's _get_format_function).
struct ElementFormat {
  const Tensor& t;
  const void* base;
  bool is_float = false;
  std::unique_ptr<FloatFormat> ff;
  size_t int_width = 0;

  ElementFormat(const Tensor& tensor, const std::vector<int64_t>& offsets) : t(tensor), base(tensor.storage()->data) {
    DType d = t.dtype();
    if (kernels::is_floating(d)) {
      is_float = true;
      std::vector<double> vals;
      vals.reserve(offsets.size());
      for (int64_t off : offsets) vals.push_back(kernels::load_as_double(base, d, off));
      ff = std::make_unique<FloatFormat>(d, vals);
    } else if (d != DType::Bool && !offsets.empty()) {
      int64_t lo = load_int(offsets[0]), hi = lo;
      for (int64_t off : offsets) {
        int64_t v = load_int(off);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      int_width = std::max(std::to_string(lo).size(), std::to_string(hi).size());
    }
  }

  int64_t load_int(int64_t off) const {
    if (t.dtype() == DType::Int64) return static_cast<const int64_t*>(base)[off];
    return static_cast<int64_t>(kernels::load_as_double(base, t.dtype(), off));
  }

  std::string operator()(int64_t off) const {
    DType d = t.dtype();
    if (is_float) return (*ff)(kernels::load_as_double(base, d, off));
    // NumPy pads True to False's width inside arrays, not for a 0-d array.
    if (d == DType::Bool) return static_cast<const bool*>(base)[off] ? (t.ndim() == 0 ? "True" : " True") : "False";
    std::string s = std::to_string(load_int(off));
    return std::string(int_width > s.size() ? int_width - s.size() : 0, ' ') + s;
  }
};

// The storage offsets of the elements NumPy looks at: all of them, or only
// the edge items of every axis when summarizing.
void collect_offsets(const Tensor& t, bool summarize, int dim, int64_t off, std::vector<int64_t>& out) {
  if (dim == t.ndim()) {
    out.push_back(off);
    return;
  }
  int64_t n = t.dim(dim), stride = t.strides()[dim];
  bool cut = summarize && 2 * kEdgeItems < n;
  for (int64_t i = 0; i < n; ++i) {
    if (cut && i == kEdgeItems) i = n - kEdgeItems;
    collect_offsets(t, summarize, dim + 1, off + i * stride, out);
  }
}

void extend_line(std::string& s, std::string& line, const std::string& word, size_t width, const std::string& prefix) {
  bool wrap = line.size() + word.size() > width;
  if (line.size() <= prefix.size()) wrap = false;
  if (wrap) {
    size_t end = line.find_last_not_of(' ');
    s += line.substr(0, end == std::string::npos ? 0 : end + 1) + "\n";
    line = prefix;
  }
  line += word;
}

// NumPy's _formatArray: `separator` is " " for str() and ", " for repr().
struct ArrayPrinter {
  const Tensor& t;
  const ElementFormat& fmt;
  bool summarize;
  std::string_view separator;

  std::string rec(int dim, int64_t off, const std::string& hanging, size_t width) const {
    int axes_left = t.ndim() - dim;
    if (axes_left == 0) return fmt(off);
    std::string next_hanging = hanging + " ";
    size_t next_width = width - 1;
    int64_t n = t.dim(dim), stride = t.strides()[dim];
    bool show_summary = summarize && 2 * kEdgeItems < n;
    int64_t leading = show_summary ? kEdgeItems : 0;
    int64_t trailing = show_summary ? kEdgeItems : n;
    std::string s;
    if (axes_left == 1) {
      size_t elem_width = width - 1;
      std::string line = hanging;
      for (int64_t i = 0; i < leading; ++i) {
        extend_line(s, line, rec(dim + 1, off + i * stride, next_hanging, next_width), elem_width, hanging);
        line += separator;
      }
      if (show_summary) {
        extend_line(s, line, "...", elem_width, hanging);
        line += separator;
      }
      for (int64_t i = trailing; i > 1; --i) {
        extend_line(s, line, rec(dim + 1, off + (n - i) * stride, next_hanging, next_width), elem_width, hanging);
        line += separator;
      }
      extend_line(s, line, rec(dim + 1, off + (n - 1) * stride, next_hanging, next_width), elem_width, hanging);
      s += line;
    } else {
      std::string line_sep(separator.substr(0, separator.find_last_not_of(' ') + 1));
      line_sep.append(static_cast<size_t>(axes_left - 1), '\n');
      for (int64_t i = 0; i < leading; ++i)
        s += hanging + rec(dim + 1, off + i * stride, next_hanging, next_width) + line_sep;
      if (show_summary) s += hanging + "..." + line_sep;
      for (int64_t i = trailing; i > 1; --i)
        s += hanging + rec(dim + 1, off + (n - i) * stride, next_hanging, next_width) + line_sep;
      s += hanging + rec(dim + 1, off + (n - 1) * stride, next_hanging, next_width);
    }
    return "[" + s.substr(hanging.size()) + "]";
  }
};

std::string scalar_str(const Tensor& t) {
  const void* base = t.storage()->data;
  int64_t off = t.offset();
  DType d = t.dtype();
  if (kernels::is_floating(d)) return scalar_float_str(kernels::load_as_double(base, d, off), d);
  if (d == DType::Bool) return static_cast<const bool*>(base)[off] ? "True" : "False";
  if (d == DType::Int64) return std::to_string(static_cast<const int64_t*>(base)[off]);
  return std::to_string(static_cast<int64_t>(kernels::load_as_double(base, d, off)));
}

}  // namespace

std::string array_to_string(const Tensor& t_any, std::string_view separator, size_t prefix_len, size_t line_width) {
  Tensor t = t_any.to_host();  // printing reads the values on the host
  if (t.numel() == 0) return "[]";
  bool summarize = t.numel() > kThreshold;
  std::vector<int64_t> offsets;
  collect_offsets(t, summarize, 0, t.offset(), offsets);
  ElementFormat fmt(t, offsets);
  ArrayPrinter p{t, fmt, summarize, separator};
  return p.rec(0, t.offset(), std::string(prefix_len + 1, ' '), line_width);
}

std::string tensor_values_str(const Tensor& t_any) {
  if (t_any.ndim() == 0) return scalar_str(t_any.to_host());
  return array_to_string(t_any, " ", 0, kLineWidth);
}

namespace {
std::string shape_list(const kernels::Dims& d) {
  std::string shape;
  for (int i = 0; i < d.size(); ++i) shape += (i ? ", " : "") + std::to_string(d[i]);
  return shape;
}
}  // namespace

std::string tracer_repr(const kernels::TensorSpec& s) {
  return fmt::format("Tracer(shape=[{}], dtype={})", shape_list(s.shape), kernels::dtype_display_name(s.dtype));
}

std::string tensor_repr(const Tensor& t) {
  std::string shape = shape_list(t.shape());
  std::string values = tensor_values_str(t);
  const char* sep = t.ndim() == 0 ? " " : (t.numel() == 0 ? "" : "\n");
  return fmt::format("Tensor(shape=[{}], dtype={}, value={}{})", shape, kernels::dtype_display_name(t.dtype()), sep,
                     values);
}

}  // namespace msl
