// TFRecord framing with CRC-32C, and the append-only event file writer
// (event_file.h).
#include "interp/summary/event_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "interp/summary/summary_events.h"

namespace msl::summary {

namespace {

// Slicing-by-8 tables of the reflected Castagnoli polynomial 0x82F63B78:
// a histogram of a large weight is a record of tens of kilobytes, and a
// byte-at-a-time CRC would cost more than encoding it.
struct Crc32cTables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  Crc32cTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
};
const Crc32cTables& tables() {
  static const Crc32cTables tab;
  return tab;
}

constexpr uint32_t kMaskDelta = 0xa282ead8u;

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
void put_u32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}
uint64_t get_le(std::string_view b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + static_cast<size_t>(i)]);
  return v;
}

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  return buf;
}

[[noreturn]] void throw_errno(const std::string& what, const std::string& path) {
  int e = errno;
  throw SystemError(e, path, what + " '" + path + "': " + std::strerror(e));
}

}  // namespace

uint32_t crc32c(std::string_view data, uint32_t crc) {
  const auto& t = tables().t;
  uint32_t c = ~crc;
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  size_t n = data.size();
  while (n >= 8) {
    uint32_t lo = c ^ (uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24);
    c = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
        t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n--) c = t[0][(c ^ *p++) & 0xFF] ^ (c >> 8);
  return ~c;
}

uint32_t masked_crc32c(std::string_view data) {
  uint32_t c = crc32c(data);
  return ((c >> 15) | (c << 17)) + kMaskDelta;
}

std::string frame_record(std::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  put_u64(out, data.size());
  put_u32(out, masked_crc32c(std::string_view(out.data(), 8)));
  out.append(data);
  put_u32(out, masked_crc32c(data));
  return out;
}

RecordFile parse_records(std::string_view bytes, const std::string& path) {
  RecordFile rf;
  size_t at = 0;
  while (at < bytes.size()) {
    if (bytes.size() - at < 12) {
      rf.truncated_tail = true;
      break;
    }
    uint64_t len = get_le(bytes, at, 8);
    uint32_t len_crc = static_cast<uint32_t>(get_le(bytes, at + 8, 4));
    if (len_crc != masked_crc32c(bytes.substr(at, 8)))
      throw FormatError(path + ": record at offset " + std::to_string(at) + ": the length's CRC-32C does not match");
    if (len > bytes.size() - at - 12 || bytes.size() - at - 12 - len < 4) {
      rf.truncated_tail = true;
      break;
    }
    std::string_view data = bytes.substr(at + 12, len);
    uint32_t data_crc = static_cast<uint32_t>(get_le(bytes, at + 12 + len, 4));
    if (data_crc != masked_crc32c(data))
      throw FormatError(path + ": record at offset " + std::to_string(at) + " (" + std::to_string(len) +
                        " bytes): the data's CRC-32C does not match");
    rf.records.emplace_back(data);
    at += 16 + len;
  }
  return rf;
}

RecordFile read_record_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_errno("cannot open", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_records(ss.str(), path);
}

bool is_event_file_name(const std::string& name) { return name.find("tfevents") != std::string::npos; }

std::vector<std::string> find_event_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    errno = fs::exists(dir, ec) ? ENOTDIR : ENOENT;
    throw_errno("cannot read the folder", dir);
  }
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec) && is_event_file_name(it->path().filename().string())) out.push_back(it->path().string());
  std::sort(out.begin(), out.end());
  return out;
}

EventFileWriter::EventFileWriter(const std::string& dir, const std::string& prefix, const std::string& suffix) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  std::string stem = (std::filesystem::path(dir) / (prefix + ".out.tfevents." + std::to_string(seconds) + "." +
                                                    host_name()))
                         .string();
  // O_EXCL: two writers started in the same second get two files.
  for (int n = 0; fd_ < 0; ++n) {
    path_ = stem + (n ? "." + std::to_string(n) : "") + suffix;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0 && (errno != EEXIST || n > 1000)) throw_errno("cannot create the event file", path_);
  }
  write_event(file_version_event(wall_time_now()));
  flush();
}

EventFileWriter::~EventFileWriter() {
  try {
    close();
  } catch (...) {
    // A destructor cannot report; close() explicitly to see the error.
  }
}

void EventFileWriter::write_event(std::string_view event) {
  if (fd_ < 0) throw SystemError(EBADF, path_, "write to a closed event file '" + path_ + "'");
  buffer_ += frame_record(event);
  // Large buffers go out at once: a crash then loses at most this much.
  if (buffer_.size() >= (size_t{1} << 20)) {
    write_all(buffer_);
    buffer_.clear();
  }
}

void EventFileWriter::write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_errno("cannot write the event file", path_);
    }
    bytes.remove_prefix(static_cast<size_t>(n));
    written_ += static_cast<uint64_t>(n);
  }
}

void EventFileWriter::flush() {
  if (fd_ < 0) return;
  write_all(buffer_);
  buffer_.clear();
  if (::fsync(fd_) != 0 && errno != EINVAL) throw_errno("cannot fsync the event file", path_);
}

void EventFileWriter::close() {
  if (fd_ < 0) return;
  try {
    flush();
  } catch (...) {
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw_errno("cannot close the event file", path_);
}

}  // namespace msl::summary
