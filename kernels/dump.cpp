#include "kernels/dump.h"

#include <fmt/format.h>

#include <atomic>
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
std::string g_dir;
uint64_t g_seq = 0;
std::ofstream g_index;

void write_npy(const std::string& path, const Tensor& t) {
  std::string bytes = encode_npy(t);
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error(fmt::format("--dump: cannot write '{}': {}", path, std::strerror(errno)));
}

}  // namespace

void start_dump(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw std::runtime_error(fmt::format("--dump: cannot create the folder '{}': {}", dir,
                                         ec ? ec.message() : "not a directory"));
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".npy" || e.path().filename() == "index.txt") fs::remove(e.path(), ec);
  std::lock_guard<std::mutex> lock(g_mu);
  g_dir = dir;
  g_seq = 0;
  g_index.open(fs::path(dir) / "index.txt", std::ios::trunc);
  if (!g_index) throw std::runtime_error(fmt::format("--dump: cannot write in '{}': {}", dir, std::strerror(errno)));
  dump_detail::on = true;
}


void dump_outputs(Prim p, std::span<const Tensor> outs) {
  std::string where = op_site_text();
  std::lock_guard<std::mutex> lock(g_mu);
  uint64_t seq = g_seq++;
  for (size_t k = 0; k < outs.size(); ++k) {
    const Tensor& t = outs[k];
    if (!t.defined()) continue;
    std::string name = outs.size() == 1 ? fmt::format("{:06d}_{}.npy", seq, prim_name(p))
                                        : fmt::format("{:06d}_{}_{}.npy", seq, prim_name(p), k);
    write_npy((std::filesystem::path(g_dir) / name).string(), t);
    g_index << name << ' ' << dtype_name(t.dtype()) << ' ' << t.shape().str() << " @ " << where << '\n';
  }
  g_index.flush();
}

}  // namespace msl::kernels
