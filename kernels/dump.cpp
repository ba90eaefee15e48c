#include "kernels/dump.h"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>

#include "kernels/strided_iter.h"

namespace msl::kernels {

namespace {

std::atomic<bool> g_on{false};
std::mutex g_mu;
std::string g_dir;
uint64_t g_seq = 0;
std::ofstream g_index;

// NumPy's dtype string for the stored element type.
const char* npy_descr(DType t) {
  switch (t) {
    case DType::Bool: return "|b1";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::Float16: return "<f2";
    case DType::Float64: return "<f8";
    default: return "<f4";  // float32, and bfloat16 widened to it
  }
}

// A .npy version 1.0 file: magic, header length, a Python dict literal
// padded with spaces to a multiple of 64 bytes ending in a newline, data.
void write_npy(const std::string& path, const Tensor& t) {
  Tensor c = t.dtype() == DType::BFloat16 ? execute1(Prim::cast, std::span<const Tensor>(&t, 1),
                                                     Attrs{{"dtype", DType::Float32}})
                                          : t;
  c = c.to_host().contiguous();
  std::string shape = "(";
  for (int i = 0; i < c.ndim(); ++i) shape += std::to_string(c.dim(i)) + (c.ndim() == 1 ? "," : i + 1 < c.ndim() ? ", " : "");
  shape += ")";
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", npy_descr(c.dtype()), shape);
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  const char magic[] = "\x93NUMPY\x01\x00";
  out.write(magic, 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  char le[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(le, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (c.numel() > 0) out.write(static_cast<const char*>(c.raw()), static_cast<std::streamsize>(c.nbytes()));
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
  g_on = true;
}

bool dumping() { return g_on.load(std::memory_order_relaxed); }

void dump_outputs(Prim p, std::span<const Tensor> outs) {
  std::lock_guard<std::mutex> lock(g_mu);
  uint64_t seq = g_seq++;
  for (size_t k = 0; k < outs.size(); ++k) {
    const Tensor& t = outs[k];
    if (!t.defined()) continue;
    std::string name = outs.size() == 1 ? fmt::format("{:06d}_{}.npy", seq, prim_name(p))
                                        : fmt::format("{:06d}_{}_{}.npy", seq, prim_name(p), k);
    write_npy((std::filesystem::path(g_dir) / name).string(), t);
    g_index << name << ' ' << dtype_name(t.dtype()) << ' ' << t.shape().str() << '\n';
  }
  g_index.flush();
}

}  // namespace msl::kernels
