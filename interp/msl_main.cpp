// The `msl` command: REPL, `msl run FILE [ARGS]`, `msl -c CODE`, the
// `--emit` stages, and `msl compare` (interp/dump_compare.h). Exit
// status: 0 success, 1 uncaught MSL error, 2 usage,
// 130 uncaught KeyboardInterrupt (Ctrl-C: interp/core/sigint.h).
//
// The interpreter runs on a thread with a large stack so that deep (but
// legal) recursion is limited by the recursion limit, not by the C stack;
// the interpreter's own stack checks turn anything deeper into RecursionError.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "interp/checkpoint/checkpoint.h"
#include "interp/dump_compare.h"
#include "interp/dump_config.h"
#include "interp/graph/graph_disk_cache.h"
#include "interp/launch_command.h"
#include "interp/core/interp.h"
#include "jit/codegen/cuda_unit.h"
#include "jit/codegen/elementwise_jit.h"
#include "jit/target.h"
#include "interp/repl.h"
#include "interp/core/sigint.h"
#include "interp/stdlib_location.h"
#include "interp/summary/summary_cli.h"
#include "kernels/comm/communicator.h"
#include "kernels/parallel.h"
#include "kernels/philox.h"
#include "kernels/dump.h"
#include "kernels/profile.h"
#include "kernels/trace.h"
#include "lang/ir/lower.h"
#include "lang/ir/printer.h"
#include "lang/parser.h"

namespace msl {
// graph_emit.cpp: --emit=anf|anf-opt|grad (I may be null except for grad).
int emit_graph_stage(Interp* I, const SourcePtr& source, const std::string& stage, const std::string& print_after);
}  // namespace msl

namespace {

struct CommandLine {
  std::string mode = "graph", device = "cpu", emit, save_graphs, dump, dump_config, code, file, print_after, layout = "auto",
              graph_target = "auto";
  bool has_code = false, run = false, profile = false;
  std::string trace_dir;  // --profile=trace DIR
  long seed = -1, threads = 0;
  int log_level = -1;  // -1: GLOG_v, else warning
  std::vector<std::string> script_args;
};

// debug/info/warning/error or MindSpore's GLOG_v digits 0-3; -1 if neither.
int parse_log_level(const std::string& s) {
  static const char* names[] = {"debug", "info", "warning", "error"};
  for (int i = 0; i < 4; ++i)
    if (s == names[i] || s == std::to_string(i)) return i;
  return -1;
}

const char* kUsage =
    "usage: msl [options]                  start the interactive REPL\n"
    "       msl [options] run FILE [ARGS...]  run a script\n"
    "       msl [options] -c CODE           run a snippet\n"
    "       msl launch -n N [--hosts LIST] FILE [ARGS...]\n"
    "                                      run FILE as N data-parallel processes (mpirun)\n"
    "       msl summary DIR [--out DIR]     TensorBoard scalars as a table and PNG plots\n"
    "       msl compare DIR_A DIR_B [--rtol R] [--atol A] [--format table|csv|json]\n"
    "                                      compare two --dump folders op by op\n"
    "options:\n"
    "  --mode graph|pynative   execution mode (default graph)\n"
    "  --device cpu|gpu        target device (default cpu)\n"
    "  --seed N                global random seed\n"
    "  --threads N             worker threads for kernels\n"
    "  --save-graphs DIR       write IR of every compiled graph to DIR, with its identical\n"
    "                          sub-graphs (NN_graph_subgraphs.json, and .dot drawn folded)\n"
    "  --profile               print a per-op profile at exit\n"
    "  --profile=trace DIR     write DIR/trace.json (a Chrome/Perfetto timeline of every\n"
    "                          kernel, graph run, compile phase, data batch and step)\n"
    "                          and DIR/op_statistic.txt (its kernels by total time)\n"
    "  --dump DIR              write every kernel's outputs to DIR as .npy files\n"
    "  --dump-config FILE      dump as MindSpore's dump JSON FILE says (which kernels,\n"
    "                          inputs and/or outputs, which iterations); also read\n"
    "                          from $MINDSPORE_DUMP_CONFIG\n"
    "  --emit STAGE            print a stage of FILE instead of running it: tokens, ast,\n"
    "                          anf (lowered graphs), anf-opt (after clean-up), grad,\n"
    "                          llvm (runs FILE; prints each fused loop's LLVM IR),\n"
    "                          cuda (runs FILE; prints each graph's CUDA kernels),\n"
    "                          subgraphs (runs FILE; prints each graph's identical\n"
    "                          sub-graphs, the repeated Cells, as JSON)\n"
    "  --print-after PASS      print the IR after a compiler pass (or 'all') to stderr\n"
    "  --graph-target auto|cuda\n"
    "                          compile graph mode for the arguments' device (default),\n"
    "                          or for the GPU: its kernels are checked without one\n"
    "  --layout auto|nchw      graph mode's activation layout: oneDNN's blocked one\n"
    "                          where it pays (default), or NCHW throughout\n"
    "  --log-level LEVEL       debug, info, warning (default) or error; GLOG_v=0-3 also sets it\n"
    "  -h, --help              show this help\n";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "msl: error: %s\n%s", msg.c_str(), kUsage);
  std::exit(2);
}

long parse_number(const std::string& opt, const std::string& v) {
  char* end = nullptr;
  long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end) usage_error("option " + opt + " expects an integer, got '" + v + "'");
  return n;
}

CommandLine parse_args(int argc, char** argv) {
  CommandLine cl;
  bool expect_file = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string& opt) -> std::string {
      size_t eq = a.find('=');
      if (eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= argc) usage_error("option " + opt + " needs a value");
      return argv[++i];
    };
    auto is = [&](const char* opt) { return a == opt || a.rfind(std::string(opt) + "=", 0) == 0; };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (is("--mode")) {
      cl.mode = value("--mode");
      if (cl.mode != "graph" && cl.mode != "pynative") usage_error("--mode must be 'graph' or 'pynative', not '" + cl.mode + "'");
    } else if (is("--device")) {
      cl.device = value("--device");
      if (cl.device != "cpu" && cl.device != "gpu") usage_error("--device must be 'cpu' or 'gpu', not '" + cl.device + "'");
    } else if (is("--seed")) {
      cl.seed = parse_number("--seed", value("--seed"));
      if (cl.seed < 0) usage_error("--seed must be a non-negative integer");
    } else if (is("--threads")) {
      cl.threads = parse_number("--threads", value("--threads"));
      if (cl.threads <= 0) usage_error("--threads must be a positive integer");
    } else if (is("--save-graphs")) {
      cl.save_graphs = value("--save-graphs");
    } else if (is("--dump")) {
      cl.dump = value("--dump");
    } else if (is("--dump-config")) {
      cl.dump_config = value("--dump-config");
    } else if (a == "--profile") {
      cl.profile = true;
    } else if (a == "--profile=trace") {
      if (i + 1 >= argc) usage_error("--profile=trace needs a folder");
      cl.trace_dir = argv[++i];
    } else if (is("--emit")) {
      cl.emit = value("--emit");
      if (cl.emit != "tokens" && cl.emit != "ast" && cl.emit != "anf" && cl.emit != "anf-opt" && cl.emit != "grad" &&
          cl.emit != "llvm" && cl.emit != "cuda" && cl.emit != "subgraphs")
        usage_error("unknown --emit stage '" + cl.emit +
                    "' (available: tokens, ast, anf, anf-opt, grad, llvm, cuda, subgraphs)");
    } else if (is("--print-after")) {
      cl.print_after = value("--print-after");
    } else if (is("--graph-target")) {
      cl.graph_target = value("--graph-target");
      if (cl.graph_target != "auto" && cl.graph_target != "cuda")
        usage_error("--graph-target must be 'auto' or 'cuda', not '" + cl.graph_target + "'");
    } else if (is("--layout")) {
      cl.layout = value("--layout");
      if (cl.layout != "auto" && cl.layout != "nchw") usage_error("--layout must be 'auto' or 'nchw', not '" + cl.layout + "'");
    } else if (is("--log-level")) {
      cl.log_level = parse_log_level(value("--log-level"));
      if (cl.log_level < 0) usage_error("--log-level must be debug, info, warning or error (or 0-3)");
    } else if (a == "-c") {
      if (i + 1 >= argc) usage_error("-c needs an argument");
      cl.code = argv[++i];
      cl.has_code = true;
      for (++i; i < argc; ++i) cl.script_args.push_back(argv[i]);
    } else if (a == "run") {
      // Options may also follow `run`; the first non-option is the file.
      expect_file = true;
    } else if (expect_file && (a.empty() || a[0] != '-')) {
      cl.file = a;
      cl.run = true;
      for (++i; i < argc; ++i) cl.script_args.push_back(argv[i]);
    } else if (!a.empty() && a[0] == '-') {
      usage_error("unknown option '" + a + "'");
    } else if (!cl.emit.empty() && !cl.run && !cl.has_code) {
      // `msl --emit=ast FILE`: the stage printers take the file directly.
      cl.file = a;
      cl.run = true;
    } else {
      usage_error("unknown command '" + a + "' (did you mean 'msl run " + a + "'?)");
    }
  }
  if (expect_file && !cl.run) usage_error("run needs a FILE");
  return cl;
}

std::vector<std::string> split_path(const char* env) {
  std::vector<std::string> out;
  if (!env) return out;
  std::string s = env;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(':', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

struct Job {
  CommandLine cl;
  int status = 0;
};

bool read_file(const std::string& path, std::string& out) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    errno = EISDIR;
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

int run_job(const CommandLine& cl) {
  msl::Interp::Options opts;
  // stdout keeps C's buffering, as Python's: line-buffered on a terminal,
  // block-buffered into a file or pipe (flushed at exit, before stderr
  // output, and on print(flush=True) / sys.stdout.flush()).
  opts.write_stdout = [](std::string_view s) { std::fwrite(s.data(), 1, s.size(), stdout); };
  opts.flush_stdout = [] { std::fflush(stdout); };
  opts.write_stderr = [](std::string_view s) {
    std::fflush(stdout);
    std::fwrite(s.data(), 1, s.size(), stderr);
  };
  opts.stdin_fd = STDIN_FILENO;
  opts.stdout_fd = STDOUT_FILENO;
  opts.stderr_fd = STDERR_FILENO;
  opts.module_path = split_path(std::getenv("MSL_PATH"));
  const char* stdlib = std::getenv("MSL_STDLIB");
  opts.stdlib_dir = stdlib ? std::string(stdlib) : msl::default_stdlib_dir();
  opts.graph_mode = cl.mode;
  opts.save_graphs_dir = cl.save_graphs;
  opts.device = cl.device;
  opts.print_after = cl.print_after;
  opts.activation_layout = cl.layout;
  if (cl.log_level >= 0) {
    opts.log_level = cl.log_level;
  } else if (const char* v = std::getenv("GLOG_v"); v && parse_log_level(v) >= 0) {
    opts.log_level = parse_log_level(v);
  }
  // --emit=llvm runs the program: clusters are generated as it compiles.
  opts.emit_llvm = cl.emit == "llvm";
  opts.emit_cuda = cl.emit == "cuda";
  opts.emit_subgraphs = cl.emit == "subgraphs";
  opts.graph_target = opts.emit_cuda ? "cuda" : cl.graph_target;
  if (!cl.print_after.empty() && cl.print_after != "all") {
    const auto names = msl::jit::all_pass_names();
    if (std::find(names.begin(), names.end(), cl.print_after) == names.end()) {
      std::string all;
      for (auto& n : names) all += (all.empty() ? "" : ", ") + n;
      usage_error("unknown pass '" + cl.print_after + "' for --print-after (passes: " + all + ", or all)");
    }
  }

  // Process-wide kernel settings: the RNG seed (msl.set_seed may change it
  // later) and the kernels' thread count.
  if (cl.seed >= 0) msl::kernels::GlobalGenerator::get().set_seed(static_cast<uint64_t>(cl.seed));
  if (cl.threads > 0) msl::kernels::set_num_threads(static_cast<int>(cl.threads));

  if (!cl.has_code && !cl.run) {
    if (!cl.emit.empty()) usage_error("--emit needs a FILE (msl --emit " + cl.emit + " run FILE)");
    msl::Interp interp(opts);
    return msl::run_repl(interp);
  }

  std::string name = cl.run ? cl.file : "<string>";
  std::string text;
  if (cl.run) {
    if (!read_file(cl.file, text)) {
      std::fprintf(stderr, "msl: error: cannot open file '%s': %s\n", cl.file.c_str(), std::strerror(errno));
      return 2;
    }
  } else {
    text = cl.code;
  }
  auto source = std::make_shared<msl::SourceFile>(name, std::move(text));

  if (!cl.emit.empty() && !opts.emit_llvm && !opts.emit_cuda && !opts.emit_subgraphs) {
    std::vector<msl::Diagnostic> errors;
    std::string out;
    if (cl.emit == "tokens") {
      out = msl::dump_tokens(source, errors);
    } else if (cl.emit == "anf" || cl.emit == "anf-opt" || cl.emit == "grad") {
      if (cl.emit != "grad") return msl::emit_graph_stage(nullptr, source, cl.emit, cl.print_after);
      msl::Interp interp(opts);  // the gradient rules are MSL code
      try {
        return msl::emit_graph_stage(&interp, source, cl.emit, cl.print_after);
      } catch (msl::MslError& e) {
        std::string text = interp.format_exception(e.exc);
        std::fwrite(text.data(), 1, text.size(), stderr);
        return 1;
      }
    } else {
      msl::ParseResult r = msl::parse_module(source);
      errors = std::move(r.errors);
      if (r.module) out = msl::ast::dump(*r.module);
    }
    for (auto& d : errors) std::fputs(msl::format_diagnostic(d).c_str(), stderr);
    std::fputs(out.c_str(), stdout);
    return errors.empty() ? 0 : 1;
  }

  opts.process_exits_after = true;
  opts.argv.push_back(cl.run ? cl.file : "-c");
  for (auto& a : cl.script_args) opts.argv.push_back(a);
  msl::Interp interp(opts);
  if (cl.profile) msl::kernels::set_profiling(true);
  if (!cl.trace_dir.empty()) msl::kernels::start_trace();
  // --profile=trace DIR: the timeline and the table, written at exit.
  struct TraceWriter {
    std::string dir;
    ~TraceWriter() {
      if (dir.empty()) return;
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      try {
        std::string table, cells;
        std::string json = msl::kernels::stop_trace(&table, &cells);
        msl::checkpoint::write_file_atomically((std::filesystem::path(dir) / "trace.json").string(), json);
        msl::checkpoint::write_file_atomically((std::filesystem::path(dir) / "op_statistic.txt").string(), table);
        msl::checkpoint::write_file_atomically((std::filesystem::path(dir) / "cell_statistic.txt").string(), cells);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "msl: error: --profile=trace: %s\n", e.what());
      }
    }
  } trace_writer{cl.trace_dir};
  // --dump DIR, else a dump configuration: --dump-config FILE or, as
  // MindSpore reads it, the file $MINDSPORE_DUMP_CONFIG names.
  std::string dump_config = cl.dump_config;
  if (dump_config.empty() && cl.dump.empty())
    if (const char* env = std::getenv("MINDSPORE_DUMP_CONFIG"); env && *env) dump_config = env;
  try {
    if (!cl.dump.empty()) {
      msl::kernels::start_dump(cl.dump);
    } else if (!dump_config.empty()) {
      if (std::optional<msl::kernels::DumpConfig> c = msl::read_dump_config(dump_config)) msl::kernels::start_dump(*c);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "msl: error: %s\n", e.what());
    return 2;
  }
  struct ProfileReport {
    bool on;
    ~ProfileReport() {
      if (!on) return;
      std::fflush(stdout);
      std::fputs(msl::kernels::profile_report().c_str(), stderr);
      // How graph mode's fused loops were had: a second run of a script
      // should compile none (the disk cache, jit/codegen/object_cache.h).
      msl::jit::codegen::JitStats jit = msl::jit::codegen::ElementwiseJit::stats();
      std::fprintf(stderr, "jit: %lld compiled, %lld from disk cache, %lld from memory\n",
                   static_cast<long long>(jit.compiled), static_cast<long long>(jit.disk_hits),
                   static_cast<long long>(jit.memory_hits));
      // The GPU's: one NVRTC program per graph (jit/codegen/cuda_unit.h).
      msl::jit::codegen::CudaUnitStats units = msl::jit::codegen::cuda_unit_stats();
      if (units.compiled + units.disk_hits > 0)
        std::fprintf(stderr, "cuda: %lld graph programs compiled, %lld from disk cache\n",
                     static_cast<long long>(units.compiled), static_cast<long long>(units.disk_hits));
      // Whole compiled graphs (interp/graph/graph_disk_cache.h): likewise.
      msl::GraphCacheStats graphs = msl::graph_cache_stats();
      std::fprintf(stderr, "graphs: %lld compiled, %lld from disk cache\n", static_cast<long long>(graphs.compiled),
                   static_cast<long long>(graphs.disk_hits));
    }
  } profile_report{cl.profile};
  // Ctrl-C raises KeyboardInterrupt in the running program (so its
  // traceback shows where it was), also in a blocking call (sigint.h).
  msl::SigintScope sigint(interp);
  try {
    interp.run_program(source);
  } catch (msl::MslError& e) {
    std::fflush(stdout);
    std::string text = interp.format_exception(e.exc);
    std::fwrite(text.data(), 1, text.size(), stderr);
    // An uncaught KeyboardInterrupt exits as Python does: 128 + SIGINT.
    bool interrupted = interp.isinstance(e.exc, interp.exception_class("KeyboardInterrupt").get());
    return interrupted ? 130 : 1;
  } catch (msl::MslExit& e) {
    return e.code;
  } catch (std::bad_alloc&) {
    std::fflush(stdout);
    std::fputs("MemoryError: out of memory\n", stderr);
    return 1;
  }
  return 0;
}

void* thread_main(void* arg) {
  // main() blocks SIGINT so that it reaches this thread (interp/core/sigint.h);
  // until a SigintScope takes it, Ctrl-C ends the process as usual.
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &s, nullptr);
  Job* job = static_cast<Job*>(arg);
  job->status = run_job(job->cl);
  std::fflush(stdout);
  // MPI_Finalize on the thread that initialized MPI, after a clean run only
  // (kernels/comm/communicator.h).
  msl::kernels::comm::finish(job->status);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  // `msl compare A B`: a tool over two dump folders; no interpreter.
  if (argc >= 2 && std::string(argv[1]) == "compare")
    return msl::dump_compare_main(std::vector<std::string>(argv + 2, argv + argc), stdout, stderr);
  // `msl summary DIR`: the scalars of TensorBoard event files; no interpreter.
  if (argc >= 2 && std::strcmp(argv[1], "summary") == 0)
    return msl::summary::summary_command(std::vector<std::string>(argv + 2, argv + argc));
  // `msl launch -n N FILE`: N processes of one job under mpirun.
  if (argc >= 2 && std::strcmp(argv[1], "launch") == 0) {
    std::error_code ec;
    std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
    return msl::launch_command(std::vector<std::string>(argv + 2, argv + argc), ec ? argv[0] : self);
  }
  // One process of a job under mpirun: RANK_ID, RANK_SIZE, DEVICE_ID for
  // scripts written for MindSpore's launchers (before any thread starts).
  msl::kernels::comm::export_launcher_environment();
  Job job;
  job.cl = parse_args(argc, argv);
  // SIGINT goes to the interpreter's thread, not to this one, which only
  // waits for it (thread_main unblocks it there).
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  pthread_sigmask(SIG_BLOCK, &s, nullptr);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t{512} << 20);
  pthread_t t;
  if (pthread_create(&t, &attr, thread_main, &job) != 0) {
    thread_main(&job);  // fall back to the main thread's stack
  } else {
    pthread_join(t, nullptr);
  }
  pthread_attr_destroy(&attr);
  std::fflush(stdout);
  return job.status;
}
