// The world, the named groups and the waits of MSL's collectives
// (communicator.h). The back end is MPI through the plug-in
// libmsl_comm_mpi.so (comm_backend.h), looked for beside the binary that
// holds this code (bin/../lib/msl/ when installed, the build tree's folder
// otherwise).
#include "kernels/comm/communicator.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sched.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <memory>

#include "kernels/comm/comm_backend.h"

// Set by kernels/comm/CMakeLists.txt: the installed plug-in's folder
// relative to bin/, and the build tree's.
#ifndef MSL_COMM_PLUGIN_BUILD_DIR
#define MSL_COMM_PLUGIN_BUILD_DIR ""
#endif
#ifndef MSL_COMM_PLUGIN_FROM_BINDIR
#define MSL_COMM_PLUGIN_FROM_BINDIR "../lib/msl"
#endif

namespace msl::kernels::comm {

namespace {

namespace fs = std::filesystem;

constexpr const char* kPluginName = "libmsl_comm_mpi.so";
// "" is the world too: a primitive's `group` attribute left at its default.
constexpr const char* kWorldNames[] = {"nccl_world_group", "hccl_world_group", "world", ""};
constexpr const char* kReduceOpNames[] = {"sum", "prod", "max", "min", "mean"};  // by ReduceOp

struct Group {
  MslCommGroup* handle = nullptr;  // null in the one-member world
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
};

struct State {
  bool initialized = false;
  const MslCommBackend* backend = nullptr;  // null: the one-member world
  std::map<std::string, Group> groups;      // by name; the world under each of kWorldNames
};

State& state() {
  static State s;
  return s;
}

// The number of processes the launcher started, 1 when none did.
int launched_world_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') return std::max(1, std::atoi(v));
  }
  return 1;
}

std::string plugin_path() {
  std::vector<fs::path> dirs;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&launched_world_size), &info) != 0 && info.dli_fname) {
    std::error_code ec;
    fs::path self = fs::canonical(info.dli_fname, ec);
    if (ec) self = fs::canonical("/proc/self/exe", ec);
    if (!ec) {
      dirs.push_back(self.parent_path() / MSL_COMM_PLUGIN_FROM_BINDIR);  // bin/msl
      dirs.push_back(self.parent_path() / "msl");                        // lib/libmsl.so
      dirs.push_back(self.parent_path());
    }
  }
  if (*MSL_COMM_PLUGIN_BUILD_DIR) dirs.emplace_back(MSL_COMM_PLUGIN_BUILD_DIR);
  for (const fs::path& d : dirs) {
    std::error_code ec;
    if (fs::is_regular_file(d / kPluginName, ec)) return (d / kPluginName).lexically_normal().string();
  }
  return {};
}

const MslCommBackend* load_mpi() {
  std::string path = plugin_path();
  if (path.empty())
    throw CommError(
        "init: this process was started by an MPI launcher, but MSL was built without its MPI back end "
        "(libmsl_comm_mpi.so; install libopenmpi-dev and rebuild)");
  void* lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (lib == nullptr) throw CommError(fmt::format("init: cannot load the MPI back end {}: {}", path, ::dlerror()));
  auto entry = reinterpret_cast<MslCommBackendEntry>(::dlsym(lib, MSL_COMM_BACKEND_ENTRY));
  const MslCommBackend* b = entry ? entry() : nullptr;
  if (b == nullptr || b->abi_version != MSL_COMM_ABI_VERSION)
    throw CommError(fmt::format("init: {} is not an MSL communication back end of this version", path));
  return b;
}

void check(int code, const char* err) {
  if (code != 0) throw CommError(err);
}

const Group& group_of(const std::string& name, const char* what) {
  State& s = state();
  if (!s.initialized)
    throw CommError(fmt::format("{}: communication is not initialized; call msl.communication.init() first", what));
  auto it = s.groups.find(name);
  if (it == s.groups.end())
    throw CommError(fmt::format("{}: no communication group '{}' (create it with create_group)", what, name));
  return it->second;
}

// Waits for `req` (null: already complete), polling so that a peer that
// never arrives ends the job after the timeout instead of hanging it;
// `what` describes the collective for that message (made only then). The
// first polls spin (a collective between processes on idle cores finishes
// in microseconds); then each poll sleeps a little longer, up to 1 ms, so a
// long wait leaves the core to the processes doing the work.
void wait(MslCommRequest* req, const std::function<std::string()>& what, const Group& g) {
  if (req == nullptr) return;
  const MslCommBackend* b = state().backend;
  char err[512] = {0};
  auto start = std::chrono::steady_clock::now();
  double limit = timeout_seconds();
  long sleep_ns = 0;
  for (int polls = 0;; ++polls) {
    int done = 0;
    check(b->test(req, &done, err, sizeof err), err);
    if (done) return;
    if (polls < 2000) {
      sched_yield();
      continue;
    }
    sleep_ns = std::min(1000000L, sleep_ns + 10000);
    timespec ts{0, sleep_ns};
    nanosleep(&ts, nullptr);
    if ((polls & 63) != 0) continue;
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > limit) {
      std::fflush(stdout);
      std::fprintf(stderr,
                   "msl: rank %d of %d: %s did not complete in %.0f s (MSL_COMM_TIMEOUT): another rank has "
                   "stopped or is not calling it; ending the job\n",
                   g.rank, g.size, what().c_str(), limit);
      std::fflush(stderr);
      b->abort(1);
      std::_Exit(1);
    }
  }
}

int comm_dtype(DType d) {
  switch (d) {
    case DType::Int32: return MSL_COMM_INT32;
    case DType::Int64: return MSL_COMM_INT64;
    case DType::Float64: return MSL_COMM_FLOAT64;
    default: return MSL_COMM_FLOAT32;  // float32, and float16/bfloat16 widened to it
  }
}

int comm_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::Prod: return MSL_COMM_PROD;
    case ReduceOp::Max: return MSL_COMM_MAX;
    case ReduceOp::Min: return MSL_COMM_MIN;
    default: return MSL_COMM_SUM;
  }
}

const char* op_name(ReduceOp op) { return kReduceOpNames[static_cast<int>(op)]; }

// The tensor a reduction runs on: `t` itself, or a float32 copy of a
// float16/bfloat16 tensor (MPI has no 16-bit float types; the sum is
// rounded once, at the end, as a tensor-core accumulation would be).
Tensor widened(const Tensor& t) {
  if (t.dtype() != DType::Float16 && t.dtype() != DType::BFloat16) return t;
  Tensor w(DType::Float32, t.shape());
  copy_strided(t, w);
  return w;
}

// Mean = sum / size, in the reduction's dtype.
void divide(const Tensor& t, int n) {
  int64_t count = t.numel();
  if (t.dtype() == DType::Float64) {
    for (int64_t i = 0; i < count; ++i) t.data<double>()[i] /= n;
  } else {
    for (int64_t i = 0; i < count; ++i) t.data<float>()[i] /= static_cast<float>(n);
  }
}

// all_reduce and reduce_scatter on a group of several processes.
void reduce(const Tensor& in, const Tensor& out, ReduceOp op, const Group& g, bool scatter, const char* prim) {
  const MslCommBackend* b = state().backend;
  Tensor src = widened(in);
  Tensor dst = (src.dtype() == out.dtype()) ? out : Tensor(src.dtype(), out.shape());
  MslCommRequest* req = nullptr;
  char err[512] = {0};
  int64_t count = dst.numel();
  if (scatter) {
    check(b->ireduce_scatter(g.handle, src.raw(), dst.raw(), count, comm_dtype(src.dtype()), comm_op(op), &req, err,
                             sizeof err),
          err);
  } else {
    if (count == 0) return;
    check(b->iallreduce(g.handle, src.raw(), dst.raw(), count, comm_dtype(src.dtype()), comm_op(op), &req, err,
                        sizeof err),
          err);
  }
  wait(req, [&] { return fmt::format("{} ({}, {} {} elements)", prim, op_name(op), count, dtype_name(in.dtype())); },
       g);
  if (op == ReduceOp::Mean) divide(dst, g.size);
  if (!dst.shares_storage(out)) copy_strided(dst, out);
}

}  // namespace

ReduceOp reduce_op_from_name(const std::string& name) {
  for (int i = 0; i < static_cast<int>(std::size(kReduceOpNames)); ++i)
    if (name == kReduceOpNames[i]) return static_cast<ReduceOp>(i);
  throw ValueError(fmt::format("reduce op must be one of 'sum', 'prod', 'max', 'min', 'mean', got '{}'", name));
}

double timeout_seconds() {
  static const double seconds = [] {
    const char* v = std::getenv("MSL_COMM_TIMEOUT");
    double s = v ? std::atof(v) : 0;
    return s > 0 ? s : 300.0;
  }();
  return seconds;
}

void export_launcher_environment() {
  struct {
    const char* ours;
    const char* open_mpi;
    const char* pmi;
  } const vars[] = {{"RANK_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"},
                    {"RANK_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"},
                    {"DEVICE_ID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"}};
  for (const auto& v : vars) {
    const char* from = std::getenv(v.open_mpi);
    if (from == nullptr) from = std::getenv(v.pmi);
    if (from != nullptr) ::setenv(v.ours, from, 0);
  }
}

void init(const std::string& backend) {
  State& s = state();
  if (s.initialized) return;
  if (!backend.empty() && backend != "mpi" && backend != "nccl" && backend != "hccl" && backend != "mccl")
    throw ValueError(fmt::format("init: unknown backend '{}'; expected 'mpi', 'nccl' or 'hccl'", backend));
  Group world;
  if (launched_world_size() > 1) {
    const MslCommBackend* b = load_mpi();
    char err[512] = {0};
    check(b->init(err, sizeof err), err);
    world.handle = b->world();
    world.rank = b->rank(world.handle);
    world.size = b->size(world.handle);
    check(b->local_rank(world.handle, &world.local_rank, &world.local_size, err, sizeof err), err);
    s.backend = b;
  }
  for (const char* name : kWorldNames) s.groups[name] = world;
  s.initialized = true;
}

bool initialized() { return state().initialized; }

std::string backend_name() { return state().backend ? state().backend->name : "local"; }

void release() {
  State& s = state();
  if (!s.initialized) return;
  if (s.backend) {
    for (auto& [name, g] : s.groups)
      if (g.handle != s.groups.at("world").handle) s.backend->destroy_group(g.handle);
    char err[512] = {0};
    int code = s.backend->finalize(err, sizeof err);
    s.groups.clear();
    s.initialized = false;
    s.backend = nullptr;
    check(code, err);
    return;
  }
  s.groups.clear();
  s.initialized = false;
}

void finish(int exit_status) {
  State& s = state();
  if (!s.initialized || s.backend == nullptr) return;
  if (exit_status != 0) {
    // The launcher sees this rank's failure and ends the others; a
    // finalize here would wait for ranks still inside collectives.
    std::fflush(stdout);
    return;
  }
  try {
    release();
  } catch (const CommError& e) {
    std::fprintf(stderr, "msl: %s\n", e.what());
  }
}

int rank(const std::string& group) { return group_of(group, "get_rank").rank; }
int size(const std::string& group) { return group_of(group, "get_group_size").size; }
int local_rank(const std::string& group) { return group_of(group, "get_local_rank").local_rank; }
int local_size(const std::string& group) { return group_of(group, "get_local_rank_size").local_size; }

int inference_size(const std::string& group) {
  if (!state().initialized) return 1;
  auto it = state().groups.find(group);
  return it == state().groups.end() ? 1 : it->second.size;
}

void create_group(const std::string& name, const std::vector<int>& ranks) {
  State& s = state();
  const Group& world = group_of("world", "create_group");
  if (s.groups.count(name)) throw ValueError(fmt::format("create_group: group '{}' already exists", name));
  if (ranks.empty()) throw ValueError("create_group: rank_ids must not be empty");
  std::vector<bool> seen(static_cast<size_t>(world.size), false);
  for (int r : ranks) {
    if (r < 0 || r >= world.size)
      throw ValueError(fmt::format("create_group: rank {} is not in the world of {} processes", r, world.size));
    if (seen[static_cast<size_t>(r)]) throw ValueError(fmt::format("create_group: rank {} is listed twice", r));
    seen[static_cast<size_t>(r)] = true;
  }
  Group g;
  g.size = static_cast<int>(ranks.size());
  if (s.backend) {
    char err[512] = {0};
    check(s.backend->create_group(ranks.data(), g.size, &g.handle, err, sizeof err), err);
    if (g.handle == nullptr)
      throw ValueError(fmt::format("create_group: this process (rank {}) is not among the ranks of '{}'",
                                   world.rank, name));
    g.rank = s.backend->rank(g.handle);
    check(s.backend->local_rank(g.handle, &g.local_rank, &g.local_size, err, sizeof err), err);
  } else if (ranks[0] != 0) {
    throw ValueError(fmt::format("create_group: this process (rank 0) is not among the ranks of '{}'", name));
  }
  s.groups[name] = g;
}

void destroy_group(const std::string& name) {
  State& s = state();
  const Group& g = group_of(name, "destroy_group");
  for (const char* w : kWorldNames)
    if (name == w) throw ValueError(fmt::format("destroy_group: the world group '{}' cannot be destroyed", name));
  if (s.backend) s.backend->destroy_group(g.handle);
  s.groups.erase(name);
}

void all_reduce(const Tensor& in, const Tensor& out, ReduceOp op, const std::string& group) {
  const Group& g = group_of(group, "all_reduce");
  if (g.handle == nullptr) return copy_strided(in, out);
  reduce(in, out, op, g, false, "all_reduce");
}

void reduce_scatter(const Tensor& in, const Tensor& out, ReduceOp op, const std::string& group) {
  const Group& g = group_of(group, "reduce_scatter");
  if (g.handle == nullptr) return copy_strided(in, out);
  reduce(in, out, op, g, true, "reduce_scatter");
}

void all_gather(const Tensor& in, const Tensor& out, const std::string& group) {
  const Group& g = group_of(group, "all_gather");
  if (g.handle == nullptr) return copy_strided(in, out);
  char err[512] = {0};
  MslCommRequest* req = nullptr;
  check(state().backend->iallgather(g.handle, in.raw(), out.raw(), static_cast<int64_t>(in.nbytes()), &req, err,
                                    sizeof err),
        err);
  wait(req, [&] { return fmt::format("all_gather ({} {} elements)", in.numel(), dtype_name(in.dtype())); }, g);
}

void broadcast(const Tensor& in, const Tensor& out, int root, const std::string& group) {
  const Group& g = group_of(group, "broadcast");
  if (root < 0 || root >= g.size)
    throw ValueError(fmt::format("broadcast: root_rank {} is not in group '{}' of {} processes", root, group, g.size));
  copy_strided(in, out);
  if (g.handle == nullptr) return;
  char err[512] = {0};
  MslCommRequest* req = nullptr;
  check(state().backend->ibroadcast(g.handle, out.raw(), static_cast<int64_t>(out.nbytes()), root, &req, err,
                                    sizeof err),
        err);
  wait(req,
       [&] { return fmt::format("broadcast (root {}, {} {} elements)", root, out.numel(), dtype_name(out.dtype())); },
       g);
}

}  // namespace msl::kernels::comm
