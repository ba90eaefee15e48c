// Conversions between MSL values and graph-executor values (graph_values.h).
#include "interp/graph/graph_values.h"

#include <set>

#include "interp/graph/graph_compiler_impl.h"
#include "interp/graph/graph_host_adapter.h"

#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"

namespace msl {

namespace {

// A graph closure (or partial) handed back to MSL code: calling it runs the
// executor. The class is a plain builtin-like class created once.
struct GraphFunctionObj final : NativeData {
  GraphFunctionObj(Ref<Class> c, exec::RtValue v, Class* tensor_cls)
      : NativeData(std::move(c)), fn(std::move(v)), tensor_cls(tensor_cls) {}
  exec::RtValue fn;
  Class* tensor_cls;
};

Value graph_function_call(Interp& I, Args& a, Object* data);

Class* graph_function_class(Interp& I) {
  Ref<Class>& cls = compiler_of(I).graph_fn_cls;
  if (!cls) {
    cls = I.new_class("GraphFunction", I.cls_object.get(), "msl._graph", true);
    I.def_method(cls.get(), "__call__", graph_function_call);
  }
  return cls.get();
}

Value graph_function_call(Interp& I, Args& a, Object*) {
  if (a.pos.empty() || !is_graph_function(a.pos[0])) I.raise(I.exception_class("TypeError").get(), "bad call");
  auto* self = static_cast<GraphFunctionObj*>(a.pos[0].obj());
  if (!a.kw.empty()) I.raise(I.exception_class("TypeError").get(), "a graph function takes no keyword arguments");
  std::vector<exec::RtValue> args;
  for (size_t i = 1; i < a.pos.size(); ++i) args.push_back(to_rt(I, a.pos[i]));
  exec::RtValue r;
  try {
    r = exec::call_value(self->fn, std::move(args), compiler_of(I).exec_options());
  } catch (...) {
    raise_exec_error(I);
  }
  return from_rt(I, self->tensor_cls, r);
}

}  // namespace

bool HostValue::gradient_free() const {
  if (const std::string* attr = adapter_attribute(value_))
    return *attr == "dtype" || *attr == "shape" || *attr == "ndim";
  if (!value_.is(Kind::Native)) return false;
  static const std::set<std::string> kBuiltins = {"isinstance", "issubclass", "type", "len", "hasattr", "callable"};
  return kBuiltins.count(value_.as<Native>()->name) > 0;
}

std::optional<bool> HostValue::equals(const ir::HostObject& other) const {
  auto o = dynamic_cast<const HostValue*>(&other);
  if (!o) return std::nullopt;
  const Value &u = value_, &v = o->value_;
  if (is_dtype_obj(u) && is_dtype_obj(v))
    return static_cast<DTypeObj*>(u.obj())->dtype == static_cast<DTypeObj*>(v.obj())->dtype;
  if (u.is(Kind::Class) && v.is(Kind::Class)) return u.obj() == v.obj();  // type(n) == int
  return std::nullopt;  // anything else: its __eq__ may run user code
}

ir::HostRef host_ref(Interp& I, const Value& v) {
  std::string name;
  Value n = v.is_obj() ? I.getattr_or_undef(v, I.intern("__qualname__")) : Value::undef();
  if (n.is_undef() && v.is_obj()) n = I.getattr_or_undef(v, I.intern("__name__"));
  name = n.is(Kind::Str) ? static_cast<Str*>(n.obj())->s : I.type_name(v);
  return std::make_shared<const HostValue>(v, name);
}

bool is_graph_function(const Value& v) {
  return v.is(Kind::NativeData) && typeid(*v.obj()) == typeid(GraphFunctionObj);
}

const exec::RtValue& graph_function_value(const Value& v) { return static_cast<GraphFunctionObj*>(v.obj())->fn; }

exec::RtValue to_rt(Interp& I, const Value& v) {
  if (v.is_none()) return exec::RtValue();
  if (v.is_bool()) return exec::RtValue(v.as_bool());
  if (v.is_int()) return exec::RtValue(v.as_int());
  if (v.is_float()) return exec::RtValue(v.as_float());
  if (v.is(Kind::Str)) return exec::RtValue(static_cast<Str*>(v.obj())->s);
  if (is_tensor(v)) return exec::RtValue(tensor_of(v));
  if (v.is(Kind::Tuple) || v.is(Kind::List)) {
    std::vector<exec::RtValue> items;
    for (const Value& x : I.to_vector(v)) items.push_back(to_rt(I, x));
    return exec::make_tuple(std::move(items));
  }
  if (is_graph_function(v)) return graph_function_value(v);
  return exec::RtValue(host_ref(I, v));
}

Value from_rt(Interp& I, Class* tensor_cls, const exec::RtValue& v) {
  using exec::RtValue;
  if (v.is_none()) return Value::none();
  if (auto b = v.get_if<bool>()) return Value::boolean(*b);
  if (auto i = v.get_if<int64_t>()) return Value::integer(*i);
  if (auto d = v.get_if<double>()) return Value::number(*d);
  if (auto s = v.get_if<std::string>()) return Value::object(new Str(*s));
  if (auto t = v.get_if<kernels::Tensor>()) return wrap_tensor(tensor_cls, kernels::Tensor(*t));
  if (v.is<exec::RtTuple>()) {
    std::vector<Value> items;
    for (const RtValue& x : v.tuple()) items.push_back(from_rt(I, tensor_cls, x));
    return new_tuple(std::move(items));
  }
  if (auto h = v.get_if<ir::HostRef>()) {
    if (auto hv = dynamic_cast<const HostValue*>(h->get())) return hv->value();
  }
  if (v.is<exec::RtClosure>() || v.is<std::shared_ptr<const exec::RtPartial>>() || v.is<ir::PrimRef>())
    return Value::object(new GraphFunctionObj(Ref<Class>(graph_function_class(I)), v, tensor_cls));
  I.raise(I.exception_class("RuntimeError").get(), "a graph returned an internal value (" + exec::type_name(v) + ")");
}

void raise_exec_error(Interp& I) {
  try {
    throw;
  } catch (const MslError&) {
    throw;
  } catch (const exec::ExecError& e) {
    I.raise(I.exception_class("RuntimeError").get(), e.what());
  } catch (...) {
    raise_current_kernel_error(I);
  }
}

}  // namespace msl
