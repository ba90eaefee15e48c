// Building and decoding TensorBoard's Event protobufs (summary_events.h).
#include "interp/summary/summary_events.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "interp/dataset/dataset_core.h"
#include "interp/summary/event_file.h"
#include "summary.pb.h"

namespace msl::summary {

namespace pb = msl::summary::proto;
using kernels::DType;
using kernels::Tensor;

namespace {

// The values of `t` as doubles, row-major, on the host.
std::vector<double> as_doubles(const Tensor& t) {
  Tensor d(DType::Float64, t.shape());
  kernels::copy_tensor(t, d);
  const double* p = d.data<double>();
  return std::vector<double>(p, p + d.numel());
}

struct TfType {
  pb::DataType type;
  DType dtype;
  const char* name;
};
constexpr TfType kTypes[] = {
    {pb::DT_FLOAT, DType::Float32, "float32"}, {pb::DT_DOUBLE, DType::Float64, "float64"},
    {pb::DT_INT32, DType::Int32, "int32"},     {pb::DT_UINT8, DType::UInt8, "uint8"},
    {pb::DT_BFLOAT16, DType::BFloat16, "bfloat16"}, {pb::DT_INT8, DType::Int8, "int8"},
    {pb::DT_INT64, DType::Int64, "int64"},     {pb::DT_BOOL, DType::Bool, "bool"},
    {pb::DT_HALF, DType::Float16, "float16"},
};

const TfType* tf_type_of(DType d) {
  for (const auto& t : kTypes)
    if (t.dtype == d) return &t;
  return nullptr;
}
const TfType* tf_type_of(pb::DataType d) {
  for (const auto& t : kTypes)
    if (t.type == d) return &t;
  return nullptr;
}

pb::Summary::Value* new_value(pb::Summary& s, const std::string& tag) {
  pb::Summary::Value* v = s.add_value();
  v->set_tag(tag);
  return v;
}

}  // namespace

double wall_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string file_version_event(double wall_time) {
  pb::Event e;
  e.set_wall_time(wall_time);
  e.set_file_version("brain.Event:2");
  return e.SerializeAsString();
}

std::string graph_event(double wall_time, int64_t step, const std::vector<GraphNode>& nodes) {
  pb::GraphDef g;
  for (const GraphNode& n : nodes) {
    pb::NodeDef* nd = g.add_node();
    nd->set_name(n.name);
    nd->set_op(n.op);
    for (const auto& in : n.inputs) nd->add_input(in);
    if (n.has_shape) {
      pb::TensorShapeProto* shape = (*nd->mutable_attr())["shape"].mutable_shape();
      for (int64_t d : n.shape) shape->add_dim()->set_size(d);
    }
  }
  g.mutable_versions()->set_producer(22);
  pb::Event e;
  e.set_wall_time(wall_time);
  e.set_step(step);
  e.set_graph_def(g.SerializeAsString());
  return e.SerializeAsString();
}

struct SummaryBuilder::Impl {
  pb::Summary summary;
};

SummaryBuilder::SummaryBuilder() : impl_(new Impl) {}
SummaryBuilder::~SummaryBuilder() { delete impl_; }
bool SummaryBuilder::empty() const { return impl_->summary.value_size() == 0; }

void SummaryBuilder::add_scalar(const std::string& tag, double value) {
  new_value(impl_->summary, tag)->set_simple_value(static_cast<float>(value));
}

Tensor image_pixels(const Tensor& image) {
  const kernels::Dims& s = image.shape();
  // n images of h x w with c channels; chw: channels before the rows.
  int64_t n = 1, c = 1, h = 0, w = 0;
  bool chw = false;
  if (image.ndim() == 4) {
    n = s[0], c = s[1], h = s[2], w = s[3], chw = true;
  } else if (image.ndim() == 3 && (s[0] == 1 || s[0] == 3) && s[2] != 1 && s[2] != 3) {
    c = s[0], h = s[1], w = s[2], chw = true;
  } else if (image.ndim() == 3) {
    h = s[0], w = s[1], c = s[2];
  } else if (image.ndim() == 2) {
    h = s[0], w = s[1];
  } else {
    throw std::invalid_argument("an image summary needs an (N, C, H, W), (C, H, W), (H, W, C) or (H, W) tensor, got shape " +
                                s.str());
  }
  if (c != 1 && c != 3)
    throw std::invalid_argument("an image summary needs 1 or 3 channels, got shape " + s.str());
  if (n < 1 || h < 1 || w < 1) throw std::invalid_argument("an image summary of an empty tensor, shape " + s.str());
  std::vector<double> v = as_doubles(image);
  bool unit = image.dtype() != DType::UInt8 && !v.empty() &&
              *std::max_element(v.begin(), v.end()) <= 1.0 && *std::min_element(v.begin(), v.end()) >= 0.0;
  // A batch is tiled in a grid of `cols` columns, a 2-pixel black gap apart.
  int64_t cols = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  int64_t rows = (n + cols - 1) / cols, gap = n > 1 ? 2 : 0;
  int64_t H = rows * h + (rows - 1) * gap, W = cols * w + (cols - 1) * gap;
  if (H > 65535 || W > 65535) throw std::invalid_argument("an image summary too large for a PNG: " + s.str());
  Tensor out = Tensor::zeros(DType::UInt8, {H, W, c});
  uint8_t* o = out.data<uint8_t>();
  for (int64_t k = 0; k < n; ++k) {
    int64_t top = k / cols * (h + gap), left = k % cols * (w + gap);
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t ch = 0; ch < c; ++ch) {
          size_t at = chw ? static_cast<size_t>(((k * c + ch) * h + y) * w + x)
                          : static_cast<size_t>((y * w + x) * c + ch);
          double p = unit ? v[at] * 255.0 : v[at];
          p = std::isnan(p) ? 0.0 : std::clamp(p, 0.0, 255.0);
          o[((top + y) * W + left + x) * c + ch] = static_cast<uint8_t>(std::lround(p));
        }
  }
  return out;
}

void SummaryBuilder::add_image(const std::string& tag, const Tensor& image) {
  Tensor px = image_pixels(image);
  pb::Summary::Image* img = new_value(impl_->summary, tag)->mutable_image();
  img->set_height(static_cast<int32_t>(px.dim(0)));
  img->set_width(static_cast<int32_t>(px.dim(1)));
  img->set_colorspace(static_cast<int32_t>(px.dim(2)));
  img->set_encoded_image_string(dataset::encode_png(px.dim(2) == 1 ? Tensor::view(px, {px.dim(0), px.dim(1)},
                                                                                   {px.dim(1), 1}, 0)
                                                                    : px));
}

namespace {

// Two passes over the finite values of p[0, n): statistics, then buckets.
// SummaryCollector histograms whole weights every few steps, so this is
// written for speed: the float32 case reads the tensor in place, the
// finiteness test is one compare (|x| <= max is false for NaN and the
// infinities), and the sums use four accumulators, whose additions do not
// wait for each other.
template <class T>
void fill_histogram(pb::HistogramProto* h, const T* p, int64_t n) {
  const T big = std::numeric_limits<T>::max();
  T lo = std::numeric_limits<T>::infinity(), hi = -lo;
  double sum[4] = {0, 0, 0, 0}, sq[4] = {0, 0, 0, 0};
  int64_t skipped = 0;
  for (int64_t i = 0; i < n; ++i) {
    T x = p[i];
    if (!(std::fabs(x) <= big)) {
      ++skipped;
      continue;
    }
    lo = x < lo ? x : lo;
    hi = x > hi ? x : hi;
    double d = static_cast<double>(x);
    sum[i & 3] += d;
    sq[i & 3] += d * d;
  }
  int64_t count = n - skipped;
  if (count == 0) return;
  h->set_min(static_cast<double>(lo));
  h->set_max(static_cast<double>(hi));
  h->set_num(static_cast<double>(count));
  h->set_sum((sum[0] + sum[1]) + (sum[2] + sum[3]));
  h->set_sum_squares((sq[0] + sq[1]) + (sq[2] + sq[3]));
  // All values equal: one bucket around them (TensorBoard needs a width).
  double dlo = static_cast<double>(lo), dhi = static_cast<double>(hi);
  int bins = dhi > dlo ? kHistogramBins : 1;
  double scale = dhi > dlo ? kHistogramBins / (dhi - dlo) : 0.0;
  std::vector<int64_t> counts(static_cast<size_t>(bins), 0);
  for (int64_t i = 0; i < n; ++i) {
    T x = p[i];
    if (!(std::fabs(x) <= big)) continue;
    int b = static_cast<int>((static_cast<double>(x) - dlo) * scale);
    ++counts[static_cast<size_t>(b < 0 ? 0 : b >= bins ? bins - 1 : b)];
  }
  for (int b = 0; b < bins; ++b) {
    h->add_bucket_limit(b == bins - 1 ? dhi : dlo + (dhi - dlo) * (b + 1) / kHistogramBins);
    h->add_bucket(static_cast<double>(counts[static_cast<size_t>(b)]));
  }
}

}  // namespace

void SummaryBuilder::add_histogram(const std::string& tag, const Tensor& values) {
  pb::HistogramProto* h = new_value(impl_->summary, tag)->mutable_histo();
  Tensor host = values.to_host();
  if (host.dtype() == DType::Float32 && host.is_contiguous()) {
    fill_histogram(h, host.data<float>(), host.numel());
  } else {
    std::vector<double> v = as_doubles(host);
    fill_histogram(h, v.data(), static_cast<int64_t>(v.size()));
  }
}

void SummaryBuilder::add_tensor(const std::string& tag, const Tensor& value) {
  const TfType* t = tf_type_of(value.dtype());
  if (!t) throw std::invalid_argument(std::string("a tensor summary of dtype ") + kernels::dtype_name(value.dtype()) +
                                      " (not one TensorBoard knows)");
  Tensor host = value.to_host().contiguous();
  pb::TensorProto* tp = new_value(impl_->summary, tag)->mutable_tensor();
  tp->set_dtype(t->type);
  for (int i = 0; i < host.ndim(); ++i) tp->mutable_tensor_shape()->add_dim()->set_size(host.dim(i));
  tp->set_tensor_content(std::string(static_cast<const char*>(host.raw()), host.nbytes()));
}

std::string SummaryBuilder::event(double wall_time, int64_t step) const {
  pb::Event e;
  e.set_wall_time(wall_time);
  e.set_step(step);
  *e.mutable_summary() = impl_->summary;
  return e.SerializeAsString();
}

// ------------------------------------------------------------- reading

namespace {

DecodedValue decode_value(const pb::Summary::Value& v) {
  DecodedValue d;
  d.tag = v.tag();
  switch (v.value_case()) {
    case pb::Summary::Value::kSimpleValue:
      d.kind = "scalar";
      d.scalar = v.simple_value();
      break;
    case pb::Summary::Value::kImage:
      d.kind = "image";
      d.height = v.image().height();
      d.width = v.image().width();
      d.colorspace = v.image().colorspace();
      d.png = v.image().encoded_image_string();
      break;
    case pb::Summary::Value::kHisto: {
      const pb::HistogramProto& h = v.histo();
      d.kind = "histogram";
      d.min = h.min(), d.max = h.max(), d.num = h.num(), d.sum = h.sum(), d.sum_squares = h.sum_squares();
      d.bucket_limit.assign(h.bucket_limit().begin(), h.bucket_limit().end());
      d.bucket.assign(h.bucket().begin(), h.bucket().end());
      break;
    }
    case pb::Summary::Value::kTensor: {
      const pb::TensorProto& tp = v.tensor();
      d.kind = "tensor";
      kernels::Dims shape;
      for (const auto& dim : tp.tensor_shape().dim()) {
        d.shape.push_back(dim.size());
        shape.push_back(dim.size());
      }
      const TfType* t = tf_type_of(tp.dtype());
      d.dtype = t ? t->name : "unknown";
      // A scalar written TensorFlow-2 style (a 0-d float tensor) reads as a scalar value too.
      if (t && tp.tensor_content().size() == static_cast<size_t>(shape.product()) * kernels::dtype_size(t->dtype)) {
        Tensor raw(t->dtype, shape);
        std::memcpy(raw.raw(), tp.tensor_content().data(), tp.tensor_content().size());
        d.values = as_doubles(raw);
      }
      break;
    }
    default:
      d.kind = "other";
  }
  return d;
}

}  // namespace

std::vector<DecodedEvent> read_events(const std::string& path, bool* truncated_tail) {
  RecordFile rf = read_record_file(path);
  if (truncated_tail) *truncated_tail = rf.truncated_tail;
  std::vector<DecodedEvent> out;
  for (size_t i = 0; i < rf.records.size(); ++i) {
    pb::Event e;
    if (!e.ParseFromString(rf.records[i]))
      throw FormatError(path + ": record " + std::to_string(i) + " is not an Event protobuf");
    DecodedEvent d;
    d.wall_time = e.wall_time();
    d.step = e.step();
    if (e.has_file_version()) d.file_version = e.file_version();
    if (e.has_graph_def()) {
      d.has_graph = true;
      pb::GraphDef g;
      if (g.ParseFromString(e.graph_def()))
        for (const auto& n : g.node()) {
          GraphNode gn{n.name(), n.op(), {n.input().begin(), n.input().end()}, {}, false};
          auto it = n.attr().find("shape");
          if (it != n.attr().end() && it->second.has_shape()) {
            gn.has_shape = true;
            for (const auto& dim : it->second.shape().dim()) gn.shape.push_back(dim.size());
          }
          d.graph_nodes.push_back(std::move(gn));
        }
    }
    if (e.has_summary())
      for (const auto& v : e.summary().value()) d.values.push_back(decode_value(v));
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace msl::summary
