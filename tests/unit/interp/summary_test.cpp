// Unit tests of TensorBoard event files (interp/summary/) below the
// interpreter: CRC-32C against its published check value, a written file
// read back record by record with both CRCs checked by hand (not by the
// library's reader) and every record parsed with the protobuf classes
// protoc generated from summary.proto; a flipped byte anywhere in a record
// is detected; a cut-short last record is a truncated tail, not an error.
// tests/ops/summary/ covers the MSL API and `msl summary` the cli test.
#include "../temp_dir.h"
#include "interp/summary/event_file.h"
#include "interp/summary/summary_cli.h"
#include "interp/summary/summary_events.h"
#include "interp/summary/summary_plot.h"
#include "summary.pb.h"

#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace msl::summary;
using msl::kernels::DType;
using msl::kernels::Tensor;
using msl::test::TempDir;

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t le(const std::string& b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<size_t>(i)]);
  return v;
}

// TFRecord's mask, written out here rather than taken from the library.
uint32_t mask(uint32_t c) { return ((c >> 15) | (c << 17)) + 0xa282ead8u; }

Tensor floats(std::initializer_list<float> v, const msl::kernels::Dims& shape) {
  Tensor t(DType::Float32, shape);
  std::memcpy(t.raw(), v.begin(), v.size() * sizeof(float));
  return t;
}

std::string write_sample(const std::string& dir) {
  EventFileWriter w(dir, "events", "_MS");
  for (int step = 1; step <= 3; ++step) {
    SummaryBuilder b;
    b.add_scalar("loss", 1.0 / step);
    b.add_histogram("fc.weight", floats({-1, 0, 0.5f, 2, 2}, {5}));
    b.add_tensor("t", floats({1, 2, 3, 4}, {2, 2}));
    b.add_image("img", floats({0, 0.5f, 1, 0.25f}, {1, 1, 2, 2}));
    w.write_event(b.event(1000.0 + step, step));
  }
  w.write_event(graph_event(1000.0, 0, {{"Net/fc/weight", "Parameter", {}, {2, 3}, true},
                                         {"Net/fc", "Dense", {"Net/fc/weight"}, {}, false}}));
  w.close();
  return w.path();
}

}  // namespace

TEST_CASE("CRC-32C matches the Castagnoli check value and the TFRecord mask") {
  CHECK(crc32c("123456789") == 0xE3069283u);
  CHECK(crc32c("") == 0u);
  // The library's slicing-by-8 agrees with a bit-at-a-time CRC at every
  // length (every tail the 8-byte loop leaves).
  auto reference = [](const std::string& d) {
    uint32_t c = 0xFFFFFFFFu;
    for (unsigned char ch : d) {
      c ^= ch;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return ~c;
  };
  std::string s;
  for (int i = 0; i < 100; ++i) s += static_cast<char>(i * 37 + 11);
  for (size_t n = 0; n <= s.size(); ++n) CHECK(crc32c(s.substr(0, n)) == reference(s.substr(0, n)));
  uint32_t split = crc32c(s.substr(13), crc32c(s.substr(0, 13)));
  CHECK(split == crc32c(s));
  CHECK(masked_crc32c("123456789") == mask(0xE3069283u));
}

TEST_CASE("an event file has TensorBoard's name, framing, CRCs and protobufs") {
  TempDir dir;
  std::string path = write_sample(dir.path.string());
  std::string name = std::filesystem::path(path).filename().string();
  CHECK(name.rfind("events.out.tfevents.", 0) == 0);
  CHECK(name.size() > 3);
  CHECK(name.substr(name.size() - 3) == "_MS");

  std::string b = file_bytes(path);
  size_t at = 0;
  std::vector<msl::summary::proto::Event> events;
  while (at < b.size()) {
    REQUIRE(b.size() - at >= 16);
    uint64_t len = le(b, at, 8);
    CHECK(static_cast<uint32_t>(le(b, at + 8, 4)) == mask(crc32c(b.substr(at, 8))));
    REQUIRE(at + 16 + len <= b.size());
    std::string data = b.substr(at + 12, len);
    CHECK(static_cast<uint32_t>(le(b, at + 12 + len, 4)) == mask(crc32c(data)));
    msl::summary::proto::Event e;
    REQUIRE(e.ParseFromString(data));
    events.push_back(e);
    at += 16 + len;
  }
  CHECK(at == b.size());
  REQUIRE(events.size() == 5);
  CHECK(events[0].file_version() == "brain.Event:2");
  CHECK(events[0].wall_time() > 1.6e9);
  const auto& e1 = events[1];
  CHECK(e1.step() == 1);
  CHECK(e1.wall_time() == 1001.0);
  REQUIRE(e1.summary().value_size() == 4);
  CHECK(e1.summary().value(0).tag() == "loss");
  CHECK(e1.summary().value(0).simple_value() == 1.0f);
  CHECK(events[3].summary().value(0).simple_value() == doctest::Approx(1.0 / 3));
  const auto& h = e1.summary().value(1).histo();
  CHECK(h.min() == -1);
  CHECK(h.max() == 2);
  CHECK(h.num() == 5);
  CHECK(h.sum() == doctest::Approx(3.5));
  CHECK(h.sum_squares() == doctest::Approx(9.25));
  REQUIRE(h.bucket_size() == kHistogramBins);
  REQUIRE(h.bucket_limit_size() == kHistogramBins);
  CHECK(h.bucket_limit(kHistogramBins - 1) == 2);
  double total = 0;
  for (double c : h.bucket()) total += c;
  CHECK(total == 5);
  CHECK(h.bucket(0) == 1);                   // -1
  CHECK(h.bucket(kHistogramBins - 1) == 2);  // 2, 2
  const auto& t = e1.summary().value(2).tensor();
  CHECK(t.dtype() == msl::summary::proto::DT_FLOAT);
  REQUIRE(t.tensor_shape().dim_size() == 2);
  CHECK(t.tensor_shape().dim(0).size() == 2);
  REQUIRE(t.tensor_content().size() == 16);
  float f[4];
  std::memcpy(f, t.tensor_content().data(), 16);
  CHECK(f[3] == 4.0f);
  const auto& img = e1.summary().value(3).image();
  CHECK(img.height() == 2);
  CHECK(img.width() == 2);
  CHECK(img.colorspace() == 1);
  CHECK(img.encoded_image_string().substr(1, 3) == "PNG");
  msl::summary::proto::GraphDef g;
  REQUIRE(g.ParseFromString(events[4].graph_def()));
  REQUIRE(g.node_size() == 2);
  CHECK(g.node(1).input(0) == "Net/fc/weight");
  CHECK(g.node(0).attr().at("shape").shape().dim(1).size() == 3);

  // The library's reader agrees.
  auto decoded = read_events(path);
  REQUIRE(decoded.size() == 5);
  CHECK(decoded[2].values[0].scalar == doctest::Approx(0.5));
  CHECK(decoded[1].values[2].values == std::vector<double>{1, 2, 3, 4});
  CHECK(decoded[4].graph_nodes.size() == 2);
}

TEST_CASE("a flipped byte anywhere is a CRC error; a cut-short tail is reported") {
  TempDir dir;
  std::string path = write_sample(dir.path.string());
  std::string good = file_bytes(path);
  CHECK(parse_records(good, path).records.size() == 5);
  // Every byte of the first two records, and a sample of the rest.
  for (size_t i = 0; i < good.size(); i += (i < 200 ? 1 : 7)) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    bool detected = false;
    try {
      RecordFile rf = parse_records(bad, path);
      // A changed length can only make the data run past the end.
      detected = rf.truncated_tail;
    } catch (const FormatError& e) {
      detected = std::string(e.what()).find("CRC-32C") != std::string::npos;
    }
    CHECK_MESSAGE(detected, "byte ", i);
  }
  for (size_t cut : {good.size() - 1, good.size() - 4, good.size() - 20}) {
    RecordFile rf = parse_records(std::string_view(good).substr(0, cut), path);
    CHECK(rf.truncated_tail);
    CHECK(rf.records.size() == 4);
  }
}

TEST_CASE("writes after a flush append; earlier records stay intact") {
  TempDir dir;
  EventFileWriter w(dir.path.string());
  SummaryBuilder b;
  b.add_scalar("x", 1);
  w.write_event(b.event(1, 1));
  w.flush();
  std::string first = file_bytes(w.path());
  w.write_event(b.event(2, 2));
  w.close();
  std::string both = file_bytes(w.path());
  CHECK(both.substr(0, first.size()) == first);
  CHECK(read_events(w.path()).size() == 3);
  CHECK_THROWS_AS(w.write_event(b.event(3, 3)), SystemError);
  // Two writers in the same second get two files.
  EventFileWriter a(dir.path.string()), c(dir.path.string());
  CHECK(a.path() != c.path());
  CHECK(find_event_files(dir.path.string()).size() == 3);
}

TEST_CASE("images: a batch tiled in a grid, floats in [0, 1] scaled") {
  Tensor batch = Tensor::zeros(DType::Float32, {4, 3, 2, 2});
  batch.data<float>()[0] = 1.0f;
  Tensor px = image_pixels(batch);
  CHECK(px.dim(0) == 6);  // 2 rows of 2-pixel images, a 2-pixel gap
  CHECK(px.dim(1) == 6);
  CHECK(px.dim(2) == 3);
  CHECK(px.data<uint8_t>()[0] == 255);
  CHECK_THROWS_AS(image_pixels(Tensor::zeros(DType::Float32, {2, 5, 2, 2})), std::invalid_argument);
}

TEST_CASE("plots and their file names") {
  Tensor img = plot_lines({{1, 3.0}, {2, 1.0}, {3, 2.0}}, 200, 120);
  CHECK(img.dim(0) == 120);
  CHECK(img.dim(1) == 200);
  size_t blue = 0;
  const uint8_t* p = img.data<uint8_t>();
  for (int64_t i = 0; i < img.numel() / 3; ++i) blue += p[3 * i] == 31 && p[3 * i + 2] == 180;
  CHECK(blue > 50);
  CHECK(plot_file_name("Train/loss") == "Train_loss.png");
  CHECK(plot_file_name("..") == "_...png");
}
