// The module AST cache (interp/core/module_ast_cache.h): an imported
// module's tree is stored on its first import and read back on the next,
// with the positions of the new run's file, and a damaged, truncated,
// emptied or foreign entry is a miss: the module is parsed again, runs the
// same and the entry is written anew.
#include "interp/core/module_ast_cache.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../temp_dir.h"
#include "interp/core/interp.h"

using namespace msl;
using msl::test::ScopedEnv;
using msl::test::TempDir;
namespace fs = std::filesystem;

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

const char* kModule =
    "class Box:\n"
    "    def __init__(self, v):\n"
    "        self.v = v\n"
    "def show(x, width=6):\n"
    "    return f'{x.v!r:>{width}}|' + ''.join([str(i) for i in range(3)])\n"
    "def fail():\n"
    "    return [1][5]\n";

// Imports the module from `dir` in a fresh interpreter: what it prints, then
// the traceback of a failing call (its position must be the file's).
std::string run_import(const std::string& dir) {
  std::string out;
  Interp::Options opts;
  opts.write_stdout = [&out](std::string_view s) { out += s; };
  opts.module_path = {dir};
  Interp I(std::move(opts));
  try {
    I.run_source(std::make_shared<SourceFile>("<test>", "import cached\nprint(cached.show(cached.Box(42)))\ncached.fail()\n"));
  } catch (MslError& e) {
    out += I.format_exception(e.exc);
  }
  return out;
}

}  // namespace

TEST_CASE("imported modules' trees are cached, and a damaged entry is parsed again") {
  TempDir tmp;
  ScopedEnv xdg("XDG_CACHE_HOME", (tmp / "cache").c_str());
  fs::create_directories(tmp.path / "mods");
  std::string file = tmp / "mods/cached.msl";
  write_file(file, kModule);

  ModuleAstCache cache = ModuleAstCache::from_environment();
  CHECK(cache.dir() == tmp / "cache/msl/ast");
  std::string entry = cache.path(SourceFile(file, kModule));

  std::string expected = run_import(tmp / "mods");
  CHECK(expected.rfind("    42|012\n", 0) == 0);
  CHECK_MESSAGE(expected.find("cached.msl:7:12 in fail\n    return [1][5]\n") != std::string::npos, expected);
  REQUIRE(fs::is_regular_file(entry));
  std::string good = read_file(entry);
  CHECK(cache.load(std::make_shared<SourceFile>(file, kModule)) != nullptr);

  // A second run reads the entry: the same output and positions.
  CHECK(run_import(tmp / "mods") == expected);

  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x5a;  // in the payload: the checksum fails
  std::string damaged[] = {"", "garbage", good.substr(0, good.size() / 2), flipped, good + "x"};
  for (const std::string& bytes : damaged) {
    write_file(entry, bytes);
    CHECK(cache.load(std::make_shared<SourceFile>(file, kModule)) == nullptr);
    CHECK(run_import(tmp / "mods") == expected);
    CHECK(read_file(entry) == good);  // written again
  }

  // Another text is another entry; the old one is not taken for it.
  std::string edited = std::string(kModule) + "\n";
  write_file(file, edited);
  CHECK(cache.path(SourceFile(file, edited)) != entry);
  CHECK(run_import(tmp / "mods") == expected);
  CHECK(fs::is_regular_file(cache.path(SourceFile(file, edited))));
}

TEST_CASE("a module with a syntax error is reported by the parser and never cached") {
  TempDir tmp;
  ScopedEnv xdg("XDG_CACHE_HOME", (tmp / "cache").c_str());
  fs::create_directories(tmp.path / "mods");
  write_file(tmp.path / "mods/broken.msl", "def f(:\n    pass\n");
  for (int run = 0; run < 2; ++run) {
    std::string out;
    Interp::Options opts;
    opts.module_path = {tmp / "mods"};
    Interp I(std::move(opts));
    try {
      I.run_source(std::make_shared<SourceFile>("<test>", "import broken\n"));
    } catch (MslError& e) {
      out = I.format_exception(e.exc);
    }
    CHECK_MESSAGE(out.find("broken.msl:1:6: error:") != std::string::npos, out);
  }
  std::error_code ec;
  CHECK((!fs::exists(tmp / "cache/msl/ast", ec) || fs::is_empty(tmp / "cache/msl/ast", ec)));
}
