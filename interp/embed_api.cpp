// The embedding API (include/msl/msl.h) over the host interpreter.
//
// Every public entry point goes through Impl::guarded(), which (1) notes the
// calling thread and re-anchors the interpreter's C-stack guard when it
// changed, (2) turns every way a run can end — a value, an MslError, sys.exit,
// a C++ exception — into a Result plus, for errors, one ErrorInfo handed to
// the host's callback, and (3) keeps the count of running evaluations that
// interrupt() consults, so an interrupt arriving between evaluations is
// dropped instead of hitting the next one.
//
// Values cross by conversion (scalars, str, list, tuple) or as a Handle that
// owns one reference to the MSL object. A Handle records the serial number of
// its VM so that a handle passed to another VM is refused (objects of one
// Interp hold that Interp's interned names and classes, which another Interp
// would not recognise).
#include <msl/msl.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "interp/deadline_watchdog.h"
#include "interp/builtins/format.h"
#include "interp/core/interp.h"
#include "interp/stdlib_location.h"
#include "kernels/memory_budget.h"

namespace msl::embed {

namespace detail {
struct Handle {
  msl::Value value;
  uint64_t vm_serial = 0;
  std::string type_name;
  // The VM's memory budget (Config::memory_limit), current while the
  // handle lets go of its object, so that what it frees is given back.
  msl::kernels::MemoryBudget* budget = nullptr;
  ~Handle() {
    msl::kernels::BudgetScope scope(budget);
    value = msl::Value();
    if (budget) budget->drop();
  }
};
}  // namespace detail

namespace {

std::atomic<uint64_t> g_next_vm_serial{1};
std::atomic<uint64_t> g_next_thread_token{1};

// A number unique to the calling thread for the life of the process (thread
// ids and stacks are reused after a join; this is not).
uint64_t thread_token() {
  thread_local uint64_t token = g_next_thread_token.fetch_add(1);
  return token;
}

const std::string kEmptyString;
const std::vector<Value> kEmptyItems;

// A native function registered by the host: the payload of its Native object.
struct HostFunction : msl::NativeData {
  HostFunction(msl::Ref<msl::Class> cls, VM::Impl* impl, std::string name, NativeFunction fn)
      : NativeData(std::move(cls)), impl(impl), name(std::move(name)), fn(std::move(fn)) {}
  VM::Impl* impl;
  std::string name;
  NativeFunction fn;
};

}  // namespace

// =================================================================== Value

Value::Value(std::vector<Value> items)
    : type_(Type::List), items_(std::make_shared<const std::vector<Value>>(std::move(items))) {}

Value Value::list(std::initializer_list<Value> items) { return Value(std::vector<Value>(items)); }

Value Value::tuple(std::vector<Value> items) {
  Value v(std::move(items));
  v.type_ = Type::Tuple;
  return v;
}

double Value::as_float() const {
  switch (type_) {
    case Type::Float: return f_;
    case Type::Int: return static_cast<double>(i_);
    case Type::Bool: return b_ ? 1.0 : 0.0;
    default: return 0.0;
  }
}

const std::string& Value::as_str() const { return type_ == Type::Str ? s_ : kEmptyString; }

const std::vector<Value>& Value::items() const {
  return (type_ == Type::List || type_ == Type::Tuple) && items_ ? *items_ : kEmptyItems;
}

std::string Value::type_name() const {
  switch (type_) {
    case Type::None: return "NoneType";
    case Type::Bool: return "bool";
    case Type::Int: return "int";
    case Type::Float: return "float";
    case Type::Str: return "str";
    case Type::List: return "list";
    case Type::Tuple: return "tuple";
    case Type::Object: return handle_ ? handle_->type_name : "object";
  }
  return "object";
}

std::string Value::to_string() const {
  switch (type_) {
    case Type::None: return "None";
    case Type::Bool: return b_ ? "True" : "False";
    case Type::Int: return std::to_string(i_);
    // The same text MSL's repr() gives (interp/builtins/format.h).
    case Type::Float: return msl::float_repr(f_);
    case Type::Str: return msl::str_repr(s_);
    case Type::List:
    case Type::Tuple: {
      const auto& it = items();
      std::string out = type_ == Type::List ? "[" : "(";
      for (size_t i = 0; i < it.size(); ++i) {
        if (i) out += ", ";
        out += it[i].to_string();
      }
      if (type_ == Type::Tuple && it.size() == 1) out += ",";
      out += type_ == Type::List ? "]" : ")";
      return out;
    }
    case Type::Object: return "<" + type_name() + " object>";
  }
  return "?";
}

bool operator==(const Value& a, const Value& b) {
  if (a.type_ != b.type_) return false;
  switch (a.type_) {
    case Value::Type::None: return true;
    case Value::Type::Bool: return a.b_ == b.b_;
    case Value::Type::Int: return a.i_ == b.i_;
    case Value::Type::Float: return a.f_ == b.f_;
    case Value::Type::Str: return a.s_ == b.s_;
    case Value::Type::List:
    case Value::Type::Tuple: return a.items() == b.items();
    case Value::Type::Object:
      if (!a.handle_ || !b.handle_) return a.handle_ == b.handle_;
      return a.handle_->value.identical(b.handle_->value);
  }
  return false;
}

// ====================================================================== VM

struct VM::Impl {
  Config config;
  uint64_t serial = g_next_vm_serial.fetch_add(1);
  std::unique_ptr<msl::Interp> interp;
  std::optional<ErrorInfo> last_error;

  // Evaluations in progress (nested ones included) and the thread they run on.
  std::mutex mutex;
  int depth = 0;
  uint64_t thread = 0;

  // define_module_function: functions per native module, and the module
  // objects once imported (later definitions go straight into them).
  std::unordered_map<std::string, std::vector<std::pair<std::string, msl::Ref<HostFunction>>>> module_functions;
  std::unordered_map<std::string, msl::Ref<msl::Module>> native_modules;

  explicit Impl(Config c) : config(std::move(c)) {
    msl::Interp::Options o;
    o.write_stdout = config.output;
    o.write_stderr = config.error_output ? config.error_output : config.output;
    o.recursion_limit = config.recursion_limit;
    o.step_limit = config.step_limit;
    o.memory_limit = config.memory_limit;
    o.sandbox = config.sandbox;
    if (config.max_sequence > 0) o.max_sequence = config.max_sequence;
    o.argv = config.argv;
    o.module_path = config.module_path;
    o.stdlib_dir = config.stdlib_dir.empty() ? msl::default_stdlib_dir() : config.stdlib_dir;
    interp = std::make_unique<msl::Interp>(std::move(o));
    thread = thread_token();  // the constructor anchored the stack guard here
  }

  ~Impl() {
    watchdog.reset();  // no expiry may reach a dying interpreter
    native_modules.clear();
    module_functions.clear();
    interp.reset();
  }

  // Config::time_limit: armed when an outermost evaluation starts; an
  // expiry aborts only the evaluation it was armed for.
  std::unique_ptr<msl::DeadlineWatchdog> watchdog;
  uint64_t armed_generation = 0;
  void arm_time_limit() {
    if (config.time_limit.count() <= 0) return;
    if (!watchdog)
      watchdog = std::make_unique<msl::DeadlineWatchdog>([this](uint64_t g) {
        std::lock_guard<std::mutex> lock(mutex);
        if (depth > 0 && g == armed_generation) interp->request_abort("time limit exceeded");
      });
    armed_generation = watchdog->arm(msl::DeadlineWatchdog::Clock::now() + config.time_limit);
  }

  // ------------------------------------------------------------ entry guard
  struct Entry {
    explicit Entry(Impl& im) : im(im) {
      std::lock_guard<std::mutex> lock(im.mutex);
      if (im.depth++ == 0) {
        im.arm_time_limit();
        im.interp->activate();  // new objects join this VM's cycle collector
        uint64_t t = thread_token();
        if (t != im.thread) {
          im.interp->enter_thread();
          im.thread = t;
        }
      }
    }
    ~Entry() {
      std::lock_guard<std::mutex> lock(im.mutex);
      if (--im.depth == 0) {
        // Drop an interrupt that arrived after the evaluation stopped polling,
        // and forget exceptions an unwound `except` block left as "handled".
        try {
          im.interp->poll();
        } catch (...) {
        }
        im.interp->handled_exceptions().clear();
        // A limit that was hit has reached the host; the next call starts
        // a new count.
        if (im.watchdog) im.watchdog->disarm();
        im.interp->reset_limits();
      }
    }
    Impl& im;
  };

  // ------------------------------------------------------------ conversions
  msl::Value to_msl(const Value& v) {
    msl::Interp& I = *interp;
    switch (v.type_) {
      case Value::Type::None: return msl::Value::none();
      case Value::Type::Bool: return msl::Value::boolean(v.b_);
      case Value::Type::Int: return msl::Value::integer(v.i_);
      case Value::Type::Float: return msl::Value::number(v.f_);
      case Value::Type::Str: return I.str(v.s_);
      case Value::Type::List: {
        auto l = msl::make<msl::List>();
        l->items.reserve(v.items().size());
        for (const Value& x : v.items()) l->items.push_back(to_msl(x));
        return l.value();
      }
      case Value::Type::Tuple: {
        auto t = msl::make<msl::Tuple>();
        t->items.reserve(v.items().size());
        for (const Value& x : v.items()) t->items.push_back(to_msl(x));
        return t.value();
      }
      case Value::Type::Object:
        if (!v.handle_) return msl::Value::none();
        if (v.handle_->vm_serial != serial)
          I.raise(I.exception_class("TypeError").get(),
                  fmt::format("a '{}' object from another MSL VM cannot be used in this one", v.handle_->type_name));
        return v.handle_->value;
    }
    return msl::Value::none();
  }

  Value handle(const msl::Value& v) {
    auto h = std::make_shared<detail::Handle>();
    h->value = v;
    h->vm_serial = serial;
    h->type_name = interp->type_name(v);
    h->budget = interp->memory_budget();
    if (h->budget) h->budget->retain();
    Value out;
    out.type_ = Value::Type::Object;
    out.handle_ = std::move(h);
    return out;
  }

  // Lists and tuples are copied item by item; one that contains itself (or
  // nests absurdly deep) is handed over as a handle at the repeating level.
  Value from_msl(const msl::Value& v, std::vector<const msl::Object*>& path) {
    switch (v.tag()) {
      case msl::Tag::Undef:
      case msl::Tag::None: return Value();
      case msl::Tag::Bool: return Value(v.as_bool());
      case msl::Tag::Int: return Value(v.as_int());
      case msl::Tag::Float: return Value(v.as_float());
      case msl::Tag::Obj: break;
    }
    const msl::Object* o = v.obj();
    if (o->kind == msl::Kind::Str) return Value(v.as<msl::Str>()->s);
    if (o->kind == msl::Kind::List || o->kind == msl::Kind::Tuple) {
      if (path.size() > 256 || std::find(path.begin(), path.end(), o) != path.end()) return handle(v);
      path.push_back(o);
      const auto& src = o->kind == msl::Kind::List ? v.as<msl::List>()->items : v.as<msl::Tuple>()->items;
      std::vector<Value> items;
      items.reserve(src.size());
      for (size_t i = 0; i < src.size(); ++i) items.push_back(from_msl(src[i], path));
      path.pop_back();
      return o->kind == msl::Kind::List ? Value(std::move(items)) : Value::tuple(std::move(items));
    }
    return handle(v);
  }

  Value from_msl(const msl::Value& v) {
    std::vector<const msl::Object*> path;
    return from_msl(v, path);
  }

  std::vector<msl::Value> to_msl_args(std::span<const Value> args) {
    std::vector<msl::Value> out;
    out.reserve(args.size());
    for (const Value& a : args) out.push_back(to_msl(a));
    return out;
  }

  // ----------------------------------------------------------------- errors
  void report(ErrorInfo info) {
    last_error = info;
    if (config.on_error) config.on_error(*last_error);
  }

  // Reports an MSL exception; returns the status it means.
  Status report_exception(const msl::Value& exc) {
    msl::Interp& I = *interp;
    ErrorInfo info;
    info.kind = ErrorKind::Runtime;
    try {
      msl::Class* cls = I.cls_of(exc);
      info.type = cls->name->s;
      try {
        if (exc.is(msl::Kind::Exception)) {
          const msl::Value& args = exc.as<msl::ExceptionObj>()->args;
          // str(SyntaxError) may decorate the message; keep the plain one.
          if (args.is(msl::Kind::Tuple) && args.as<msl::Tuple>()->items.size() == 1 &&
              args.as<msl::Tuple>()->items[0].is(msl::Kind::Str))
            info.message = args.as<msl::Tuple>()->items[0].as<msl::Str>()->s;
          else
            info.message = I.to_str(exc);
        } else {
          info.message = I.to_str(exc);
        }
      } catch (msl::MslError&) {
        info.message = "<exception str() failed>";
      }
      if (exc.is(msl::Kind::Exception)) {
        msl::ExceptionObj* x = exc.as<msl::ExceptionObj>();
        if (!x->diagnostics.empty()) {
          const msl::Diagnostic& d = x->diagnostics.front();
          info.file = d.source ? d.source->name() : "";
          info.line = static_cast<int>(d.span.line);
          info.col = static_cast<int>(d.span.col);
          if (x->traceback.empty() && I.isinstance(exc, I.exception_class("SyntaxError").get()))
            info.kind = ErrorKind::Compile;
        } else if (!x->traceback.empty()) {
          const msl::TraceEntry& t = x->traceback.front();  // innermost frame
          info.file = t.source ? t.source->name() : "";
          info.line = static_cast<int>(t.span.line);
          info.col = static_cast<int>(t.span.col);
        } else if (!x->need_location) {
          info.line = static_cast<int>(x->location.line);
          info.col = static_cast<int>(x->location.col);
        }
      }
      info.text = I.format_exception(exc);
    } catch (...) {
      if (info.type.empty()) info.type = "Exception";
      if (info.text.empty()) info.text = info.type + (info.message.empty() ? "" : ": " + info.message) + "\n";
    }
    Status s = info.kind == ErrorKind::Compile ? Status::CompileError : Status::RuntimeError;
    report(std::move(info));
    return s;
  }

  // An error that has no MSL exception object behind it (out of memory, an
  // internal C++ exception).
  Status report_plain(std::string type, std::string message) {
    ErrorInfo info;
    info.kind = ErrorKind::Runtime;
    info.type = std::move(type);
    info.message = std::move(message);
    info.text = info.type + (info.message.empty() ? "" : ": " + info.message) + "\n";
    report(std::move(info));
    return Status::RuntimeError;
  }

  // Runs `body` (which returns an msl::Value) as one entry point.
  template <class F>
  //
  // Config::memory_limit: what the evaluation allocates and frees is the
  // VM's (BudgetScope); the host data made of its result and errors is the
  // host's, and so is what native functions do (call_host).
  Result guarded(F&& body) {
    Entry entry(*this);
    Result r;
    msl::kernels::MemoryBudget* budget = interp->memory_budget();
    try {
      msl::Value v;
      {
        msl::kernels::BudgetScope vm(budget);
        v = body(*interp);
      }
      r.value = from_msl(v);
      msl::kernels::BudgetScope vm(budget);
      v = msl::Value();
    } catch (msl::MslError& e) {
      r.status = report_exception(e.exc);
      msl::kernels::BudgetScope vm(budget);
      e.exc = msl::Value();
    } catch (msl::MslExit& e) {
      r.status = Status::Exit;
      r.exit_code = e.code;
    } catch (std::bad_alloc&) {
      r.status = report_plain("MemoryError", "out of memory");
    } catch (std::exception& e) {
      r.status = report_plain("SystemError", std::string("internal error: ") + e.what());
    } catch (...) {
      r.status = report_plain("SystemError", "internal error: unknown C++ exception");
    }
    return r;
  }

  // ------------------------------------------------------- native functions
  msl::Class* exception_class_named(const std::string& type) {
    msl::Interp& I = *interp;
    msl::Str* n = I.intern(type);
    for (msl::Module* m : {I.builtins_module().get(), I.main_module().get()}) {
      msl::Value v = m->get(n);
      if (v.is(msl::Kind::Class) && v.as<msl::Class>()->is_subclass_of(I.exc_base.get())) return v.as<msl::Class>();
    }
    return nullptr;
  }

  static msl::Value call_host(msl::Interp& I, msl::Args& a, msl::Object* data) {
    HostFunction* hf = static_cast<HostFunction*>(data);
    Impl& im = *hf->impl;
    if (!a.kw.empty())
      I.raise(I.exception_class("TypeError").get(), fmt::format("{}() takes no keyword arguments", hf->name));
    std::string err_type, err_message;
    try {
      // The host's own memory is not the VM's (Config::memory_limit).
      msl::kernels::BudgetScope host(nullptr);
      std::vector<Value> args;
      args.reserve(a.pos.size());
      for (const msl::Value& v : a.pos) args.push_back(im.from_msl(v));
      Value result = hf->fn(std::span<const Value>(args));
      msl::kernels::BudgetScope vm(I.memory_budget());
      return im.to_msl(result);
    } catch (msl::MslError&) {
      throw;
    } catch (msl::MslExit&) {
      throw;
    } catch (const Error& e) {
      err_type = e.type;
      err_message = e.message;
    } catch (const std::bad_alloc&) {
      err_type = "MemoryError";
      err_message = "out of memory in native function '" + hf->name + "'";
    } catch (const std::exception& e) {
      err_type = "RuntimeError";
      err_message = e.what();
    } catch (...) {
      err_type = "RuntimeError";
      err_message = "unknown C++ exception in native function '" + hf->name + "'";
    }
    msl::Class* cls = im.exception_class_named(err_type);
    if (!cls) {
      cls = I.exception_class("RuntimeError").get();
      err_message = err_type + ": " + err_message;
    }
    if (!cls->is_builtin) I.raise_value(I.call1(msl::Value::object(cls), I.str(err_message)));
    I.raise(cls, std::move(err_message));
  }

  msl::Ref<HostFunction> make_host_function(std::string name, NativeFunction fn) {
    return msl::make<HostFunction>(interp->cls_object, this, std::move(name), std::move(fn));
  }
};

VM::VM(Config config) : impl_(std::make_unique<Impl>(std::move(config))) {}
VM::~VM() = default;
VM::VM(VM&&) noexcept = default;
VM& VM::operator=(VM&&) noexcept = default;

const char* VM::version() { return "0.1.0"; }

Result VM::run(std::string_view source, std::string_view name) {
  return impl_->guarded([&](msl::Interp& I) {
    auto src = std::make_shared<msl::SourceFile>(std::string(name), std::string(source));
    I.run_source(src, I.main_module());
    return msl::Value::none();
  });
}

Result VM::run_file(const std::string& path) {
  return impl_->guarded([&](msl::Interp& I) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      I.raise(I.exception_class("FileNotFoundError").get(),
              fmt::format("cannot open file '{}': {}", path, std::strerror(errno)));
    std::stringstream ss;
    ss << in.rdbuf();
    I.run_source(std::make_shared<msl::SourceFile>(path, ss.str()), I.main_module());
    return msl::Value::none();
  });
}

Result VM::eval(std::string_view expression) {
  return impl_->guarded([&](msl::Interp& I) {
    auto src = std::make_shared<msl::SourceFile>("<eval>", std::string(expression));
    return I.eval_expression(src, I.main_module());
  });
}

Result VM::call(std::string_view name, std::span<const Value> args) {
  return impl_->guarded([&](msl::Interp& I) {
    msl::Str* n = I.intern(name);
    msl::Value f = I.main_module()->get(n);
    if (f.is_undef()) f = I.builtins_module()->get(n);
    if (f.is_undef()) I.raise(I.exception_class("NameError").get(), fmt::format("name '{}' is not defined", name));
    std::vector<msl::Value> a = impl_->to_msl_args(args);
    return I.call(f, a);
  });
}

Result VM::call(std::string_view name, std::initializer_list<Value> args) {
  return call(name, std::span<const Value>(args.begin(), args.size()));
}

Result VM::call_value(const Value& callable, std::span<const Value> args) {
  return impl_->guarded([&](msl::Interp& I) {
    msl::Value f = impl_->to_msl(callable);
    std::vector<msl::Value> a = impl_->to_msl_args(args);
    return I.call(f, a);
  });
}

Result VM::call_value(const Value& callable, std::initializer_list<Value> args) {
  return call_value(callable, std::span<const Value>(args.begin(), args.size()));
}

Result VM::call_method(const Value& object, std::string_view method, std::initializer_list<Value> args) {
  return impl_->guarded([&](msl::Interp& I) {
    msl::Value o = impl_->to_msl(object);
    std::vector<msl::Value> a = impl_->to_msl_args(std::span<const Value>(args.begin(), args.size()));
    msl::Value f = I.getattr(o, I.intern(method));
    return I.call(f, a);
  });
}

Result VM::get_attr(const Value& object, std::string_view attribute) {
  return impl_->guarded([&](msl::Interp& I) { return I.getattr(impl_->to_msl(object), I.intern(attribute)); });
}

std::optional<Value> VM::get_global(std::string_view name) {
  Impl::Entry entry(*impl_);
  try {
    msl::Value v = impl_->interp->main_module()->get(impl_->interp->intern(name));
    if (v.is_undef()) return std::nullopt;
    return impl_->from_msl(v);
  } catch (...) {
    return std::nullopt;
  }
}

bool VM::has_global(std::string_view name) { return get_global(name).has_value(); }

bool VM::set_global(std::string_view name, const Value& value) {
  Result r = impl_->guarded([&](msl::Interp& I) {
    I.main_module()->set(I.intern(name), impl_->to_msl(value));
    return msl::Value::none();
  });
  return r.ok();
}

void VM::define_function(std::string_view name, NativeFunction fn) {
  Impl::Entry entry(*impl_);
  msl::Interp& I = *impl_->interp;
  I.def_native(nullptr, name, &Impl::call_host, impl_->make_host_function(std::string(name), std::move(fn)));
}

void VM::define_module_function(std::string_view module, std::string_view name, NativeFunction fn) {
  Impl::Entry entry(*impl_);
  Impl& im = *impl_;
  msl::Interp& I = *im.interp;
  std::string mod(module);
  auto hf = im.make_host_function(std::string(name), std::move(fn));
  auto loaded = im.native_modules.find(mod);
  if (loaded != im.native_modules.end()) {
    I.def_native(loaded->second.get(), name, &Impl::call_host, hf);
    return;
  }
  auto& fns = im.module_functions[mod];
  if (fns.empty()) {
    I.register_native_module(mod, [&im, mod](msl::Interp& interp, msl::Module& m) {
      im.native_modules[mod] = msl::Ref<msl::Module>(&m);
      for (auto& [fname, f] : im.module_functions[mod]) interp.def_native(&m, fname, &Impl::call_host, f);
    });
  }
  fns.emplace_back(std::string(name), std::move(hf));
}

std::string VM::repr(const Value& value) {
  Result r = impl_->guarded([&](msl::Interp& I) { return I.str(I.repr(impl_->to_msl(value))); });
  return r.value.as_str();
}

std::string VM::str(const Value& value) {
  Result r = impl_->guarded([&](msl::Interp& I) { return I.str(I.to_str(impl_->to_msl(value))); });
  return r.value.as_str();
}

void VM::interrupt() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->depth > 0) impl_->interp->request_interrupt();
}

void VM::abort() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->depth > 0) impl_->interp->request_abort("evaluation aborted");
}

const std::optional<ErrorInfo>& VM::last_error() const { return impl_->last_error; }

}  // namespace msl::embed
