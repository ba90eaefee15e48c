// Calling MSL functions: binding positional, keyword, *args and **kwargs
// arguments to parameter slots with Python's rules and error messages, and
// running a body with traceback bookkeeping at the function boundary.
#include <fmt/format.h>

#include "interp/core/nodes.h"

namespace msl {

FuncCode::~FuncCode() = default;

Interp::CallDepthGuard::CallDepthGuard(Interp& I) : I_(I) {
  if (++I.depth_ > I.opts_.recursion_limit) {
    --I.depth_;
    I.raise(I.exception_class("RecursionError").get(), "maximum recursion depth exceeded");
  }
  char here;
  if (&here < I.stack_limit_) {
    --I.depth_;
    I.stack_exhausted();
  }
}

Value run_function_body(Interp& I, Function* fn, Value* slots) {
  FuncCode* code = fn->code.get();
  if (code->deferred) [[unlikely]]
    compile_deferred_body(I, *code, fn->module.get());
  I.poll();
  I.count_step();
  for (uint32_t s : code->cell_slots) slots[s] = make<Cell>(std::move(slots[s])).value();
  Frame fr{I, slots, fn, fn->module.get(), nullptr, code, Value()};
  try {
    if (code->expr) return code->expr->eval(fr);
    code->body->exec(fr);
    return std::move(fr.ret);
  } catch (MslError& e) {
    ExceptionObj* x = e.obj();
    x->traceback.push_back(TraceEntry{code->source, x->need_location ? code->span : x->location, code->qualname});
    x->need_location = true;
    throw;
  }
}

static std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += names.size() == 2 ? " and " : (i + 1 == names.size() ? ", and " : ", ");
    s += "'" + names[i] + "'";
  }
  return s;
}

Value call_function(Interp& I, Function* fn, std::span<Value> args, std::span<std::pair<Ref<Str>, Value>> kw) {
  FuncCode* c = fn->code.get();
  Interp::CallDepthGuard depth(I);
  StackSlots frame(I, c->nslots);
  Value* slots = frame.p;

  const std::string& fname = c->qualname;
  size_t np = c->nposargs, nk = c->nkwonly;
  size_t n = args.size();
  uint32_t next_slot = static_cast<uint32_t>(np + nk);
  uint32_t vararg_slot = c->has_vararg ? next_slot++ : 0;
  uint32_t kwarg_slot = c->has_kwarg ? next_slot++ : 0;

  for (size_t i = 0; i < std::min(n, np); ++i) slots[i] = args[i];
  if (n > np) {
    if (!c->has_vararg) {
      size_t ndef = fn->defaults.size();
      std::string takes = ndef > 0 ? fmt::format("from {} to {}", np - ndef, np) : std::to_string(np);
      I.raise(I.exception_class("TypeError").get(),
              fmt::format("{}() takes {} positional argument{} but {} {} given", fname, takes,
                          np == 1 && ndef == 0 ? "" : "s", n, n == 1 ? "was" : "were"));
    }
    auto t = make<Tuple>();
    t->items.assign(args.begin() + static_cast<long>(np), args.end());
    slots[vararg_slot] = t.value();
  } else if (c->has_vararg) {
    slots[vararg_slot] = make<Tuple>().value();
  }
  Ref<Dict> kwargs;
  if (c->has_kwarg) {
    kwargs = make<Dict>();
    slots[kwarg_slot] = kwargs.value();
  }
  for (auto& [name, v] : kw) {
    size_t j = 0;
    for (; j < np + nk; ++j)
      if (c->param_names[j].get() == name.get() || c->param_names[j]->s == name->s) break;
    if (j < np + nk) {
      if (!slots[j].is_undef())
        I.raise(I.exception_class("TypeError").get(),
                fmt::format("{}() got multiple values for argument '{}'", fname, name->s));
      slots[j] = v;
    } else if (kwargs) {
      kwargs->map.set(I, name.value(), v);
    } else {
      I.raise(I.exception_class("TypeError").get(),
              fmt::format("{}() got an unexpected keyword argument '{}'", fname, name->s));
    }
  }
  size_t ndef = fn->defaults.size();
  size_t first_def = np - ndef;
  std::vector<std::string> missing;
  for (size_t i = 0; i < np; ++i) {
    if (!slots[i].is_undef()) continue;
    if (i >= first_def) slots[i] = fn->defaults[i - first_def];
    else missing.push_back(c->param_names[i]->s);
  }
  if (!missing.empty())
    I.raise(I.exception_class("TypeError").get(),
            fmt::format("{}() missing {} required positional argument{}: {}", fname, missing.size(),
                        missing.size() == 1 ? "" : "s", quoted_list(missing)));
  for (size_t k = 0; k < nk; ++k) {
    Value& s = slots[np + k];
    if (!s.is_undef()) continue;
    if (k < fn->kwdefaults.size() && !fn->kwdefaults[k].is_undef()) s = fn->kwdefaults[k];
    else missing.push_back(c->param_names[np + k]->s);
  }
  if (!missing.empty())
    I.raise(I.exception_class("TypeError").get(),
            fmt::format("{}() missing {} required keyword-only argument{}: {}", fname, missing.size(),
                        missing.size() == 1 ? "" : "s", quoted_list(missing)));
  return run_function_body(I, fn, slots);
}

Value run_module_code(Interp& I, const std::shared_ptr<FuncCode>& code, Module* mod) {
  StackSlots frame(I, code->nslots);
  Value* slots = frame.p;
  for (uint32_t s : code->cell_slots) slots[s] = make<Cell>().value();
  // Module bodies run as a function without parameters whose globals are `mod`.
  auto fn = make<Function>();
  fn->code = code;
  fn->module = Ref<Module>(mod);
  Frame fr{I, slots, fn.get(), mod, nullptr, code.get(), Value()};
  try {
    code->body->exec(fr);
  } catch (MslError& e) {
    ExceptionObj* x = e.obj();
    x->traceback.push_back(TraceEntry{code->source, x->need_location ? code->span : x->location, "<module>"});
    x->need_location = true;
    throw;
  }
  return std::move(fr.ret);
}

}  // namespace msl
