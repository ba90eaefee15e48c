// The MSL source line of the operation running on this thread, for the
// tools that name ops by where they came from: `msl --dump`'s index (and so
// `msl compare`) and the profiler's timeline. The interpreter sets it per
// statement (PyNative), the graph executor per node (graph mode); lines,
// not columns, because a statement and the expressions in it share their
// line. Scopes nest. Set only while a tool wants it (op_sites_wanted()),
// so the cost otherwise is that check.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/dump.h"
#include "kernels/trace.h"

namespace msl::kernels {

class OpSite {
 public:
  // `file` must outlive the scope.
  OpSite(const std::string* file, uint32_t line);
  ~OpSite();
  OpSite(const OpSite&) = delete;
  OpSite& operator=(const OpSite&) = delete;

  const std::string* file() const { return file_; }
  uint32_t line() const { return line_; }

 private:
  const std::string* file_;
  uint32_t line_;
  const OpSite* outer_;
};

// The innermost site on this thread, or null.
const OpSite* current_op_site();
// "FILE:LINE" of the innermost site, or "-".
std::string op_site_text();
// Whether a tool records sites now (dumping or tracing): checked per
// statement by the interpreter, so two relaxed loads, inline.
inline bool op_sites_wanted() { return dumping() || tracing(); }

}  // namespace msl::kernels
