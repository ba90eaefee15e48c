// `msl summary` (summary_cli.h).
#include "interp/summary/summary_cli.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <map>

#include "interp/dataset/dataset_core.h"
#include "interp/summary/event_file.h"
#include "interp/summary/summary_events.h"
#include "interp/summary/summary_plot.h"

namespace msl::summary {

namespace {

const char* kUsage = "usage: msl summary DIR [--out DIR]\n";

struct Point {
  int64_t step;
  double value;
};

}  // namespace

std::string plot_file_name(const std::string& tag) {
  std::string out;
  for (char c : tag) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-') ? c : '_';
  if (out.empty() || out[0] == '.') out = "_" + out;
  return out + ".png";
}

int summary_command(const std::vector<std::string>& args) {
  std::string dir, out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--out" || a.rfind("--out=", 0) == 0) {
      if (a == "--out" && i + 1 >= args.size()) {
        std::fprintf(stderr, "msl summary: error: --out needs a folder\n%s", kUsage);
        return 2;
      }
      out = a == "--out" ? args[++i] : a.substr(6);
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "msl summary: error: unknown option '%s'\n%s", a.c_str(), kUsage);
      return 2;
    } else if (dir.empty()) {
      dir = a;
    } else {
      std::fprintf(stderr, "msl summary: error: one DIR only ('%s' and '%s')\n%s", dir.c_str(), a.c_str(), kUsage);
      return 2;
    }
  }
  if (dir.empty()) {
    std::fprintf(stderr, "msl summary: error: DIR is missing\n%s", kUsage);
    return 2;
  }
  if (out.empty()) out = dir;
  std::map<std::string, std::vector<Point>> series;
  size_t files = 0;
  try {
    for (const std::string& path : find_event_files(dir)) {
      ++files;
      bool truncated = false;
      for (const DecodedEvent& e : read_events(path, &truncated))
        for (const DecodedValue& v : e.values) {
          if (v.kind == "scalar") series[v.tag].push_back({e.step, v.scalar});
          // TensorFlow 2's writers store scalars as 0-d tensors.
          else if (v.kind == "tensor" && v.shape.empty() && v.values.size() == 1)
            series[v.tag].push_back({e.step, v.values[0]});
        }
      if (truncated) std::fprintf(stderr, "msl summary: warning: %s ends inside a record (a write cut short)\n", path.c_str());
    }
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "msl summary: error: %s\n", e.what());
    return 1;
  }
  if (files == 0) {
    std::fprintf(stderr, "msl summary: no event files (*tfevents*) under '%s'\n", dir.c_str());
    return 1;
  }
  size_t tag_width = 3;
  for (auto& [tag, pts] : series) tag_width = std::max(tag_width, tag.size());
  std::printf("%-*s %8s  %s\n", static_cast<int>(tag_width), "tag", "step", "value");
  for (auto& [tag, pts] : series) {
    std::stable_sort(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.step < b.step; });
    for (const Point& p : pts)
      std::printf("%-*s %8lld  %s\n", static_cast<int>(tag_width), tag.c_str(), static_cast<long long>(p.step),
                  plot_label(p.value).c_str());
  }
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  try {
    for (auto& [tag, pts] : series) {
      std::vector<std::pair<double, double>> xy;
      for (const Point& p : pts) xy.emplace_back(static_cast<double>(p.step), p.value);
      std::string file = (std::filesystem::path(out) / plot_file_name(tag)).string();
      dataset::write_png(file, plot_lines(xy));
      std::fprintf(stderr, "wrote %s\n", file.c_str());
    }
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "msl summary: error: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace msl::summary
