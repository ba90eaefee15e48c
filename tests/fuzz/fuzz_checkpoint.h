// What the checkpoint fuzz targets (fuzz_ckpt.cpp, fuzz_safetensors.cpp)
// check for each input. The bytes are loaded as load_checkpoint loads a
// file (read_checkpoint on a file of that name) and again from memory
// (parse_ckpt / parse_safetensors). The one outcome that is not a bug is a
// checkpoint::FormatError, the error the user sees (as ValueError). Beyond
// not crashing:
//  - both reads agree: the same tensors (names, dtypes, shapes, bytes) and
//    CRC flag, or the same error message;
//  - what loads, saved again in the same format (with a CRC when it had
//    one), loads back to the same tensors.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "interp/checkpoint/checkpoint.h"
#include "tests/fuzz/fuzz_files.h"

namespace msl::fuzz {

struct Loaded {
  bool ok = false;
  std::string error;  // the FormatError's message when !ok
  bool has_crc = false;
  std::vector<checkpoint::NamedTensor> tensors;
};

template <class F>
Loaded load_with(F&& read) {
  Loaded r;
  try {
    r.tensors = read(&r.has_crc);
    r.ok = true;
  } catch (const checkpoint::FormatError& e) {
    r.error = e.what();
  }
  return r;
}

inline void expect_same(const Loaded& a, const Loaded& b, const char* what) {
  if (a.ok != b.ok) fail(fmt::format("{}: one read succeeded, the other failed with: {}", what, a.ok ? b.error : a.error));
  if (!a.ok) {
    if (a.error != b.error) fail(fmt::format("{}: different errors:\n  {}\n  {}", what, a.error, b.error));
    return;
  }
  if (a.has_crc != b.has_crc) fail(fmt::format("{}: one has a CRC, the other not", what));
  if (a.tensors.size() != b.tensors.size())
    fail(fmt::format("{}: {} tensors against {}", what, a.tensors.size(), b.tensors.size()));
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const checkpoint::NamedTensor &x = a.tensors[i], &y = b.tensors[i];
    if (x.name != y.name || x.tensor.dtype() != y.tensor.dtype() || x.tensor.shape() != y.tensor.shape() ||
        checkpoint::tensor_bytes(x.tensor) != checkpoint::tensor_bytes(y.tensor))
      fail(fmt::format("{}: tensor {} differs ('{}' {} {}, '{}' {} {})", what, i, x.name,
                       kernels::dtype_name(x.tensor.dtype()), x.tensor.shape().str(), y.name,
                       kernels::dtype_name(y.tensor.dtype()), y.tensor.shape().str()));
  }
}

inline int fuzz_checkpoint(const uint8_t* data, size_t size, checkpoint::Format format) {
  using checkpoint::Format;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::string path = write_temp_file(format == Format::Ckpt ? "input.ckpt" : "input.safetensors", bytes);
  auto parse = [&](std::string_view b, bool* crc) {
    return format == Format::Ckpt ? checkpoint::parse_ckpt(b, path, crc) : checkpoint::parse_safetensors(b, path, crc);
  };
  Loaded file = load_with([&](bool* crc) { return checkpoint::read_checkpoint(path, crc); });
  Loaded memory = load_with([&](bool* crc) { return parse(bytes, crc); });
  expect_same(file, memory, "the file and its bytes in memory");
  if (!file.ok) return 0;
  std::string again = format == Format::Ckpt ? checkpoint::serialize_ckpt(file.tensors, file.has_crc)
                                             : checkpoint::serialize_safetensors(file.tensors, {}, file.has_crc);
  Loaded back = load_with([&](bool* crc) { return parse(again, crc); });
  expect_same(file, back, "a loaded checkpoint saved and loaded again");
  return 0;
}

}  // namespace msl::fuzz
