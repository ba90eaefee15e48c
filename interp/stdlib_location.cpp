// Finds the standard library relative to the installed binaries (see
// stdlib_location.h for the order and why).
#include "interp/stdlib_location.h"

#include <dlfcn.h>

#include <filesystem>
#include <initializer_list>
#include <string_view>
#include <system_error>

// Set by interp/CMakeLists.txt: the installed standard library relative to
// the folder of the library and of the executable (from GNUInstallDirs, so
// a build configured with another libdir still finds it), and the source
// tree's copy for binaries run from the build tree.
#ifndef MSL_STDLIB_FROM_LIBDIR
#define MSL_STDLIB_FROM_LIBDIR "../share/msl/stdlib"
#endif
#ifndef MSL_STDLIB_FROM_BINDIR
#define MSL_STDLIB_FROM_BINDIR "../share/msl/stdlib"
#endif
#ifndef MSL_STDLIB_DIR
#define MSL_STDLIB_DIR ""
#endif

namespace msl {

namespace {

namespace fs = std::filesystem;

// `dir` normalized when it holds the standard library, else empty.
std::string stdlib_at(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "msl" / "__init__.msl", ec)) return {};
  fs::path canonical = fs::canonical(dir, ec);
  return ec ? dir.lexically_normal().string() : canonical.string();
}

// The standard library installed next to the binary file `file`.
std::string stdlib_beside(const fs::path& file, std::initializer_list<const char*> relative) {
  if (file.empty() || !file.is_absolute()) return {};
  for (const char* rel : relative) {
    std::string dir = stdlib_at(file.parent_path() / rel);
    if (!dir.empty()) return dir;
  }
  return {};
}

std::string locate() {
  // 1. The file this function is in: libmsl.so when a host links it (its
  //    dli_fname is the path the dynamic loader opened, absolute when found
  //    through RUNPATH or a path); for a static link, the executable, whose
  //    dli_fname may be a bare argv[0] — /proc/self/exe below covers that.
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&default_stdlib_dir), &info) != 0 && info.dli_fname &&
      std::string_view(info.dli_fname).find('/') != std::string_view::npos) {
    std::error_code ec;
    fs::path lib = fs::canonical(info.dli_fname, ec);
    if (!ec) {
      std::string dir = stdlib_beside(lib, {MSL_STDLIB_FROM_LIBDIR, MSL_STDLIB_FROM_BINDIR});
      if (!dir.empty()) return dir;
    }
  }
  // 2. The running executable (bin/msl of an installed tree).
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::string dir = stdlib_beside(exe, {MSL_STDLIB_FROM_BINDIR, MSL_STDLIB_FROM_LIBDIR});
    if (!dir.empty()) return dir;
  }
  // 3. The source tree this was built from (a build-tree binary).
  return MSL_STDLIB_DIR;
}

}  // namespace

const std::string& default_stdlib_dir() {
  static const std::string dir = locate();
  return dir;
}

}  // namespace msl
