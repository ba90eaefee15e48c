// The safetensors format (huggingface/safetensors):
//
//   [8 bytes]  N, the header length, unsigned little-endian
//   [N bytes]  JSON header: {"__metadata__": {str: str}, name: {"dtype": "F32",
//              "shape": [2, 3], "data_offsets": [begin, end]}, ...}
//   [rest]     the data section; offsets are relative to its start
//
// Reading checks what the reference implementation checks: the header
// fits in the file, each tensor's byte range matches its dtype and shape,
// and the ranges tile the data section exactly (no gaps, no overlap, nothing
// after the last). That last rule is what makes every truncation of a file
// detectable. From a file, the 8-byte length and the header are read and
// checked against the file's size before any data is read; the data is then
// read straight into the tensors. Errors give the file and the byte offset
// in the file where the problem was found. Tensors are returned in data
// order, which is the order they were written in.
//
// MindSpore's CRC (save_checkpoint(crc_check=True)): __metadata__["crc_num"]
// holds the decimal CRC32 chained over each tensor's name (UTF-8) and data
// bytes, tensors in name order. When present it is verified; a mismatch
// names the file and both values.
//
// Writing puts "__metadata__" first, then the tensors in the given order
// with consecutive data, and pads the header with spaces to a multiple of 8
// bytes, as the reference writer does, so the data section stays aligned.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>

#include "interp/checkpoint/checkpoint.h"

namespace msl::checkpoint {

using kernels::DType;

namespace {

// The header may not exceed 100 MB (the reference implementation's limit).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeName {
  const char* name;
  DType dtype;
  size_t itemsize;  // in the file (I16 is widened on reading)
};
constexpr DTypeName kDTypes[] = {
    {"F64", DType::Float64, 8}, {"F32", DType::Float32, 4}, {"F16", DType::Float16, 2}, {"BF16", DType::BFloat16, 2},
    {"I64", DType::Int64, 8},   {"I32", DType::Int32, 4},   {"I16", DType::Int32, 2},   {"I8", DType::Int8, 1},
    {"U8", DType::UInt8, 1},    {"BOOL", DType::Bool, 1},
};

const char* safetensors_name(DType d) {
  for (const DTypeName& n : kDTypes)
    if (n.dtype == d && n.itemsize == kernels::dtype_size(d)) return n.name;
  return nullptr;
}

struct Entry {
  std::string name;
  const DTypeName* dtype;
  std::vector<int64_t> shape;
  uint64_t begin, end;
  size_t header_offset;  // of the entry's JSON object, in the file
};

class HeaderReader {
 public:
  HeaderReader(const std::string& path, size_t base) : path_(path), base_(base) {}

  [[noreturn]] void fail(size_t json_offset, const std::string& what) const {
    throw FormatError(
        fmt::format("{}: invalid safetensors header at byte offset {}: {}", path_, base_ + json_offset, what));
  }

  const Json& member(const Json& obj, const char* key, const std::string& tensor) const {
    for (auto& [k, v] : obj.members)
      if (k == key) return v;
    fail(obj.offset, fmt::format("tensor '{}' has no \"{}\"", tensor, key));
  }

  uint64_t non_negative_int(const Json& v, const std::string& what) const {
    if (v.type != Json::Type::Number || !v.is_int || v.integer < 0)
      fail(v.offset, fmt::format("{} must be a non-negative integer", what));
    return static_cast<uint64_t>(v.integer);
  }

  Entry entry(const std::string& name, const Json& obj) const {
    if (obj.type != Json::Type::Object) fail(obj.offset, fmt::format("tensor '{}' must be a JSON object", name));
    Entry e{name, nullptr, {}, 0, 0, base_ + obj.offset};
    const Json& dt = member(obj, "dtype", name);
    if (dt.type != Json::Type::String) fail(dt.offset, fmt::format("dtype of '{}' must be a string", name));
    for (const DTypeName& n : kDTypes)
      if (dt.str == n.name) e.dtype = &n;
    if (!e.dtype)
      fail(dt.offset, fmt::format("tensor '{}' has dtype {}, which MSL does not support (supported: "
                                  "F64 F32 F16 BF16 I64 I32 I16 I8 U8 BOOL)",
                                  name, json_quote(dt.str.substr(0, 40))));
    const Json& shape = member(obj, "shape", name);
    if (shape.type != Json::Type::Array) fail(shape.offset, fmt::format("shape of '{}' must be an array", name));
    if (shape.items.size() > static_cast<size_t>(kernels::kMaxDims))
      fail(shape.offset, fmt::format("shape of '{}' has {} dimensions, more than MSL's {}", name, shape.items.size(),
                                     kernels::kMaxDims));
    for (const Json& d : shape.items)
      e.shape.push_back(static_cast<int64_t>(non_negative_int(d, fmt::format("a dimension of '{}'", name))));
    const Json& offs = member(obj, "data_offsets", name);
    if (offs.type != Json::Type::Array || offs.items.size() != 2)
      fail(offs.offset, fmt::format("data_offsets of '{}' must be [begin, end]", name));
    e.begin = non_negative_int(offs.items[0], fmt::format("data_offsets of '{}'", name));
    e.end = non_negative_int(offs.items[1], fmt::format("data_offsets of '{}'", name));
    if (e.end < e.begin) fail(offs.offset, fmt::format("data_offsets of '{}' end before they begin", name));
    uint64_t want = 0;
    std::string why;
    if (!byte_size_of(e.shape, e.dtype->itemsize, want, &why))
      fail(shape.offset,
           fmt::format("tensor '{}' ({} of shape [{}]): {}", name, e.dtype->name, fmt::join(e.shape, ", "), why));
    if (want != e.end - e.begin)
      fail(offs.offset,
           fmt::format("tensor '{}' ({} of shape [{}]) needs {} bytes but data_offsets [{}, {}] cover {}", name,
                       e.dtype->name, fmt::join(e.shape, ", "), want, e.begin, e.end, e.end - e.begin));
    return e;
  }

  void check_metadata(const Json& meta) const {
    if (meta.type != Json::Type::Object) fail(meta.offset, "__metadata__ must be an object of strings");
    for (auto& [k, v] : meta.members)
      if (v.type != Json::Type::String)
        fail(v.offset, fmt::format("__metadata__ value of {} must be a string", json_quote(k)));
  }

 private:
  const std::string& path_;
  size_t base_;
};

// The checked header: where the data starts, the tensors in data order, and
// the CRC32 of __metadata__["crc_num"] if there is one.
struct Layout {
  uint64_t data_start = 0;
  std::vector<Entry> entries;
  bool has_crc = false;
  uint32_t crc = 0;
};

// The header length from the file's first 8 bytes, checked against its size.
uint64_t header_length(std::string_view first8, uint64_t file_size, const std::string& path) {
  if (file_size < 8)
    throw FormatError(
        fmt::format("{}: not a safetensors file: {} bytes, too short for the 8-byte header length at "
                    "byte offset 0",
                    path, file_size));
  uint64_t n;
  std::memcpy(&n, first8.data(), 8);
  if (n > kMaxHeaderBytes || n > file_size - 8)
    throw FormatError(
        fmt::format("{}: invalid safetensors file: the header length {} at byte offset 0 runs past the "
                    "end of the file ({} bytes){}",
                    path, n, file_size, n > kMaxHeaderBytes ? " or exceeds 100 MB" : ""));
  return n;
}

// Parses the JSON header and checks it against the file's size: every
// tensor's range matches its dtype and shape, and the ranges tile the data
// section exactly.
Layout read_layout(std::string_view header, uint64_t file_size, const std::string& path) {
  HeaderReader reader(path, 8);
  Json json;
  try {
    json = parse_json(header);
  } catch (const JsonError& e) {
    reader.fail(e.offset, e.what());
  }
  if (json.type != Json::Type::Object) reader.fail(json.offset, "the header must be a JSON object");
  Layout out;
  for (auto& [name, v] : json.members) {
    if (name != "__metadata__") {
      out.entries.push_back(reader.entry(name, v));
      continue;
    }
    reader.check_metadata(v);
    for (auto& [k, value] : v.members) {
      if (k != "crc_num") continue;
      // MindSpore writes str(crc): decimal digits of a 32-bit value.
      const std::string& d = value.str;
      uint64_t c = 0;
      bool ok = !d.empty() && d.size() <= 10;
      for (char ch : d) {
        ok = ok && ch >= '0' && ch <= '9';
        c = c * 10 + static_cast<uint64_t>(ch - '0');
      }
      if (!ok || c > UINT32_MAX)
        reader.fail(value.offset, fmt::format("__metadata__ crc_num {} is not a CRC32", json_quote(d.substr(0, 40))));
      out.has_crc = true;
      out.crc = static_cast<uint32_t>(c);
    }
  }
  auto& entries = out.entries;
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  out.data_start = 8 + header.size();
  const uint64_t data_start = out.data_start;
  const uint64_t data_size = file_size - data_start;
  uint64_t expected = 0;
  for (const Entry& e : entries) {
    if (e.begin != expected)
      throw FormatError(
          fmt::format("{}: invalid safetensors file: tensor '{}' (header byte offset {}) has data at "
                      "byte offset {}, expected {}: the data ranges {} there",
                      path, e.name, e.header_offset, data_start + e.begin, data_start + expected,
                      e.begin < expected ? "overlap" : "leave a gap"));
    expected = e.end;
  }
  if (expected != data_size)
    throw FormatError(
        fmt::format("{}: invalid safetensors file: the header describes {} bytes of data from byte "
                    "offset {} but the file has {}{}",
                    path, expected, data_start, data_size,
                    expected > data_size ? " (truncated file?)" : " (extra bytes at the end)"));
  return out;
}

bool widened(const Entry& e) { return e.dtype->itemsize != kernels::dtype_size(e.dtype->dtype); }

// MindSpore's safetensors CRC: crc32 chained over each tensor's name and
// data bytes, names in sorted order. `data_crcs[i]` is the CRC32 of entry
// i's data alone (entries in data order).
uint32_t layout_crc(const Layout& l, const std::vector<uint32_t>& data_crcs) {
  std::vector<size_t> order(l.entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return l.entries[a].name < l.entries[b].name; });
  uint32_t crc = 0;
  for (size_t i : order) {
    crc = crc32_of(l.entries[i].name, crc);
    crc = crc32_combine_of(crc, data_crcs[i], l.entries[i].end - l.entries[i].begin);
  }
  return crc;
}

void finish(const Layout& l, const std::vector<uint32_t>& data_crcs, const std::string& path, bool* has_crc) {
  if (l.has_crc) check_crc(path, l.crc, layout_crc(l, data_crcs));
  if (has_crc) *has_crc = l.has_crc;
}

}  // namespace

std::vector<NamedTensor> parse_safetensors(std::string_view bytes, const std::string& path, bool* has_crc) {
  uint64_t n = header_length(bytes.substr(0, std::min<size_t>(8, bytes.size())), bytes.size(), path);
  Layout l = read_layout(bytes.substr(8, n), bytes.size(), path);
  std::vector<NamedTensor> out;
  std::vector<uint32_t> crcs;
  out.reserve(l.entries.size());
  for (const Entry& e : l.entries) {
    kernels::Dims shape{std::span<const int64_t>(e.shape)};
    std::string_view data = bytes.substr(l.data_start + e.begin, e.end - e.begin);
    crcs.push_back(l.has_crc ? crc32_of(data) : 0);
    out.push_back(
        {e.name, widened(e) ? int16_tensor_from_bytes(shape, data) : tensor_from_bytes(e.dtype->dtype, shape, data)});
  }
  finish(l, crcs, path, has_crc);
  return out;
}

std::vector<NamedTensor> read_safetensors_file(const InputFile& f, bool* has_crc) {
  // The header is read and checked against the file's size before any
  // data: a huge or sparse file with a bad header costs two small reads.
  std::string first8 = f.read_string(0, static_cast<size_t>(std::min<uint64_t>(8, f.size())));
  uint64_t n = header_length(first8, f.size(), f.path());
  Layout l = read_layout(f.read_string(8, n), f.size(), f.path());
  std::vector<NamedTensor> out;
  std::vector<uint32_t> crcs;
  out.reserve(l.entries.size());
  for (const Entry& e : l.entries) {
    kernels::Dims shape{std::span<const int64_t>(e.shape)};
    uint64_t offset = l.data_start + e.begin;
    size_t len = static_cast<size_t>(e.end - e.begin);
    if (widened(e)) {
      std::string data = f.read_string(offset, len);
      crcs.push_back(l.has_crc ? crc32_of(data) : 0);
      out.push_back({e.name, int16_tensor_from_bytes(shape, data)});
      continue;
    }
    // Straight into the tensor: no second copy of the data in memory.
    kernels::Tensor t(e.dtype->dtype, shape);
    if (len) f.read_at(offset, t.raw(), len);
    auto* p = static_cast<uint8_t*>(t.raw());
    crcs.push_back(l.has_crc ? crc32_of(std::string_view(reinterpret_cast<const char*>(p), len)) : 0);
    if (e.dtype->dtype == DType::Bool)
      for (size_t i = 0; i < len; ++i) p[i] = p[i] != 0;
    out.push_back({e.name, std::move(t)});
  }
  finish(l, crcs, f.path(), has_crc);
  return out;
}

std::string serialize_safetensors(const std::vector<NamedTensor>& tensors,
                                  const std::vector<std::pair<std::string, std::string>>& metadata, bool crc) {
  std::vector<std::pair<std::string, std::string>> meta = metadata;
  if (crc) {
    // MindSpore's CRC (see layout_crc): names in sorted order.
    std::vector<size_t> order(tensors.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors[a].name < tensors[b].name; });
    uint32_t c = 0;
    for (size_t i : order) c = crc32_of(tensor_bytes(tensors[i].tensor), crc32_of(tensors[i].name, c));
    std::erase_if(meta, [](const auto& kv) { return kv.first == "crc_num"; });
    meta.emplace_back("crc_num", std::to_string(c));
  }
  std::string header = "{";
  auto comma = [&] {
    if (header.size() > 1) header += ",";
  };
  if (!meta.empty()) {
    header += "\"__metadata__\":{";
    for (size_t i = 0; i < meta.size(); ++i)
      header += (i ? "," : "") + json_quote(meta[i].first) + ":" + json_quote(meta[i].second);
    header += "}";
  }
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const NamedTensor& nt = tensors[i];
    if (nt.name == "__metadata__") throw FormatError("a tensor cannot be named '__metadata__' in a safetensors file");
    for (size_t j = 0; j < i; ++j)
      if (tensors[j].name == nt.name)
        throw FormatError(fmt::format("duplicate tensor name '{}': safetensors names must be unique", nt.name));
    const char* dt = safetensors_name(nt.tensor.dtype());
    if (!dt)
      throw FormatError(fmt::format("tensor '{}': no safetensors dtype for {}", nt.name,
                                    kernels::dtype_display_name(nt.tensor.dtype())));
    uint64_t end = offset + nt.tensor.nbytes();
    comma();
    header += fmt::format("{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}", json_quote(nt.name), dt,
                          fmt::join(nt.tensor.shape(), ","), offset, end);
    offset = end;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  out.reserve(8 + header.size() + offset);
  out += header;
  for (const NamedTensor& nt : tensors) out += tensor_bytes(nt.tensor);
  return out;
}

}  // namespace msl::checkpoint
