// Interp construction (builtin types, exception hierarchy, builtins module),
// interning, raising, running source text, and the value stack.
#include "interp/core/interp.h"

#include <pthread.h>
#include <cstdlib>
#include <sys/mman.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <fmt/format.h>

#include "interp/builtins/format.h"
#include "interp/core/module_ast_cache.h"
#include "interp/core/nodes.h"
#include "interp/core/name_suggestion.h"
#include "interp/core/sandbox.h"
#include "jit/codegen/cuda_unit.h"
#include "lang/parser.h"

namespace msl {

// Defined by the builtin library (interp/builtins/builtins.h).
void init_builtin_constructors(Interp& I);
void init_builtin_functions(Interp& I);
void init_str_methods(Interp& I);
void init_list_methods(Interp& I);
void init_dict_methods(Interp& I);
void init_file_object(Interp& I);
void init_help(Interp& I);
void register_std_modules(Interp& I);
// Defined in interp/core/core_methods.cpp.
void init_core_methods(Interp& I);

// At most this many Values of local variables across all active calls:
// 16 MiB of address space, touched only as deep as the program recurses.
static constexpr size_t kValueStackSize = 1 << 20;

Interp::Names::Names(Interp& I) {
#define MSL_INIT_NAME(n) n = I.intern(#n);
  MSL_NAMES(MSL_INIT_NAME)
#undef MSL_INIT_NAME
}

static void request_collection(void* owner) {
  Interp* I = static_cast<Interp*>(owner);
  I->request_gc();
}

static std::atomic<uint64_t> g_next_serial{1};

Interp::Interp(Options opts)
    : heap_(request_collection, this), opts_(std::move(opts)), serial_(g_next_serial.fetch_add(1)) {
  heap_.activate();
  // GPU kernels compiled by NVRTC are kept in the on-disk compile cache,
  // beside graph mode's CPU loops (kernels/cuda/image_cache.h).
  jit::codegen::install_gpu_image_store();
  void* mem = mmap(nullptr, kValueStackSize * sizeof(Value), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) throw std::bad_alloc();
  stack_base_ = stack_top_ = static_cast<Value*>(mem);
  stack_end_ = stack_base_ + kValueStackSize;
  enter_thread();
  names_ = std::make_unique<Names>(*this);
  init_builtin_types();
  init_exceptions();
  init_core_methods(*this);
  init_builtin_constructors(*this);
  init_builtin_functions(*this);
  init_str_methods(*this);
  init_list_methods(*this);
  init_dict_methods(*this);
  init_file_object(*this);
  init_help(*this);
  register_std_modules(*this);
  sandbox_module(*this, "builtins", *builtins_);
  if (opts_.memory_limit > 0) budget_ = kernels::MemoryBudget::make(opts_.memory_limit);
}

Interp::~Interp() {
  if (opts_.process_exits_after) keep_code_until_exit();
  finalizers_enabled_ = false;
  finalize_queue_.clear();
  graph_state_.reset();  // compiled graphs hold values (constants, weights)
  // Break the reference cycles we know of (modules ↔ their functions) so most
  // memory is returned; remaining user-made cycles are leaked by design.
  for (auto& [name, m] : modules_)
    for (GlobalSlot* s : m->order) s->value = Value::undef();
  if (main_)
    for (GlobalSlot* s : main_->order) s->value = Value::undef();
  for (GlobalSlot* s : builtins_->order) s->value = Value::undef();
  handled_.clear();
  modules_.clear();
  main_ = nullptr;
  // Whatever is left in cycles (classes and their methods, closures) goes now.
  heap_.collect();
  munmap(stack_base_, kValueStackSize * sizeof(Value));
  if (budget_) budget_->drop();  // storages still charged to it keep it alive
}

size_t Interp::collect_garbage() {
  // As Python's gc.collect(): finalizers of the garbage run, then what is
  // still unreachable is freed.
  size_t freed = heap_.collect();
  if (!finalize_queue_.empty()) {
    run_finalizers();
    freed = heap_.collect();
  }
  return freed;
}

bool defer_finalizer(Object* o) {
  if (o->kind != Kind::Instance && o->kind != Kind::Exception) return false;
  auto* inst = static_cast<Instance*>(o);
  if (inst->finalized || !inst->cls) return false;  // no class: the collector cleared it
  auto* I = static_cast<Interp*>(GcHeap::current_owner());
  // Only the instance's own interpreter runs its __del__, and not while it
  // is being destroyed; another thread (no heap active) frees it plainly.
  if (!I || !I->finalizers_enabled_ || inst->cls->interp_serial != I->serial_ || !I->traits(inst->cls.get()).has_del)
    return false;
  inst->finalized = true;
  I->finalize_queue_.push_back(Ref<Instance>(inst));
  I->pending_.store(true);
  return true;
}

void Interp::run_finalizers() {
  while (!finalize_queue_.empty()) {
    std::vector<Ref<Instance>> batch;
    batch.swap(finalize_queue_);
    for (Ref<Instance>& queued : batch) {
      Value self = queued.value();
      queued = nullptr;
      Value* del = self.as<Instance>()->cls->lookup(names_->__del__);
      if (!del) continue;  // removed from the class since
      Value fn = *del;
      try {
        call1(fn, self);
      } catch (MslError& e) {
        std::string text;
        try {
          text = "Exception ignored in: " + repr(fn) + "\n" + format_exception(e.exc);
        } catch (...) {
          text = "Exception ignored in a __del__ method\n";
        }
        write_err(text);
      } catch (MslExit& e) {
        write_err("Exception ignored in: " + repr(fn) + "\nSystemExit: " + std::to_string(e.code) + "\n");
      } catch (std::bad_alloc&) {
        write_err("Exception ignored in a __del__ method\nMemoryError: out of memory\n");
      }
    }  // `self` goes here: the instance is freed unless __del__ stored it somewhere
  }
}

void Interp::enter_thread() {
  heap_.activate();
  pthread_attr_t attr;
  size_t size = 8 << 20;
  void* addr = nullptr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &addr, &size);
    pthread_attr_destroy(&attr);
  }
  // Addresses as integers: the limit lies outside any object we own.
  char here;
  uintptr_t sp = reinterpret_cast<uintptr_t>(&here);
  uintptr_t low = addr ? reinterpret_cast<uintptr_t>(addr) : sp - size + (64 << 10);
  // Keep 256 KiB in reserve for the error path and native callees.
  uintptr_t limit = low + std::min<size_t>(256 << 10, size / 4);
  if (limit > sp) limit = sp - (64 << 10);
  stack_limit_ = reinterpret_cast<char*>(limit);
}

Value* Interp::alloc_slots(size_t n) {
  if (static_cast<size_t>(stack_end_ - stack_top_) < n) {
    raise(exception_class("RecursionError").get(), "maximum recursion depth exceeded (out of stack space)");
  }
  Value* p = stack_top_;
  for (size_t i = 0; i < n; ++i) new (p + i) Value(Value::undef());
  stack_top_ += n;
  return p;
}

void Interp::free_slots(Value* base, size_t n) {
  for (size_t i = 0; i < n; ++i) base[i].~Value();
  stack_top_ = base;
}

Str* Interp::intern(std::string_view s) {
  auto it = interned_.find(s);
  if (it != interned_.end()) return it->second;
  Ref<Str> str(new Str(std::string(s)));
  str->interned = true;
  interned_owner_.push_back(str);
  interned_.emplace(std::string_view(str->s), str.get());
  return str.get();
}

Ref<Class> Interp::new_class(std::string_view name, Class* base, std::string module_name, bool builtin) {
  auto c = make<Class>();
  c->name = Ref<Str>(intern(name));
  c->base = Ref<Class>(base);
  c->module_name = std::move(module_name);
  c->is_builtin = builtin;
  c->interp_serial = serial_;
  if (base) c->instance_kind = base->instance_kind;
  return c;
}

void Interp::def_native(Module* mod, std::string_view name, NativeFn fn, Ref<Object> data) {
  Module* m = mod ? mod : builtins_.get();
  m->set(intern(name), make<Native>(std::string(name), fn, std::move(data)).value());
}

void Interp::def_method(Class* cls, std::string_view name, NativeFn fn) {
  cls->dict.set(intern(name), make<Native>(std::string(name), fn).value());
}

void Interp::init_builtin_types() {
  builtins_ = make<Module>();
  builtins_->name = Ref<Str>(intern("builtins"));
  auto mk = [&](const char* name, Class* base) {
    Ref<Class> c = new_class(name, base, "builtins", true);
    builtins_->set(intern(name), c.value());
    return c;
  };
  cls_object = mk("object", nullptr);
  cls_type = mk("type", cls_object.get());
  cls_none = new_class("NoneType", cls_object.get(), "builtins", true);
  cls_int = mk("int", cls_object.get());
  cls_bool = mk("bool", cls_int.get());
  cls_float = mk("float", cls_object.get());
  cls_str = mk("str", cls_object.get());
  cls_list = mk("list", cls_object.get());
  cls_tuple = mk("tuple", cls_object.get());
  cls_dict = mk("dict", cls_object.get());
  cls_set = mk("set", cls_object.get());
  cls_frozenset = mk("frozenset", cls_object.get());
  cls_range = mk("range", cls_object.get());
  cls_slice = mk("slice", cls_object.get());
  cls_property = mk("property", cls_object.get());
  cls_staticmethod = mk("staticmethod", cls_object.get());
  cls_classmethod = mk("classmethod", cls_object.get());
  cls_super = mk("super", cls_object.get());
  cls_function = new_class("function", cls_object.get(), "builtins", true);
  cls_builtin_function = new_class("builtin_function_or_method", cls_object.get(), "builtins", true);
  cls_method = new_class("method", cls_object.get(), "builtins", true);
  cls_module = new_class("module", cls_object.get(), "builtins", true);
  cls_cell = new_class("cell", cls_object.get(), "builtins", true);
  cls_iterator = new_class("iterator", cls_object.get(), "builtins", true);
  cls_ellipsis = new_class("ellipsis", cls_object.get(), "builtins", true);
  cls_not_implemented = new_class("NotImplementedType", cls_object.get(), "builtins", true);
  ellipsis = make<Instance>(cls_ellipsis).value();
  not_implemented = make<Instance>(cls_not_implemented).value();
  builtins_->set(intern("Ellipsis"), ellipsis);
  builtins_->set(intern("NotImplemented"), not_implemented);
  builtins_->set(intern("None"), Value());
  builtins_->set(intern("True"), Value::boolean(true));
  builtins_->set(intern("False"), Value::boolean(false));
  modules_["builtins"] = builtins_;
}

void Interp::init_exceptions() {
  // Python's hierarchy, plus ShapeError (a ValueError) and GraphModeError.
  static const char* const kTree[][2] = {
      {"BaseException", nullptr},
      {"Exception", "BaseException"},
      {"KeyboardInterrupt", "BaseException"},
      {"SystemExit", "BaseException"},
      {"ArithmeticError", "Exception"},
      {"ZeroDivisionError", "ArithmeticError"},
      {"OverflowError", "ArithmeticError"},
      {"FloatingPointError", "ArithmeticError"},
      {"AssertionError", "Exception"},
      {"AttributeError", "Exception"},
      {"EOFError", "Exception"},
      {"ImportError", "Exception"},
      {"ModuleNotFoundError", "ImportError"},
      {"LookupError", "Exception"},
      {"IndexError", "LookupError"},
      {"KeyError", "LookupError"},
      {"MemoryError", "Exception"},
      {"NameError", "Exception"},
      {"UnboundLocalError", "NameError"},
      {"OSError", "Exception"},
      {"FileNotFoundError", "OSError"},
      {"FileExistsError", "OSError"},
      {"IsADirectoryError", "OSError"},
      {"NotADirectoryError", "OSError"},
      {"PermissionError", "OSError"},
      {"RuntimeError", "Exception"},
      {"RecursionError", "RuntimeError"},
      {"NotImplementedError", "RuntimeError"},
      {"StopIteration", "Exception"},
      {"SyntaxError", "Exception"},
      {"IndentationError", "SyntaxError"},
      {"TabError", "IndentationError"},
      {"SystemError", "Exception"},
      {"TypeError", "Exception"},
      {"ValueError", "Exception"},
      {"UnicodeError", "ValueError"},
      {"ShapeError", "ValueError"},
      {"GraphModeError", "RuntimeError"},
  };
  for (auto& [name, base] : kTree) {
    Class* b = base ? exceptions_.at(base).get() : cls_object.get();
    Ref<Class> c = new_class(name, b, "builtins", true);
    c->instance_kind = Kind::Exception;
    exceptions_[name] = c;
    builtins_->set(intern(name), c.value());
  }
  exc_base = exceptions_.at("BaseException");
  exc_exception = exceptions_.at("Exception");
  exceptions_["IOError"] = exceptions_.at("OSError");
  exceptions_["EnvironmentError"] = exceptions_.at("OSError");
  builtins_->set(intern("IOError"), exceptions_.at("OSError").value());
}

Ref<Class> Interp::exception_class(std::string_view name) {
  auto it = exceptions_.find(std::string(name));
  if (it != exceptions_.end()) return it->second;
  return exc_exception;
}

Value Interp::new_exception(Class* cls, std::string message) {
  auto e = make<ExceptionObj>(Ref<Class>(cls));
  // An empty message means no arguments (`raise StopIteration` has args ()).
  auto args = make<Tuple>();
  if (!message.empty()) args->items.push_back(str(std::move(message)));
  e->args = args.value();
  return e.value();
}

void Interp::raise(Class* cls, std::string message) { throw MslError{new_exception(cls, std::move(message))}; }

void Interp::raise_missing(Class* cls, std::string message, Str* name, Value where) {
  Value exc = new_exception(cls, std::move(message));
  exc.as<ExceptionObj>()->suggest_for = Ref<Str>(name);
  exc.as<ExceptionObj>()->suggest_in = std::move(where);
  throw MslError{exc};
}

void Interp::raise_value(Value exc) {
  if (exc.is(Kind::Class) && exc.as<Class>()->is_subclass_of(exc_base.get())) exc = call0(exc);
  if (!exc.is(Kind::Exception)) raise(exception_class("TypeError").get(), "exceptions must derive from BaseException");
  throw MslError{exc};
}

void Interp::handle_pending() {
  pending_.store(false);
  if (const char* reason = abort_reason_.load(std::memory_order_relaxed)) {
    // Raised again at every safe point until the host has the error: a
    // `finally` block that loops is stopped too.
    aborted_ = true;
    pending_.store(true);
    raise(exception_class("RuntimeError").get(), reason);
  }
  if (gc_due_.exchange(false)) heap_.collect();
  // Ctrl-C first: raised inside a __del__ it would only be printed as ignored.
  if (interrupt_.exchange(false)) {
    if (!finalize_queue_.empty()) pending_.store(true);  // they run at the next safe point
    raise(exception_class("KeyboardInterrupt").get(), "");
  }
  if (!finalize_queue_.empty()) run_finalizers();
}

void Interp::step_limit_exceeded() {
  // steps_ stays past the limit: every later step raises again, and `except`
  // and `finally` (nodes_stmt.cpp) let the error through, until the host
  // calls reset_limits().
  raise(exception_class("RuntimeError").get(), "step limit exceeded");
}

void Interp::stack_exhausted() {
  raise(exception_class("RecursionError").get(), "maximum recursion depth exceeded (C stack exhausted)");
}

// ------------------------------------------------------------- exceptions

std::string Interp::exception_summary(const Value& exc) {
  Class* cls = cls_of(exc);
  std::string name = cls->name->s;
  if (!cls->module_name.empty() && cls->module_name != "builtins" && cls->module_name != "__main__")
    name = cls->module_name + "." + name;
  std::string msg;
  try {
    msg = to_str(exc);
  } catch (MslError&) {
    msg = "<exception str() failed>";
  }
  return msg.empty() ? name : name + ": " + msg;
}

// The source excerpt of a traceback frame, dedented as Python shows it.
static std::string frame_excerpt(const SourceFile& src, const Span& span) {
  std::string text = render_source_excerpt(src, span, 4);
  size_t nl = text.find('\n');
  if (nl == std::string::npos || nl + 1 >= text.size()) return text;
  std::string code = text.substr(0, nl), carets = text.substr(nl + 1);
  size_t lead = code.find_first_not_of(' ');
  size_t caret_lead = carets.find_first_not_of(' ');
  if (lead == std::string::npos || caret_lead == std::string::npos) return text;
  size_t drop = std::min(lead, caret_lead) > 4 ? std::min(lead, caret_lead) - 4 : 0;
  return code.substr(drop) + "\n" + carets.substr(drop);
}

bool Interp::is_library_source(const SourceFile* src) const {
  if (!src || opts_.stdlib_dir.empty()) return false;
  const std::string& dir = opts_.stdlib_dir;
  const std::string& name = src->name();
  return name.size() > dir.size() && name.compare(0, dir.size(), dir) == 0 && name[dir.size()] == '/';
}

std::string Interp::format_exception(const Value& exc) { return format_exception_chain(exc, false); }

std::string Interp::format_exception_chain(const Value& exc, bool chained) {
  if (!exc.is(Kind::Exception)) return exception_summary(exc) + "\n";
  ExceptionObj* x = exc.as<ExceptionObj>();
  std::string out;
  if (!x->diagnostics.empty()) {
    for (auto& d : x->diagnostics) out += format_diagnostic(d);
    return out;
  }
  if (x->cause.is(Kind::Exception)) {
    out += format_exception_chain(x->cause, true);
    out += "\nThe above exception was the direct cause of the following exception:\n\n";
  } else if (x->context.is(Kind::Exception) && !x->suppress_context) {
    out += format_exception_chain(x->context, true);
    out += "\nDuring handling of the above exception, another exception occurred:\n\n";
  }
  std::vector<TraceEntry> frames = x->traceback;
  // A handled exception shown in a chain ends where it was caught.
  if (chained && x->handled &&
      (frames.empty() || frames.back().source != x->handled_at.source ||
       frames.back().function != x->handled_at.function))
    frames.push_back(x->handled_at);
  if (!frames.empty()) {
    out += "Traceback (most recent call last):\n";
    // Frames inside the standard library are hidden: users see their own
    // code (unless the error never left the library, or MSL_TRACEBACK_ALL is set).
    std::vector<TraceEntry> tb;
    bool show_all = std::getenv("MSL_TRACEBACK_ALL") != nullptr;
    for (const TraceEntry& t : frames)
      if (show_all || !is_library_source(t.source.get())) tb.push_back(t);
    if (tb.empty()) tb = frames;
    // Long recursions print the repeated frames once, as Python does.
    size_t i = tb.size();
    while (i > 0) {
      --i;
      const TraceEntry& t = tb[i];
      size_t repeat = 0;
      while (i > 0 && tb[i - 1].source == t.source && tb[i - 1].span.line == t.span.line &&
             tb[i - 1].span.col == t.span.col && tb[i - 1].function == t.function) {
        --i;
        ++repeat;
      }
      // A short run is printed in full; a longer one as one frame plus a count.
      size_t shown = repeat > 2 ? 1 : repeat + 1;
      for (size_t r = 0; r < shown; ++r) {
        out += fmt::format("  {}:{}:{} in {}\n", t.source ? t.source->name() : "<unknown>", t.span.line,
                           t.span.col, t.function);
        if (t.source) out += frame_excerpt(*t.source, t.span);
      }
      if (repeat > 2) out += fmt::format("  [Previous line repeated {} more times]\n", repeat);
    }
  }
  out += exception_summary(exc) + suggestion_suffix(*this, exc) + "\n";
  return out;
}

// ---------------------------------------------------------------- running

Ref<Module> Interp::new_module(std::string_view name, std::string file) {
  auto m = make<Module>();
  m->name = Ref<Str>(intern(name));
  m->file = std::move(file);
  m->set(names_->__name__, str(std::string(name)));
  if (!m->file.empty()) m->set(names_->__file__, str(m->file));
  return m;
}

Ref<Module> Interp::main_module() {
  if (!main_) {
    main_ = new_module("__main__", "");
    modules_["__main__"] = main_;
  }
  return main_;
}

// Parses `source`; raises SyntaxError carrying every diagnostic.
static std::unique_ptr<ast::Module> parse_or_raise(Interp& I, const SourcePtr& source, bool expression) {
  ParseResult r = expression ? parse_expression(source) : parse_module(source);
  if (r.errors.empty() && r.module) return std::move(r.module);
  std::string type = r.errors.empty() ? "SyntaxError" : r.errors.front().error_type;
  std::string msg = r.errors.empty() ? "invalid syntax" : r.errors.front().message;
  Value exc = I.new_exception(I.exception_class(type).get(), msg);
  ExceptionObj* x = exc.as<ExceptionObj>();
  x->diagnostics = std::move(r.errors);
  x->need_location = false;
  throw MslError{exc};
}

// A script run as the main program knows its path (__file__), as in Python.
static void set_main_file(Interp& I, Module* module, const SourceFile& source, Str* file_name) {
  if (module == I.main_module().get() && module->file.empty() && !source.name().empty() && source.name()[0] != '<') {
    module->file = source.name();
    module->set(file_name, I.str(module->file));
  }
}

Value Interp::run_source(SourcePtr source, Ref<Module> module) {
  if (!module) module = main_module();
  set_main_file(*this, module.get(), *source, names_->__file__);
  return run_parsed(parse_or_raise(*this, source, false), std::move(module));
}

// `source`'s tree from the module AST cache, else parsed and stored there.
static std::unique_ptr<ast::Module> cached_tree(Interp& I, const SourcePtr& source) {
  // The sandbox keeps the host's disk out of the interpreter's business too.
  ModuleAstCache cache = I.options().sandbox ? ModuleAstCache() : ModuleAstCache::from_environment();
  std::unique_ptr<ast::Module> tree = cache.load(source);
  if (!tree) {
    tree = parse_or_raise(I, source, false);
    cache.store(*tree);
  }
  return tree;
}

Value Interp::run_imported(SourcePtr source, Ref<Module> module) {
  return run_parsed(cached_tree(*this, source), std::move(module));
}

Value Interp::run_program(SourcePtr source) {
  if (source->text().size() >= kCachedProgramBytes) return run_source(std::move(source));
  Ref<Module> module = main_module();
  set_main_file(*this, module.get(), *source, names_->__file__);
  return run_parsed(cached_tree(*this, source), std::move(module));
}

Value Interp::run_parsed(std::shared_ptr<ast::Module> owner, Ref<Module> module) {
  SourcePtr source = owner->source;
  auto code = compile_module_once(*this, owner, module.get(), CompileMode::File);
  owner.reset();  // what is left of it, the functions' code holds
#ifdef __GLIBC__
  // The freed AST of a large script goes back to the system, not only to
  // glibc's heap, where the program's large allocations could not use it.
  if (source->text().size() >= (size_t(1) << 18)) malloc_trim(0);
#endif
  Value result = run_module_code(*this, code, module.get());
  run_finalizers();  // of what the last statements released
  return result;
}

Value Interp::run_interactive(SourcePtr source, Ref<Module> module) {
  if (!module) module = main_module();
  auto ast = parse_or_raise(*this, source, false);
  std::shared_ptr<const ast::Module> owner(std::move(ast));
  auto code = compile_module(*this, *owner, module.get(), CompileMode::Interactive, owner);
  Value result = run_module_code(*this, code, module.get());
  run_finalizers();  // of what the last statements released
  return result;
}

Value Interp::eval_expression(SourcePtr source, Ref<Module> module) {
  if (!module) module = main_module();
  auto ast = parse_or_raise(*this, source, true);
  std::shared_ptr<const ast::Module> owner(std::move(ast));
  auto code = compile_module(*this, *owner, module.get(), CompileMode::Eval, owner);
  return run_module_code(*this, code, module.get());
}

void Interp::display(const Value& v) {
  if (v.is_none() || v.is_undef()) return;
  // Python's sys.displayhook: remember the value as `_`, then show its repr.
  main_module()->set(intern("_"), v);
  write_out(repr(v) + "\n");
}

// --------------------------------------------------- native-call helpers

void check_arity(Interp& I, const char* fname, Args& a, size_t min, size_t max) {
  size_t n = a.pos.size();
  if (n >= min && n <= max) return;
  if (min == max)
    I.raise(I.exception_class("TypeError").get(),
            fmt::format("{}() takes exactly {} argument{} ({} given)", fname, min, min == 1 ? "" : "s", n));
  if (n < min)
    I.raise(I.exception_class("TypeError").get(),
            fmt::format("{}() takes at least {} argument{} ({} given)", fname, min, min == 1 ? "" : "s", n));
  I.raise(I.exception_class("TypeError").get(),
          fmt::format("{}() takes at most {} argument{} ({} given)", fname, max, max == 1 ? "" : "s", n));
}

void no_kwargs(Interp& I, const char* fname, Args& a) {
  if (!a.kw.empty()) I.raise(I.exception_class("TypeError").get(), fmt::format("{}() takes no keyword arguments", fname));
}

Value kwarg(Args& a, std::string_view name) {
  for (auto& [k, v] : a.kw)
    if (k->s == name) return v;
  return Value::undef();
}

}  // namespace msl
