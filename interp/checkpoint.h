// Checkpoint files: named tensors on disk, in MindSpore's protobuf .ckpt
// format (checkpoint.proto) and in the safetensors format.
//
// This layer knows nothing of the interpreter: it turns bytes into
// (name, tensor) lists and back, and reports problems as C++ exceptions that
// the native module msl._checkpoint (module_msl_checkpoint.cpp) turns into
// MSL exceptions:
//  - SystemError: a system call failed (errno + path), raised in MSL as the
//    OSError subclass Python would use (FileNotFoundError, IsADirectoryError).
//  - FormatError: the bytes are not a valid checkpoint. The message names the
//    file and what is wrong (for safetensors, the byte offset), so a user
//    can tell a truncated download from a file of the wrong kind.
//
// Design choices:
//  - Files are read whole into memory and parsed from there: checkpoints
//    are read once, and a parser over a buffer can check every length
//    against the bytes actually present, so a truncated or corrupt file is a
//    clear error, never a read past the end.
//  - Writes never damage an existing file: the bytes go to a temporary file
//    in the target's folder, which is fsynced and then renamed over the
//    target (rename is atomic within a file system). A crash or an error
//    mid-save leaves the previous checkpoint as it was.
//  - Tensor data is raw little-endian row-major bytes in both formats, so a
//    tensor is copied in and out with one memcpy (the build targets
//    little-endian hosts; checkpoint_io.cpp asserts it).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/tensor.h"

namespace msl::checkpoint {

struct NamedTensor {
  std::string name;
  kernels::Tensor tensor;
};

// A failed system call on `path`.
struct SystemError : std::runtime_error {
  SystemError(int e, std::string p, std::string what)
      : std::runtime_error(std::move(what)), err(e), path(std::move(p)) {}
  int err;
  std::string path;
};

// Bytes that are not a valid checkpoint (or tensors that cannot be saved).
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Format { Ckpt, Safetensors };
// The format named by the file's extension (.ckpt, .safetensors); false for others.
bool format_from_path(const std::string& path, Format& out);

// Reads a checkpoint, format chosen by extension: the tensors in file order.
std::vector<NamedTensor> read_checkpoint(const std::string& path);
// Writes `tensors` (in order) crash-safely, format chosen by extension.
// `metadata` goes to the safetensors "__metadata__" (ignored for .ckpt).
void write_checkpoint(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::vector<std::pair<std::string, std::string>>& metadata = {});

// ------------------------------------------------------- formats (in memory)

// `path` only names the file in error messages.
std::vector<NamedTensor> parse_ckpt(std::string_view bytes, const std::string& path);
std::string serialize_ckpt(const std::vector<NamedTensor>& tensors);
std::vector<NamedTensor> parse_safetensors(std::string_view bytes, const std::string& path);
std::string serialize_safetensors(const std::vector<NamedTensor>& tensors,
                                  const std::vector<std::pair<std::string, std::string>>& metadata);

// ------------------------------------------------------------------ files

std::string read_whole_file(const std::string& path);
// Temporary file in the same folder, write, fsync, rename over `path`,
// fsync the folder. On any failure the temporary file is removed and
// `path` is untouched.
void write_file_atomically(const std::string& path, std::string_view bytes);

// ---------------------------------------------------------------- tensors

// The tensor's elements as contiguous host bytes.
std::string tensor_bytes(const kernels::Tensor& t);
// A new CPU tensor of `dtype` and `shape` holding `data` (exactly its size).
// Bool bytes are normalized to 0/1.
kernels::Tensor tensor_from_bytes(kernels::DType dtype, const kernels::Dims& shape, std::string_view data);
// Int16 data (a dtype MSL lacks) widened to an Int32 tensor.
kernels::Tensor int16_tensor_from_bytes(const kernels::Dims& shape, std::string_view data);
// numel * itemsize for `dims`, or false when a dimension is negative, there
// are more than kMaxDims of them, or the size overflows.
bool byte_size_of(const std::vector<int64_t>& dims, size_t itemsize, uint64_t& out);
bool valid_utf8(std::string_view s);

// ------------------------------------------------------------------- JSON

// A parsed JSON value. Objects keep their members in file order (duplicate
// keys are an error). `offset` is where the value starts in the input.
struct Json {
  enum class Type { Null, Bool, Number, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  double number = 0;
  bool is_int = false;  // a number written without fraction/exponent that fits int64
  int64_t integer = 0;
  std::string str;
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;
  size_t offset = 0;
};

struct JsonError : std::runtime_error {
  JsonError(size_t off, const std::string& what) : std::runtime_error(what), offset(off) {}
  size_t offset;  // byte offset into the parsed text
};

// Parses exactly one JSON value (surrounded by optional whitespace).
// Nesting deeper than 64 levels is rejected.
Json parse_json(std::string_view text);
// A JSON string literal for `s`.
std::string json_quote(std::string_view s);

}  // namespace msl::checkpoint
