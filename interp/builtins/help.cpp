// help(obj): the signature and docstring of a function, method, class or
// module, laid out as Python's pydoc prints them ("Help on function f in
// module __main__:", then `f(x, y=1)` and the docstring indented). A class
// lists its methods (its own, then its bases') with their signatures and
// first docstring line; a module its functions and classes. help() without
// an argument says how to use it (there is no interactive help browser).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "interp/builtins/builtins.h"
#include "interp/core/native_args.h"
#include "interp/core/nodes.h"
#include "interp/core/object.h"

namespace msl {

namespace {

std::string doc_of(Interp& I, const Value& v) {
  Value d;
  try {
    d = I.getattr(v, I.names().__doc__);
  } catch (MslError&) {
    return "";
  }
  return d.is(Kind::Str) ? d.as<Str>()->s : "";
}

// Every line of `text` after `indent`, trailing blank lines dropped and the
// common leading indentation of the lines after the first removed (as
// inspect.cleandoc).
std::string indented(const std::string& text, const std::string& indent) {
  std::vector<std::string> lines;
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  size_t common = std::string::npos;
  for (size_t i = 1; i < lines.size(); ++i) {
    size_t lead = lines[i].find_first_not_of(' ');
    if (lead != std::string::npos) common = std::min(common, lead);
  }
  while (!lines.empty() && lines.back().find_first_not_of(' ') == std::string::npos) lines.pop_back();
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = i == 0 ? lines[i].substr(std::min(lines[i].find_first_not_of(' '), lines[i].size()))
                              : (common == std::string::npos ? lines[i] : lines[i].substr(std::min(common, lines[i].size())));
    out += line.empty() ? "\n" : indent + line + "\n";
  }
  return out;
}

// "(x, y=1, *args, key=None, **kw)" of a function defined in MSL.
std::string signature(Interp& I, const Function* f, bool skip_self) {
  const FuncCode& c = *f->code;
  std::vector<std::string> parts;
  size_t first_default = c.nposargs - f->defaults.size();
  for (uint32_t i = 0; i < c.nposargs; ++i) {
    if (i == 0 && skip_self) continue;
    std::string p = c.param_names[i]->s;
    if (i >= first_default) p += "=" + I.repr(f->defaults[i - first_default]);
    parts.push_back(p);
  }
  size_t at = c.nposargs;
  size_t vararg = c.nposargs + c.nkwonly;
  if (c.has_vararg)
    parts.push_back("*" + c.param_names[vararg]->s);
  else if (c.nkwonly > 0)
    parts.push_back("*");
  for (uint32_t k = 0; k < c.nkwonly; ++k, ++at) {
    std::string p = c.param_names[at]->s;
    if (k < f->kwdefaults.size() && !f->kwdefaults[k].is_undef()) p += "=" + I.repr(f->kwdefaults[k]);
    parts.push_back(p);
  }
  if (c.has_kwarg) parts.push_back("**" + c.param_names[vararg + (c.has_vararg ? 1 : 0)]->s);
  std::string s = "(";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? ", " : "") + parts[i];
  return s + ")";
}

// "name(signature)" and the docstring under it, for a function or method.
std::string describe_callable(Interp& I, const Value& v, const std::string& name, const std::string& indent,
                              bool method) {
  std::string head;
  if (v.is(Kind::Function))
    head = name + signature(I, v.as<Function>(), method);
  else
    head = name + "(...)";
  std::string doc = doc_of(I, v);
  return indent + head + "\n" + (doc.empty() ? "" : indented(doc, indent + "    "));
}

std::string module_of(const Value& v) {
  if (v.is(Kind::Function) && v.as<Function>()->module) return v.as<Function>()->module->name->s;
  if (v.is(Kind::Class)) return v.as<Class>()->module_name.empty() ? "builtins" : v.as<Class>()->module_name;
  return "";
}

std::string describe_class(Interp& I, Class* cls) {
  std::string bases;
  if (Class* b = cls->base.get()) bases = "(" + b->name->s + ")";
  std::string out = "class " + cls->name->s + bases + "\n";
  std::string doc = doc_of(I, Value::object(cls));
  if (!doc.empty()) out += indented(doc, " |  ") + " |\n";
  std::vector<std::string> seen;
  // object's own methods are every class's: pydoc leaves them out too.
  for (Class* c = cls; c && c != I.cls_object.get(); c = c->base.get()) {
    std::string section;
    for (auto& [k, v] : c->dict.entries()) {
      const std::string& n = k->s;
      bool dunder = n.size() > 4 && n.compare(0, 2, "__") == 0 && n.compare(n.size() - 2, 2, "__") == 0;
      if ((dunder && n != "__init__" && n != "__call__") || !(v.is(Kind::Function) || v.is(Kind::Native))) continue;
      if (std::find(seen.begin(), seen.end(), n) != seen.end()) continue;
      seen.push_back(n);
      section += describe_callable(I, v, n, " |  ", false) + " |\n";
    }
    if (section.empty()) continue;
    out += c == cls ? " |  Methods defined here:\n |\n" : " |  Methods inherited from " + c->name->s + ":\n |\n";
    out += section;
  }
  return out;
}

std::string describe_module(Interp& I, Module* m) {
  std::string out = "NAME\n    " + m->name->s + "\n";
  std::string doc = doc_of(I, Value::object(m));
  if (!doc.empty()) out += "\nDESCRIPTION\n" + indented(doc, "    ");
  std::string classes, functions;
  for (GlobalSlot* s : m->order) {
    const Value& v = s->value;
    if (s->name->s.empty() || s->name->s[0] == '_') continue;
    if (v.is(Kind::Class) && v.as<Class>()->module_name == m->name->s)
      classes += "    " + s->name->s + "\n";
    else if (v.is(Kind::Function) && v.as<Function>()->module.get() == m)
      functions += describe_callable(I, v, s->name->s, "    ", false) + "\n";
  }
  if (!classes.empty()) out += "\nCLASSES\n" + classes;
  if (!functions.empty()) out += "\nFUNCTIONS\n" + functions;
  return out;
}

Value builtin_help(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "help", a, 0, 1, v);
  const Value& obj = v[0];
  std::string out;
  if (obj.is_undef()) {
    out = "Type help(object) for help about object.\n";
  } else if (obj.is(Kind::Function)) {
    out = fmt::format("Help on function {} in module {}:\n\n", obj.as<Function>()->name->s, module_of(obj)) +
          describe_callable(I, obj, obj.as<Function>()->name->s, "", false);
  } else if (obj.is(Kind::BoundMethod)) {
    const BoundMethod* b = obj.as<BoundMethod>();
    std::string name = b->func.is(Kind::Function) ? b->func.as<Function>()->name->s : "method";
    out = fmt::format("Help on method {} of {} object:\n\n", name, I.type_name(b->self)) +
          describe_callable(I, b->func, name, "", true);
  } else if (obj.is(Kind::Native)) {
    out = fmt::format("Help on built-in function {}:\n\n", obj.as<Native>()->name) +
          describe_callable(I, obj, obj.as<Native>()->name, "", false);
  } else if (obj.is(Kind::Class)) {
    out = fmt::format("Help on class {} in module {}:\n\n", obj.as<Class>()->name->s, module_of(obj)) +
          describe_class(I, obj.as<Class>());
  } else if (obj.is(Kind::Module)) {
    out = fmt::format("Help on module {}:\n\n", obj.as<Module>()->name->s) + describe_module(I, obj.as<Module>());
  } else {
    // An instance: its class's help, as pydoc gives.
    Class* cls = I.cls_of(obj);
    out = fmt::format("Help on {} object:\n\n", cls->name->s) + describe_class(I, cls);
  }
  I.write_out(out);
  return Value();
}

}  // namespace

void init_help(Interp& I) { I.def_native(nullptr, "help", builtin_help); }

}  // namespace msl
