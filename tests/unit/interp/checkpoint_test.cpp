// Unit tests of the checkpoint formats (interp/checkpoint/checkpoint*.cpp) below the
// interpreter: the JSON reader on valid and malformed text, and the two
// parsers on every truncation and on many corruptions of small files, which
// must all end in a FormatError (or, for mutations that keep the file
// valid, a successful parse), never a crash; MindSpore's CRC; the file
// layer's refusal of non-regular files and of huge sparse files before
// reading them, and its clean-up of temporary files. The script tests in
// tests/ops/checkpoint/ cover the MSL API and the files' exact bytes.
#include "../temp_dir.h"
#include "interp/checkpoint/checkpoint.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

using namespace msl::checkpoint;
using msl::kernels::DType;
using msl::kernels::Tensor;

using msl::test::TempDir;

namespace {

std::vector<NamedTensor> sample_tensors() {
  Tensor a(DType::Float32, {2, 2});
  float av[] = {1.0f, -2.0f, 0.5f, 4.0f};
  std::memcpy(a.raw(), av, sizeof av);
  Tensor b(DType::Int64, {});
  int64_t bv = -300;
  std::memcpy(b.raw(), &bv, 8);
  Tensor c(DType::Bool, {3});
  uint8_t cv[] = {1, 0, 1};
  std::memcpy(c.raw(), cv, 3);
  return {{"layer.weight", a}, {"step", b}, {"mask", c}};
}

// Parses `bytes`; true when it parsed, false on FormatError. Anything else
// (another exception type, a crash under the sanitizers) fails the test.
template <class Parse>
bool parses(Parse parse, std::string_view bytes) {
  try {
    parse(bytes, "f", nullptr);
    return true;
  } catch (const FormatError&) {
    return false;
  }
}

}  // namespace

TEST_CASE("json: values, order, escapes, offsets") {
  Json j = parse_json(R"( {"b": [1, -2, 3.5e1, true, null], "a": "x\u00e9\ud83d\ude00\n"} )");
  REQUIRE(j.type == Json::Type::Object);
  REQUIRE(j.members.size() == 2);
  CHECK(j.members[0].first == "b");  // file order, not sorted
  const Json& arr = j.members[0].second;
  REQUIRE(arr.items.size() == 5);
  CHECK(arr.items[0].is_int);
  CHECK(arr.items[1].integer == -2);
  CHECK(!arr.items[2].is_int);
  CHECK(arr.items[2].number == 35.0);
  CHECK(arr.items[3].boolean);
  CHECK(arr.items[4].type == Json::Type::Null);
  CHECK(j.members[1].second.str == "x\xc3\xa9\xf0\x9f\x98\x80\n");
  CHECK(j.members[1].second.offset == 40);
  CHECK(parse_json("9223372036854775807").is_int);
  CHECK(!parse_json("9223372036854775808").is_int);  // too big for int64: a double
  CHECK(json_quote("a\"\\\x01") == "\"a\\\"\\\\\\u0001\"");
}

TEST_CASE("json: malformed input is a JsonError at the right offset") {
  struct Case {
    const char* text;
    size_t offset;
  };
  Case cases[] = {
      {"", 0},        {"{", 1},           {"{\"a\" 1}", 5},   {"[1,]", 3},
      {"[1 2]", 3},   {"01", 1},          {"-", 1},           {"1.", 2},
      {"1e", 2},      {"tru", 0},         {"\"abc", 0},       {"\"a\x01\"", 2},
      {"\"\\x\"", 3}, {"\"\\u12g4\"", 6}, {"\"\\udc00\"", 7}, {"{\"a\":1,\"a\":2}", 7},
      {"[] x", 3},    {"\"\xff\"", 0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    try {
      parse_json(c.text);
      FAIL("parsed");
    } catch (const JsonError& e) {
      CHECK(e.offset == c.offset);
    }
  }
  std::string deep(65, '[');
  CHECK_THROWS_AS(parse_json(deep + std::string(65, ']')), JsonError);
  std::string ok(64, '[');
  CHECK_NOTHROW(parse_json(ok + std::string(64, ']')));
}

TEST_CASE("json: random byte strings never crash the reader") {
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]\":,0123456789-.eE+tfnrulas\\u ";
  for (int i = 0; i < 20000; ++i) {
    std::string s(rng() % 24, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    try {
      parse_json(s);
    } catch (const JsonError& e) {
      CHECK(e.offset <= s.size());
    }
  }
}

TEST_CASE("round trips in memory keep names, order, dtypes and bytes") {
  auto tensors = sample_tensors();
  for (int fmt = 0; fmt < 2; ++fmt) {
    std::string bytes = fmt ? serialize_safetensors(tensors, {{"k", "v"}}) : serialize_ckpt(tensors);
    auto back = fmt ? parse_safetensors(bytes, "f") : parse_ckpt(bytes, "f");
    REQUIRE(back.size() == tensors.size());
    for (size_t i = 0; i < back.size(); ++i) {
      CHECK(back[i].name == tensors[i].name);
      CHECK(back[i].tensor.dtype() == tensors[i].tensor.dtype());
      CHECK(back[i].tensor.shape().vec() == tensors[i].tensor.shape().vec());
      CHECK(tensor_bytes(back[i].tensor) == tensor_bytes(tensors[i].tensor));
    }
  }
}

TEST_CASE("every truncation of a safetensors file is a FormatError") {
  std::string bytes = serialize_safetensors(sample_tensors(), {});
  for (size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    CHECK(!parses(parse_safetensors, std::string_view(bytes).substr(0, n)));
  }
}

// Every prefix of `bytes`, a .ckpt of `tensors` (with or without a CRC),
// fails to parse, except the files of the first k parameters, which the
// format cannot tell from a cut.
static void check_cuts_fail_except_between_parameters(const std::vector<NamedTensor>& tensors,
                                                      const std::string& bytes) {
  std::vector<size_t> boundaries;
  for (size_t k = 0; k <= tensors.size(); ++k)
    boundaries.push_back(serialize_ckpt({tensors.begin(), tensors.begin() + static_cast<long>(k)}).size());
  for (size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    bool boundary = std::find(boundaries.begin(), boundaries.end(), n) != boundaries.end();
    CHECK(parses(parse_ckpt, std::string_view(bytes).substr(0, n)) == boundary);
  }
}

TEST_CASE("truncations of a .ckpt fail except between parameters") {
  auto tensors = sample_tensors();
  check_cuts_fail_except_between_parameters(tensors, serialize_ckpt(tensors));
}

TEST_CASE("corrupted files parse or fail cleanly") {
  std::mt19937 rng(11);
  for (int fmt = 0; fmt < 2; ++fmt) {
    std::string good = fmt ? serialize_safetensors(sample_tensors(), {}) : serialize_ckpt(sample_tensors());
    for (int i = 0; i < 5000; ++i) {
      std::string bad = good;
      int flips = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < flips; ++k) bad[rng() % bad.size()] = static_cast<char>(rng());
      if (fmt)
        parses(parse_safetensors, bad);
      else
        parses(parse_ckpt, bad);
    }
    for (int i = 0; i < 2000; ++i) {  // random garbage of random length
      std::string junk(rng() % 64, '\0');
      for (char& c : junk) c = static_cast<char>(rng());
      if (fmt)
        parses(parse_safetensors, junk);
      else
        parses(parse_ckpt, junk);
    }
  }
}

TEST_CASE("byte_size_of rejects negative, overflowing and too many dims") {
  uint64_t n = 0;
  CHECK(byte_size_of({2, 3}, 4, n));
  CHECK(n == 24);
  CHECK(byte_size_of({}, 8, n));
  CHECK(n == 8);
  std::string why;
  CHECK(!byte_size_of({3, -1}, 4, n, &why));
  CHECK(why == "dimension 1 is -1");
  CHECK(!byte_size_of({int64_t(1) << 40, int64_t(1) << 40}, 4, n, &why));
  CHECK(why == "its size, 4 x 1099511627776 x 1099511627776 bytes, overflows 64 bits");
  CHECK(!byte_size_of({1, 1, 1, 1, 1, 1, 1, 1, 1}, 4, n, &why));
  CHECK(why == "9 dimensions, more than MSL's 8");
  // An empty tensor has no bytes, but its other dimensions may not multiply
  // past 2^40, the most elements a tensor has (its constructor refuses more).
  CHECK(byte_size_of({int64_t(1) << 40, 0}, 4, n));
  CHECK(n == 0);
  CHECK(byte_size_of({0, int64_t(1) << 40}, 4, n));
  CHECK(n == 0);
  CHECK(!byte_size_of({int64_t(1) << 40, int64_t(1) << 40, 0}, 4, n, &why));
  CHECK(why == "its dimensions other than 0 multiply to more than 2^40, the most elements a tensor can have");
  CHECK(!byte_size_of({0, int64_t(1) << 41}, 4, n, &why));
  CHECK(valid_utf8("a\xc3\xa9"));
  CHECK(!valid_utf8("\xc0\xaf"));      // overlong '/'
  CHECK(!valid_utf8("\xed\xa0\x80"));  // surrogate
  CHECK(!valid_utf8("\xe2\x82"));      // truncated
}

namespace {

std::string varint(uint64_t v) {
  std::string s;
  do {
    s += static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return s;
}

// A protobuf field of wire type 2 (bytes, a nested message).
std::string field(int number, const std::string& bytes) {
  return static_cast<char>(number << 3 | 2) + varint(bytes.size()) + bytes;
}

}  // namespace

// An empty tensor whose other dimensions exceed a tensor's 2^40 elements
// used to pass the size checks (it has no bytes) and reach the tensor's
// constructor, whose ShapeError named no file and was no FormatError.
TEST_CASE("an empty tensor with absurd dimensions is a FormatError naming the file") {
  std::string json = R"({"w":{"dtype":"F32","shape":[2199023255552,0],"data_offsets":[0,0]}})";
  std::string st(8, '\0');
  uint64_t n = json.size();
  std::memcpy(st.data(), &n, 8);
  st += json;
  CHECK_THROWS_WITH_AS(parse_safetensors(st, "f.safetensors"),
                       doctest::Contains("f.safetensors: invalid safetensors header at byte offset"), FormatError);
  std::string dims = "\x08" + varint(uint64_t(1) << 41) + "\x08" + varint(0);
  std::string tensor = dims + field(2, "Float32") + field(3, "");
  std::string ckpt = field(1, field(1, "w") + field(2, tensor));
  CHECK_THROWS_WITH_AS(parse_ckpt(ckpt, "f.ckpt"), doctest::Contains("f.ckpt: parameter 'w' has an invalid shape"),
                       FormatError);
  // The same with the large dimension after the 0 loads (an empty tensor).
  std::string ok_dims = "\x08" + varint(0) + "\x08" + varint(uint64_t(1) << 40);
  std::vector<NamedTensor> t = parse_ckpt(field(1, field(1, "w") + field(2, ok_dims + field(2, "Float32") + field(3, ""))), "f.ckpt");
  REQUIRE(t.size() == 1);
  CHECK(t[0].tensor.numel() == 0);
}

// Found by fuzzing (tests/fuzz/corpus_ckpt): a checkpoint saved without a
// CRC whose last tensor's data ended in "crc_num" and 10 bytes was taken for
// one with MindSpore's CRC trailer, and failed to load ("the crc check
// failed"). Those bytes are data when the records run through them.
TEST_CASE("a .ckpt whose last tensor's data ends like a CRC trailer loads as it was saved") {
  for (std::string tail : {std::string("crc_num") + std::string(10, '\xf5'),          // not a CRC32
                           std::string("crc_num") + std::string(6, '\0') + "\x12\x34\x56\x78"}) {  // a wrong CRC32
    Tensor t(DType::UInt8, {static_cast<int64_t>(tail.size()) + 3});
    std::memcpy(static_cast<char*>(t.raw()) + 3, tail.data(), tail.size());
    std::memset(t.raw(), 7, 3);
    std::vector<NamedTensor> saved = sample_tensors();
    saved.push_back({"last", t});
    std::string bytes = serialize_ckpt(saved);
    REQUIRE(bytes.substr(bytes.size() - tail.size()) == tail);
    bool has_crc = true;
    std::vector<NamedTensor> back = parse_ckpt(bytes, "f.ckpt", &has_crc);
    CHECK_FALSE(has_crc);
    REQUIRE(back.size() == saved.size());
    CHECK(tensor_bytes(back.back().tensor) == tensor_bytes(t));
    // With a real CRC after it, the trailer is found and verified.
    std::string with_crc = serialize_ckpt(saved, true);
    CHECK(parse_ckpt(with_crc, "f.ckpt", &has_crc).size() == saved.size());
    CHECK(has_crc);
    with_crc[with_crc.size() - 18] ^= 1;  // the last data byte
    CHECK_THROWS_WITH_AS(parse_ckpt(with_crc, "f.ckpt"), doctest::Contains("the crc check failed"), FormatError);
  }
}

TEST_CASE("a CRC round-trips, is verified, and every cut but record boundaries fails") {
  auto tensors = sample_tensors();
  for (int fmt = 0; fmt < 2; ++fmt) {
    std::string bytes = fmt ? serialize_safetensors(tensors, {}, true) : serialize_ckpt(tensors, true);
    bool has_crc = false;
    auto back = fmt ? parse_safetensors(bytes, "f", &has_crc) : parse_ckpt(bytes, "f", &has_crc);
    CHECK(has_crc);
    CHECK(back.size() == tensors.size());
    std::string plain = fmt ? serialize_safetensors(tensors, {}) : serialize_ckpt(tensors);
    fmt ? parse_safetensors(plain, "f", &has_crc) : parse_ckpt(plain, "f", &has_crc);
    CHECK(!has_crc);
    // Any byte changed: a FormatError (CRC or format), or, where the flip
    // hit the CRC's own marking ("crc_num"), a file without a CRC that
    // parses to exactly the original tensors. Never other values.
    for (size_t i = 0; i < bytes.size(); ++i) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(bad[i] ^ 0x10);
      CAPTURE(i);
      try {
        auto r = fmt ? parse_safetensors(bad, "f", &has_crc) : parse_ckpt(bad, "f", &has_crc);
        CHECK(!has_crc);
        REQUIRE(r.size() == tensors.size());
        for (size_t k = 0; k < r.size(); ++k) {
          CHECK(r[k].name == tensors[k].name);
          CHECK(tensor_bytes(r[k].tensor) == tensor_bytes(tensors[k].tensor));
        }
      } catch (const FormatError&) {
      }
    }
  }
  check_cuts_fail_except_between_parameters(tensors, serialize_ckpt(tensors, true));
}

namespace {

namespace fs = std::filesystem;

std::string read_error(const std::string& path) {
  try {
    read_checkpoint(path);
  } catch (const FormatError& e) {
    return e.what();
  } catch (const SystemError& e) {
    return "errno " + std::to_string(e.err);
  }
  return "read";
}

long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

TEST_CASE("only regular files are read: a FIFO, a device, a folder are errors at once") {
  TempDir dir;
  REQUIRE(::mkfifo((dir / "pipe.ckpt").c_str(), 0600) == 0);  // open() would block on it
  CHECK(read_error(dir / "pipe.ckpt") ==
        dir / "pipe.ckpt" + ": not a regular file (a FIFO); a checkpoint must be a regular file");
  fs::create_symlink("/dev/zero", dir / "zero.safetensors");  // would never end
  CHECK(read_error(dir / "zero.safetensors") ==
        dir / "zero.safetensors" + ": not a regular file (a character device); a checkpoint must be a regular file");
  fs::create_directory(dir / "d.ckpt");
  CHECK(read_error(dir / "d.ckpt") == "errno " + std::to_string(EISDIR));
  CHECK_THROWS_AS(read_whole_file(dir / "pipe.ckpt"), FormatError);
}

TEST_CASE("huge sparse files fail from their headers, without being read") {
  TempDir dir;
  auto sparse = [&](const char* name, uint64_t size, const std::string& head) {
    std::string p = dir / name;
    std::ofstream(p, std::ios::binary) << head;
    REQUIRE(::truncate(p.c_str(), static_cast<off_t>(size)) == 0);
    return p;
  };
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  // A header that claims 3 GiB of data in a file that is all zeros after it.
  std::string header = R"({"w":{"dtype":"U8","shape":[3221225472],"data_offsets":[0,3221225472]}})";
  std::string head(8, '\0');
  uint64_t n = header.size();
  std::memcpy(head.data(), &n, 8);
  long before = peak_rss_kb();
  auto start = std::chrono::steady_clock::now();
  std::string st = sparse("big.safetensors", 2 * kGiB, head + header);
  CHECK(read_error(st).find(
            "describes 3221225472 bytes of data from byte offset 79 but the file has 2147483569 (truncated file?)") !=
        std::string::npos);
  std::string zeros = sparse("zeros.safetensors", 2 * kGiB, "");
  CHECK(read_error(zeros).find("invalid safetensors header at byte offset 8") != std::string::npos);
  std::string ck = sparse("zeros.ckpt", kGiB + kGiB / 2, "");
  CHECK(read_error(ck) ==
        "not a MindSpore checkpoint (protobuf parse failed): " + ck + ": invalid protobuf field at byte offset 0");
  // A record that claims more than the file holds: the framing says so.
  std::string rec = sparse("cut.ckpt", kGiB, std::string("\x0a\xff\xff\xff\xff\x07", 6));
  CHECK(read_error(rec).find("record 1 at byte offset 0 declares 2147483647 bytes") != std::string::npos);
  std::string huge = sparse("huge.ckpt", 3 * kGiB, "");
  CHECK(read_error(huge).find("larger than a protobuf checkpoint can be") != std::string::npos);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 5.0);
  CHECK(peak_rss_kb() - before < 64 * 1024);  // nothing near the files' sizes was allocated
}

TEST_CASE("stale temporary files are removed; locked ones and other files are kept") {
  TempDir dir;
  auto touch = [&](const char* name) { std::ofstream(dir / name) << "x"; };
  touch(".m.ckpt.tmp-AbC123");  // a killed writer's
  touch(".m.ckpt.tmp-LiVe12");  // a live writer's (locked below)
  touch(".other.ckpt.tmp-XyZ789");
  touch("m.ckpt.tmp-AbC123");  // not a temporary name (no leading dot)
  int fd = ::open((dir / ".m.ckpt.tmp-LiVe12").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  CHECK(!remove_stale_temp_file(dir / "m.ckpt.tmp-AbC123"));
  CHECK(!remove_stale_temp_file(dir / ".m.ckpt.tmp-LiVe12"));
  // A save of m.ckpt removes its own stale temporary files only.
  write_file_atomically(dir / "m.ckpt", "data");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{".m.ckpt.tmp-LiVe12", ".other.ckpt.tmp-XyZ789", "m.ckpt", "m.ckpt.tmp-AbC123"});
  ::close(fd);  // the writer is gone: now it is stale
  CHECK(remove_stale_temp_file(dir / ".m.ckpt.tmp-LiVe12"));
  CHECK(remove_stale_temp_file(dir / ".other.ckpt.tmp-XyZ789"));
  CHECK(!fs::exists(dir / ".m.ckpt.tmp-LiVe12"));
}

TEST_CASE("first_non_finite finds NaN and infinity in every floating dtype and ignores integers") {
  auto one = [](DType d, uint64_t bits, size_t size) {
    Tensor t(d, {2});
    std::memset(t.raw(), 0, 2 * size);
    std::memcpy(static_cast<char*>(t.raw()) + size, &bits, size);
    return t;
  };
  CHECK(first_non_finite({{"ok", one(DType::Float32, 0x3f800000, 4)}}) == nullptr);
  CHECK(*first_non_finite({{"ok", one(DType::Float32, 0x3f800000, 4)}, {"inf", one(DType::Float32, 0x7f800000, 4)}}) ==
        "inf");
  CHECK(*first_non_finite({{"nan", one(DType::Float64, 0x7ff8000000000001ull, 8)}}) == "nan");
  CHECK(*first_non_finite({{"h", one(DType::Float16, 0xfc00, 2)}}) == "h");     // -inf
  CHECK(first_non_finite({{"h", one(DType::Float16, 0x7bff, 2)}}) == nullptr);  // 65504
  CHECK(*first_non_finite({{"b", one(DType::BFloat16, 0x7fc0, 2)}}) == "b");
  CHECK(first_non_finite({{"i", one(DType::Int32, 0x7f800000, 4)}}) == nullptr);
}
