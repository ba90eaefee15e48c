#include "kernels/op_site.h"

#include <fmt/format.h>

namespace msl::kernels {

namespace {
thread_local const OpSite* tl_site = nullptr;
}  // namespace

OpSite::OpSite(const std::string* file, uint32_t line) : file_(file), line_(line), outer_(tl_site) { tl_site = this; }

OpSite::~OpSite() { tl_site = outer_; }

const OpSite* current_op_site() { return tl_site; }

std::string op_site_text() {
  const OpSite* s = tl_site;
  return s && s->file() ? fmt::format("{}:{}", *s->file(), s->line()) : "-";
}

}  // namespace msl::kernels
