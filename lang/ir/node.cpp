// Node helpers: operator names, and how constants and attributes are written
// as text (shared by the printer and the error messages of later passes; the
// IR parser reads exactly this syntax back).
#include "lang/ir/node.h"

#include <cmath>
#include <cstdio>

#include "lang/ir/func_graph.h"

namespace msl::ir {

namespace {
struct IrOpInfo {
  const char* name;
  int arity;
};
constexpr IrOpInfo kIrOps[] = {
#define MSL_X(e, name, arity) {name, arity},
    MSL_IR_OPS(MSL_X)
#undef MSL_X
};

// Strings are written with C-style escapes so a name or message with quotes,
// backslashes or newlines stays on one line and reads back unchanged.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}
}  // namespace

const char* ir_op_name(IrOp op) { return kIrOps[static_cast<int>(op)].name; }
int ir_op_arity(IrOp op) { return kIrOps[static_cast<int>(op)].arity; }
bool find_ir_op(std::string_view name, IrOp& out) {
  for (size_t i = 0; i < std::size(kIrOps); ++i)
    if (name == kIrOps[i].name) {
      out = static_cast<IrOp>(i);
      return true;
    }
  return false;
}

bool Node::is_call_of(kernels::Prim p) const {
  if (!is_apply() || !callee()->is_constant()) return false;
  auto r = callee()->as_prim();
  return r && r->prim == p;
}
bool Node::is_call_of(IrOp op) const {
  if (!is_apply() || !callee()->is_constant()) return false;
  auto r = callee()->as_ir_op();
  return r && *r == op;
}

std::string float_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest of %.15g/%.17g that reads back exactly, so round trips are exact.
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string attr_value_str(const kernels::AttrValue& v) {
  return std::visit(
      [](auto&& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool>) {
          return x ? "True" : "False";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          return float_str(x);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          // Always parenthesized (and `(1,)` for one element) so a list of
          // one int never reads back as an int.
          std::string s = "(";
          for (size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + std::to_string(x[i]);
          return s + (x.size() == 1 ? ",)" : ")");
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote(x);
        } else {
          return kernels::dtype_display_name(x);
        }
      },
      v);
}

std::string attrs_str(const kernels::Attrs& attrs) {
  std::string s;
  for (auto& [n, v] : attrs.items()) s += (s.empty() ? "" : ", ") + n + "=" + attr_value_str(v);
  return s;
}

std::string const_value_str(const ConstValue& v) {
  return std::visit(
      [](auto&& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, NoneValue>) {
          return "None";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "True" : "False";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          return float_str(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return quote(x);
        } else if constexpr (std::is_same_v<T, kernels::Tensor>) {
          if (!x.defined()) return "Tensor[]";
          std::string s = std::string("Tensor[") + kernels::dtype_display_name(x.dtype()) + "](";
          for (int i = 0; i < x.ndim(); ++i) s += (i ? ", " : "") + std::to_string(x.dim(i));
          s += ")[";
          bool fl = kernels::is_floating(x.dtype());
          for (int64_t i = 0; i < x.numel(); ++i) {
            double e = x.item_at(i);
            if (i) s += ", ";
            if (x.dtype() == kernels::DType::Bool)
              s += e != 0 ? "True" : "False";
            else if (fl)
              s += float_str(e);
            else
              s += std::to_string(static_cast<int64_t>(e));
          }
          return s + "]";
        } else if constexpr (std::is_same_v<T, PrimRef>) {
          std::string s = kernels::prim_name(x.prim);
          if (!x.attrs.empty()) s += "[" + attrs_str(x.attrs) + "]";
          return s;
        } else if constexpr (std::is_same_v<T, IrOp>) {
          return ir_op_name(x);
        } else if constexpr (std::is_same_v<T, HostRef>) {
          return x ? "$" + x->name() : "$<null>";
        } else {
          return x ? "@" + x->name() : "@<null>";
        }
      },
      v);
}

kernels::Tensor tensor_from_values(kernels::DType dtype, const kernels::Dims& shape,
                                   const std::vector<double>& values) {
  using kernels::DType;
  kernels::Tensor t(dtype, shape);
  int64_t n = t.numel();
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(values.size()); ++i) {
    kernels::store_from_double(t.raw(), dtype, i, values[i]);
  }
  return t;
}

}  // namespace msl::ir
