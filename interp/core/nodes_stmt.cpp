// Statement nodes. Control flow (break/continue/return) travels as the Exec
// result of exec(); only MSL exceptions use C++ exceptions.
#include "interp/core/node_factory.h"

#include <new>

#include "kernels/op_site.h"

namespace msl::nodes {
namespace {

// A statement's own span is the fallback location for errors that no inner
// expression claimed (e.g. failures inside `del` or `import`).
#define MSL_LOCATE_STMT(body)    \
  try {                          \
    body                         \
  } catch (MslError & e) {       \
    locate(e, span);             \
    throw;                       \
  }

// The per-iteration check of loops (interrupts, step limit), located at the
// loop so an interrupted program shows where it was.
inline void loop_check(Interp& I, const Span& span) {
  try {
    I.poll();
    I.count_step();
  } catch (MslError& e) {
    locate(e, span);
    throw;
  }
}

// An exception escaping an `except` block remembers the one being handled
// ("During handling of the above exception, ..."), unless it already has a
// context or that would make the chain circular.
void chain_context(MslError& inner, const Value& handled) {
  if (inner.exc.identical(handled)) return;
  ExceptionObj* x = inner.obj();
  if (!x->context.is_undef() && !x->context.is_none()) return;
  for (Value c = handled; c.is(Kind::Exception); c = c.as<ExceptionObj>()->context)
    if (c.identical(inner.exc)) return;
  x->context = handled;
}

struct ExprStmt final : StmtNode {
  ExprNodePtr e;
  Exec exec(Frame& f) override {
    MSL_LOCATE_STMT(e->eval(f);)
    return Exec::Normal;
  }
};

struct ResultStmt final : StmtNode {
  ExprNodePtr e;
  Exec exec(Frame& f) override {
    MSL_LOCATE_STMT(f.ret = e->eval(f);)
    return Exec::Normal;
  }
};

struct DisplayStmt final : StmtNode {
  ExprNodePtr e;
  Exec exec(Frame& f) override {
    MSL_LOCATE_STMT(f.I.display(e->eval(f));)
    return Exec::Normal;
  }
};

struct Assign final : StmtNode {
  std::vector<ExprNodePtr> targets;
  ExprNodePtr value;
  Exec exec(Frame& f) override {
    MSL_LOCATE_STMT({
      Value v = value->eval(f);
      if (targets.size() == 1) {
        targets[0]->store(f, std::move(v));
      } else {
        for (auto& t : targets) t->store(f, v);
      }
    })
    return Exec::Normal;
  }
};

struct AugAssign final : StmtNode {
  ExprNodePtr target;
  ast::BinOp op;
  ExprNodePtr value;
  Exec exec(Frame& f) override {
    MSL_LOCATE_STMT(target->aug(f, op, value.get());)
    return Exec::Normal;
  }
};

struct Del final : StmtNode {
  std::vector<ExprNodePtr> targets;
  Exec exec(Frame& f) override {
    MSL_LOCATE_STMT(for (auto& t : targets) t->del(f);)
    return Exec::Normal;
  }
};

struct Pass final : StmtNode {
  Exec exec(Frame&) override { return Exec::Normal; }
};

struct Return final : StmtNode {
  ExprNodePtr value;
  Exec exec(Frame& f) override {
    f.ret = value ? value->eval(f) : Value();
    return Exec::Return;
  }
};

struct Break final : StmtNode {
  Exec exec(Frame&) override { return Exec::Break; }
};

struct Continue final : StmtNode {
  Exec exec(Frame&) override { return Exec::Continue; }
};

struct Raise final : StmtNode {
  ExprNodePtr exc, cause;
  Exec exec(Frame& f) override {
    Interp& I = f.I;
    if (!exc) {
      auto& handled = I.handled_exceptions();
      try {
        if (handled.empty()) I.raise(I.exception_class("RuntimeError").get(), "No active exception to reraise");
      } catch (MslError& e) {
        locate(e, span);
        throw;
      }
      throw MslError{handled.back()};
    }
    Value v = exc->eval(f);
    Value c = cause ? cause->eval(f) : Value::undef();
    try {
      if (v.is(Kind::Class) && v.as<Class>()->is_subclass_of(I.exc_base.get())) v = I.call0(v);
      if (!v.is(Kind::Exception)) I.raise(I.exception_class("TypeError").get(), "exceptions must derive from BaseException");
      ExceptionObj* x = v.as<ExceptionObj>();
      x->traceback.clear();
      x->need_location = true;
      if (!c.is_undef()) {
        if (c.is(Kind::Class)) c = I.call0(c);
        x->cause = c;
        x->suppress_context = true;
      }
      if (!I.handled_exceptions().empty() && !I.handled_exceptions().back().identical(v))
        x->context = I.handled_exceptions().back();
      throw MslError{v};
    } catch (MslError& e) {
      locate(e, span);
      throw;
    }
  }
};

struct Assert final : StmtNode {
  ExprNodePtr test, msg;
  Exec exec(Frame& f) override {
    if (truth(f.I, test->eval(f), test->span)) return Exec::Normal;
    Interp& I = f.I;
    Value m = msg ? msg->eval(f) : Value::undef();
    try {
      Ref<Class> cls = I.exception_class("AssertionError");
      if (m.is_undef()) I.raise_value(I.call0(cls.value()));
      I.raise_value(I.call1(cls.value(), m));
    } catch (MslError& e) {
      locate(e, test->span);
      throw;
    }
  }
};

struct Block final : StmtNode {
  std::vector<StmtNodePtr> body;
  Exec exec(Frame& f) override {
    for (auto& s : body) {
      Exec r;
      if (kernels::op_sites_wanted() && f.code && f.code->source) {
        // msl --dump and the profiler name the ops this statement runs by its line.
        kernels::OpSite site(&f.code->source->name(), s->span.line);
        r = s->exec(f);
      } else {
        r = s->exec(f);
      }
      // What the statement released may have a __del__ to run (Interp::run_finalizers).
      f.I.run_queued_finalizers();
      if (r != Exec::Normal) return r;
    }
    return Exec::Normal;
  }
};

struct If final : StmtNode {
  ExprNodePtr test;
  StmtNodePtr body, orelse;
  Exec exec(Frame& f) override {
    if (truth(f.I, test->eval(f), test->span)) return body->exec(f);
    return orelse ? orelse->exec(f) : Exec::Normal;
  }
};

struct While final : StmtNode {
  ExprNodePtr test;
  StmtNodePtr body, orelse;
  Exec exec(Frame& f) override {
    Interp& I = f.I;
    while (true) {
      loop_check(I, span);
      if (!truth(I, test->eval(f), test->span)) break;
      Exec r = body->exec(f);
      if (r == Exec::Break) return Exec::Normal;
      if (r == Exec::Return) return r;
    }
    return orelse ? orelse->exec(f) : Exec::Normal;
  }
};

struct For final : StmtNode {
  ExprNodePtr target, iter;
  StmtNodePtr body, orelse;

  Exec exec(Frame& f) override {
    Interp& I = f.I;
    Value seq = iter->eval(f);
    if (seq.is(Kind::Range)) {
      // Counting loops without an iterator object or per-step allocation.
      Range* r = seq.as<Range>();
      int64_t step = r->step, stop = r->stop;
      for (int64_t i = r->start; step > 0 ? i < stop : i > stop;) {
        loop_check(I, span);
        target->store(f, Value::integer(i));
        Exec res = body->exec(f);
        if (res == Exec::Break) return Exec::Normal;
        if (res == Exec::Return) return res;
        if (__builtin_add_overflow(i, step, &i)) break;
      }
      return orelse ? orelse->exec(f) : Exec::Normal;
    }
    if (seq.is(Kind::List) || seq.is(Kind::Tuple)) {
      // Index-based, re-reading the length so appends during the loop are seen (as in Python).
      auto& items = seq.is(Kind::List) ? seq.as<List>()->items : seq.as<Tuple>()->items;
      for (size_t i = 0; i < items.size(); ++i) {
        loop_check(I, span);
        target->store(f, items[i]);
        Exec res = body->exec(f);
        if (res == Exec::Break) return Exec::Normal;
        if (res == Exec::Return) return res;
      }
      return orelse ? orelse->exec(f) : Exec::Normal;
    }
    Value it;
    try {
      it = I.iter(seq);
    } catch (MslError& e) {
      locate(e, iter->span);
      throw;
    }
    Value item;
    while (true) {
      loop_check(I, span);
      try {
        if (!I.next(it, item)) break;
      } catch (MslError& e) {
        locate(e, iter->span);
        throw;
      }
      target->store(f, std::move(item));
      Exec res = body->exec(f);
      if (res == Exec::Break) return Exec::Normal;
      if (res == Exec::Return) return res;
    }
    return orelse ? orelse->exec(f) : Exec::Normal;
  }
};

struct Try final : StmtNode {
  StmtNodePtr body;
  std::vector<Handler> handlers;
  StmtNodePtr orelse, finalbody;

  // Does exception `exc` match the handler type value `t`?
  static bool matches(Interp& I, const Value& exc, const Value& t, const Span& span) {
    if (t.is(Kind::Tuple)) {
      for (auto& x : t.as<Tuple>()->items)
        if (matches(I, exc, x, span)) return true;
      return false;
    }
    if (!t.is(Kind::Class) || !t.as<Class>()->is_subclass_of(I.exc_base.get())) {
      try {
        I.raise(I.exception_class("TypeError").get(),
                "catching classes that do not inherit from BaseException is not allowed");
      } catch (MslError& e) {
        locate(e, span);
        throw;
      }
    }
    return I.isinstance(exc, t.as<Class>());
  }

  // Runs the handlers for `err`; rethrows when none matches.
  Exec handle(Frame& f, MslError& err) {
    Interp& I = f.I;
    for (auto& h : handlers) {
      if (h.type) {
        Value t = h.type->eval(f);
        if (!matches(I, err.exc, t, h.type->span)) continue;
      }
      ExceptionObj* x = err.obj();
      x->handled = true;
      x->handled_at = TraceEntry{f.code->source, x->need_location ? h.span : x->location, f.code->qualname};
      if (h.target) h.target->store(f, err.exc);
      auto& handled = I.handled_exceptions();
      handled.push_back(err.exc);
      struct Pop {
        std::vector<Value>& h;
        ~Pop() { h.pop_back(); }
      } pop{handled};
      Exec r;
      try {
        r = h.body->exec(f);
      } catch (MslError& inner) {
        chain_context(inner, err.exc);
        throw;
      }
      if (h.target) {
        // Python unbinds the name after the handler so the exception can be freed.
        try {
          h.target->del(f);
        } catch (MslError&) {
        }
      }
      return r;
    }
    throw;
  }

  Exec run_protected(Frame& f) {
    Exec r;
    bool raised = false;
    try {
      r = body->exec(f);
    } catch (MslError& err) {
      // A step limit or an abort is not the limited code's to catch
      // (Interp::Options).
      if (handlers.empty() || f.I.limit_hit()) throw;
      raised = true;
      r = handle(f, err);
    } catch (std::bad_alloc&) {
      // An allocation the memory limit (or the system) refused, inside the
      // interpreter rather than a native function: MemoryError, which the
      // script may catch, as in Python. What failed was not allocated, so
      // the exception object fits.
      if (handlers.empty() || f.I.limit_hit()) throw;
      try {
        f.I.raise(f.I.exception_class("MemoryError").get(), "out of memory");
      } catch (MslError& err) {
        raised = true;
        r = handle(f, err);
      }
    }
    if (!raised && orelse && r == Exec::Normal) r = orelse->exec(f);
    return r;
  }

  Exec exec(Frame& f) override {
    if (!finalbody) return run_protected(f);
    Exec r;
    try {
      r = run_protected(f);
    } catch (...) {
      // The finally block runs on the way out; if it breaks/returns/continues,
      // the pending exception is discarded, as in Python — unless it is a
      // step limit, which the limited code cannot stop.
      Value saved_ret = f.ret;
      Exec fr = finalbody->exec(f);
      if (fr != Exec::Normal && !f.I.limit_hit()) return fr;
      f.ret = saved_ret;
      throw;
    }
    Value saved_ret = f.ret;
    Exec fr = finalbody->exec(f);
    if (fr != Exec::Normal) return fr;
    f.ret = std::move(saved_ret);
    return r;
  }
};

struct ImportFrom final : StmtNode {
  std::string module;
  std::vector<ImportName> names;
  Module* star_module = nullptr;
  Exec exec(Frame& f) override {
    Interp& I = f.I;
    Ref<Module> m;
    MSL_LOCATE_STMT(m = I.import_module(module, f.code->source.get());)
    for (auto& n : names) {
      try {
        if (n.name->s == "*") {
          for (GlobalSlot* s : m->order) {
            if (s->value.is_undef() || s->name->s.empty() || s->name->s[0] == '_') continue;
            star_module->set(s->name.get(), s->value);
          }
          continue;
        }
        Value v = m->get(n.name.get());
        if (v.is_undef()) {
          // `from pkg import submodule`
          try {
            v = I.import_module(module + "." + n.name->s, f.code->source.get()).value();
          } catch (MslError& e) {
            if (!I.isinstance(e.exc, I.exception_class("ImportError").get())) throw;
            I.raise(I.exception_class("ImportError").get(),
                    "cannot import name '" + n.name->s + "' from '" + module + "'" +
                        (m->file.empty() ? std::string() : " (" + m->file + ")"));
          }
        }
        n.target->store(f, std::move(v));
      } catch (MslError& e) {
        locate(e, n.span);
        throw;
      }
    }
    return Exec::Normal;
  }
};

template <class T>
std::unique_ptr<T> node() {
  return std::make_unique<T>();
}

}  // namespace

StmtNodePtr expr_stmt(ExprNodePtr e) {
  auto n = node<ExprStmt>();
  n->e = std::move(e);
  return n;
}
StmtNodePtr result_stmt(ExprNodePtr e) {
  auto n = node<ResultStmt>();
  n->e = std::move(e);
  return n;
}
StmtNodePtr display_stmt(ExprNodePtr e) {
  auto n = node<DisplayStmt>();
  n->e = std::move(e);
  return n;
}
StmtNodePtr assign(std::vector<ExprNodePtr> targets, ExprNodePtr value) {
  auto n = node<Assign>();
  n->targets = std::move(targets);
  n->value = std::move(value);
  return n;
}
StmtNodePtr aug_assign(ExprNodePtr target, ast::BinOp op, ExprNodePtr value) {
  auto n = node<AugAssign>();
  n->target = std::move(target);
  n->op = op;
  n->value = std::move(value);
  return n;
}
StmtNodePtr del(std::vector<ExprNodePtr> targets) {
  auto n = node<Del>();
  n->targets = std::move(targets);
  return n;
}
StmtNodePtr pass() { return node<Pass>(); }
StmtNodePtr ret(ExprNodePtr value) {
  auto n = node<Return>();
  n->value = std::move(value);
  return n;
}
StmtNodePtr raise(ExprNodePtr exc, ExprNodePtr cause) {
  auto n = node<Raise>();
  n->exc = std::move(exc);
  n->cause = std::move(cause);
  return n;
}
StmtNodePtr brk() { return node<Break>(); }
StmtNodePtr cont() { return node<Continue>(); }
StmtNodePtr assert_(ExprNodePtr test, ExprNodePtr msg) {
  auto n = node<Assert>();
  n->test = std::move(test);
  n->msg = std::move(msg);
  return n;
}
StmtNodePtr block(std::vector<StmtNodePtr> body) {
  auto n = node<Block>();
  n->body = std::move(body);
  return n;
}
StmtNodePtr if_(ExprNodePtr test, StmtNodePtr body, StmtNodePtr orelse) {
  auto n = node<If>();
  n->test = std::move(test);
  n->body = std::move(body);
  n->orelse = std::move(orelse);
  return n;
}
StmtNodePtr while_(ExprNodePtr test, StmtNodePtr body, StmtNodePtr orelse) {
  auto n = node<While>();
  n->test = std::move(test);
  n->body = std::move(body);
  n->orelse = std::move(orelse);
  return n;
}
StmtNodePtr for_(ExprNodePtr target, ExprNodePtr iter, StmtNodePtr body, StmtNodePtr orelse) {
  auto n = node<For>();
  n->target = std::move(target);
  n->iter = std::move(iter);
  n->body = std::move(body);
  n->orelse = std::move(orelse);
  return n;
}
StmtNodePtr try_(StmtNodePtr body, std::vector<Handler> handlers, StmtNodePtr orelse, StmtNodePtr finalbody) {
  auto n = node<Try>();
  n->body = std::move(body);
  n->handlers = std::move(handlers);
  n->orelse = std::move(orelse);
  n->finalbody = std::move(finalbody);
  return n;
}
StmtNodePtr import_from(std::string module, std::vector<ImportName> names, Module* star_module) {
  auto n = node<ImportFrom>();
  n->module = std::move(module);
  n->names = std::move(names);
  n->star_module = star_module;
  return n;
}

}  // namespace msl::nodes
