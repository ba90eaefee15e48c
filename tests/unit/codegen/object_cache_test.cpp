// The on-disk compile cache of fused loops (jit/codegen/object_cache.h):
// the cache directory taken from the environment; entries stored and read
// back; every truncation and every flipped byte of an entry, a wrong magic
// and another key's file read as misses; unusable directories turn the
// cache off without errors. Then the JIT with it: a compile writes one
// object and a repeat is a memory hit; a second process (this test binary
// run again on one test case) loads the object instead of compiling and
// computes the same values as float64 code here; damaged files are
// recompiled and rewritten; an unwritable cache still compiles.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "../temp_dir.h"
#include "jit/codegen/elementwise_jit.h"
#include "jit/codegen/object_cache.h"

extern char** environ;

using namespace msl::jit::codegen;
namespace fs = std::filesystem;

using msl::test::ScopedEnv;
using msl::test::TempDir;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

// The files in `dir` (none when it does not exist).
std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    out.push_back(it->path());
  return out;
}

// The key text an entry file repeats after its magic and version.
std::string key_of_entry(const std::string& file) {
  uint32_t len = 0;
  REQUIRE(file.size() >= 16);
  std::memcpy(&len, file.data() + 12, 4);
  REQUIRE(file.size() >= 16 + len);
  return file.substr(16, len);
}

// y0 = tanh(x) * a, y1 = sigmoid(x) - exp(a / 3 + c): two outputs sharing
// inputs; `c` makes programs distinct (each is compiled once per process).
EwProgram two_outputs(float c) {
  EwProgram p;
  int x = p.input(0), a = p.input(1);
  int y0 = p.binary(EwOp::Mul, p.unary(EwOp::Tanh, x), a);
  int e = p.unary(EwOp::Exp, p.binary(EwOp::Add, p.binary(EwOp::Div, a, p.constant(3.0f)), p.constant(c)));
  p.outputs = {y0, p.binary(EwOp::Sub, p.unary(EwOp::Sigmoid, x), e)};
  return p;
}

// Runs `p` (two_outputs(c)) over 1000 elements and checks both outputs
// against float64.
void check_two_outputs(EwFunction fn, float c) {
  const size_t n = 1000;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> x(n), a(n), y0(n, -9.0f), y1(n, -9.0f);
  for (size_t i = 0; i < n; ++i) x[i] = u(rng), a[i] = u(rng);
  const float* in[] = {x.data(), a.data()};
  float* out[] = {y0.data(), y1.data()};
  ElementwiseJit::run(fn, in, out, static_cast<int64_t>(n));
  for (size_t i = 0; i < n; ++i) {
    double xd = x[i], ad = a[i];
    double w0 = std::tanh(xd) * ad, w1 = 1.0 / (1.0 + std::exp(-xd)) - std::exp(ad / 3.0 + c);
    INFO("element " << i << ": x=" << x[i] << " a=" << a[i]);
    REQUIRE(std::fabs(y0[i] - w0) <= 1e-5 * std::fabs(w0) + 1e-6);
    REQUIRE(std::fabs(y1[i] - w1) <= 1e-5 * std::fabs(w1) + 1e-6);
  }
}

// Runs this test binary on the test case "object cache child process" with
// MSL_CACHE_CHILD_EXPECT=`expect` and returns its exit status; its output
// goes to a log file that is shown when the status is not 0.
int run_child(const char* expect, const fs::path& log) {
  ScopedEnv env("MSL_CACHE_CHILD_EXPECT", expect);
  std::string self = fs::read_symlink("/proc/self/exe").string();
  std::vector<std::string> args = {self, "--no-skip", "--test-case=object cache child process"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, self.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  REQUIRE(rc == 0);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (code != 0) MESSAGE("child (" << expect << ") failed:\n" << read_file(log));
  return code;
}

constexpr float kChildConstant = 0.375f;

}  // namespace

// ------------------------------------------------------------- ObjectCache

TEST_CASE("the cache directory comes from XDG_CACHE_HOME, else HOME; neither turns it off") {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache"), home("HOME", "/home/u");
    CHECK(ObjectCache::from_environment().dir() == "/x/cache/msl/kernels");
  }
  {
    // Relative XDG values are ignored (XDG base directory spec).
    ScopedEnv xdg("XDG_CACHE_HOME", "rel"), home("HOME", "/home/u");
    CHECK(ObjectCache::from_environment().dir() == "/home/u/.cache/msl/kernels");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", ""), home("HOME", "/home/u");
    CHECK(ObjectCache::from_environment().dir() == "/home/u/.cache/msl/kernels");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr), home("HOME", nullptr);
    ObjectCache off = ObjectCache::from_environment();
    CHECK_FALSE(off.enabled());
    CHECK_FALSE(off.store("k", "object"));
    CHECK_FALSE(off.load("k").has_value());
  }
}

TEST_CASE("an entry is stored under its key's hash and read back; another key misses") {
  TempDir tmp;
  ObjectCache cache((tmp.path / "a" / "b").string());  // made on the first store
  std::string object;
  for (int i = 0; i < 3000; ++i) object += static_cast<char>(i * 37);  // every byte value, NULs included
  std::string key = "program 1\ntarget x86_64\n";
  CHECK_FALSE(cache.load(key).has_value());
  REQUIRE(cache.store(key, object));
  std::string name = fs::path(cache.path(key)).filename().string();
  CHECK(name.size() == 34);
  CHECK(name.find_first_not_of("0123456789abcdef") == 32);
  CHECK(name.substr(32) == ".o");
  CHECK(files_in(cache.dir()).size() == 1);  // the temporary file was renamed
  REQUIRE(cache.load(key).has_value());
  CHECK(*cache.load(key) == object);
  CHECK_FALSE(cache.load("program 2\ntarget x86_64\n").has_value());
  CHECK(ObjectCache::hash(key) != ObjectCache::hash("program 2\ntarget x86_64\n"));
  // Storing again replaces the entry.
  REQUIRE(cache.store(key, "shorter"));
  CHECK(*cache.load(key) == "shorter");
}

TEST_CASE("a folder over its size loses the entries written longest ago, down to three quarters") {
  TempDir tmp;
  const std::string object(1000, 'x');
  const uint64_t entry = ObjectCache::encode("key 00", object).size();  // every key below is as long
  ObjectCache writer(tmp.path.string());  // the default size: its stores trim nothing here
  ObjectCache cache(tmp.path.string(), 8 * entry);  // room for 8 entries
  auto t0 = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (int i = 0; i < 12; ++i) {
    std::string key = fmt::format("key {:02d}", i);
    REQUIRE(writer.store(key, object));
    fs::last_write_time(cache.path(key), t0 + std::chrono::minutes(i));  // written in key order
  }
  write_file(tmp.path / "other.txt", "not an entry");  // only entries count, and only they go
  // 12 entries over a room for 8: the 6 oldest go (down to 6 = 3/4 of 8).
  CHECK(cache.prune() == 6);
  for (int i = 0; i < 12; ++i) CHECK(cache.load(fmt::format("key {:02d}", i)).has_value() == (i >= 6));
  CHECK(fs::exists(tmp.path / "other.txt"));
  CHECK(cache.prune() == 0);  // under the size: nothing goes
}

TEST_CASE("a file under another key's name (a hash collision) is a miss") {
  TempDir tmp;
  ObjectCache cache(tmp.path.string());
  REQUIRE(cache.store("key A", "object A"));
  fs::copy_file(cache.path("key A"), cache.path("key B"));
  CHECK_FALSE(cache.load("key B").has_value());
  CHECK(*cache.load("key A") == "object A");
}

TEST_CASE("every truncation, every flipped byte and trailing bytes make an entry unreadable") {
  std::string key = "the key", object = "relocatable object bytes";
  std::string file = ObjectCache::encode(key, object);
  REQUIRE(ObjectCache::decode(key, file) == object);
  CHECK(file.size() == 8 + 4 + 4 + key.size() + 8 + 8 + object.size());
  for (size_t n = 0; n < file.size(); ++n) {
    CAPTURE(n);
    CHECK_FALSE(ObjectCache::decode(key, file.substr(0, n)).has_value());
  }
  for (size_t i = 0; i < file.size(); ++i) {
    CAPTURE(i);
    std::string bad = file;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    CHECK_FALSE(ObjectCache::decode(key, bad).has_value());
  }
  CHECK_FALSE(ObjectCache::decode(key, file + "x").has_value());
  // A huge claimed key or payload length is rejected without reading past the end.
  std::string big = file;
  big[12] = static_cast<char>(0xff), big[13] = static_cast<char>(0xff);
  CHECK_FALSE(ObjectCache::decode(key, big).has_value());
}

TEST_CASE("damaged files on disk are misses and a store overwrites them") {
  TempDir tmp;
  ObjectCache cache(tmp.path.string());
  REQUIRE(cache.store("k", "payload"));
  fs::path p = cache.path("k");
  std::string good = read_file(p);
  for (std::string bad : {std::string(), good.substr(0, good.size() / 2), "XSLKOBJ" + good.substr(7)}) {
    write_file(p, bad);
    CHECK_FALSE(cache.load("k").has_value());
  }
  REQUIRE(cache.store("k", "payload"));
  CHECK(read_file(p) == good);
  // A directory where the entry should be is a miss too, and cannot be replaced.
  fs::remove(p);
  fs::create_directory(p);
  CHECK_FALSE(cache.load("k").has_value());
  CHECK_FALSE(cache.store("k", "payload"));
  CHECK(files_in(tmp.path).size() == 1);  // no temporary left behind
}

TEST_CASE("a directory that cannot be made turns storing off without errors") {
  TempDir tmp;
  write_file(tmp.path / "file", "not a directory");
  ObjectCache cache((tmp.path / "file" / "msl").string());
  CHECK_FALSE(cache.store("k", "payload"));
  CHECK_FALSE(cache.load("k").has_value());
}

// ------------------------------------------------------------- the JIT

TEST_CASE("a compile writes one object to the disk cache; a repeat is a memory hit") {
  TempDir tmp;
  ScopedEnv xdg("XDG_CACHE_HOME", tmp.path.c_str());
  ElementwiseJit& jit = ElementwiseJit::instance();
  JitStats before = ElementwiseJit::stats();
  EwFunction fn = jit.compile(two_outputs(1.25f));
  JitStats after = ElementwiseJit::stats();
  CHECK(after.compiled == before.compiled + 1);
  CHECK(after.disk_hits == before.disk_hits);
  std::vector<fs::path> files = files_in(tmp.path / "msl" / "kernels");
  REQUIRE(files.size() == 1);
  CHECK(files[0].extension() == ".o");
  check_two_outputs(fn, 1.25f);
  bool same_loop = jit.compile(two_outputs(1.25f)) == fn;
  CHECK(same_loop);
  JitStats again = ElementwiseJit::stats();
  CHECK(again.memory_hits == after.memory_hits + 1);
  CHECK(again.compiled == after.compiled);
  CHECK(files_in(tmp.path / "msl" / "kernels").size() == 1);
}

TEST_CASE("with the disk cache off or unusable, programs still compile and run") {
  TempDir tmp;
  ElementwiseJit& jit = ElementwiseJit::instance();
  {
    ScopedEnv xdg("XDG_CACHE_HOME", tmp.path.c_str());
    jit.set_disk_cache(false);
    JitStats before = ElementwiseJit::stats();
    EwFunction fn = jit.compile(two_outputs(-0.5f));
    jit.set_disk_cache(true);
    CHECK(ElementwiseJit::stats().compiled == before.compiled + 1);
    CHECK(files_in(tmp.path).empty());
    check_two_outputs(fn, -0.5f);
  }
  {
    write_file(tmp.path / "file", "not a directory");
    std::string unusable = (tmp.path / "file").string();
    ScopedEnv xdg("XDG_CACHE_HOME", unusable.c_str());
    JitStats before = ElementwiseJit::stats();
    EwFunction fn = jit.compile(two_outputs(0.75f));
    CHECK(ElementwiseJit::stats().compiled == before.compiled + 1);
    check_two_outputs(fn, 0.75f);
  }
}

// Run only by the next test case, in a fresh process: compiles
// two_outputs(kChildConstant), checks its values and that it was answered
// as MSL_CACHE_CHILD_EXPECT says ("disk" or "compiled").
TEST_CASE("object cache child process" * doctest::skip()) {
  const char* expect = std::getenv("MSL_CACHE_CHILD_EXPECT");
  REQUIRE(expect != nullptr);
  EwFunction fn = ElementwiseJit::instance().compile(two_outputs(kChildConstant));
  JitStats s = ElementwiseJit::stats();
  CHECK(s.memory_hits == 0);
  CHECK(s.disk_hits == (std::string(expect) == "disk" ? 1 : 0));
  CHECK(s.compiled == (std::string(expect) == "compiled" ? 1 : 0));
  check_two_outputs(fn, kChildConstant);
}

TEST_CASE("a second process loads the object; damaged entries are recompiled and rewritten") {
  TempDir tmp;
  ScopedEnv xdg("XDG_CACHE_HOME", tmp.path.c_str());
  fs::path log = tmp.path / "child.log", kernels = tmp.path / "msl" / "kernels";
  REQUIRE(run_child("compiled", log) == 0);
  std::vector<fs::path> files = files_in(kernels);
  REQUIRE(files.size() == 1);
  fs::path entry = files[0];
  std::string good = read_file(entry);
  std::string key = key_of_entry(good);
  CHECK(key.find(two_outputs(kChildConstant).text()) != std::string::npos);
  REQUIRE(ObjectCache::decode(key, good).has_value());
  REQUIRE(run_child("disk", log) == 0);

  std::string flipped = good;
  flipped[good.size() - 10] = static_cast<char>(flipped[good.size() - 10] ^ 1);  // in the payload
  std::string wrong_magic = "XSLKOBJ" + good.substr(7);
  for (const std::string& bad : {good.substr(0, good.size() / 2), flipped, wrong_magic, std::string()}) {
    CAPTURE(bad.size());
    write_file(entry, bad);
    CHECK(run_child("compiled", log) == 0);
    CHECK(ObjectCache::decode(key, read_file(entry)).has_value());  // rewritten whole
    CHECK(files_in(kernels).size() == 1);
  }
  CHECK(run_child("disk", log) == 0);

  // An unusable cache directory: the child compiles, and nothing breaks.
  write_file(tmp.path / "file", "not a directory");
  std::string unusable = (tmp.path / "file").string();
  ScopedEnv bad_xdg("XDG_CACHE_HOME", unusable.c_str());
  CHECK(run_child("compiled", log) == 0);
}
