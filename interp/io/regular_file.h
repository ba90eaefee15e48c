// Opening a file for reading only when it is a regular file, without ever
// waiting: open() of a FIFO with no writer blocks, so a checkpoint or data
// set path naming one would hang the program. The file is opened
// non-blocking (no effect on regular files) and fstat decides. Shared by the
// checkpoint loaders and the data set readers, which word their own errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace msl {

struct RegularFile {
  int fd = -1;          // >= 0: open, the caller closes it
  uint64_t size = 0;
  int error = 0;        // fd < 0: an errno (EISDIR for a folder), or 0 when...
  const char* kind = "";  // ...the path is no regular file: "a FIFO", "a socket", ...
};

RegularFile open_regular_file(const std::string& path);

// Reads `n` bytes at `offset`, retrying after a signal; returns the count
// read, less than n at the end of the file or on a read error (`error` set
// to its errno, else 0).
size_t pread_fully(int fd, uint64_t offset, void* out, size_t n, int& error);

}  // namespace msl
