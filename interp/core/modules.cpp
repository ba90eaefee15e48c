// The import system. `import a.b.c` imports `a`, then `a.b`, then `a.b.c`,
// each found as a native module (math, os, ...) or as a file: `a/b/c.msl`
// (or the package `a/b/c/__init__.msl`, or a bare folder) searched next to the
// importing file, then in each MSL_PATH folder, then in the standard library.
// A module is registered before its body runs, so it runs once even when
// imports are circular; a module whose body fails is forgotten again.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "interp/core/nodes.h"
#include "interp/core/sandbox.h"

namespace fs = std::filesystem;

namespace msl {

void Interp::register_native_module(std::string name, std::function<void(Interp&, Module&)> init) {
  native_modules_[std::move(name)] = std::move(init);
}

namespace {

struct Found {
  std::string file;  // the .msl file to run; empty for a bare package folder
  std::string dir;   // the package folder, for packages
};

bool find_in(const fs::path& root, const std::string& rel, Found& out) {
  std::error_code ec;
  fs::path file = root / (rel + ".msl");
  if (fs::is_regular_file(file, ec)) {
    out.file = file.lexically_normal().string();
    return true;
  }
  fs::path dir = root / rel;
  if (fs::is_directory(dir, ec)) {
    out.dir = dir.lexically_normal().string();
    fs::path init = dir / "__init__.msl";
    if (fs::is_regular_file(init, ec)) out.file = init.lexically_normal().string();
    return true;
  }
  return false;
}

// Modules known by a second name: MindSpore's `mindspore.numpy` is NumPy's
// API, so `msl.numpy` is the standard library's `numpy` itself (one module
// object, one set of classes), not a copy.
const char* alias_of(const std::string& name) {
  if (name == "msl.numpy") return "numpy";
  return nullptr;
}

}  // namespace

struct ModuleLoader {
  static Ref<Module> load(Interp& I, const std::string& name, const SourceFile* importer) {
    auto it = I.modules_.find(name);
    if (it != I.modules_.end()) return it->second;
    if (const char* target = alias_of(name)) {
      Ref<Module> m = load(I, target, importer);
      I.modules_[name] = m;
      size_t dot = name.rfind('.');
      load(I, name.substr(0, dot), importer)->set(I.intern(name.substr(dot + 1)), m.value());
      return m;
    }

    size_t dot = name.rfind('.');
    Ref<Module> parent;
    if (dot != std::string::npos) {
      parent = load(I, name.substr(0, dot), importer);
      it = I.modules_.find(name);  // the parent's body may have imported it
      if (it != I.modules_.end()) return it->second;
    }
    Ref<Module> m;
    auto native = I.native_modules_.find(name);
    if (native != I.native_modules_.end()) {
      m = I.new_module(name, "");
      I.modules_[name] = m;
      native->second(I, *m);
      sandbox_module(I, name, *m);
    } else {
      std::string rel = name;
      for (char& c : rel)
        if (c == '.') c = '/';
      std::vector<fs::path> roots;
      if (importer && !importer->name().empty() && importer->name()[0] != '<')
        roots.push_back(fs::path(importer->name()).parent_path());
      else
        roots.push_back(fs::current_path());
      // sys.path as the program left it (it starts as MSL_PATH and the
      // standard library, and scripts may insert folders, as in Python).
      auto sys = I.modules_.find("sys");
      Value path = sys == I.modules_.end() ? Value::undef() : sys->second->get(I.intern("path"));
      if (path.is(Kind::List)) {
        for (const Value& p : path.as<List>()->items)
          if (p.is(Kind::Str)) roots.emplace_back(p.as<Str>()->s);
      } else {
        for (auto& p : I.opts_.module_path) roots.emplace_back(p);
        if (!I.opts_.stdlib_dir.empty()) roots.emplace_back(I.opts_.stdlib_dir);
      }
      Found found;
      bool ok = false;
      for (auto& r : roots)
        if ((ok = find_in(r.empty() ? fs::path(".") : r, rel, found))) break;
      if (!ok) {
        auto e = I.new_exception(I.exception_class("ModuleNotFoundError").get(), "No module named '" + name + "'");
        throw MslError{e};
      }
      m = I.new_module(name, found.file.empty() ? found.dir : found.file);
      I.modules_[name] = m;
      if (!found.file.empty()) {
        std::ifstream in(found.file, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        if (!in && !in.eof()) {
          I.modules_.erase(name);
          I.raise(I.exception_class("ImportError").get(), "cannot read module file '" + found.file + "'");
        }
        try {
          I.run_imported(std::make_shared<SourceFile>(found.file, ss.str()), m);
        } catch (...) {
          I.modules_.erase(name);
          throw;
        }
      }
    }
    if (parent) parent->set(I.intern(name.substr(dot + 1)), m.value());
    return m;
  }
};

Ref<Module> Interp::import_module(const std::string& dotted, const SourceFile* importer) {
  return ModuleLoader::load(*this, dotted, importer);
}

}  // namespace msl
