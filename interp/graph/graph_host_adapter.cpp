// The host callables behind ir::HostAdapter (lang/ir/lower.h): what graph
// mode calls for `x.shape`, `x.sum(axis=1)`, `ops.softmax(x, axis=-1)`,
// `x[:, i]` and `x[i] = v` (the functional update x is rebound to). Each is
// a native function whose data says which expression it performs; its
// arguments are the expression's values in source order. It
// does exactly what the interpreter does for the same expression, so
// tracing it (specialization, expansion, autodiff) records the primitives
// the tensor methods and library functions record, and calling it eagerly
// gives PyNative's result.
#include "interp/graph/graph_host_adapter.h"

#include <fmt/format.h>

#include "interp/core/gc.h"
#include "interp/graph/graph_values.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"

namespace msl {

namespace {

struct AdapterData final : NativeData {
  AdapterData(Ref<Class> c, ir::HostAdapter s, Value f)
      : NativeData(std::move(c)), spec(std::move(s)), callee(std::move(f)) {
    GcHeap::track_native(this);
  }
  ir::HostAdapter spec;
  Value callee;  // Call: the callee; undefined when it is the first argument
  void traverse(GcVisitor& v) override { v.visit(callee); }
  void gc_clear() override { callee = Value(); }
};

// The subscript key of `x[index]` from the index's shape and its values.
Value index_key(Interp& I, const ir::HostAdapter& spec, std::span<Value> values) {
  size_t next = 0;
  auto take = [&]() -> Value {
    if (next >= values.size()) I.raise(I.exception_class("RuntimeError").get(), "subscript adapter: too few values");
    return values[next++];
  };
  std::vector<Value> parts;
  for (const ir::HostAdapter::IndexPart& p : spec.index) {
    using K = ir::HostAdapter::IndexPart::Kind;
    switch (p.kind) {
      case K::Value: parts.push_back(take()); break;
      case K::None: parts.push_back(Value::none()); break;
      case K::Ellipsis: parts.push_back(I.ellipsis); break;
      case K::Slice: {
        Value lo = p.lower ? take() : Value::none();
        Value hi = p.upper ? take() : Value::none();
        Value st = p.step ? take() : Value::none();
        parts.push_back(make<Slice>(lo, hi, st).value());
        break;
      }
    }
  }
  if (!spec.index_is_tuple && parts.size() == 1) return parts[0];
  return new_tuple(std::move(parts));
}

// A dict key the lowering kept as a constant (lower_dict.cpp: strings,
// numbers, None).
Value key_value(const ir::ConstValue& k) {
  if (auto b = std::get_if<bool>(&k)) return Value::boolean(*b);
  if (auto i = std::get_if<int64_t>(&k)) return Value::integer(*i);
  if (auto f = std::get_if<double>(&k)) return Value::number(*f);
  if (auto str = std::get_if<std::string>(&k)) return str_value(*str);
  return Value::none();
}

Value call_adapter(Interp& I, Args& a, Object* data) {
  const AdapterData& d = *static_cast<AdapterData*>(data);
  const ir::HostAdapter& s = d.spec;
  std::span<Value> pos = a.pos;
  using K = ir::HostAdapter::Kind;
  bool receiver = s.kind == K::Call ? d.callee.is_undef() : s.kind != K::MakeDict && s.kind != K::Raise;
  if (pos.size() < s.keywords.size() + (receiver ? 1 : 0))
    I.raise(I.exception_class("RuntimeError").get(), "host adapter called with too few arguments");
  if (s.kind == K::GetAttr) return I.getattr(pos[0], I.intern(s.attr));
  if (s.kind == K::GetItem) return I.getitem(pos[0], index_key(I, s, pos.subspan(1)));
  if (s.kind == K::Raise) {
    if (pos.empty() || pos.size() > 2) I.raise(I.exception_class("RuntimeError").get(), "raise adapter: wrong arity");
    Value exc = pos[0];
    if (pos.size() == 2) {
      std::vector<Value> msg{pos[1]};
      exc = I.call(exc, std::span<Value>(msg));
    }
    I.raise_value(exc);
  }
  if (s.kind == K::MakeDict) {
    if (pos.size() != s.keys.size()) I.raise(I.exception_class("RuntimeError").get(), "dict adapter: wrong arity");
    Value d = make<Dict>().value();
    for (size_t i = 0; i < s.keys.size(); ++i) I.setitem(d, key_value(s.keys[i]), pos[i]);
    return d;
  }
  if (s.kind == K::SetItem) {
    if (pos.size() < 2) I.raise(I.exception_class("RuntimeError").get(), "setitem adapter: too few values");
    return tensor_setitem_functional(I, pos[0], index_key(I, s, pos.subspan(1, pos.size() - 2)), pos.back());
  }
  Value target = s.kind == K::Method ? I.getattr(pos[0], I.intern(s.attr)) : receiver ? pos[0] : d.callee;
  if (receiver) pos = pos.subspan(1);
  size_t npos = pos.size() - s.keywords.size();
  std::vector<std::pair<Ref<Str>, Value>> kw;
  for (size_t i = 0; i < s.keywords.size(); ++i) kw.emplace_back(Ref<Str>(I.intern(s.keywords[i])), pos[npos + i]);
  return I.call(target, pos.first(npos), kw);
}

std::string keyword_list(const std::vector<std::string>& keywords) {
  std::string out;
  for (const std::string& k : keywords) out += (out.empty() ? "" : ", ") + k + "=";
  return out;
}

// How the adapter prints in IR dumps ($name) and debug messages.
std::string adapter_name(const ir::HostAdapter& s, const std::string& callee) {
  using K = ir::HostAdapter::Kind;
  switch (s.kind) {
    case K::GetAttr: return "." + s.attr;
    case K::Method: return "." + s.attr + "(" + keyword_list(s.keywords) + ")";
    case K::Call: return callee + "(" + keyword_list(s.keywords) + ")";
    case K::Raise: return "raise";
    case K::MakeDict: {
      std::string items;
      for (const ir::ConstValue& k : s.keys) items += (items.empty() ? "" : ", ") + ir::const_value_str(k) + ": _";
      return "{" + items + "}";
    }
    case K::GetItem:
    case K::SetItem: break;
  }
  std::string index;
  for (const ir::HostAdapter::IndexPart& p : s.index) {
    using P = ir::HostAdapter::IndexPart::Kind;
    if (!index.empty()) index += ", ";
    if (p.kind == P::Value) index += "_";
    if (p.kind == P::None) index += "None";
    if (p.kind == P::Ellipsis) index += "...";
    if (p.kind == P::Slice) index += std::string(p.lower ? "_" : "") + ":" + (p.upper ? "_" : "") + (p.step ? ":_" : "");
  }
  return "[" + index + (s.index_is_tuple && s.index.size() == 1 ? "," : "") + "]" + (s.kind == K::SetItem ? "=" : "");
}

}  // namespace

const std::string* adapter_method(const Value& fn) {
  if (!fn.is(Kind::Native)) return nullptr;
  const Native* n = fn.as<Native>();
  if (n->fn != &call_adapter) return nullptr;
  const ir::HostAdapter& s = static_cast<AdapterData*>(n->data.get())->spec;
  return s.kind == ir::HostAdapter::Kind::Method ? &s.attr : nullptr;
}

const std::string* adapter_attribute(const Value& fn) {
  if (!fn.is(Kind::Native)) return nullptr;
  const Native* n = fn.as<Native>();
  if (n->fn != &call_adapter) return nullptr;
  const ir::HostAdapter& s = static_cast<AdapterData*>(n->data.get())->spec;
  return s.kind == ir::HostAdapter::Kind::GetAttr ? &s.attr : nullptr;
}

bool adapter_raises(const Value& fn) {
  if (!fn.is(Kind::Native)) return false;
  const Native* n = fn.as<Native>();
  return n->fn == &call_adapter &&
         static_cast<AdapterData*>(n->data.get())->spec.kind == ir::HostAdapter::Kind::Raise;
}

ir::ConstValue make_host_adapter(Interp& I, const ir::HostAdapter& spec) {
  // The lowering passes a callee that is not a host constant as the first
  // argument; one that is must be an interpreter value, or the adapter
  // would read its first argument as the callee.
  Value callee = Value::undef();
  std::string callee_name = "call";  // the callee is the first argument
  if (auto h = std::get_if<ir::HostRef>(&spec.callee)) {
    auto hv = dynamic_cast<const HostValue*>(h->get());
    if (!hv)
      I.raise(I.exception_class("RuntimeError").get(),
              "graph mode cannot call the host object $" + (*h)->name() + " with keyword arguments");
    callee = hv->value();
    callee_name = hv->name();
  }
  std::string name = adapter_name(spec, callee_name);
  Ref<AdapterData> data(new AdapterData(I.cls_object, spec, callee));
  Value fn = make<Native>(name, &call_adapter, data).value();
  return ir::HostRef(std::make_shared<const HostValue>(fn, name));
}

}  // namespace msl
