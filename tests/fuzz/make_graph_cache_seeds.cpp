// Writes seed inputs for the graph cache's fuzz target (fuzz_graph_cache.cpp):
// flat graphs as graph mode leaves them (specialized, with fused loops),
// serialized by the cache's own writer, each as a payload (first byte 0)
// and as a whole cache file (first byte 1), with and without weights.
//
//   msl_fuzz_graph_cache_seeds OUT   -> OUT/corpus_graph_cache/seed_<n>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "jit/codegen/object_cache.h"
#include "jit/graph_serialize.h"
#include "jit/passes/fuse_elementwise.h"
#include "jit/specialize.h"
#include "lang/ir/ir_parser.h"

namespace fs = std::filesystem;
using namespace msl;

namespace {

void put(const fs::path& dir, const std::string& bytes) {
  size_t n = 0;
  for (auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  std::ofstream(dir / ("seed_" + std::to_string(n)), std::ios::binary) << bytes;
}

// Flat graphs as graph mode leaves them: specialized, with fused loops
// where the program has elementwise chains.
const char* kGraphs[] = {
    R"(subgraph @step(%para1_x, %para2_y) {
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
)",
    R"(subgraph @loss(%para1_x, %para2_y) {
  %0 = sub(%para1_x, %para2_y)
  %1 = mul(%0, %0)
  %2 = reduce_sum[axes=(0, 1), keep_dims=False](%1)
  return(%2)
}
)",
    R"(subgraph @mm(%para1_x, %para2_y) {
  %0 = matmul[transpose_a=False, transpose_b=True](%para1_x, %para2_y)
  %1 = exp(%0)
  %2 = tanh(%1)
  return(%2)
}
)",
};

void graph_cache_seeds(const fs::path& dir) {
  const std::string key = "graph cache fuzz key";  // as fuzz_graph_cache.cpp
  for (const char* text : kGraphs) {
    ir::IrModule m;
    ir::IrParseResult r = ir::parse_ir(text, m, "seed.ir");
    if (!r.ok()) throw std::runtime_error("seed graph: " + r.error);
    jit::AbsValue f32 = jit::abs_tensor(kernels::DType::Float32, {4, 3});
    jit::Specialized s = jit::specialize(m, *r.graphs.front(), {f32, f32});
    jit::run_fuse_elementwise(m, s);
    std::string why;
    std::optional<std::string> bytes = jit::serialize_graph(*s.graph, &why);
    if (!bytes) throw std::runtime_error("seed graph not serializable: " + why);
    for (const std::vector<uint32_t>& weights : {std::vector<uint32_t>{}, std::vector<uint32_t>{1, 0}}) {
      std::string payload;
      jit::write_index_list(payload, weights);
      payload += *bytes;
      put(dir, std::string(1, '\0') + payload);
      put(dir, std::string(1, '\1') + jit::codegen::ObjectCache::encode(key, payload));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  fs::path dir = fs::path(argv[1]) / "corpus_graph_cache";
  fs::create_directories(dir);
  graph_cache_seeds(dir);
  return 0;
}
