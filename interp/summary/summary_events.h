// The Event and Summary protobufs of TensorBoard's event files (msl_summary;
// summary.proto): building the events MSL writes and decoding the events
// of any writer, so that the generated protobuf classes stay inside this
// library.
//
// Values, as SummaryRecord and the summary operators give them:
//   scalar     simple_value (a float).
//   image      a PNG of uint8 pixels: from an (N, C, H, W) batch (MindSpore's
//              ImageSummary) tiled in a grid, or one (C, H, W) / (H, W, C) /
//              (H, W) image; C is 1 or 3. Floats in [0, 1] are scaled by 255,
//              other values clipped to [0, 255].
//   histogram  a HistogramProto over the finite values: min, max, count,
//              sum, sum of squares and kHistogramBins equal-width buckets
//              (bucket_limit is each bucket's right edge).
//   tensor     a TensorProto: TensorFlow's dtype number, the shape and the
//              raw little-endian bytes (tensor_content).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/tensor.h"

namespace msl::summary {

constexpr int kHistogramBins = 30;

double wall_time_now();
std::string file_version_event(double wall_time);

// One node of a GraphDef: TensorBoard groups nodes by the '/' scopes of
// their names. `shape`, when not empty, becomes the "shape" attribute.
struct GraphNode {
  std::string name, op;
  std::vector<std::string> inputs;
  std::vector<int64_t> shape;
  bool has_shape = false;
};
std::string graph_event(double wall_time, int64_t step, const std::vector<GraphNode>& nodes);

// The values of one Summary event, added in order.
class SummaryBuilder {
 public:
  SummaryBuilder();
  ~SummaryBuilder();
  SummaryBuilder(const SummaryBuilder&) = delete;
  SummaryBuilder& operator=(const SummaryBuilder&) = delete;

  void add_scalar(const std::string& tag, double value);
  void add_image(const std::string& tag, const kernels::Tensor& image);
  void add_histogram(const std::string& tag, const kernels::Tensor& values);
  void add_tensor(const std::string& tag, const kernels::Tensor& value);
  bool empty() const;
  // The serialized Event.
  std::string event(double wall_time, int64_t step) const;

 private:
  struct Impl;
  Impl* impl_;
};

// The pixels an image summary stores, as an (H, W, C) uint8 tensor (the
// grid of a batch); ValueError-style std::invalid_argument for other shapes.
kernels::Tensor image_pixels(const kernels::Tensor& image);

// ------------------------------------------------------------- reading

struct DecodedValue {
  std::string tag;
  std::string kind;  // "scalar", "image", "histogram", "tensor" or "other"
  double scalar = 0;
  // image
  int64_t height = 0, width = 0, colorspace = 0;
  std::string png;
  // histogram
  double min = 0, max = 0, num = 0, sum = 0, sum_squares = 0;
  std::vector<double> bucket_limit, bucket;
  // tensor
  std::string dtype;  // MSL's dtype name ("float32", ...)
  std::vector<int64_t> shape;
  std::vector<double> values;
};

struct DecodedEvent {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;  // the file_version event's
  bool has_graph = false;
  std::vector<GraphNode> graph_nodes;
  std::vector<DecodedValue> values;
};

// Every event of an event file (records checked as read_record_file does;
// a record that is not an Event is a FormatError).
std::vector<DecodedEvent> read_events(const std::string& path, bool* truncated_tail = nullptr);

}  // namespace msl::summary
