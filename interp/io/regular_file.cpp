// Regular files for reading (see regular_file.h).
#include "interp/io/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace msl {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

RegularFile open_regular_file(const std::string& path) {
  RegularFile f;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    f.error = errno;
    return f;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    f.error = errno;
    ::close(fd);
    return f;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    if (S_ISDIR(st.st_mode)) f.error = EISDIR;
    else f.kind = file_kind(st.st_mode);
    return f;
  }
  f.fd = fd;
  f.size = static_cast<uint64_t>(st.st_size);
  return f;
}

size_t pread_fully(int fd, uint64_t offset, void* out, size_t n, int& error) {
  auto* p = static_cast<char*>(out);
  size_t done = 0;
  error = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, p + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      error = errno;
      break;
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

}  // namespace msl
