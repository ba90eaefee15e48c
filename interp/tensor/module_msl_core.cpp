// The native module `msl._core`: the Tensor, Parameter and Type classes, the
// dtype objects, one function per registry primitive, tensor creation
// (zeros, ones, full, arange, ...) and the global RNG and thread settings.
// The `msl` package (stdlib/msl) builds the user-facing API on top of it.
//
// Primitive functions are generated from the registry: one Native per entry,
// whose data object names the primitive, so a new primitive appears in MSL
// with no code here. Arguments follow the registry declaration: the tensor
// inputs positionally (numbers and lists convert by the scalar rule, taking
// the dtype of the first tensor input), then the attributes by keyword (or
// positionally in declaration order). Calls with only tensor inputs take a
// shorter path without building an attribute list.
//
// Random primitives called without seed/offset draw from the global
// generator: seed = the global seed, offset = the next free Philox counter,
// advanced by the number of counter blocks the op consumes
// (kernels::random_blocks_used), so consecutive draws never overlap. With
// an explicit seed and no offset, the offset is 0: the same call gives the
// same numbers.
//
// A call with a tracer among its tensor inputs (interp/tensor/trace.h) is recorded
// into the trace's graph instead of running; attributes are parsed the same
// way first, so the graph's PrimRef carries exactly what the eager call
// would have passed to the kernel.
#include <fmt/format.h>

#include <cmath>

#include "interp/builtins/builtins.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"
#include "interp/tensor/trace.h"
#include "kernels/contention.h"
#include "kernels/dump.h"
#include "kernels/parallel.h"
#include "kernels/philox.h"
#include "kernels/random_ops.h"

namespace msl {

using kernels::Attrs;
using kernels::Dims;
using kernels::DType;
using kernels::Prim;
using kernels::PrimDef;
using kernels::PrimKind;
using kernels::Tensor;

namespace {

// The data of a primitive's Native: which primitive, and (through the
// class) the interpreter's tensor state.
struct PrimData final : NativeData {
  PrimData(Ref<Class> c, Prim p) : NativeData(std::move(c)), prim(p) {}
  Prim prim;
};

TensorClass* state_of(Object* data) {
  if (typeid(*data) == typeid(PrimData)) return static_cast<TensorClass*>(static_cast<PrimData*>(data)->cls.get());
  return static_cast<TensorClass*>(data);
}

// --------------------------------------------------------- attribute values

[[noreturn]] void bad_attr(Interp& I, const char* prim, const std::string& name, const char* want, const Value& v) {
  raise_type_error(I, fmt::format("{}: attribute '{}' must be {}, not {}", prim, name, want, I.type_name(v)));
}

kernels::AttrValue attr_value(Interp& I, const char* prim, const kernels::AttrSpec& spec, const Value& v) {
  const std::string& k = spec.kind;
  if (is_tracer(v)) trace::needs_value(I, v, fmt::format("the attribute '{}' of {}()", spec.name, prim));
  if (k == "bool") {
    if (v.is_bool()) return v.as_bool();
    if (v.is_int()) return v.as_int() != 0;
    bad_attr(I, prim, spec.name, "a bool", v);
  }
  if (k == "int") {
    if (v.is_int()) return v.as_int();
    if (v.is_bool()) return int64_t{v.as_bool()};
    if (is_tensor(v) && kernels::is_integral(tensor_of(v).dtype()) && tensor_of(v).numel() == 1)
      return element_value(tensor_of(v), 0).as_int();
    bad_attr(I, prim, spec.name, "an int", v);
  }
  if (k == "float") {
    if (v.is_float()) return v.as_float();
    if (v.is_int()) return static_cast<double>(v.as_int());
    if (v.is_bool()) return v.as_bool() ? 1.0 : 0.0;
    if (is_tensor(v) && tensor_of(v).numel() == 1) return tensor_of(v).item_at(0);
    bad_attr(I, prim, spec.name, "a float", v);
  }
  if (k == "ints") {
    if (v.is_int()) return std::vector<int64_t>{v.as_int()};
    if (v.is(Kind::Tuple) || v.is(Kind::List)) {
      std::vector<int64_t> out;
      for (const Value& x : v.is(Kind::Tuple) ? v.as<Tuple>()->items : v.as<List>()->items) {
        if (x.is_int())
          out.push_back(x.as_int());
        else if (x.is_bool())
          out.push_back(x.as_bool());
        else if (is_tracer(x))
          trace::needs_value(I, x, fmt::format("the attribute '{}' of {}()", spec.name, prim));
        else
          bad_attr(I, prim, spec.name, "an int or a tuple of ints", x);
      }
      return out;
    }
    bad_attr(I, prim, spec.name, "an int or a tuple of ints", v);
  }
  if (k == "str") {
    if (v.is(Kind::Str)) return v.as<Str>()->s;
    bad_attr(I, prim, spec.name, "a str", v);
  }
  if (k == "dtype") {
    if (is_dtype_obj(v) || v.is(Kind::Str)) return dtype_arg(I, v, prim);
    bad_attr(I, prim, spec.name, "a dtype", v);
  }
  raise_type_error(I, fmt::format("{}: attribute '{}' has an unknown kind '{}'", prim, spec.name, k));
}

// ------------------------------------------------------- primitive calls


// Fills in seed/offset from the global generator (see the file comment).
void random_attrs(Interp& I, Prim p, std::span<const Tensor> in, Attrs& attrs) {
  std::vector<kernels::TensorSpec> specs;
  for (auto& t : in) specs.push_back(t.spec());
  kernel_call(I, [&] { kernels::draw_random_attrs(p, specs, attrs); });
}

Value wrap_outputs(TensorClass* tc, const PrimDef& def, std::vector<Tensor>& outs, const Value& first) {
  if (def.kind == PrimKind::InPlace && def.outputs == 1) return first;
  if (outs.size() == 1) return wrap_tensor(tc->tensor_cls, std::move(outs[0]));
  std::vector<Value> items;
  for (auto& t : outs) items.push_back(wrap_tensor(tc->tensor_cls, std::move(t)));
  return new_tuple(std::move(items));
}

Value prim_call(Interp& I, Args& a, Object* data) {
  PrimData* pd = static_cast<PrimData*>(data);
  TensorClass* tc = state_of(data);
  Prim p = pd->prim;
  const PrimDef& def = kernels::prim_def(p);
  size_t npos = a.pos.size();

  // Fast path: exactly the tensor inputs, no attributes.
  if (a.kw.empty() && def.inputs > 0 && def.inputs <= 2 && npos == static_cast<size_t>(def.inputs) &&
      def.outputs == 1 && def.kind == PrimKind::Compute && !is_random(p)) {
    if (npos == 1 && is_tensor(a.pos[0]))
      return run_prim1(I, tc->tensor_cls, p, std::span<const Tensor>(&tensor_of(a.pos[0]), 1), Attrs());
    if (trace::any_tracer(a.pos)) return trace::apply_prim(I, p, a.pos, Attrs());
    Tensor in[2];
    int ti = is_tensor(a.pos[0]) ? 0 : (npos > 1 && is_tensor(a.pos[1])) ? 1 : -1;
    DType like = ti >= 0 ? tensor_of(a.pos[ti]).dtype() : DType::Float32;
    for (size_t i = 0; i < npos; ++i)
      if (!operand_tensor(I, a.pos[i], like, in[i], def.name, true))
        raise_type_error(I, fmt::format("{}() argument {} must be a Tensor, a number or a list, not {}", def.name,
                                        i + 1, I.type_name(a.pos[i])));
    return run_prim1(I, tc->tensor_cls, p, std::span<const Tensor>(in, npos), Attrs());
  }

  // Tensor inputs.
  std::vector<Value> in_values;
  size_t first_attr = 0;
  if (def.inputs < 0) {
    if (npos < 1 || !(a.pos[0].is(Kind::List) || a.pos[0].is(Kind::Tuple)))
      raise_type_error(I, fmt::format("{}() takes a list or tuple of tensors as its first argument", def.name));
    in_values = I.to_vector(a.pos[0]);
    first_attr = 1;
  } else {
    size_t n = static_cast<size_t>(def.inputs);
    if (npos < n)
      raise_type_error(I,
                       fmt::format("{}() takes {} tensor argument{} ({} given)", def.name, n, n == 1 ? "" : "s", npos));
    in_values.assign(a.pos.begin(), a.pos.begin() + static_cast<long>(n));
    first_attr = n;
  }
  DType like = DType::Float32;
  for (auto& v : in_values)
    if (is_tensor(v)) {
      like = tensor_of(v).dtype();
      break;
    }
  bool traced = trace::any_tracer(in_values);
  std::vector<Tensor> in(traced ? 0 : in_values.size());
  for (size_t i = 0; i < in.size(); ++i)
    if (!operand_tensor(I, in_values[i], like, in[i], def.name))
      raise_type_error(I, fmt::format("{}() tensor argument {} must be a Tensor, a number or a list, not {}", def.name,
                                      i + 1, I.type_name(in_values[i])));
  if (!traced && def.kind == PrimKind::InPlace && !is_tensor(in_values[0]))
    raise_type_error(I, fmt::format("{}() writes into its first argument, which must be a Tensor", def.name));

  // Attributes: remaining positionals in declaration order, then keywords.
  const auto& specs = kernels::prim_attrs(p);
  if (npos - first_attr > specs.size())
    raise_type_error(I, fmt::format("{}() takes at most {} positional arguments ({} given)", def.name,
                                    first_attr + specs.size(), npos));
  Attrs attrs;
  std::vector<bool> set(specs.size(), false);
  for (size_t i = first_attr; i < npos; ++i) {
    size_t k = i - first_attr;
    set[k] = true;
    if (!a.pos[i].is_none()) attrs.set(specs[k].name, attr_value(I, def.name, specs[k], a.pos[i]));
  }
  for (auto& [name, v] : a.kw) {
    size_t k = 0;
    while (k < specs.size() && specs[k].name != name->s) ++k;
    if (k == specs.size())
      raise_type_error(I, fmt::format("{}() got an unexpected keyword argument '{}'", def.name, name->s));
    if (set[k]) raise_type_error(I, fmt::format("{}() got multiple values for argument '{}'", def.name, name->s));
    set[k] = true;
    if (!v.is_none()) attrs.set(specs[k].name, attr_value(I, def.name, specs[k], v));
  }
  // A random draw inside a trace is recorded there even without a traced
  // input: made now, it would be a constant every run of the graph replays.
  // So is a collective, which must exchange data every run.
  if (traced || ((is_random(p) || kernels::is_collective(p)) && trace::active())) return trace::apply_prim(I, p, in_values, attrs);
  if (is_random(p)) random_attrs(I, p, in, attrs);

  std::vector<Tensor> outs;
  kernel_call(I, [&] { kernels::execute(p, in, attrs, outs); });
  return wrap_outputs(tc, def, outs, in_values.empty() ? Value() : in_values[0]);
}

// ------------------------------------------------------------------ misc

Value f_is_tensor(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "is_tensor", a, 1, 1, v);
  return Value::boolean(is_tensor_or_tracer(v[0]));
}

Value f_primitive_names(Interp& I, Args& a, Object*) {
  bind_positional(I, "primitive_names", a, 0, 0, nullptr);
  std::vector<Value> names;
  for (int i = 0; i < kernels::kNumPrims; ++i) names.push_back(str_value(kernels::prim_name(static_cast<Prim>(i))));
  return new_list(std::move(names));
}

Value f_primitive_attrs(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "primitive_attrs", a, 1, 1, v);
  Str* name = arg_str(I, v[0], "primitive_attrs() argument");
  Prim p;
  if (!kernels::find_prim(name->s, p)) raise_value_error(I, fmt::format("unknown primitive '{}'", name->s));
  std::vector<Value> out;
  for (auto& s : kernels::prim_attrs(p)) out.push_back(new_tuple({str_value(s.name), str_value(s.kind)}));
  return new_list(std::move(out));
}

Value f_set_seed(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_args(I, "set_seed", a, {"seed"}, 1, v);
  if (!v[0].is_int() || v[0].as_int() < 0)
    raise_value_error(I, fmt::format("set_seed: seed must be a non-negative int, got {}", I.repr(v[0])));
  kernels::GlobalGenerator::get().set_seed(static_cast<uint64_t>(v[0].as_int()));
  return Value();
}

Value f_get_seed(Interp& I, Args& a, Object*) {
  bind_positional(I, "get_seed", a, 0, 0, nullptr);
  return Value::integer(static_cast<int64_t>(kernels::GlobalGenerator::get().seed()));
}

// _core.start_dump(dir) / stop_dump() / dump_next_iteration():
// set_context(enable_dump=..., save_dump_path=...) and Model.train's steps
// (kernels/dump.h).
Value f_start_dump(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "start_dump", a, 1, 1, v);
  if (!v[0].is(Kind::Str)) raise_type_error(I, "start_dump: the folder must be a str");
  try {
    kernels::start_dump(v[0].as<Str>()->s);
  } catch (const std::runtime_error& e) {
    I.raise(I.exception_class("OSError").get(), e.what());
  }
  return Value::none();
}

Value f_stop_dump(Interp& I, Args& a, Object*) {
  bind_positional(I, "stop_dump", a, 0, 0, nullptr);
  kernels::stop_dump();
  return Value::none();
}

Value f_dump_next_iteration(Interp& I, Args& a, Object*) {
  bind_positional(I, "dump_next_iteration", a, 0, 0, nullptr);
  if (kernels::dumping()) kernels::dump_next_iteration();
  return Value::none();
}

Value f_set_num_threads(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "set_num_threads", a, 1, 1, v);
  int64_t n = arg_index(I, v[0]);
  if (n < 0 || n > 4096) raise_value_error(I, fmt::format("set_num_threads: expected 0..4096 threads, got {}", n));
  kernels::set_num_threads(static_cast<int>(n));
  return Value();
}

// set_context(deterministic="ON"|"OFF") (kernels/contention.h).
Value f_set_deterministic(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "_set_deterministic", a, 1, 1, v);
  kernels::set_deterministic(I.truthy(v[0]));
  return Value();
}

Value f_get_num_threads(Interp& I, Args& a, Object*) {
  bind_positional(I, "get_num_threads", a, 0, 0, nullptr);
  return Value::integer(kernels::num_threads());
}

// set_context(device_target=..., device_id=...): where new tensors go.
// "CPU", or "GPU" with a device number; a GPU that cannot be opened is a
// RuntimeError naming what is missing (no driver, no device, a build
// without CUDA).
Value f_set_device(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "_set_device", a, 2, 2, v);
  Str* target = arg_str(I, v[0], "_set_device() argument 1");
  int64_t id = arg_index(I, v[1]);
  if (target->s == "CPU") {
    kernels::set_default_device(kernels::cpu_device());
  } else if (target->s == "GPU") {
    std::string why = kernels::cuda_unavailable_reason(static_cast<int>(id));
    if (!why.empty()) raise_exc(I, "RuntimeError", fmt::format("device_target 'GPU' is not available: {}", why));
    kernels::set_default_device(kernels::cuda_device(static_cast<int>(id)));
  } else {
    raise_value_error(I, fmt::format("_set_device: unknown device target '{}'", target->s));
  }
  return Value();
}

// msl.runtime's memory statistics of the default device's allocator:
// (bytes held by tensors, bytes cached for reuse, peak bytes held).
Value f_memory_stats(Interp& I, Args& a, Object*) {
  bind_positional(I, "_memory_stats", a, 0, 0, nullptr);
  kernels::AllocatorStats st = kernels::default_device()->memory_stats();
  return new_tuple({Value::integer(static_cast<int64_t>(st.bytes_in_use)),
                    Value::integer(static_cast<int64_t>(st.bytes_cached)),
                    Value::integer(static_cast<int64_t>(st.peak_bytes_in_use))});
}

Value f_reset_peak_memory(Interp& I, Args& a, Object*) {
  bind_positional(I, "_reset_peak_memory", a, 0, 0, nullptr);
  kernels::default_device()->reset_peak_memory();
  return Value();
}

Value f_empty_cache(Interp& I, Args& a, Object*) {
  bind_positional(I, "_empty_cache", a, 0, 0, nullptr);
  kernels::default_device()->release_cached_memory();
  return Value();
}

// Tensor.move_to(to): a copy on "CPU" or "GPU" (the GPU of set_context's
// device_id), or the tensor itself when it is there already.
Value f_move_to(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "_move_to", a, 2, 2, v);
  Str* to = arg_str(I, v[1], "move_to() argument 'to'");
  kernels::Device* dev = nullptr;
  if (to->s == "CPU") {
    dev = kernels::cpu_device();
  } else if (to->s == "GPU") {
    kernels::Device* d = kernels::default_device();
    if (d->type() == kernels::DeviceType::CUDA) {
      dev = d;
    } else {
      std::string why = kernels::cuda_unavailable_reason(0);
      if (!why.empty()) raise_exc(I, "RuntimeError", fmt::format("move_to: 'GPU' is not available: {}", why));
      dev = kernels::cuda_device(0);
    }
  } else {
    raise_value_error(I, fmt::format("move_to: 'to' must be 'CPU' or 'GPU', got '{}'", to->s));
  }
  if (!is_tensor(v[0])) raise_type_error(I, fmt::format("move_to: expected a Tensor, got {}", I.type_name(v[0])));
  const kernels::Tensor& t = tensor_of(v[0]);
  if (t.device() == dev) return v[0];
  return wrap_tensor(result_class(tensor_obj(v[0])), kernel_call(I, [&] { return t.to_device(dev); }));
}

Value f_dtype_from_name(Interp& I, Args& a, Object* data) {
  Value v[1];
  bind_positional(I, "dtype_from_name", a, 1, 1, v);
  Str* s = arg_str(I, v[0], "dtype_from_name() argument");
  DType d;
  if (!kernels::parse_dtype(s->s, d)) raise_value_error(I, fmt::format("unknown dtype '{}'", s->s));
  return dtype_value(state_of(data), d);
}

// Adds an attribute (a method written in MSL, a property) to the Tensor
// class, which MSL code cannot assign to directly (it is a builtin class).
Value f_extend_tensor(Interp& I, Args& a, Object* data) {
  Value v[2];
  bind_positional(I, "_extend_tensor", a, 2, 2, v);
  Str* name = arg_str(I, v[0], "_extend_tensor() argument 1");
  state_of(data)->tensor_cls->dict.set(I.intern(name->s), v[1]);
  I.bump_class_epoch();
  return Value();
}

// ----------------------------------------------------------------- dtypes

DTypeObj* self_dtype(Interp& I, Args& a, const char* method) {
  if (a.pos.empty() || !is_dtype_obj(a.pos[0]))
    raise_type_error(I, fmt::format("descriptor '{}' requires a 'Type' object", method));
  return static_cast<DTypeObj*>(a.pos[0].obj());
}

Value type_repr(Interp& I, Args& a, Object*) {
  return str_value(kernels::dtype_display_name(self_dtype(I, a, "__repr__")->dtype));
}

Value type_eq(Interp& I, Args& a, Object*) {
  DTypeObj* s = self_dtype(I, a, "__eq__");
  if (a.pos.size() != 2 || !is_dtype_obj(a.pos[1])) return I.not_implemented;
  return Value::boolean(s->dtype == static_cast<DTypeObj*>(a.pos[1].obj())->dtype);
}

Value type_ne(Interp& I, Args& a, Object*) {
  DTypeObj* s = self_dtype(I, a, "__ne__");
  if (a.pos.size() != 2 || !is_dtype_obj(a.pos[1])) return I.not_implemented;
  return Value::boolean(s->dtype != static_cast<DTypeObj*>(a.pos[1].obj())->dtype);
}

Value type_hash(Interp& I, Args& a, Object*) {
  return Value::integer(static_cast<int64_t>(self_dtype(I, a, "__hash__")->dtype) + 0x7e5);
}

Value type_name(Interp& I, Args& a, Object*) { return str_value(kernels::dtype_name(self_dtype(I, a, "name")->dtype)); }

Value type_new(Interp& I, Args& a, Object*) {
  Value v[1];
  Args rest = method_args(a);
  bind_positional(I, "Type", rest, 1, 1, v);
  if (is_dtype_obj(v[0])) return v[0];
  raise_type_error(I, "Type() takes a dtype; use dtype_from_name() for names");
}

Ref<TensorClass> make_tensor_class(Interp& I, const char* name, Class* base) {
  Ref<TensorClass> c(new TensorClass());
  c->name = Ref<Str>(I.intern(name));
  c->base = Ref<Class>(base);
  c->module_name = "msl._core";
  c->is_builtin = true;
  return c;
}

}  // namespace

void init_module_msl_core(Interp& I, Module& m) {
  Ref<TensorClass> tc = make_tensor_class(I, "Tensor", I.cls_object.get());
  Ref<TensorClass> pc = make_tensor_class(I, "Parameter", tc.get());
  tc->tensor_cls = pc->tensor_cls = tc.get();
  pc->parameter = true;

  Ref<Class> type_cls = I.new_class("Type", I.cls_object.get(), "msl._core", true);
  I.def_method(type_cls.get(), "__new__", type_new);
  I.def_method(type_cls.get(), "__repr__", type_repr);
  I.def_method(type_cls.get(), "__str__", type_repr);
  I.def_method(type_cls.get(), "__eq__", type_eq);
  I.def_method(type_cls.get(), "__ne__", type_ne);
  I.def_method(type_cls.get(), "__hash__", type_hash);
  auto name_prop = make<Property>();
  name_prop->fget = make<Native>("name", type_name).value();
  type_cls->dict.set(I.intern("name"), name_prop.value());
  tc->type_cls = pc->type_cls = type_cls;
  for (int i = 0; i < kernels::kNumDTypes; ++i) {
    DType d = static_cast<DType>(i);
    Value obj = Value::object(new DTypeObj(type_cls, d));
    tc->dtypes[i] = pc->dtypes[i] = obj;
    m.set(I.intern(kernels::dtype_name(d)), obj);
  }

  init_tensor_methods(I, tc.get(), pc.get());
  init_tensor_operator_methods(I, tc.get());
  m.set(I.intern("Tensor"), tc.value());
  m.set(I.intern("Parameter"), pc.value());
  m.set(I.intern("Type"), type_cls.value());

  for (int i = 0; i < kernels::kNumPrims; ++i) {
    Prim p = static_cast<Prim>(i);
    Ref<Object> data(new PrimData(Ref<Class>(tc.get()), p));
    I.def_native(&m, kernels::prim_name(p), prim_call, data);
  }

  Ref<Object> state(tc.get());
  struct {
    const char* name;
    NativeFn fn;
  } const fns[] = {
      {"is_tensor", f_is_tensor},
      {"primitive_names", f_primitive_names},
      {"primitive_attrs", f_primitive_attrs},
      {"set_seed", f_set_seed},
      {"get_seed", f_get_seed},
      {"set_num_threads", f_set_num_threads},
      {"start_dump", f_start_dump},
      {"stop_dump", f_stop_dump},
      {"dump_next_iteration", f_dump_next_iteration},
      {"get_num_threads", f_get_num_threads},
      {"_set_deterministic", f_set_deterministic},
      {"dtype_from_name", f_dtype_from_name},
      {"_extend_tensor", f_extend_tensor},
      {"_set_device", f_set_device},
      {"_memory_stats", f_memory_stats},
      {"_reset_peak_memory", f_reset_peak_memory},
      {"_empty_cache", f_empty_cache},
      {"_move_to", f_move_to},
  };
  for (auto& f : fns) I.def_native(&m, f.name, f.fn, state);
  init_tensor_creation(I, m, tc.get());
}

}  // namespace msl

namespace msl {
// Whether `v` is one of msl._core's primitive natives (graph mode resolves
// them to kernel primitives).
bool native_primitive(const Value& v, kernels::Prim& out) {
  if (!v.is(Kind::Native)) return false;
  auto* n = static_cast<Native*>(v.obj());
  if (n->fn != prim_call || !n->data || typeid(*n->data) != typeid(PrimData)) return false;
  out = static_cast<PrimData*>(n->data.get())->prim;
  return true;
}
}  // namespace msl
