// Unit tests of the checkpoint formats (interp/checkpoint*.cpp) below the
// interpreter: the JSON reader on valid and malformed text, and the two
// parsers on every truncation and on many corruptions of small files, which
// must all end in a FormatError (or, for mutations that keep the file
// valid, a successful parse), never a crash. The script tests in
// tests/ops/checkpoint/ cover the MSL API and the files' exact bytes.
#include "interp/checkpoint.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <random>

using namespace msl::checkpoint;
using msl::kernels::DType;
using msl::kernels::Tensor;

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
    parse(bytes, "f");
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

TEST_CASE("truncations of a .ckpt fail except between parameters") {
  auto tensors = sample_tensors();
  std::string bytes = serialize_ckpt(tensors);
  // The byte lengths of the files holding the first k parameters.
  std::vector<size_t> boundaries;
  for (size_t k = 0; k <= tensors.size(); ++k)
    boundaries.push_back(serialize_ckpt({tensors.begin(), tensors.begin() + static_cast<long>(k)}).size());
  for (size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    bool boundary = std::find(boundaries.begin(), boundaries.end(), n) != boundaries.end();
    CHECK(parses(parse_ckpt, std::string_view(bytes).substr(0, n)) == boundary);
  }
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
  CHECK(!byte_size_of({-1}, 4, n));
  CHECK(!byte_size_of({int64_t(1) << 40, int64_t(1) << 40}, 4, n));
  CHECK(!byte_size_of({1, 1, 1, 1, 1, 1, 1, 1, 1}, 4, n));
  CHECK(valid_utf8("a\xc3\xa9"));
  CHECK(!valid_utf8("\xc0\xaf"));      // overlong '/'
  CHECK(!valid_utf8("\xed\xa0\x80"));  // surrogate
  CHECK(!valid_utf8("\xe2\x82"));      // truncated
}
