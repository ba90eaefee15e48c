// Abstract values: equality, printing, identity keys and join (abstract.h).
#include "jit/abstract.h"

#include <cstdio>

namespace msl::jit {

namespace {

bool same_const(const ir::ConstValue& a, const ir::ConstValue& b) {
  if (a.index() != b.index()) return false;
  if (auto x = std::get_if<bool>(&a)) return *x == std::get<bool>(b);
  if (auto x = std::get_if<int64_t>(&a)) return *x == std::get<int64_t>(b);
  if (auto x = std::get_if<double>(&a)) {
    double y = std::get<double>(b);
    return *x == y || (*x != *x && y != y);  // NaN constants are the same constant
  }
  if (auto x = std::get_if<std::string>(&a)) return *x == std::get<std::string>(b);
  return std::holds_alternative<ir::NoneValue>(a);
}

bool same_items(const std::vector<AbsValue>& a, const std::vector<AbsValue>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

std::string dims_str(const kernels::Dims& d) {
  std::string s = "(";
  for (int i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + ")";
}

std::string callee_key(const AbsCallee& c) {
  std::string s(static_cast<size_t>(c.j), 'J');
  switch (c.kind) {
    case AbsCallee::Kind::Graph: {
      char buf[96];
      std::snprintf(buf, sizeof buf, "@%u/%p/%u/%p", c.graph ? c.graph->id() : 0u, static_cast<const void*>(c.context),
                    c.origin ? c.origin->id() : 0u, static_cast<const void*>(c.origin_context));
      s += buf;
      break;
    }
    case AbsCallee::Kind::Prim: s += ir::const_value_str(ir::ConstValue(c.prim)); break;
    case AbsCallee::Kind::Op: s += ir::ir_op_name(c.op); break;
    case AbsCallee::Kind::Host: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "$%p", static_cast<const void*>(c.host.get()));
      s += buf;
      break;
    }
  }
  if (!c.bound.empty()) {
    s += "[";
    for (const AbsValue& b : c.bound) s += identity_key(b) + ";";
    s += "]";
  }
  return s;
}

}  // namespace

bool AbsValue::is_constant() const {
  auto s = get_if<AbsScalar>();
  return s && s->value.has_value();
}

bool operator==(const AbsCallee& a, const AbsCallee& b) {
  if (a.kind != b.kind || a.j != b.j || !same_items(a.bound, b.bound)) return false;
  switch (a.kind) {
    case AbsCallee::Kind::Graph:
      return a.graph == b.graph && a.context == b.context && a.origin == b.origin &&
             a.origin_context == b.origin_context;
    case AbsCallee::Kind::Prim: return a.prim.prim == b.prim.prim && a.prim.attrs.str() == b.prim.attrs.str();
    case AbsCallee::Kind::Op: return a.op == b.op;
    case AbsCallee::Kind::Host: return a.host == b.host;
  }
  return false;
}

bool operator==(const AbsValue& a, const AbsValue& b) {
  if (a.v.index() != b.v.index()) return false;
  if (auto x = a.get_if<AbsTensor>()) {
    auto y = b.get_if<AbsTensor>();
    return x->dtype == y->dtype && x->shape == y->shape && x->device == y->device;
  }
  if (auto x = a.get_if<AbsScalar>()) {
    auto y = b.get_if<AbsScalar>();
    if (x->kind != y->kind || x->value.has_value() != y->value.has_value()) return false;
    return !x->value || same_const(*x->value, *y->value);
  }
  if (auto x = a.get_if<AbsTuple>()) return same_items(x->items, b.get_if<AbsTuple>()->items);
  if (auto x = a.get_if<AbsFunc>()) {
    // Sets: every callee of one is in the other (sizes match, no duplicates).
    auto y = b.get_if<AbsFunc>();
    if (x->callees.size() != y->callees.size()) return false;
    for (const AbsCallee& c : x->callees) {
      bool found = false;
      for (const AbsCallee& d : y->callees) found = found || c == d;
      if (!found) return false;
    }
    return true;
  }
  return true;  // the field-less kinds
}

AbsValue abs_tensor(kernels::DType dtype, kernels::Dims shape, kernels::DeviceType device) {
  return AbsTensor{dtype, shape, device};
}
AbsValue abs_scalar(ScalarKind kind) { return AbsScalar{kind, std::nullopt}; }
AbsValue abs_tuple(std::vector<AbsValue> items) { return AbsTuple{std::move(items)}; }

AbsValue abs_const(const ir::ConstValue& value) {
  std::optional<ScalarKind> k = scalar_kind_of(value);
  if (!k) return AbsAny{};
  return AbsScalar{*k, value};
}

AbsValue abs_graph_func(ir::FuncGraph* g, const SpecContext* context) {
  AbsCallee c;
  c.kind = AbsCallee::Kind::Graph;
  c.graph = g;
  c.context = context;
  return AbsFunc{{std::move(c)}};
}

std::optional<ScalarKind> scalar_kind_of(const ir::ConstValue& v) {
  if (std::holds_alternative<bool>(v)) return ScalarKind::Bool;
  if (std::holds_alternative<int64_t>(v)) return ScalarKind::Int;
  if (std::holds_alternative<double>(v)) return ScalarKind::Float;
  if (std::holds_alternative<std::string>(v)) return ScalarKind::Str;
  if (std::holds_alternative<ir::NoneValue>(v)) return ScalarKind::None;
  return std::nullopt;
}

std::string to_string(ScalarKind k) {
  switch (k) {
    case ScalarKind::Bool: return "Bool";
    case ScalarKind::Int: return "Int64";
    case ScalarKind::Float: return "Float32";
    case ScalarKind::Str: return "String";
    case ScalarKind::None: return "None";
  }
  return "?";
}

std::string to_string(const AbsValue& a) {
  struct V {
    std::string operator()(const AbsBottom&) const { return "Pending"; }
    std::string operator()(const AbsTensor& t) const {
      std::string s = std::string("Tensor[") + kernels::dtype_display_name(t.dtype) + "]" + dims_str(t.shape);
      if (t.device != kernels::DeviceType::CPU) s += std::string("@") + kernels::device_type_name(t.device);
      return s;
    }
    std::string operator()(const AbsScalar& s) const {
      if (s.kind == ScalarKind::None) return "None";
      std::string out = to_string(s.kind);
      if (s.value) out += "=" + ir::const_value_str(*s.value);
      return out;
    }
    std::string operator()(const AbsTuple& t) const {
      std::string s = "(";
      for (size_t i = 0; i < t.items.size(); ++i) s += (i ? ", " : "") + to_string(t.items[i]);
      return s + (t.items.size() == 1 ? ",)" : ")");
    }
    std::string operator()(const AbsFunc&) const { return "Func"; }
    std::string operator()(const AbsEnv&) const { return "Env"; }
    std::string operator()(const AbsState&) const { return "State"; }
    std::string operator()(const AbsAny&) const { return "Any"; }
  };
  return std::visit(V{}, a.v);
}

std::string identity_key(const AbsValue& a) {
  if (auto t = a.get_if<AbsTuple>()) {
    std::string s = "(";
    for (const AbsValue& x : t->items) s += identity_key(x) + ",";
    return s + ")";
  }
  if (auto f = a.get_if<AbsFunc>()) {
    std::string s = "{";
    for (const AbsCallee& c : f->callees) s += callee_key(c) + "|";
    return s + "}";
  }
  return to_string(a);
}

std::optional<AbsValue> join(const AbsValue& a, const AbsValue& b, JoinFailure* why) {
  if (a.is_bottom()) return b;
  if (b.is_bottom()) return a;
  if (a.is<AbsAny>() || b.is<AbsAny>()) return AbsValue(AbsAny{});
  if (a == b) return a;
  auto fail = [&]() -> std::optional<AbsValue> {
    if (why) {
      why->left = to_string(a);
      why->right = to_string(b);
    }
    return std::nullopt;
  };
  if (a.v.index() != b.v.index()) return fail();
  if (auto x = a.get_if<AbsScalar>()) {
    if (x->kind != b.get_if<AbsScalar>()->kind) return fail();
    return abs_scalar(x->kind);
  }
  if (auto x = a.get_if<AbsTuple>()) {
    const auto& ys = b.get_if<AbsTuple>()->items;
    if (x->items.size() != ys.size()) return fail();
    std::vector<AbsValue> items;
    for (size_t i = 0; i < ys.size(); ++i) {
      std::optional<AbsValue> j = join(x->items[i], ys[i], why);
      if (!j) {
        if (why) why->path.insert(why->path.begin(), i);
        return std::nullopt;
      }
      items.push_back(std::move(*j));
    }
    return abs_tuple(std::move(items));
  }
  if (auto x = a.get_if<AbsFunc>()) {
    AbsFunc u = *x;
    for (const AbsCallee& c : b.get_if<AbsFunc>()->callees) {
      bool found = false;
      for (const AbsCallee& d : u.callees) found = found || c == d;
      if (!found) u.callees.push_back(c);
    }
    return AbsValue(std::move(u));
  }
  return fail();  // tensors that differ in dtype, shape or device
}

}  // namespace msl::jit
