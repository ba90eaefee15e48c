// The disk entries of compiled graphs and the calls that go through them
// (GraphCompiler::run_cached); the design is in graph_disk_cache.h.
#include "interp/graph/graph_disk_cache.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <mutex>
#include <string_view>

#include "interp/core/executable_stamp.h"
#include "interp/graph/graph_compiler_impl.h"
#include "interp/graph/graph_values.h"
#include "interp/core/interp.h"
#include "interp/tensor/tensor_object.h"
#include "jit/codegen/elementwise_jit.h"
#include "jit/graph_serialize.h"
#include "kernels/dump.h"

namespace msl {

namespace {

std::atomic<int64_t> g_compiled{0}, g_disk_hits{0};

// Names, sizes and mtimes of the standard library's files: library code
// reached only during expansion (gradient rules, traced library calls) is
// not in the fingerprint walk.
std::string stdlib_stamp(const std::string& dir) {
  namespace fs = std::filesystem;
  if (dir.empty()) return "none";
  std::vector<std::string> lines;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    struct stat st {};
    if (::stat(it->path().c_str(), &st) != 0) continue;
    lines.push_back(fmt::format("{} {} {}.{}", it->path().lexically_relative(dir).string(),
                                static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
                                static_cast<long>(st.st_mtim.tv_nsec)));
  }
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const std::string& l : lines) all += l + "\n";
  return jit::codegen::ObjectCache::hash(all);
}

}  // namespace

GraphCacheStats graph_cache_stats() { return {g_compiled.load(), g_disk_hits.load()}; }
void count_graph_compiled() { ++g_compiled; }
void count_graph_loaded() { ++g_disk_hits; }

GraphDiskCache GraphDiskCache::from_environment() {
  jit::codegen::ObjectCache kernels = jit::codegen::ObjectCache::from_environment();
  if (!kernels.enabled()) return GraphDiskCache();
  return GraphDiskCache(std::filesystem::path(kernels.dir()).parent_path().string() + "/graphs");
}

const std::string& GraphDiskCache::build_key(Interp& I) const {
  if (build_key_.empty())
    build_key_ = fmt::format("msl compiled graph, key version {}, graph format {}\nexe {}\nstdlib {}\n", kKeyVersion,
                             jit::kGraphFormatVersion, executable_stamp(), stdlib_stamp(I.options().stdlib_dir));
  return build_key_;
}

const std::string& GraphDiskCache::target_key() const {
  if (target_key_.empty()) {
    try {
      target_key_ = "target " + jit::codegen::ElementwiseJit::instance().target() + "\n";
    } catch (const std::exception& e) {
      target_key_ = std::string("target unavailable: ") + e.what() + "\n";
    }
  }
  return target_key_;
}

std::optional<GraphDiskCache::Entry> GraphDiskCache::load(ir::IrModule& m, const std::string& key,
                                                          std::string* why) const {
  std::optional<std::string> payload = store_.load(key);
  if (!payload) {
    std::error_code ec;
    if (std::filesystem::exists(path(key), ec))
      *why = "damaged, or written for another key (its header or checksum does not match)";
    return std::nullopt;
  }
  Entry e;
  e.graph = jit::parse_cache_payload(m, *payload, e.weights, why);
  if (!e.graph) return std::nullopt;
  return e;
}

bool GraphDiskCache::store(const std::string& key, const ir::FuncGraph& g, const std::vector<uint32_t>& weights,
                           std::string* why) const {
  std::optional<std::string> bytes = jit::serialize_graph(g, why);
  if (!bytes) return false;
  std::string payload;
  jit::write_index_list(payload, weights);
  payload += *bytes;
  if (payload.size() > jit::codegen::ObjectCache::kMaxEntryBytes) {
    *why = "the entry would be " + std::to_string(payload.size()) + " bytes";
    return false;
  }
  if (!store_.store(key, payload)) {
    *why = "cannot write " + path(key);
    return false;
  }
  return true;
}

bool GraphCompiler::disk_cache_usable() const {
  // Debug logging describes each compilation (signatures, memory plans),
  // so it compiles; --log-level info shows what the cache does.
  return disk_.enabled() && save_dir.empty() && I.options().print_after.empty() && !I.options().emit_llvm &&
         !I.options().emit_cuda && !I.options().emit_subgraphs && subgraph_reports == nullptr &&
         I.options().log_level != 0;
}

void GraphCompiler::cache_info(const std::string& message) {
  if (I.options().log_level <= 1) I.write_err("[INFO] graph cache: " + message + "\n");
}

exec::RtValue GraphCompiler::run_cached(const Compiled& c, std::span<Value> args) {
  std::vector<exec::RtValue> rt;
  std::string sig;
  for (size_t i = 0; i < c.nargs; ++i) {
    rt.push_back(to_rt(I, args[i]));
    sig += jit::identity_key(abstract_of(rt.back())) + ";";
  }
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(&c)) + (graph_mode ? "g:" : "p:") + sig;
  // The weights' types are part of the graph's signature: a Parameter
  // given data of another shape since means compiling again.
  auto weight_sig = [](const std::vector<Value>& ws) {
    std::string s;
    for (const Value& w : ws) s += jit::identity_key(abstract_of(exec::RtValue(tensor_of(w)))) + ";";
    return s;
  };
  auto it = cached_runnable_.find(key);
  if (it != cached_runnable_.end() && it->second.graph && weight_sig(it->second.weights) != it->second.weight_sig) {
    cached_runnable_.erase(it);
    it = cached_runnable_.end();
  }
  if (it == cached_runnable_.end()) {
    CachedRunnable fresh = load_or_compile(c, rt, sig);
    fresh.weight_sig = weight_sig(fresh.weights);
    it = cached_runnable_.emplace(key, std::move(fresh)).first;
  }
  const CachedRunnable& r = it->second;
  if (!r.graph) {
    const Compiled& b = built(c);
    return run(b, executor_args(b, args));
  }
  for (const Value& w : r.weights) rt.push_back(exec::RtValue(tensor_of(w)));
  try {
    return exec::run_graph(*r.graph, std::move(rt), exec_options());
  } catch (...) {
    raise_exec_error(I);
  }
}

// The runnable graph for one signature: from the disk when an entry
// matches, else compiled and stored. Anything that makes the entry
// doubtful (the objects changed during compilation, a weight the walk did
// not meet, a graph that is not flat) means not storing, never a failure.
GraphCompiler::CachedRunnable GraphCompiler::load_or_compile(const Compiled& c, const std::vector<exec::RtValue>& args,
                                                             const std::string& sig) {
  auto& mc = const_cast<Compiled&>(c);
  Fingerprint fp = mc.fingerprint_fresh ? *mc.fingerprint : fingerprint_of(I, c.fn);
  mc.fingerprint_fresh = false;
  if (!fp.ok) {
    cache_info("not cached on disk: the callable now holds " + fp.why);
    return {};
  }
  // Fused loops are generated for the host CPU; without fusion
  // (PYNATIVE_MODE) nothing depends on it, and LLVM is not started.
  std::string key =
      disk_.build_key(I) + (graph_mode ? disk_.target_key() : std::string("target any\n")) +
      fmt::format("mode {}\ndump {}\nlayout {}\ngraph target {}\nnargs {}\ncallable {}\nsignature {}\n",
                  graph_mode ? "GRAPH_MODE" : "PYNATIVE_MODE", kernels::dumping() ? 1 : 0, layout_block(),
                  I.options().graph_target, c.nargs, fp.digest, sig);
  std::string why;
  std::optional<GraphDiskCache::Entry> e;
  auto start = std::chrono::steady_clock::now();
  e = disk_.load(module, key, &why);
  if (e)  // a phase of compile_times(), like those it replaces
    last_times.emplace_back(
        "disk cache", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  if (e) {
    bool fits = e->graph->params().size() == c.nargs + e->weights.size();
    CachedRunnable r{e->graph, {}, ""};
    for (uint32_t w : e->weights) {
      if (w >= fp.params.size())
        fits = false;
      else
        r.weights.push_back(fp.params[w]);
    }
    if (fits) {
      // What the target made beside the graph (the GPU's compiled unit).
      std::vector<jit::AbsValue> abstract;
      for (const exec::RtValue& a : args) abstract.push_back(abstract_of(a));
      graph_target(abstract).prepare_loaded(*e->graph);
      count_graph_loaded();
      cache_info("@" + e->graph->name() + " loaded from the disk cache: " + disk_.path(key));
      return r;
    }
    module.remove_graph(e->graph);
    cache_info("disk cache entry " + disk_.path(key) + " does not fit the callable's parameters: ignored");
  } else if (!why.empty()) {
    cache_info("disk cache entry " + disk_.path(key) + " is unusable (" + why + "): compiling");
  }
  const Compiled& b = built(c);
  std::vector<exec::RtValue> full = args;
  for (const Value& w : b.weights) full.push_back(exec::RtValue(tensor_of(w)));
  CachedRunnable r{runnable(b, full), b.weights, ""};
  std::vector<uint32_t> positions;
  for (const Value& w : b.weights) {
    auto at = std::find_if(fp.params.begin(), fp.params.end(), [&](const Value& p) { return p.obj() == w.obj(); });
    if (at == fp.params.end()) {
      cache_info("@" + b.graph->name() + " not cached on disk: it takes a Parameter the fingerprint did not meet");
      return r;
    }
    positions.push_back(static_cast<uint32_t>(at - fp.params.begin()));
  }
  Fingerprint after = fingerprint_of(I, c.fn);
  if (!after.ok || after.digest != fp.digest) {
    cache_info("@" + b.graph->name() + " not cached on disk: its objects changed while it compiled");
    return r;
  }
  if (!disk_.store(key, *r.graph, positions, &why))
    cache_info("@" + b.graph->name() + " not cached on disk: " + why);
  else
    cache_info("@" + r.graph->name() + " stored in the disk cache: " + disk_.path(key));
  return r;
}

}  // namespace msl
