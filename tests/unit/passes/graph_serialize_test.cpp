// Flat graphs of primitives as bytes and back (jit/graph_serialize.h): a
// fused graph holding every kind of constant prints the same after a round
// trip and computes the same on the debug-mode executor; truncated or
// damaged bytes at every offset are an error (or, for a flipped payload
// byte the format cannot tell, still a valid graph), never a crash; graphs
// that are not flat are refused with the reason; a fused loop's lane
// pattern reads back, a malformed one is refused.
#include "jit/graph_serialize.h"

#include <doctest/doctest.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <random>

#include "../specialize/spec_test_util.h"
#include "jit/exec/executor.h"
#include "jit/codegen/object_cache.h"
#include "jit/passes/fuse_elementwise.h"

using namespace msl;
using namespace msl::jit;
using jit::test::f32;
using jit::test::Parsed;
using kernels::Dims;
using kernels::DType;
using kernels::Tensor;

namespace {

// relu(x * y + c) fuses into one loop; the rest is kernels with attributes
// of every kind (ints, bool, float, dtype, int) and a tuple of constants of
// every scalar kind.
const char* kProgram = R"(subgraph @step(%para1_x, %para2_y) {
  %0 = mul(%para1_x, %para2_y)
  %1 = add(%0, Tensor[Float32](3)[0.5, -1.0, 2.0])
  %2 = relu(%1)
  %3 = reduce_sum[axes=(1,), keep_dims=True](%2)
  %4 = cast[dtype=Float64](%3)
  %5 = pad[paddings=(0, 0, 0, 1), value=0.25](%4)
  %6 = argmax[axis=1, keep_dims=False](%para1_x)
  %7 = make_tuple(%2, %5, %6, "label", None, True, 7, 2.5)
  return(%7)
}
)";

Tensor input(uint32_t seed, const Dims& shape) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2, 2);
  Tensor t(DType::Float32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// The fused, specialized program above: its graph lives in `p.m`.
struct Fused {
  Parsed p{kProgram};
  Specialized s;
  Fused() {
    s = p.run({f32({4, 3}), f32({4, 3})});
    REQUIRE(run_fuse_elementwise(p.m, s) == 1);
  }
};

// Every value of a result tuple, compared exactly (same program, same loop).
void check_same(const exec::RtValue& a, const exec::RtValue& b) {
  REQUIRE(a.is<exec::RtTuple>());
  REQUIRE(b.is<exec::RtTuple>());
  REQUIRE(a.tuple().size() == b.tuple().size());
  for (size_t i = 0; i < a.tuple().size(); ++i) {
    INFO("item " << i);
    const exec::RtValue &x = a.tuple()[i], &y = b.tuple()[i];
    if (auto t = x.get_if<Tensor>()) {
      REQUIRE(y.get_if<Tensor>());
      const Tensor& u = *y.get_if<Tensor>();
      REQUIRE(t->dtype() == u.dtype());
      REQUIRE(t->shape() == u.shape());
      for (int64_t k = 0; k < t->numel(); ++k) CHECK(t->item_at(k) == u.item_at(k));
    } else {
      CHECK(exec::to_string(x) == exec::to_string(y));
    }
  }
}

// Executor options that run fused loops (as the interpreter's host calls do).
exec::ExecOptions fused_calls() {
  exec::ExecOptions o;
  o.call_host = [](const ir::HostRef& h, std::vector<exec::RtValue> args) -> exec::RtValue {
    auto fused = dynamic_cast<const FusedElementwise*>(h.get());
    REQUIRE(fused);
    std::vector<Tensor> ins;
    for (exec::RtValue& a : args) ins.push_back(*a.get_if<Tensor>());
    std::vector<Tensor> outs = fused->run(ins);
    REQUIRE(outs.size() == 1);
    return exec::RtValue(outs[0]);
  };
  return o;
}

}  // namespace

TEST_CASE("a fused graph with every kind of constant round-trips and computes the same") {
  Fused f;
  std::string text = ir::print_graph(*f.s.graph);
  CHECK(text.find("$fused_elementwise_3ops") != std::string::npos);
  std::string why;
  std::optional<std::string> bytes = serialize_graph(*f.s.graph, &why);
  REQUIRE_MESSAGE(bytes, why);

  ir::IrModule m2;
  std::string error;
  ir::FuncGraph* g2 = deserialize_graph(m2, *bytes, &error);
  REQUIRE_MESSAGE(g2, error);
  CHECK(ir::print_graph(*g2) == text);
  CHECK(serialize_graph(*g2) == bytes);  // a fixed point: nothing lost or reordered

  Tensor x = input(1, {4, 3}), y = input(2, {4, 3});
  exec::RtValue before = exec::run_graph(*f.s.graph, {exec::RtValue(x), exec::RtValue(y)}, fused_calls());
  exec::RtValue after = exec::run_graph(*g2, {exec::RtValue(x), exec::RtValue(y)}, fused_calls());
  check_same(before, after);
  // The fused loop's value against a float64 reference of relu(x * y + c).
  const Tensor& r = *after.tuple()[0].get_if<Tensor>();
  const double c[3] = {0.5, -1.0, 2.0};
  for (int64_t i = 0; i < 12; ++i) {
    double want = std::max(0.0, double(x.data<float>()[i]) * y.data<float>()[i] + c[i % 3]);
    CHECK(r.item_at(i) == doctest::Approx(want).epsilon(1e-6));
  }
}

namespace {

// `p` written and read back: the whole of the bytes read, the same text and
// sums, and every truncation of the bytes refused.
codegen::EwProgram read_back(const codegen::EwProgram& p) {
  std::string bytes;
  write_ew_program(bytes, p);
  size_t pos = 0;
  codegen::EwProgram q;
  REQUIRE(parse_ew_program(bytes, pos, q));
  CHECK(pos == bytes.size());
  CHECK(q.text() == p.text());
  CHECK(q.reductions == p.reductions);
  for (size_t n = 0; n < bytes.size(); ++n) {
    size_t at = 0;
    codegen::EwProgram cut;
    CHECK_FALSE(parse_ew_program(std::string_view(bytes).substr(0, n), at, cut));
  }
  return q;
}

// Whether the bytes of `p` read back (validate_program runs on reading).
bool parses(const codegen::EwProgram& p) {
  std::string bytes;
  write_ew_program(bytes, p);
  size_t pos = 0;
  codegen::EwProgram q;
  return parse_ew_program(bytes, pos, q);
}

}  // namespace

TEST_CASE("an EwProgram's bytes (two outputs, a sum) read back field for field; bad operands are refused") {
  codegen::EwProgram p;
  int a = p.input(0), b = p.input(1, {3, 4});
  int t = p.unary(codegen::EwOp::Tanh, a);  // value 2
  int c = p.constant(1.5f);
  int m = p.binary(codegen::EwOp::Mul, b, c);
  p.outputs = {p.binary(codegen::EwOp::Max, t, m), t};
  p.reductions = {codegen::EwReduction{m, {3, 4}}};
  codegen::EwProgram q = read_back(p);
  CHECK(q.outputs == p.outputs);
  // An operand that is not an earlier value (value 2, tanh, reading value 5).
  codegen::EwProgram bad = p;
  bad.values[2].a = 5;
  CHECK_FALSE(parses(bad));
}

// Found by fuzzing (tests/fuzz/corpus_graph_cache): an input count costs no
// bytes, and a program declaring 2^31 - 1 inputs kept validation looping
// over them (the fuzzer's 10 s limit, minutes here) before it was accepted.
TEST_CASE("an EwProgram declaring more inputs than it has values is refused at once") {
  codegen::EwProgram p;
  p.outputs = {p.unary(codegen::EwOp::Tanh, p.input(0))};
  std::string bytes;
  write_ew_program(bytes, p);
  int32_t count = INT32_MAX;
  std::memcpy(bytes.data(), &count, 4);  // num_inputs comes first
  size_t pos = 0;
  codegen::EwProgram q;
  auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(parse_ew_program(bytes, pos, q));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  count = 2;  // as many inputs as values (one unread): still a program
  std::memcpy(bytes.data(), &count, 4);
  pos = 0;
  CHECK(parse_ew_program(bytes, pos, q));
  CHECK(q.num_inputs == 2);
}

TEST_CASE("an EwProgram's lane patterns read back; a lane that does not divide inner is refused") {
  // A channel-blocked scale [1, 4, 1, 1, 16] over [N, 4, 8, 8, 16], beside
  // a full input and a scalar; a per-channel sum and a total.
  codegen::EwProgram p;
  const codegen::EwIndexing lanes{1024, 4, 16};
  int x = p.input(0), g = p.input(1, lanes), s = p.input(2, codegen::EwIndexing{1, 1});
  int y = p.binary(codegen::EwOp::Mul, x, g);
  p.outputs = {p.binary(codegen::EwOp::Add, y, s)};
  p.reductions = {codegen::EwReduction{y, lanes}, codegen::EwReduction{x, codegen::EwIndexing{1, 1}}};
  codegen::EwProgram q = read_back(p);
  CHECK(q.input_indexing(1) == lanes);
  CHECK(q.broadcast() == lanes);
  CHECK(q.text().find("input 1 at ((i / 1024) % 4) * 16 + i % 16\n") != std::string::npos);
  // Lanes of 24 over segments of 1000, and lanes of 0, in an input's or a
  // sum's pattern: validate_program refuses them when they are read.
  for (int64_t lane : {24, 0})
    for (bool in_sum : {false, true}) {
      codegen::EwProgram bad = p;
      (in_sum ? bad.reductions[0].how : bad.indexing[1]) = codegen::EwIndexing{1000, 4, lane};
      CHECK_FALSE(parses(bad));
    }
}

TEST_CASE("an index list reads back, and a list running past the end is refused") {
  std::string bytes = "head";
  write_index_list(bytes, {7, 0, 4000000000u});
  bytes += "tail";
  size_t pos = 4;
  std::vector<uint32_t> got;
  REQUIRE(parse_index_list(bytes, pos, got));
  CHECK(got == std::vector<uint32_t>{7, 0, 4000000000u});
  CHECK(bytes.substr(pos) == "tail");
  for (size_t cut = 4; cut < 4 + 4 + 12; ++cut) {
    size_t at = 4;
    std::vector<uint32_t> untouched{1};
    CHECK_FALSE(parse_index_list(std::string_view(bytes).substr(0, cut), at, untouched));
    CHECK(at == 4);
    CHECK(untouched == std::vector<uint32_t>{1});
  }
}

TEST_CASE("truncated or damaged bytes at every offset are an error, never a crash") {
  Fused f;
  std::optional<std::string> bytes = serialize_graph(*f.s.graph);
  REQUIRE(bytes);
  for (size_t n = 0; n < bytes->size(); ++n) {
    ir::IrModule m;
    std::string error;
    INFO("truncated to " << n << " bytes");
    CHECK(deserialize_graph(m, std::string_view(*bytes).substr(0, n), &error) == nullptr);
    CHECK(error.find("at byte") != std::string::npos);
    CHECK(m.graphs().empty());  // the half-built graph is taken out
  }
  CHECK(deserialize_graph(*std::make_unique<ir::IrModule>(), *bytes + "x") == nullptr);
  // A flipped byte: an error, or a graph that still verifies (a changed
  // float is well-formed); the disk cache's checksum catches those.
  int refused = 0;
  for (size_t i = 0; i < bytes->size(); ++i) {
    std::string bad = *bytes;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    ir::IrModule m;
    ir::FuncGraph* g = deserialize_graph(m, bad);
    if (!g)
      ++refused;
    else
      CHECK(ir::verify_graph(*g).empty());
    std::string key = "graph key";
    std::string entry = codegen::ObjectCache::encode(key, *bytes);
    entry[entry.size() - bytes->size() + i] ^= 0x5a;
    CHECK_FALSE(codegen::ObjectCache::decode(key, entry).has_value());
  }
  CHECK(refused > static_cast<int>(bytes->size()) / 2);
}

TEST_CASE("graphs that are not flat primitives are refused with the reason") {
  Parsed nested(R"(subgraph @outer(%para1_x) {
  %0 = @inner(%para1_x)
  return(%0)
}
subgraph @inner(%para1_y) {
  %0 = neg(%para1_y)
  return(%0)
}
)");
  std::string why;
  CHECK_FALSE(serialize_graph(*nested.g, &why));
  CHECK(why == "it refers to the graph @inner");

  // A closure's body reads its parent's parameter: a free variable.
  ir::IrModule m;
  ir::IrParseResult r = ir::parse_ir(R"(subgraph @outer(%para1_x) {
  %0 = @inner()
  return(%0)
}
subgraph @inner() {
  %0 = neg(@outer.%para1_x)
  return(%0)
}
)", m, "t.ir");
  REQUIRE_MESSAGE(r.ok(), r.error);
  why.clear();
  CHECK_FALSE(serialize_graph(*r.graphs[1], &why));
  CHECK(why == "it uses a node of another graph (a free variable)");
}

// An empty tensor constant whose other dimensions a tensor refuses
// ([2^41, 0]: no bytes, so the byte count let it through) used to throw the
// tensor's ShapeError out of deserialize_graph, which must never throw for
// bad bytes; with the large dimension first ([0, 2^41, 2^41], found by
// fuzzing) the tensor's strides overflowed.
TEST_CASE("an empty tensor constant whose other dimensions multiply past 2^40 is an error, not an exception") {
  Parsed p(R"(subgraph @g(%para1_x) {
  %0 = add(%para1_x, Tensor[Float32](0)[])
  return(%0)
}
)");
  std::string why;
  std::optional<std::string> bytes = serialize_graph(*p.g, &why);
  REQUIRE_MESSAGE(bytes, why);
  const std::string zero8(8, '\0'), dtype(1, static_cast<char>(DType::Float32));
  // Tensor tag 5, the dtype, rank 1, dimension 0, 0 bytes of data.
  const std::string empty = std::string("\x05") + dtype + "\x01" + zero8 + zero8;
  size_t at = bytes->find(empty);
  REQUIRE(at != std::string::npos);
  auto dim = [](uint64_t d) {
    std::string s(8, '\0');
    std::memcpy(s.data(), &d, 8);
    return s;
  };
  struct Case {
    std::vector<uint64_t> dims;
    const char* error;  // nullptr: loads
  };
  for (const Case& c : {Case{{uint64_t{1} << 41, 0}, "tensor shape (2199023255552, 0) is too large at byte"},
                        Case{{0, uint64_t{1} << 41, uint64_t{1} << 41},
                             "tensor shape (0, 2199023255552, 2199023255552) is too large at byte"},
                        Case{{0, uint64_t{1} << 40}, nullptr}}) {
    std::string patched = bytes->substr(0, at) + "\x05" + dtype + static_cast<char>(c.dims.size());
    for (uint64_t d : c.dims) patched += dim(d);
    patched += zero8 + bytes->substr(at + empty.size());
    ir::IrModule m;
    std::string error;
    ir::FuncGraph* g = deserialize_graph(m, patched, &error);
    if (!c.error) {
      REQUIRE_MESSAGE(g, error);
      continue;
    }
    CHECK(g == nullptr);
    CHECK_MESSAGE(error.find(c.error) != std::string::npos, error);
  }
}
