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
//  - Files are checked before they are read: a checkpoint must be a regular
//    file (a FIFO or a device would block or never end), and the sizes the
//    file declares (the safetensors header, the protobuf framing of each
//    .ckpt record) are checked against its length with small reads first.
//    Only then is the data read, and parsed from memory, where every length
//    is checked again against the bytes actually present. So a truncated,
//    corrupt or huge sparse file is a clear error, never a read past the end
//    or an allocation of the size it claims.
//  - Writes never damage an existing file: the bytes go to a temporary file
//    `.NAME.tmp-XXXXXX` in the target's folder, which is fsynced, renamed
//    over the target (rename is atomic within a file system), and the
//    folder is fsynced. A crash or an error mid-save leaves the previous
//    checkpoint as it was. The writer holds an flock on its temporary file
//    until the rename, so a later save can tell the temporary file of a
//    killed writer (unlocked: the kernel drops the lock with the process)
//    from one being written now, and remove only the former.
//  - Integrity: MindSpore's optional CRC32 (save_checkpoint(crc_check=True))
//    is written in MindSpore's layout and verified whenever a file has one:
//    .ckpt: the protobuf bytes, then "crc_num" and the CRC32 of those bytes
//    as 10 big-endian bytes; safetensors: "crc_num" in __metadata__, the
//    decimal CRC32 chained over each tensor's name and data bytes, tensors
//    in name order.
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

#include "kernels/json_text.h"
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
// `has_crc` (when given) is set to whether the file carried a CRC32, which
// was then verified (a mismatch is a FormatError).
std::vector<NamedTensor> read_checkpoint(const std::string& path, bool* has_crc = nullptr);
// Writes `tensors` (in order) crash-safely, format chosen by extension.
// `metadata` goes to the safetensors "__metadata__" (ignored for .ckpt);
// `crc` adds MindSpore's CRC32.
void write_checkpoint(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const std::vector<std::pair<std::string, std::string>>& metadata = {}, bool crc = false);

// ------------------------------------------------------- formats (in memory)

// `path` only names the file in error messages; `has_crc` as for
// read_checkpoint.
std::vector<NamedTensor> parse_ckpt(std::string_view bytes, const std::string& path, bool* has_crc = nullptr);
std::string serialize_ckpt(const std::vector<NamedTensor>& tensors, bool crc = false);
std::vector<NamedTensor> parse_safetensors(std::string_view bytes, const std::string& path, bool* has_crc = nullptr);
std::string serialize_safetensors(const std::vector<NamedTensor>& tensors,
                                  const std::vector<std::pair<std::string, std::string>>& metadata, bool crc = false);

// NumPy's .npy (one array) and .npz (named arrays in a zip archive), read
// and written by the numpy module (checkpoint_npy.cpp). npz names drop the
// members' ".npy"; `compress` deflates members as numpy.savez_compressed.
kernels::Tensor parse_npy(std::string_view bytes, const std::string& path);
std::string serialize_npy(const kernels::Tensor& t);
std::vector<NamedTensor> parse_npz(std::string_view bytes, const std::string& path);
std::string serialize_npz(const std::vector<NamedTensor>& tensors, bool compress);

// ------------------------------------------------------------------ files

// An open checkpoint file: a regular file (anything else is a FormatError
// "not a regular file", a directory the usual EISDIR), opened without
// blocking (a FIFO would block in open() until a writer came), with its size
// at opening. pread-style reads of exact ranges.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Exactly n bytes at `offset` into `out` (a file that shrank since it was
  // opened is a FormatError).
  void read_at(uint64_t offset, void* out, size_t n) const;
  std::string read_string(uint64_t offset, size_t n) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Format readers over an open file: they check the declared sizes before
// reading the data.
std::vector<NamedTensor> read_ckpt_file(const InputFile& f, bool* has_crc);
std::vector<NamedTensor> read_safetensors_file(const InputFile& f, bool* has_crc);

// The whole of a regular file (InputFile's checks).
std::string read_whole_file(const std::string& path);
// Temporary file in the same folder (locked while written), write, fsync,
// rename over `path`, fsync the folder. On any failure the temporary file
// is removed and `path` is untouched. Stale temporary files of earlier
// writers of `path` that were killed are removed first.
void write_file_atomically(const std::string& path, std::string_view bytes);
// Removes `path` if it is the temporary file of a writer that is gone
// (named `.NAME.tmp-XXXXXX`, a regular file, and not locked); true when
// removed. A temporary file being written now is left alone.
bool remove_stale_temp_file(const std::string& path);

// CRC32 (zlib's, as Python's binascii.crc32) of `data` continuing `crc`.
uint32_t crc32_of(std::string_view data, uint32_t crc = 0);
// The CRC32 of A+B from crc(A), crc(B) and B's length.
uint32_t crc32_combine_of(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);
// [FormatError] "PATH: the crc check failed ..." when `stored` != `actual`.
void check_crc(const std::string& path, uint32_t stored, uint32_t actual);

// ---------------------------------------------------------------- tensors

// The name of the first tensor in `tensors` holding a NaN or an infinity
// (floating dtypes only), or nullptr when all are finite.
const std::string* first_non_finite(const std::vector<NamedTensor>& tensors);
// The tensor's elements as contiguous host bytes.
std::string tensor_bytes(const kernels::Tensor& t);
// A new CPU tensor of `dtype` and `shape` holding `data` (exactly its size).
// Bool bytes are normalized to 0/1.
kernels::Tensor tensor_from_bytes(kernels::DType dtype, const kernels::Dims& shape, std::string_view data);
// Int16 data (a dtype MSL lacks) widened to an Int32 tensor.
kernels::Tensor int16_tensor_from_bytes(const kernels::Dims& shape, std::string_view data);
// numel * itemsize for `dims`, or false when a dimension is negative, there
// are more than kMaxDims of them, the size overflows, or the dimensions
// other than 0 multiply past 2^40 (a tensor's most elements, even when
// empty); `why` then says which ("dimension 2 is -3", "9 dimensions, more
// than MSL's 8", "its size, 4 x 1099511627776 x 1099511627776 bytes,
// overflows 64 bits").
bool byte_size_of(const std::vector<int64_t>& dims, size_t itemsize, uint64_t& out, std::string* why = nullptr);
bool valid_utf8(std::string_view s);

// ------------------------------------------------------------------- JSON

struct JsonMember;

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
  std::vector<JsonMember> members;
  size_t offset = 0;
};

// A member of a JSON object: key and value. (Not a std::pair<std::string,
// Json>, which clang with libstdc++ cannot instantiate inside Json's own
// definition.)
struct JsonMember {
  std::string first;
  Json second;
};

struct JsonError : std::runtime_error {
  JsonError(size_t off, const std::string& what) : std::runtime_error(what), offset(off) {}
  size_t offset;  // byte offset into the parsed text
};

// Parses exactly one JSON value (surrounded by optional whitespace).
// Nesting deeper than 64 levels is rejected.
Json parse_json(std::string_view text);
// A JSON string literal for `s` (kernels/json_text.h).
using kernels::json_quote;

}  // namespace msl::checkpoint
