#include "kernels/op_site.h"

#include <fmt/format.h>

#include <mutex>
#include <utility>
#include <unordered_set>

namespace msl::kernels {

namespace {
thread_local const OpSite* tl_site = nullptr;
thread_local const std::string* tl_cell = nullptr;
}  // namespace

OpSite::OpSite(const std::string* file, uint32_t line, const std::string* scope)
    : file_(file), line_(line), scope_(scope ? scope : tl_cell), outer_(tl_site) {
  tl_site = this;
}

CellScope::CellScope(const std::string* scope) : outer_(tl_cell) { tl_cell = scope; }
CellScope::~CellScope() { tl_cell = outer_; }
const std::string* current_cell_scope() { return tl_cell; }
const std::string* exchange_cell_scope(const std::string* scope) { return std::exchange(tl_cell, scope); }

const std::string* intern_scope(std::string_view s) {
  static std::mutex mu;
  static std::unordered_set<std::string> names;
  std::lock_guard<std::mutex> lock(mu);
  return &*names.insert(std::string(s)).first;
}

OpSite::~OpSite() { tl_site = outer_; }

const OpSite* current_op_site() { return tl_site; }

std::string op_site_text() {
  const OpSite* s = tl_site;
  return s && s->file() ? fmt::format("{}:{}", *s->file(), s->line()) : "-";
}

}  // namespace msl::kernels
