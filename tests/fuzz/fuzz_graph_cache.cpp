// libFuzzer target: entries of the on-disk cache of compiled graphs, read
// as GraphDiskCache::load reads them (interp/graph/graph_disk_cache.h): the
// file through jit::codegen::ObjectCache::load (magic, version, key echo,
// length, checksum), then jit::parse_cache_payload (the weight list and
// jit/graph_serialize.cpp's graph reader with the IR verifier).
//
// The first byte picks what the rest is. Even: an entry's payload, written
// in a valid container, as if it had passed the checksum (so the fuzzer
// reaches the graph reader instead of failing the checksum). Odd: the whole
// file. A damaged entry must be a miss or a null graph with a reason (the
// cache then compiles afresh); no exception is expected at all. A graph
// that loads must serialize again, and those bytes must read back to
// themselves (a fixed point, as after a store and a load).
#include <string>
#include <vector>

#include "jit/codegen/object_cache.h"
#include "jit/graph_serialize.h"
#include "lang/ir/printer.h"
#include "tests/fuzz/fuzz_files.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace msl;
  if (size == 0) return 0;
  static const jit::codegen::ObjectCache cache(fuzz::temp_dir());
  const std::string key = "graph cache fuzz key";
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string file = data[0] % 2 == 0 ? jit::codegen::ObjectCache::encode(key, rest) : std::string(rest);
  std::string path = cache.path(key);
  fuzz::write_temp_file(path.substr(path.rfind('/') + 1), file);
  std::optional<std::string> payload = cache.load(key);
  if (!payload) return 0;
  ir::IrModule m;
  std::vector<uint32_t> weights;
  std::string error;
  ir::FuncGraph* g = jit::parse_cache_payload(m, *payload, weights, &error);
  if (!g) {
    if (error.empty()) fuzz::fail("a cache entry refused without a reason");
    return 0;
  }
  (void)ir::print_graph(*g);
  std::string why;
  std::optional<std::string> bytes = jit::serialize_graph(*g, &why);
  if (!bytes) fuzz::fail("a graph read from the cache does not serialize again: " + why);
  ir::IrModule m2;
  ir::FuncGraph* g2 = jit::deserialize_graph(m2, *bytes, &error);
  if (!g2) fuzz::fail("a graph read from the cache, serialized again, does not read back: " + error);
  if (jit::serialize_graph(*g2) != bytes) fuzz::fail("a graph read from the cache is not a fixed point of the format");
  return 0;
}
