// TensorBoard event files below the interpreter (msl_summary): the TFRecord
// framing, the writer of an append-only event stream, and the reader that
// checks every record.
//
// A record is
//   uint64 length (little-endian)
//   uint32 masked_crc32c(length bytes)
//   byte   data[length]          (a serialized Event)
//   uint32 masked_crc32c(data)
// where masked_crc32c(x) = ((c >> 15) | (c << 17)) + 0xa282ead8 over the
// CRC-32C (Castagnoli) c of x: TFRecord's framing, so that TensorBoard,
// TensorFlow's tf_record_iterator and tensorboardX read the files.
//
// Crash safety: an event file is append-only. Records are written whole
// through a buffer; flush() and close() write the buffer and fsync, so the
// records written before a flush survive a crash, and a crash can only
// leave a partial LAST record, never damage an earlier one. The reader
// reports such a tail (truncated_tail) instead of failing, as TensorBoard
// ignores it; a CRC mismatch anywhere is an error.
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace msl::summary {

// A system call failed (errno `err` on `path`).
struct SystemError : std::runtime_error {
  SystemError(int e, std::string p, const std::string& what) : std::runtime_error(what), err(e), path(std::move(p)) {}
  int err;
  std::string path;
};

// The bytes are not a valid event file (the message names the file, the
// record's offset and what is wrong).
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

uint32_t crc32c(std::string_view data, uint32_t crc = 0);
uint32_t masked_crc32c(std::string_view data);
// One record: length, its CRC, the data, the data's CRC.
std::string frame_record(std::string_view data);

struct RecordFile {
  std::vector<std::string> records;  // each record's data, in file order
  bool truncated_tail = false;       // the file ends inside a record
};
// Reads every record of `bytes`, checking both CRCs of each (`path` names
// the file in errors).
RecordFile parse_records(std::string_view bytes, const std::string& path);
RecordFile read_record_file(const std::string& path);

// Whether `name` (a file name, no folder) is an event file TensorBoard
// loads: it contains "tfevents".
bool is_event_file_name(const std::string& name);
// The event files under `dir` (recursively), sorted by path.
std::vector<std::string> find_event_files(const std::string& dir);

class EventFileWriter {
 public:
  // Creates DIR/PREFIX.out.tfevents.<seconds>.<hostname><SUFFIX>, TensorBoard's
  // name (a file of that name already there gets ".<n>" before the suffix),
  // creating DIR when missing, and writes the first event, file_version
  // "brain.Event:2".
  EventFileWriter(const std::string& dir, const std::string& prefix = "events", const std::string& suffix = "");
  ~EventFileWriter();
  EventFileWriter(const EventFileWriter&) = delete;
  EventFileWriter& operator=(const EventFileWriter&) = delete;

  const std::string& path() const { return path_; }
  // Appends one serialized Event (buffered).
  void write_event(std::string_view event);
  // Writes the buffer and fsyncs the file.
  void flush();
  // flush(), then closes; further writes are an error. Idempotent.
  void close();
  bool closed() const { return fd_ < 0; }
  uint64_t bytes_written() const { return written_; }

 private:
  void write_all(std::string_view bytes);
  std::string path_;
  std::string buffer_;
  int fd_ = -1;
  uint64_t written_ = 0;
};

}  // namespace msl::summary
