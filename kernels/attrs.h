// Attributes of a primitive application: the compile-time parameters that are
// not tensors (axes, keep_dims, strides, padding, a dtype, an RNG seed).
//
// Attributes are a short list of (name, value) pairs; each primitive declares
// its attribute names and kinds once, in its registry entry (primitives.h),
// and kernels read them by name. Lists are at most a handful of entries, so a
// linear search is cheaper than any map.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "kernels/dtype.h"

namespace msl::kernels {

using AttrValue = std::variant<bool, int64_t, double, std::vector<int64_t>, std::string, DType>;

class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> init) : items_(init) {}

  void set(const std::string& name, AttrValue v);
  bool has(const char* name) const { return find(name) != nullptr; }
  const AttrValue* find(const char* name) const;

  // Typed getters. A missing attribute returns `dflt`; a present one of the
  // wrong kind throws ValueError naming the attribute. get_int accepts a
  // bool, get_float accepts an int.
  bool get_bool(const char* name, bool dflt = false) const;
  int64_t get_int(const char* name, int64_t dflt = 0) const;
  double get_float(const char* name, double dflt = 0) const;
  std::vector<int64_t> get_ints(const char* name, std::vector<int64_t> dflt = {}) const;
  std::string get_str(const char* name, std::string dflt = "") const;
  DType get_dtype(const char* name, DType dflt = DType::Float32) const;

  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  // "axes=(0, 1), keep_dims=True": for IR printing and error messages.
  std::string str() const;

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;
};

}  // namespace msl::kernels
