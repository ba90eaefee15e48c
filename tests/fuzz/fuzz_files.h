// Temporary files for the loader fuzz targets whose loader reads a path:
// the input is written to a file in a folder made once per process, so the
// loader runs exactly as on a user's file (open, size, reads).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

namespace msl::fuzz {

// A fresh folder under $TMPDIR (else /tmp), removed at exit.
struct TempFolder {
  std::string path;
  TempFolder() {
    const char* base = std::getenv("TMPDIR");
    path = std::string(base && *base ? base : "/tmp") + "/msl-fuzz-XXXXXX";
    if (!::mkdtemp(path.data())) {
      std::perror("mkdtemp");
      std::abort();
    }
  }
  ~TempFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

inline const std::string& temp_dir() {
  static const TempFolder folder;
  return folder.path;
}

// Writes `bytes` to temp_dir()/name, replacing what was there; the path.
// A failure here is the machine's, not the loader's: it aborts.
inline std::string write_temp_file(const std::string& name, std::string_view bytes) {
  std::string path = temp_dir() + "/" + name;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  size_t done = 0;
  while (fd >= 0 && done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  if (fd < 0 || done != bytes.size() || ::close(fd) != 0) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

// Reports a broken property of a loader (two ways of reading the same
// bytes that disagree, a result that does not read back) and aborts, which
// libFuzzer and the replay both count as a failure.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz property violated: %s\n", what.c_str());
  std::abort();
}

}  // namespace msl::fuzz
