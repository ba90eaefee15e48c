// The sandbox's one list: which natives reach the host (sandbox.h).
#include "interp/core/sandbox.h"

#include <fmt/format.h>

#include <cstring>

#include "interp/core/interp.h"

namespace msl {

namespace {

// Per module, the natives that touch the host machine; "*" means every
// native function of the module.
struct HostAccess {
  const char* module;
  std::initializer_list<const char*> natives;
};

// clang-format off
const HostAccess kHostAccess[] = {
    {"builtins",        {"open", "input"}},
    {"os",              {"*"}},
    {"os.path",         {"exists", "isdir", "isfile", "islink", "getsize", "getmtime", "abspath", "expanduser",
                         "realpath", "relpath"}},
    {"msl._checkpoint", {"read", "read_with_crc", "write", "read_bytes", "write_bytes", "remove_stale_temp"}},
    {"msl._dataset",    {"read_idx", "read_cifar10", "read_file", "list_image_folder", "_write_png", "_write_jpeg",
                         "_write_bytes"}},
    {"msl._graph",      {"set_save_graphs"}},
};
// clang-format on

Value refused(Interp& I, Args&, Object* data) {
  I.raise(I.exception_class("PermissionError").get(),
          fmt::format("{}() is not available in a sandboxed interpreter", static_cast<Str*>(data)->s));
}

}  // namespace

void sandbox_module(Interp& I, std::string_view name, Module& m) {
  if (!I.options().sandbox) return;
  for (const HostAccess& h : kHostAccess) {
    if (name != h.module) continue;
    bool all = h.natives.size() == 1 && std::strcmp(*h.natives.begin(), "*") == 0;
    for (GlobalSlot* s : m.order) {
      if (!s->value.is(Kind::Native)) continue;
      const std::string fn = s->name->s;
      bool listed = all;
      for (const char* n : h.natives) listed |= fn == n;
      if (!listed) continue;
      std::string qualified = name == "builtins" ? fn : std::string(name) + "." + fn;
      I.def_native(&m, fn, refused, Ref<Object>(make<Str>(std::move(qualified))));
    }
    // The environment is the host's too.
    if (name == "os") m.set(I.intern("environ"), make<Dict>().value());
  }
}

}  // namespace msl
