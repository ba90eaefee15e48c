// Which host calls graph mode may make at compile time. Specialization
// learns a host call's result type, and expansion its primitives, by
// tracing the call (interp/tensor/trace.h): the callee really runs, on tracers.
// That is right for library code, which only computes, and wrong for a
// call that acts on host state: tracing `self.log.append(y)` would store a
// tracer in the list, `open(path, "w")` would truncate the file while
// compiling, and `time.time()` would be frozen into the graph as a
// constant. Those calls are left untyped instead, so they run when the
// graph runs, in program order (lang/ir/lower.h, "Effects").
#include "interp/graph/graph_host_adapter.h"
#include "interp/core/native_args.h"
#include "interp/tensor/tensor_object.h"

namespace msl {

namespace {

// Values whose builtin methods cannot change them: a trace of such a
// method only computes.
bool immutable(const Value& v) {
  return v.is_none() || v.is_bool() || v.is_int() || v.is_float() || v.is(Kind::Str) || v.is(Kind::Tuple) ||
         v.is(Kind::Range) || v.is(Kind::Slice) || is_tensor(v) || is_dtype_obj(v);
}

// Builtins that reach outside the program or change interpreter state.
constexpr const char* kWorldBuiltins[] = {"open",    "input",   "print",   "exit",   "quit",   "setattr",
                                          "delattr", "exec",    "eval",    "compile", "next",  "__import__",
                                          "globals", "locals",  "vars",    "breakpoint", "help"};
// Modules whose functions read or change the world (clocks, files, the
// process, random state).
constexpr const char* kWorldModules[] = {"os", "sys", "time", "random"};

bool is_world_native(Interp& I, const Value& fn) {
  Ref<Module> builtins = I.builtins_module();
  for (const char* name : kWorldBuiltins) {
    Value b = builtins->get(I.intern(name));
    if (!b.is_undef() && b.is_obj() && b.obj() == fn.obj()) return true;
  }
  for (const char* m : kWorldModules) {
    Ref<Module> mod = I.import_module(m, nullptr);
    for (GlobalSlot* g : mod->order)
      if (g->value.is_obj() && g->value.obj() == fn.obj()) return true;
  }
  return false;
}

}  // namespace

// A primitive instance marked `add_prim_attr("side_effect_io", True)`, as
// MindSpore marks Print and the summary operators: calling it records or
// writes something, so it runs when the graph runs, on the real values.
bool side_effect_primitive(Interp& I, const Value& fn) {
  if (!fn.is(Kind::Instance)) return false;
  Value attrs = I.getattr_or_undef(fn, I.intern("attrs"));
  if (!attrs.is(Kind::Dict)) return false;
  Value* flag = attrs.as<Dict>()->map.find(I, str_value("side_effect_io"));
  return flag && I.truthy(*flag);
}

bool traceable_host_call(Interp& I, const Value& fn, const Value* receiver) {
  if (adapter_raises(fn)) return false;
  if (side_effect_primitive(I, fn)) return false;
  if (const std::string* method = adapter_method(fn)) {
    if (!receiver) return true;  // a tensor or a tuple: its methods only compute
    if (immutable(*receiver)) return true;
    Value bound = I.getattr_or_undef(*receiver, I.intern(*method));
    return !bound.is_undef() && traceable_host_call(I, bound);
  }
  if (fn.is(Kind::BoundMethod)) {
    const auto* bm = fn.as<BoundMethod>();
    // A builtin method of a list, dict, set, file or object may change it.
    if (bm->func.is(Kind::Native)) return immutable(bm->self);
    return traceable_host_call(I, bm->func);
  }
  if (fn.is(Kind::Native)) return !is_world_native(I, fn);
  return true;
}

}  // namespace msl
