// MindSpore's .ckpt format: one protobuf Checkpoint message
// (checkpoint.proto), compiled by protoc at build time.
//
// Conventions taken from MindSpore's serialization.py, so files move both
// ways: tensor_type is the dtype's MindSpore name ("Float32"), the content
// is the raw row-major bytes, and a 0-d tensor is written with dims [0]. On
// reading, dims [0] with one element's worth of bytes is that 0-d tensor and
// dims [0] with no bytes is an empty vector, which keeps both round trips
// exact. Int16 (which MSL lacks) is widened to Int32; other types MindSpore
// can write (UInt16/32/64, "str" for strings in append_dict, map tensors)
// are clear errors naming the tensor.
//
// MindSpore writes the file as a sequence of records, one per parameter
// (or per 512 MB chunk of one), each a serialized Checkpoint message, so the
// file is `0x0a <varint length> <Value>` repeated. Before parsing, the
// framing of those records is walked (a few bytes per record, read from the
// file before the whole of it): a record that runs past the end of the file
// is a truncated file, said as such with its byte offset, and junk fails at
// its first byte without reading the rest.
//
// With crc_check, MindSpore appends "crc_num" and the CRC32 of the protobuf
// bytes as 10 big-endian bytes. A file ending so is verified whatever the
// caller asked (a mismatch names the file and both values); the trailer is
// stripped before parsing, as MindSpore's loader does. Unlike MindSpore's
// loader, those 17 bytes count as a trailer only when the records do not
// run through them to the end of the file: a checkpoint whose last tensor's
// data happens to end in "crc_num" and 10 bytes loads as it was saved.
//
// What cannot be detected: protobuf has no end marker and MindSpore's files
// carry no parameter count, so a file cut exactly between two records (or
// exactly before the CRC trailer) is a valid, shorter checkpoint. With a
// CRC, load_checkpoint(crc_check=True) warns that the CRC is missing; a
// missing parameter shows when the file is loaded into a network. Every
// other cut fails the framing walk or the parse.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <climits>
#include <functional>

#include "checkpoint.pb.h"
#include "interp/checkpoint/checkpoint.h"

namespace msl::checkpoint {

using kernels::DType;

namespace {

std::string shape_str(const std::vector<int64_t>& dims) { return fmt::format("[{}]", fmt::join(dims, ", ")); }

NamedTensor convert_value(const Checkpoint::Value& v, const std::string& path) {
  const std::string& name = v.tag();
  if (!valid_utf8(name)) throw FormatError(fmt::format("{}: a parameter name is not valid UTF-8", path));
  if (v.has_maptensor())
    throw FormatError(fmt::format("{}: parameter '{}' is a map tensor, which MSL does not support", path, name));
  if (!v.has_tensor()) throw FormatError(fmt::format("{}: parameter '{}' has no tensor", path, name));
  const TensorProto& tp = v.tensor();
  const std::string& type = tp.tensor_type();
  bool widen_int16 = type == "Int16";
  DType dtype = DType::Int32;
  if (!widen_int16) {
    bool found = false;
    for (int d = 0; d < kernels::kNumDTypes; ++d)
      if (type == kernels::dtype_display_name(static_cast<DType>(d))) {
        dtype = static_cast<DType>(d);
        found = true;
      }
    if (!found)
      throw FormatError(fmt::format("{}: parameter '{}' has tensor_type '{}', which MSL does not support", path, name,
                                    type.size() > 40 ? type.substr(0, 40) + "..." : type));
  }
  size_t itemsize = widen_int16 ? 2 : kernels::dtype_size(dtype);
  std::vector<int64_t> dims(tp.dims().begin(), tp.dims().end());
  const std::string& content = tp.tensor_content();
  if (dims.size() == 1 && dims[0] == 0 && content.size() == itemsize) dims.clear();  // MindSpore's 0-d
  uint64_t want = 0;
  std::string why;
  if (!byte_size_of(dims, itemsize, want, &why))
    throw FormatError(fmt::format("{}: parameter '{}' has an invalid shape {}: {}", path, name, shape_str(dims), why));
  if (want != content.size())
    throw FormatError(fmt::format("{}: parameter '{}' ({} of shape {}) needs {} bytes of data, the file has {}", path,
                                  name, type, shape_str(dims), want, content.size()));
  kernels::Dims shape{std::span<const int64_t>(dims)};
  return {name, widen_int16 ? int16_tensor_from_bytes(shape, content) : tensor_from_bytes(dtype, shape, content)};
}

constexpr std::string_view kCrcMark = "crc_num";
constexpr size_t kCrcBytes = 10;  // big-endian, as Python's int.to_bytes(10, 'big')
constexpr size_t kCrcTrailer = kCrcMark.size() + kCrcBytes;

// Up to `n` bytes at `offset` (fewer only at the end of the file).
using Peek = std::function<std::string(uint64_t offset, size_t n)>;

struct Framing {
  uint64_t proto_size;  // the protobuf bytes: the file less the CRC trailer
  bool has_crc = false;
  uint32_t crc = 0;  // as stored
};

// Protobuf messages are limited to 2 GiB; `size` is the file's, `proto_size`
// its protobuf part.
void check_size(uint64_t size, uint64_t proto_size, const std::string& path) {
  if (proto_size > static_cast<uint64_t>(INT_MAX))
    throw FormatError(
        fmt::format("{}: file of {} bytes is larger than a protobuf checkpoint can be (2 GiB)", path, size));
}

// A varint at `pos` of `w`; false when `w` ends first or it is longer than 10 bytes.
bool varint(std::string_view w, size_t& pos, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 70 && pos < w.size(); shift += 7) {
    auto b = static_cast<uint8_t>(w[pos++]);
    out |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// How a walk over the records' framing in [0, limit) ended.
struct Walk {
  enum Kind {
    End,        // the records end exactly at `limit`
    Group,      // a group field (never written by MindSpore): left to the parser
    Invalid,    // no protobuf field starts at `off`
    HeaderCut,  // `limit` falls inside the tag or length of record `record`
    RecordCut,  // record `record` declares `need` bytes, `rest` are left
  } kind = End;
  uint64_t off = 0;
  size_t record = 0;
  uint64_t need = 0, rest = 0;
};

Walk walk_records(uint64_t limit, const Peek& peek) {
  uint64_t off = 0;
  for (size_t record = 1; off < limit; ++record) {
    constexpr size_t kWindow = 20;  // a tag and a length, 10 bytes each at most
    std::string w = peek(off, static_cast<size_t>(std::min<uint64_t>(kWindow, limit - off)));
    bool at_end = off + w.size() == limit;
    Walk cut{at_end ? Walk::HeaderCut : Walk::Invalid, off, record};
    size_t pos = 0;
    uint64_t tag = 0, need = 0;
    if (!varint(w, pos, tag)) return cut;
    if (tag >> 3 == 0) return {Walk::Invalid, off, record};
    switch (tag & 7) {
      case 0:
        if (!varint(w, pos, need)) return cut;
        need = 0;
        break;
      case 1: need = 8; break;
      case 2:
        if (!varint(w, pos, need)) return cut;
        break;
      case 5: need = 4; break;
      case 3:
      case 4: return {Walk::Group, off, record};
      default: return {Walk::Invalid, off, record};
    }
    uint64_t rest = limit - off - pos;
    if (need > rest) return {Walk::RecordCut, off, record, need, rest};
    off += pos + need;
  }
  return {Walk::End, off};
}

// The CRC trailer, and the framing of the records before it (see the top).
Framing scan_framing(uint64_t size, const Peek& peek, const std::string& path) {
  check_size(size, size > kCrcTrailer ? size - kCrcTrailer : 0, path);
  Framing fr{size};
  if (size >= kCrcTrailer) {
    std::string tail = peek(size - kCrcTrailer, kCrcTrailer);
    // The last tensor's data may end in these 17 bytes too: they are a
    // trailer only when the records do not run through them to the end of
    // the file. (A real trailer starts where a record ends, and its 'c' is
    // a group tag, so the records never run through one.)
    if (tail.compare(0, kCrcMark.size(), kCrcMark) == 0 && walk_records(size, peek).kind != Walk::End) {
      uint64_t v = 0;
      for (size_t i = kCrcMark.size(); i < kCrcTrailer; ++i) {
        if (v >> 56) break;  // more than 64 bits: caught below
        v = v << 8 | static_cast<uint8_t>(tail[i]);
      }
      if (v > UINT32_MAX)
        throw FormatError(fmt::format("{}: the crc check failed: the crc_num at byte offset {} is not a CRC32", path,
                                      size - kCrcBytes));
      fr = {size - kCrcTrailer, true, static_cast<uint32_t>(v)};
    }
  }
  check_size(size, fr.proto_size, path);
  Walk w = walk_records(fr.proto_size, peek);
  switch (w.kind) {
    case Walk::End:
    case Walk::Group: return fr;
    case Walk::Invalid:
      throw FormatError(fmt::format(
          "not a MindSpore checkpoint (protobuf parse failed): {}: invalid protobuf field at byte offset {}", path,
          w.off));
    case Walk::HeaderCut:
      throw FormatError(
          fmt::format("{}: truncated or corrupt MindSpore checkpoint: the file ends inside the header "
                      "of record {} at byte offset {}",
                      path, w.record, w.off));
    case Walk::RecordCut:
      throw FormatError(
          fmt::format("{}: truncated or corrupt MindSpore checkpoint: record {} at byte offset {} "
                      "declares {} bytes but the file ends {} bytes after its header",
                      path, w.record, w.off, w.need, w.rest));
  }
  return fr;
}

}  // namespace

std::vector<NamedTensor> read_ckpt_file(const InputFile& f, bool* has_crc) {
  // The framing first, from small reads: junk or a cut file fails here
  // without the whole file being read.
  scan_framing(
      f.size(),
      [&](uint64_t off, size_t n) {
        return f.read_string(off, static_cast<size_t>(std::min<uint64_t>(n, f.size() - off)));
      },
      f.path());
  std::string bytes = f.read_string(0, static_cast<size_t>(f.size()));
  return parse_ckpt(bytes, f.path(), has_crc);
}

std::vector<NamedTensor> parse_ckpt(std::string_view bytes, const std::string& path, bool* has_crc) {
  Framing fr = scan_framing(
      bytes.size(), [&](uint64_t off, size_t n) { return std::string(bytes.substr(static_cast<size_t>(off), n)); },
      path);
  bytes = bytes.substr(0, static_cast<size_t>(fr.proto_size));
  if (fr.has_crc) check_crc(path, fr.crc, crc32_of(bytes));
  if (has_crc) *has_crc = fr.has_crc;
  Checkpoint ckpt;
  // ParsePartial + IsInitialized instead of ParseFromArray: the latter
  // logs missing required fields to stderr, and the message belongs in the
  // exception.
  if (!ckpt.ParsePartialFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw FormatError(fmt::format("not a MindSpore checkpoint (protobuf parse failed): {}", path));
  if (!ckpt.IsInitialized())
    throw FormatError(fmt::format("not a MindSpore checkpoint (protobuf parse failed): {}: missing required fields {}",
                                  path, ckpt.InitializationErrorString()));
  std::vector<NamedTensor> out;
  out.reserve(static_cast<size_t>(ckpt.value_size()));
  for (const auto& v : ckpt.value()) out.push_back(convert_value(v, path));
  return out;
}

std::string serialize_ckpt(const std::vector<NamedTensor>& tensors, bool crc) {
  Checkpoint ckpt;
  size_t total = 0;
  for (const NamedTensor& nt : tensors) {
    Checkpoint::Value* v = ckpt.add_value();
    v->set_tag(nt.name);
    TensorProto* tp = v->mutable_tensor();
    const kernels::Tensor& t = nt.tensor;
    if (t.ndim() == 0)
      tp->add_dims(0);
    else
      for (int64_t d : t.shape()) tp->add_dims(d);
    tp->set_tensor_type(kernels::dtype_display_name(t.dtype()));
    tp->set_tensor_content(tensor_bytes(t));
    total += t.nbytes() + nt.name.size() + 64;
    if (total > static_cast<size_t>(INT_MAX))
      throw FormatError("checkpoint data exceeds 2 GiB, the limit of the protobuf .ckpt format; use .safetensors");
  }
  std::string out;
  if (!ckpt.SerializeToString(&out)) throw FormatError("protobuf serialization of the checkpoint failed");
  if (crc) {
    uint32_t c = crc32_of(out);
    out += kCrcMark;
    for (size_t i = 0; i < kCrcBytes; ++i)
      out += static_cast<char>(i < kCrcBytes - 4 ? 0 : c >> (8 * (kCrcBytes - 1 - i)));
  }
  return out;
}

}  // namespace msl::checkpoint
