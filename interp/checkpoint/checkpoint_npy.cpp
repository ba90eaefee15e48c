// NumPy's array files: .npy (one array) and .npz (a zip archive of
// NAME.npy members, stored by numpy.savez, deflated by savez_compressed).
//
// Reading follows the checkpoint readers' rules: every size the file
// declares (the header length, the shape's byte count, each zip member's
// sizes and offsets) is checked against the bytes actually present before
// anything is allocated or copied, and a problem is a FormatError naming the
// file, the member and the byte offset.
//
// What NumPy may write and MSL reads: bool, int8/16/32/64, uint8, float16/
// 32/64, in either byte order, C or Fortran order. int16 widens to int32
// (MSL has no int16); uint16/32/64, complex, strings and object arrays
// (pickles) are refused by name: MSL never unpickles.
//
// Zip: the central directory is the truth (a local header's sizes may be
// zero when the writer streamed); zip64 sizes and offsets are read from the
// 0x0001 extra fields NumPy's writer always adds. Members are checked with
// their CRC32. Writing produces plain zip (no zip64; a member past 4 GiB is
// an error) that numpy.load and unzip read.
#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>

#include "interp/checkpoint/checkpoint.h"
#include "kernels/npy_file.h"

namespace msl::checkpoint {

using kernels::DType;
using kernels::Tensor;

namespace {

uint16_t le16(std::string_view b, size_t off) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[off]) | static_cast<uint8_t>(b[off + 1]) << 8);
}
uint32_t le32(std::string_view b, size_t off) {
  return static_cast<uint32_t>(le16(b, off)) | static_cast<uint32_t>(le16(b, off + 2)) << 16;
}
uint64_t le64(std::string_view b, size_t off) {
  return static_cast<uint64_t>(le32(b, off)) | static_cast<uint64_t>(le32(b, off + 4)) << 32;
}
void put16(std::string& s, uint32_t v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}

// ------------------------------------------------------------- npy header

// The header's dict literal, as NumPy writes it: string keys, values that
// are a string, True/False, or a tuple of non-negative ints.
struct NpyHeader {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
};

struct HeaderParser {
  std::string_view s;
  size_t i = 0;
  const std::string& where;

  [[noreturn]] void fail(const std::string& what) const {
    throw FormatError(fmt::format("{}: bad .npy header at character {}: {}", where, i, what));
  }
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(fmt::format("expected '{}'", c));
  }
  std::string str() {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) fail("expected a string");
    char q = s[i++];
    size_t start = i;
    while (i < s.size() && s[i] != q) ++i;
    if (i >= s.size()) fail("unterminated string");
    return std::string(s.substr(start, i++ - start));
  }
  int64_t integer() {
    ws();
    size_t start = i;
    int64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      if (v > (INT64_MAX - 9) / 10) fail("dimension too large");
      v = v * 10 + (s[i++] - '0');
    }
    if (i == start) fail("expected a dimension");
    if (i < s.size() && s[i] == 'L') ++i;  // Python 2's long suffix
    return v;
  }
  NpyHeader parse() {
    NpyHeader h;
    bool seen[3] = {};
    expect('{');
    while (!eat('}')) {
      std::string key = str();
      expect(':');
      if (key == "descr") {
        ws();
        if (i < s.size() && s[i] == '[') fail("structured dtypes are not supported");
        h.descr = str();
        seen[0] = true;
      } else if (key == "fortran_order") {
        ws();
        if (s.substr(i, 4) == "True") h.fortran = true, i += 4;
        else if (s.substr(i, 5) == "False") h.fortran = false, i += 5;
        else fail("fortran_order must be True or False");
        seen[1] = true;
      } else if (key == "shape") {
        expect('(');
        while (!eat(')')) {
          h.shape.push_back(integer());
          if (!eat(',')) {
            expect(')');
            break;
          }
        }
        seen[2] = true;
      } else {
        fail(fmt::format("unknown key '{}'", key));
      }
      if (!eat(',')) {
        expect('}');
        break;
      }
    }
    if (!seen[0] || !seen[1] || !seen[2]) fail("'descr', 'fortran_order' and 'shape' are all required");
    return h;
  }
};

// The MSL dtype for a NumPy type string; `swap` for big-endian data,
// `widen16` for int16 (read into int32).
DType dtype_of_descr(const std::string& descr, const std::string& where, bool& swap, bool& widen16) {
  swap = widen16 = false;
  if (descr.find('O') != std::string::npos)
    throw FormatError(fmt::format("{}: an object array (pickled Python objects); MSL does not unpickle", where));
  if (descr.size() < 3) throw FormatError(fmt::format("{}: unknown dtype '{}'", where, descr));
  char order = descr[0];
  std::string code = descr.substr(1);
  if (order == '>' && code != "b1" && code != "i1" && code != "u1") swap = true;
  else if (order != '<' && order != '|' && order != '=' && order != '>')
    throw FormatError(fmt::format("{}: unknown dtype '{}'", where, descr));
  if (code == "b1") return DType::Bool;
  if (code == "i1") return DType::Int8;
  if (code == "u1") return DType::UInt8;
  if (code == "i2") return widen16 = true, DType::Int32;
  if (code == "i4") return DType::Int32;
  if (code == "i8") return DType::Int64;
  if (code == "f2") return DType::Float16;
  if (code == "f4") return DType::Float32;
  if (code == "f8") return DType::Float64;
  throw FormatError(fmt::format("{}: dtype '{}' is not supported (MSL reads bool, int8/16/32/64, uint8, "
                                "float16/32/64)",
                                where, descr));
}

}  // namespace

Tensor parse_npy(std::string_view b, const std::string& where) {
  if (b.size() < 10 || b.substr(0, 6) != std::string_view("\x93NUMPY", 6))
    throw FormatError(fmt::format("{}: not a .npy file (no \\x93NUMPY magic at offset 0)", where));
  int major = static_cast<uint8_t>(b[6]);
  size_t header_len, header_at;
  if (major == 1) {
    header_len = le16(b, 8);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) throw FormatError(fmt::format("{}: truncated .npy header", where));
    header_len = le32(b, 8);
    header_at = 12;
  } else {
    throw FormatError(fmt::format("{}: .npy format version {} is not supported", where, major));
  }
  if (header_len > b.size() - header_at)
    throw FormatError(fmt::format("{}: the header declares {} bytes at offset {}, but the file has {}", where,
                                  header_len, header_at, b.size()));
  NpyHeader h = HeaderParser{b.substr(header_at, header_len), 0, where}.parse();
  bool swap, widen16;
  DType dtype = dtype_of_descr(h.descr, where, swap, widen16);
  size_t itemsize = widen16 ? 2 : kernels::dtype_size(dtype);
  uint64_t nbytes;
  std::string why;
  if (!byte_size_of(h.shape, itemsize, nbytes, &why)) throw FormatError(fmt::format("{}: shape: {}", where, why));
  size_t data_at = header_at + header_len;
  if (nbytes != b.size() - data_at)
    throw FormatError(fmt::format("{}: the shape needs {} data bytes at offset {}, the file has {}", where, nbytes,
                                  data_at, b.size() - data_at));
  std::string data(b.substr(data_at));
  if (swap)
    for (size_t k = 0; k + itemsize <= data.size(); k += itemsize) std::reverse(&data[k], &data[k] + itemsize);
  // Fortran order: the bytes are the transpose's C order.
  kernels::Dims stored;
  for (size_t k = 0; k < h.shape.size(); ++k) stored.push_back(h.shape[h.fortran ? h.shape.size() - 1 - k : k]);
  Tensor t = widen16 ? int16_tensor_from_bytes(stored, data) : tensor_from_bytes(dtype, stored, data);
  if (!h.fortran || t.ndim() < 2) return t;
  kernels::Dims shape, strides;
  kernels::Dims cs = kernels::contiguous_strides(stored);
  for (int k = t.ndim() - 1; k >= 0; --k) {
    shape.push_back(stored[k]);
    strides.push_back(cs[k]);
  }
  return Tensor::view(t, shape, strides, 0).contiguous();
}

std::string serialize_npy(const Tensor& t) { return kernels::encode_npy(t); }

// ------------------------------------------------------------------ .npz

std::vector<NamedTensor> parse_npz(std::string_view b, const std::string& path) {
  // End of central directory: the last "PK\5\6" within 64 KiB + 22 bytes of the end.
  if (b.size() < 22) throw FormatError(fmt::format("{}: not a .npz file (too short for a zip archive)", path));
  size_t eocd = std::string::npos;
  size_t lowest = b.size() > 65557 ? b.size() - 65557 : 0;
  for (size_t k = b.size() - 22 + 1; k-- > lowest;)
    if (le32(b, k) == 0x06054b50) {
      eocd = k;
      break;
    }
  if (eocd == std::string::npos)
    throw FormatError(fmt::format("{}: not a .npz file (no zip end-of-central-directory record)", path));
  uint64_t count = le16(b, eocd + 10), cd_size = le32(b, eocd + 12), cd_at = le32(b, eocd + 16);
  // Zip64: a locator just before the record points at the zip64 record.
  if (eocd >= 20 && le32(b, eocd - 20) == 0x07064b50) {
    uint64_t z64 = le64(b, eocd - 12);
    if (z64 > b.size() || b.size() - z64 < 56 || le32(b, z64) != 0x06064b50)
      throw FormatError(fmt::format("{}: bad zip64 end-of-central-directory record at offset {}", path, z64));
    count = le64(b, z64 + 32);
    cd_size = le64(b, z64 + 40);
    cd_at = le64(b, z64 + 48);
  }
  if (cd_at > b.size() || cd_size > b.size() - cd_at)
    throw FormatError(fmt::format("{}: the central directory (offset {}, {} bytes) lies past the end of the file",
                                  path, cd_at, cd_size));
  std::vector<NamedTensor> out;
  size_t p = cd_at, end = cd_at + cd_size;
  for (uint64_t e = 0; e < count; ++e) {
    if (end - p < 46 || le32(b, p) != 0x02014b50)
      throw FormatError(fmt::format("{}: bad central directory entry at offset {}", path, p));
    uint16_t flags = le16(b, p + 8), method = le16(b, p + 10);
    uint32_t crc = le32(b, p + 16);
    uint64_t csize = le32(b, p + 20), usize = le32(b, p + 24), local = le32(b, p + 42);
    size_t name_len = le16(b, p + 28), extra_len = le16(b, p + 30), comment_len = le16(b, p + 32);
    if (end - p - 46 < name_len + extra_len + comment_len)
      throw FormatError(fmt::format("{}: central directory entry at offset {} runs past the directory", path, p));
    std::string name(b.substr(p + 46, name_len));
    // Zip64 extra field: the 0xffffffff fields, in the order usize, csize, offset.
    for (size_t x = p + 46 + name_len, xend = x + extra_len; xend - x >= 4;) {
      uint16_t id = le16(b, x), len = le16(b, x + 2);
      if (xend - x - 4 < len) break;
      if (id == 0x0001) {
        size_t f = x + 4, fend = f + len;
        auto take = [&](uint64_t& v) {
          if (v == 0xffffffffu && fend - f >= 8) v = le64(b, f), f += 8;
        };
        take(usize);
        take(csize);
        take(local);
      }
      x += 4 + len;
    }
    p += 46 + name_len + extra_len + comment_len;
    std::string where = fmt::format("{}: member '{}'", path, name);
    if (flags & 1) throw FormatError(where + ": encrypted members are not supported");
    if (method != 0 && method != 8)
      throw FormatError(fmt::format("{}: compression method {} is not supported (stored or deflate)", where, method));
    if (local > b.size() || b.size() - local < 30 || le32(b, local) != 0x04034b50)
      throw FormatError(fmt::format("{}: no local header at offset {}", where, local));
    uint64_t data_at = local + 30 + le16(b, local + 26) + le16(b, local + 28);
    if (data_at > b.size() || csize > b.size() - data_at)
      throw FormatError(fmt::format("{}: {} data bytes at offset {} run past the end of the file ({} bytes)", where,
                                    csize, data_at, b.size()));
    std::string_view raw = b.substr(data_at, csize);
    std::string inflated;
    if (method == 8) {
      // The declared size bounds the output, so a zip bomb is cut off at it.
      if (usize > (uint64_t(1) << 40)) throw FormatError(fmt::format("{}: declares {} bytes", where, usize));
      inflated.resize(usize);
      z_stream zs{};
      if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) throw FormatError(where + ": zlib initialization failed");
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
      zs.avail_in = static_cast<uInt>(raw.size());
      zs.next_out = reinterpret_cast<Bytef*>(inflated.data());
      zs.avail_out = static_cast<uInt>(inflated.size());
      int rc = inflate(&zs, Z_FINISH);
      size_t produced = zs.total_out;
      inflateEnd(&zs);
      if (rc != Z_STREAM_END || produced != usize)
        throw FormatError(fmt::format("{}: the deflated data is corrupt or not {} bytes long", where, usize));
    } else {
      if (csize != usize) throw FormatError(fmt::format("{}: stored member with sizes {} and {}", where, csize, usize));
      inflated.assign(raw);
    }
    if (crc32_of(inflated) != crc)
      throw FormatError(fmt::format("{}: CRC32 mismatch (the archive is corrupt)", where));
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0) name.resize(name.size() - 4);
    out.push_back({name, parse_npy(inflated, where)});
  }
  return out;
}

std::string serialize_npz(const std::vector<NamedTensor>& tensors, bool compress) {
  if (tensors.size() > 0xffff) throw FormatError(fmt::format("{} arrays: a .npz holds at most 65535", tensors.size()));
  std::string out, central;
  for (const NamedTensor& nt : tensors) {
    std::string name = nt.name + ".npy";
    std::string data = kernels::encode_npy(nt.tensor);
    uint32_t crc = crc32_of(data);
    std::string stored = data;
    uint16_t method = 0;
    if (compress) {
      z_stream zs{};
      if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw FormatError("savez_compressed: zlib initialization failed");
      stored.resize(deflateBound(&zs, static_cast<uLong>(data.size())));
      zs.next_in = reinterpret_cast<Bytef*>(data.data());
      zs.avail_in = static_cast<uInt>(data.size());
      zs.next_out = reinterpret_cast<Bytef*>(stored.data());
      zs.avail_out = static_cast<uInt>(stored.size());
      int rc = deflate(&zs, Z_FINISH);
      stored.resize(zs.total_out);
      deflateEnd(&zs);
      if (rc != Z_STREAM_END) throw FormatError("savez_compressed: deflate failed");
      method = 8;
    }
    if (data.size() >= 0xffffffffu || out.size() >= 0xffffffffu)
      throw FormatError(fmt::format("'{}': .npz members and archives past 4 GiB are not supported", nt.name));
    uint32_t local = static_cast<uint32_t>(out.size());
    auto header = [&](std::string& s, bool central_entry) {
      put32(s, central_entry ? 0x02014b50 : 0x04034b50);
      if (central_entry) put16(s, 20);  // made by: version 2.0
      put16(s, 20);                     // needed to extract
      put16(s, 0);                      // flags
      put16(s, method);
      put16(s, 0);       // time
      put16(s, 0x21);    // date: 1980-01-01
      put32(s, crc);
      put32(s, static_cast<uint32_t>(stored.size()));
      put32(s, static_cast<uint32_t>(data.size()));
      put16(s, static_cast<uint32_t>(name.size()));
      put16(s, 0);  // extra
      if (central_entry) {
        put16(s, 0);  // comment
        put16(s, 0);  // disk
        put16(s, 0);  // internal attributes
        put32(s, 0);  // external attributes
        put32(s, local);
      }
      s += name;
    };
    header(out, false);
    out += stored;
    header(central, true);
  }
  uint32_t cd_at = static_cast<uint32_t>(out.size());
  out += central;
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, static_cast<uint32_t>(tensors.size()));
  put16(out, static_cast<uint32_t>(tensors.size()));
  put32(out, static_cast<uint32_t>(central.size()));
  put32(out, cd_at);
  put16(out, 0);
  return out;
}

}  // namespace msl::checkpoint
