#include "interp/core/executable_stamp.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <string_view>

namespace msl {

namespace {

std::string compute_stamp() {
  std::string path = "/proc/self/exe";
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&compute_stamp), &info) != 0 && info.dli_fname && info.dli_fname[0] == '/' &&
      std::string_view(info.dli_fname).find(".so") != std::string_view::npos)
    path = info.dli_fname;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "unknown";
  return fmt::format("{} {} {}.{}", path == "/proc/self/exe" ? "exe" : "library", static_cast<long long>(st.st_size),
                     static_cast<long long>(st.st_mtim.tv_sec), static_cast<long>(st.st_mtim.tv_nsec));
}

}  // namespace

const std::string& executable_stamp() {
  static const std::string stamp = compute_stamp();
  return stamp;
}

}  // namespace msl
