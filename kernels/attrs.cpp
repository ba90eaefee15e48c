#include "kernels/attrs.h"

#include <fmt/format.h>

#include "kernels/errors.h"

namespace msl::kernels {

void Attrs::set(const std::string& name, AttrValue v) {
  for (auto& [n, val] : items_)
    if (n == name) {
      val = std::move(v);
      return;
    }
  items_.emplace_back(name, std::move(v));
}

const AttrValue* Attrs::find(const char* name) const {
  for (auto& [n, v] : items_)
    if (n == name) return &v;
  return nullptr;
}

namespace {
[[noreturn]] void wrong_kind(const char* name, const char* want) {
  throw ValueError(fmt::format("attribute '{}' must be {}", name, want));
}
}  // namespace

bool Attrs::get_bool(const char* name, bool dflt) const {
  const AttrValue* v = find(name);
  if (!v) return dflt;
  if (auto* b = std::get_if<bool>(v)) return *b;
  if (auto* i = std::get_if<int64_t>(v)) return *i != 0;
  wrong_kind(name, "a bool");
}

int64_t Attrs::get_int(const char* name, int64_t dflt) const {
  const AttrValue* v = find(name);
  if (!v) return dflt;
  if (auto* i = std::get_if<int64_t>(v)) return *i;
  if (auto* b = std::get_if<bool>(v)) return *b;
  wrong_kind(name, "an int");
}

double Attrs::get_float(const char* name, double dflt) const {
  const AttrValue* v = find(name);
  if (!v) return dflt;
  if (auto* d = std::get_if<double>(v)) return *d;
  if (auto* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  if (auto* b = std::get_if<bool>(v)) return *b;
  wrong_kind(name, "a float");
}

std::vector<int64_t> Attrs::get_ints(const char* name, std::vector<int64_t> dflt) const {
  const AttrValue* v = find(name);
  if (!v) return dflt;
  if (auto* l = std::get_if<std::vector<int64_t>>(v)) return *l;
  if (auto* i = std::get_if<int64_t>(v)) return {*i};
  wrong_kind(name, "a list of ints");
}

std::string Attrs::get_str(const char* name, std::string dflt) const {
  const AttrValue* v = find(name);
  if (!v) return dflt;
  if (auto* s = std::get_if<std::string>(v)) return *s;
  wrong_kind(name, "a str");
}

DType Attrs::get_dtype(const char* name, DType dflt) const {
  const AttrValue* v = find(name);
  if (!v) return dflt;
  if (auto* t = std::get_if<DType>(v)) return *t;
  wrong_kind(name, "a dtype");
}

std::string Attrs::str() const {
  std::string out;
  for (auto& [n, v] : items_) {
    if (!out.empty()) out += ", ";
    out += n + "=";
    std::visit(
        [&](auto&& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, bool>)
            out += x ? "True" : "False";
          else if constexpr (std::is_same_v<T, int64_t>)
            out += std::to_string(x);
          else if constexpr (std::is_same_v<T, double>)
            out += fmt::format("{}", x);
          else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
            out += fmt::format("({})", fmt::join(x, ", "));
          else if constexpr (std::is_same_v<T, std::string>)
            out += "'" + x + "'";
          else
            out += std::string("msl.") + dtype_name(x);
        },
        v);
  }
  return out;
}

}  // namespace msl::kernels
