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
  // `file` and `scope` must outlive the site; a null scope means the Cell
  // running now in PyNative (CellScope), if any.
  OpSite(const std::string* file, uint32_t line, const std::string* scope = nullptr);
  ~OpSite();
  OpSite(const OpSite&) = delete;
  OpSite& operator=(const OpSite&) = delete;

  const std::string* file() const { return file_; }
  uint32_t line() const { return line_; }
  // The Cell the operation belongs to ("Default/conv1-Conv2d"), or null.
  const std::string* scope() const { return scope_; }

 private:
  const std::string* file_;
  uint32_t line_;
  const std::string* scope_;
  const OpSite* outer_;
};

// The Cell whose construct runs now in PyNative (Cell.__call__ enters it
// while a tool wants sites); graph mode's nodes carry theirs (ir::Loc).
class CellScope {
 public:
  explicit CellScope(const std::string* scope);
  ~CellScope();
  CellScope(const CellScope&) = delete;
  CellScope& operator=(const CellScope&) = delete;

 private:
  const std::string* outer_;
};
const std::string* current_cell_scope();
// Sets the current Cell scope and returns the previous one (for a binding
// that enters and leaves Cells as calls, msl._profiler.enter_cell).
const std::string* exchange_cell_scope(const std::string* scope);
// `s` interned for the process (scopes outlive the timeline that records them).
const std::string* intern_scope(std::string_view s);

// The innermost site on this thread, or null.
const OpSite* current_op_site();
// "FILE:LINE" of the innermost site, or "-".
std::string op_site_text();
// Whether a tool records sites now (dumping or tracing): checked per
// statement by the interpreter, so two relaxed loads, inline.
inline bool op_sites_wanted() { return dumping() || tracing(); }

}  // namespace msl::kernels
