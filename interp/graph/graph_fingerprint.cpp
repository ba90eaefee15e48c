// The fingerprint walk over a callable's live objects: the part of the
// disk cache's key (graph_disk_cache.h) that says which program graph mode
// would compile from them.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <unordered_map>

#include "interp/graph/graph_compiler_impl.h"
#include "interp/graph/graph_disk_cache.h"
#include "interp/core/interp.h"
#include "interp/core/nodes.h"
#include "interp/core/object.h"
#include "interp/tensor/tensor_object.h"

namespace msl {

namespace {

// Nesting deeper than this is not a network description: give up.
constexpr int kMaxDepth = 256;

// A hash of a file's bytes, once per path and process ("" when unreadable).
std::string file_hash(const std::string& path) {
  static std::mutex mu;
  static std::unordered_map<std::string, std::string> memo;
  std::lock_guard<std::mutex> lock(mu);
  auto it = memo.find(path);
  if (it != memo.end()) return it->second;
  std::ifstream f(path, std::ios::binary);
  std::string h;
  if (f) {
    std::ostringstream ss;
    ss << f.rdbuf();
    h = jit::codegen::ObjectCache::hash(ss.str());
  }
  return memo.emplace(path, h).first->second;
}

// The identifiers of a function's text that are neither attribute names
// (`self.lr` names no global) nor its own parameters and locals (a name
// is local or global throughout a body; functions nested in it see its
// locals as closure cells): the module globals it may read. The text is
// the def line and every following line indented deeper (or blank), which
// over-approximates the body of a def or a lambda. `dotted` gets, for each
// such name followed by `.attr`, the attribute's name: what the body reads
// of a module it reaches by name (`sys.argv`, `config.batch_size`).
struct NamesRead {
  std::set<std::string> names;
  std::set<std::pair<std::string, std::string>> dotted;
};

NamesRead names_in_function(const FuncCode& code) {
  NamesRead out;
  std::set<std::string>& names = out.names;
  if (!code.source || code.span.line == 0) return out;
  const SourceFile& src = *code.source;
  auto indent = [](std::string_view l) {
    size_t i = 0;
    while (i < l.size() && (l[i] == ' ' || l[i] == '\t')) ++i;
    return i;
  };
  std::string_view first = src.line_text(code.span.line);
  size_t base = indent(first);
  uint32_t last = std::max(code.span.line, code.span.end_line);
  while (last + 1 <= src.line_count()) {
    std::string_view l = src.line_text(last + 1);
    if (indent(l) < l.size() && indent(l) <= base) break;
    ++last;
  }
  std::set<std::string_view> locals;
  for (const Ref<Str>& n : code.slot_names)
    if (n) locals.insert(n->s);
  for (const Ref<Str>& n : code.param_names)
    if (n) locals.insert(n->s);
  for (uint32_t line = code.span.line; line <= last; ++line) {
    std::string_view l = src.line_text(line);
    for (size_t i = 0; i < l.size();) {
      unsigned char c = static_cast<unsigned char>(l[i]);
      if (std::isalpha(c) || c == '_') {
        size_t j = i;
        while (j < l.size() && (std::isalnum(static_cast<unsigned char>(l[j])) || l[j] == '_')) ++j;
        size_t k = i;
        while (k > 0 && (l[k - 1] == ' ' || l[k - 1] == '\t')) --k;
        std::string_view name = l.substr(i, j - i);
        if ((k == 0 || l[k - 1] != '.') && !locals.count(name)) {
          names.emplace(name);
          size_t d = j;
          while (d < l.size() && (l[d] == ' ' || l[d] == '\t')) ++d;
          if (d < l.size() && l[d] == '.') {
            size_t a = d + 1;
            while (a < l.size() && (l[a] == ' ' || l[a] == '\t')) ++a;
            size_t e = a;
            while (e < l.size() && (std::isalnum(static_cast<unsigned char>(l[e])) || l[e] == '_')) ++e;
            if (e > a) out.dotted.emplace(std::string(name), std::string(l.substr(a, e - a)));
          }
        }
        i = j;
      } else if (std::isdigit(c)) {
        while (i < l.size() && (std::isalnum(static_cast<unsigned char>(l[i])) || l[i] == '.')) ++i;
      } else {
        ++i;
      }
    }
  }
  return out;
}

class Walk {
 public:
  explicit Walk(Interp& interp) : I(interp) {}

  bool ok = true;
  std::string why;
  std::string text;
  std::vector<Value> params;

  void value(const Value& v, int depth = 0) {
    if (!ok) return;
    if (depth > kMaxDepth) return fail("objects nested deeper than " + std::to_string(kMaxDepth));
    switch (v.tag()) {
      case Tag::Undef: text += "U;"; return;
      case Tag::None: text += "N;"; return;
      case Tag::Bool: text += v.as_bool() ? "T;" : "F;"; return;
      case Tag::Int: text += "i" + std::to_string(v.as_int()) + ";"; return;
      case Tag::Float: text += fmt::format("f{:x};", std::bit_cast<uint64_t>(v.as_float())); return;
      case Tag::Obj: break;
    }
    Object* o = v.obj();
    auto [it, first] = seen_.try_emplace(o, seen_.size());
    if (!first) {
      text += "@" + std::to_string(it->second) + ";";
      return;
    }
    object(v, depth + 1);
  }

 private:
  Interp& I;
  std::unordered_map<const Object*, size_t> seen_;
  std::unordered_map<const SourceFile*, std::string> source_hash_;

  void fail(const std::string& what) {
    if (ok) ok = false, why = what;
  }
  void str(std::string_view s) { text += fmt::format("{}:{};", s.size(), s); }
  void items(const std::vector<Value>& xs, int depth) {
    text += "(" + std::to_string(xs.size()) + ";";
    for (const Value& x : xs) value(x, depth);
    text += ")";
  }
  // Attribute maps sorted by name: the same attributes set in another
  // order describe the same object.
  void attrs(const AttrMap& m, int depth) {
    std::vector<const std::pair<Ref<Str>, Value>*> es;
    for (const auto& e : m.entries()) es.push_back(&e);
    std::sort(es.begin(), es.end(), [](auto* a, auto* b) { return a->first->s < b->first->s; });
    text += "{" + std::to_string(es.size()) + ";";
    for (auto* e : es) {
      str(e->first->s);
      value(e->second, depth);
    }
    text += "}";
  }
  const std::string& source(const SourcePtr& src) {
    auto [it, first] = source_hash_.try_emplace(src.get());
    if (first) it->second = jit::codegen::ObjectCache::hash(src->text());
    return it->second;
  }

  void function(Function* f, int depth) {
    const FuncCode& code = *f->code;
    text += "fn ";
    str(f->module ? f->module->name->s : std::string());
    str(code.qualname);
    text += fmt::format("{}:{};", code.span.line, code.span.col);
    if (code.source) str(code.source->name()), str(source(code.source));
    items(f->defaults, depth);
    items(f->kwdefaults, depth);
    text += "closure(";
    for (const Ref<Cell>& c : f->closure) value(c ? Value::object(c.get()) : Value::undef(), depth);
    text += ")";
    attrs(f->attrs, depth);
    // The globals the body may read (names the interpreter's builtins
    // answer are part of the executable).
    text += "globals(";
    if (f->module) {
      NamesRead read = names_in_function(code);
      for (const std::string& name : read.names) {
        GlobalSlot* slot = f->module->find(I.intern(name));
        if (!slot || slot->value.is_undef()) continue;
        str(name);
        value(slot->value, depth);
        // A module is walked by its file, not by what its globals hold now:
        // the attributes the body reads of it count by value (`sys.argv`
        // decides a branch of a compiled graph as much as a global does).
        if (!slot->value.is(Kind::Module)) continue;
        auto* m = static_cast<Module*>(slot->value.obj());
        for (auto it = read.dotted.lower_bound({name, std::string()}); it != read.dotted.end() && it->first == name;
             ++it) {
          GlobalSlot* attr = m->find(I.intern(it->second));
          if (!attr || attr->value.is_undef()) continue;
          str(name + "." + it->second);
          value(attr->value, depth);
        }
      }
    }
    text += ")";
  }

  void cls(Class* c, int depth) {
    text += "class ";
    str(c->module_name);
    str(c->name->s);
    if (c->is_builtin) return;  // defined by the executable
    if (c->base)
      value(Value::object(c->base.get()), depth);
    else
      text += "nobase;";
    attrs(c->dict, depth);
  }

  void native_data(const Value& v, int depth) {
    if (is_tensor(v)) {
      const TensorObj* t = tensor_obj(v);
      if (t->param) {
        text += fmt::format("param {};", params.size());
        params.push_back(v);
        str(t->param->name);
        text += t->param->requires_grad ? "rg;" : "nrg;";
        text += fmt::format("{}{}@{};", kernels::dtype_name(t->t.dtype()), t->t.shape().str(),
                            kernels::device_type_name(t->t.spec().device));
        return;
      }
      // By content, read on the host.
      kernels::Tensor c = t->t.to_host().contiguous();
      text += fmt::format("tensor {}{}@{};", kernels::dtype_name(c.dtype()), c.shape().str(),
                          kernels::device_type_name(t->t.spec().device));
      str(jit::codegen::ObjectCache::hash(std::string_view(static_cast<const char*>(c.raw()), c.nbytes())));
      return;
    }
    if (is_dtype_obj(v)) {
      text += fmt::format("dtype {};", kernels::dtype_name(static_cast<DTypeObj*>(v.obj())->dtype));
      return;
    }
    if (typeid(*v.obj()) == typeid(JitFunctionObj)) {
      text += "jit ";
      value(static_cast<JitFunctionObj*>(v.obj())->fn, depth);
      return;
    }
    if (GradFunctionObj* g = grad_function_of(v)) {
      const GradSpec& s = g->spec;
      text += fmt::format("grad {} {}{}{}{} (", static_cast<int>(s.inputs), s.has_weights, s.sens_param, s.has_aux,
                          s.return_value);
      for (int64_t p : s.positions) text += std::to_string(p) + ",";
      text += ")";
      items(s.weights, depth);
      value(g->fn, depth);
      return;
    }
    fail("a " + I.type_name(v) + " object");
  }

  void object(const Value& v, int depth) {
    Object* o = v.obj();
    switch (o->kind) {
      case Kind::Str: text += "s"; return str(static_cast<Str*>(o)->s);
      case Kind::Tuple: text += "tuple"; return items(static_cast<Tuple*>(o)->items, depth);
      case Kind::List: text += "list"; return items(static_cast<List*>(o)->items, depth);
      case Kind::Dict: {
        text += "dict(";
        for (const ValueMap::Entry& e : static_cast<Dict*>(o)->map.entries()) {
          if (e.value.is_undef()) continue;
          value(e.key, depth);
          value(e.value, depth);
        }
        text += ")";
        return;
      }
      case Kind::Range: {
        auto* r = static_cast<Range*>(o);
        text += fmt::format("range {} {} {};", r->start, r->stop, r->step);
        return;
      }
      case Kind::Slice: {
        auto* s = static_cast<Slice*>(o);
        text += "slice";
        return items({s->start, s->stop, s->step}, depth);
      }
      case Kind::Cell: text += "cell "; return value(static_cast<Cell*>(o)->value, depth);
      case Kind::Function: return function(static_cast<Function*>(o), depth);
      case Kind::Native: text += "native "; return str(static_cast<Native*>(o)->name);
      case Kind::BoundMethod: {
        auto* bm = static_cast<BoundMethod*>(o);
        text += "method ";
        value(bm->self, depth);
        return value(bm->func, depth);
      }
      case Kind::Property: {
        auto* p = static_cast<Property*>(o);
        text += "property";
        return items({p->fget, p->fset, p->fdel}, depth);
      }
      case Kind::StaticMethod: text += "staticmethod "; return value(static_cast<StaticMethod*>(o)->func, depth);
      case Kind::ClassMethod: text += "classmethod "; return value(static_cast<ClassMethod*>(o)->func, depth);
      case Kind::Class: return cls(static_cast<Class*>(o), depth);
      case Kind::Instance: {
        auto* inst = static_cast<Instance*>(o);
        text += "instance ";
        value(Value::object(inst->cls.get()), depth);
        return attrs(inst->attrs, depth);
      }
      case Kind::Module: {
        auto* m = static_cast<Module*>(o);
        text += "module ";
        str(m->name->s);
        if (!m->file.empty()) {
          std::string h = file_hash(m->file);
          if (h.empty()) return fail("module " + m->name->s + " whose file cannot be read");
          str(h);
        }
        return;
      }
      case Kind::NativeData: return native_data(v, depth);
      case Kind::Set:
      case Kind::Exception:
      case Kind::Iterator:
      case Kind::Super: break;
    }
    fail("a " + I.type_name(v) + " object");
  }
};

}  // namespace

std::string fingerprint_text(Interp& I, const Value& fn) {
  Walk w(I);
  w.value(fn);
  return w.ok ? w.text : "error: " + w.why;
}

Fingerprint fingerprint_of(Interp& I, const Value& fn) {
  Walk w(I);
  w.value(fn);
  Fingerprint fp;
  fp.ok = w.ok;
  fp.why = w.why;
  if (w.ok) {
    fp.digest = jit::codegen::ObjectCache::hash(w.text);
    fp.params = std::move(w.params);
  }
  return fp;
}

}  // namespace msl
