#include "kernels/dump.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "kernels/npy_file.h"
#include "kernels/op_site.h"
#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace dump_detail {
std::atomic<bool> on{false};
}

namespace {

std::mutex g_mu;
DumpConfig g_config;
std::vector<std::string> g_folded_kernels;  // g_config.kernels, folded once (folded())
uint64_t g_seq = 0;
int64_t g_steps = 0;  // step begins seen
std::ofstream g_index;

void write_npy(const std::string& path, const Tensor& t) {
  std::string bytes = encode_npy(t);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error(fmt::format("--dump: cannot write '{}': {}", path, std::strerror(errno)));
}

// "MatMul", "matmul", "mat_mul" name the same primitive.
std::string folded(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Whether `entry` ("FILE:LINE") names the site `file`:`line`: the same line
// in a file whose path is `entry`'s file or ends with "/" + it.
bool site_matches(const std::string& entry, const OpSite* site) {
  size_t colon = entry.rfind(':');
  if (!site || colon == std::string::npos || colon + 1 == entry.size()) return false;
  for (size_t i = colon + 1; i < entry.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(entry[i]))) return false;
  if (std::to_string(site->line()) != entry.substr(colon + 1)) return false;
  std::string_view want(entry.data(), colon), file(*site->file());
  return file == want || (file.size() > want.size() && file.ends_with(want) && file[file.size() - want.size() - 1] == '/');
}

bool wanted(Prim p) {
  if (!g_config.iterations.empty()) {
    int64_t it = std::max<int64_t>(0, g_steps - 1);
    bool in = false;
    for (auto [lo, hi] : g_config.iterations) in = in || (it >= lo && it <= hi);
    if (!in) return false;
  }
  if (g_config.kernels.empty()) return true;
  std::string name = folded(prim_name(p));
  const OpSite* site = current_op_site();
  for (size_t i = 0; i < g_config.kernels.size(); ++i)
    if (g_folded_kernels[i] == name || site_matches(g_config.kernels[i], site)) return true;
  return false;
}

void write_entry(const std::string& name, const Tensor& t, const std::string& where) {
  write_npy((std::filesystem::path(g_config.dir) / name).string(), t);
  g_index << name << ' ' << dtype_name(t.dtype()) << ' ' << t.shape().str() << " @ " << where << '\n';
}

}  // namespace

void start_dump(const DumpConfig& config) {
  namespace fs = std::filesystem;
  const std::string& dir = config.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw std::runtime_error(fmt::format("--dump: cannot create the folder '{}': {}", dir,
                                         ec ? ec.message() : "not a directory"));
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".npy" || e.path().filename() == "index.txt") fs::remove(e.path(), ec);
  std::lock_guard<std::mutex> lock(g_mu);
  g_config = config;
  g_folded_kernels.clear();
  for (const std::string& k : config.kernels) g_folded_kernels.push_back(folded(k));
  g_seq = 0;
  g_steps = 0;
  if (g_index.is_open()) g_index.close();
  g_index.open(fs::path(dir) / "index.txt", std::ios::trunc);
  if (!g_index) throw std::runtime_error(fmt::format("--dump: cannot write in '{}': {}", dir, std::strerror(errno)));
  dump_detail::on = true;
}

void stop_dump() {
  std::lock_guard<std::mutex> lock(g_mu);
  dump_detail::on = false;
  if (g_index.is_open()) g_index.close();
}

void dump_next_iteration() {
  std::lock_guard<std::mutex> lock(g_mu);
  ++g_steps;
}

int64_t dump_inputs(Prim p, std::span<const Tensor> in) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!dump_detail::on || !wanted(p)) return -1;
  auto seq = static_cast<int64_t>(g_seq++);
  if (g_config.inputs) {
    std::string where = op_site_text();
    for (size_t k = 0; k < in.size(); ++k)
      if (in[k].defined()) write_entry(fmt::format("{:06d}_{}_input_{}.npy", seq, prim_name(p), k), in[k], where);
    g_index.flush();
  }
  return seq;
}

void dump_outputs(int64_t seq, Prim p, std::span<const Tensor> outs) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (!dump_detail::on) return;
  std::string where = op_site_text();
  if (g_config.outputs)
    for (size_t k = 0; k < outs.size(); ++k) {
      if (!outs[k].defined()) continue;
      write_entry(outs.size() == 1 ? fmt::format("{:06d}_{}.npy", seq, prim_name(p))
                                   : fmt::format("{:06d}_{}_{}.npy", seq, prim_name(p), k),
                  outs[k], where);
    }
  g_index.flush();
}

}  // namespace msl::kernels
