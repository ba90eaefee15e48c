// Registers the native standard modules with the import system. Each is
// initialized on first import, so a script pays only for what it imports.
#include "interp/builtins/builtins.h"

namespace msl {

void init_module_math(Interp& I, Module& m);
void init_module_time(Interp& I, Module& m);
void init_module_os(Interp& I, Module& m);
void init_module_os_path(Interp& I, Module& m);
void init_module_sys(Interp& I, Module& m);
void init_module_random(Interp& I, Module& m);
void init_module_msl_core(Interp& I, Module& m);
void init_module_msl_graph(Interp& I, Module& m);
void init_module_msl_checkpoint(Interp& I, Module& m);
void init_module_msl_dataset(Interp& I, Module& m);
void init_module_msl_summary(Interp& I, Module& m);
void init_module_numpy_native(Interp& I, Module& m);
void init_module_msl_profiler(Interp& I, Module& m);
void init_module_msl_comm(Interp& I, Module& m);
void init_module_msl_export(Interp& I, Module& m);

void register_std_modules(Interp& I) {
  I.register_native_module("math", init_module_math);
  I.register_native_module("time", init_module_time);
  I.register_native_module("os", init_module_os);
  I.register_native_module("os.path", init_module_os_path);
  I.register_native_module("sys", init_module_sys);
  I.register_native_module("random", init_module_random);
  I.register_native_module("msl._core", init_module_msl_core);
  I.register_native_module("msl._graph", init_module_msl_graph);
  I.register_native_module("msl._checkpoint", init_module_msl_checkpoint);
  I.register_native_module("msl._dataset", init_module_msl_dataset);
  I.register_native_module("msl._summary", init_module_msl_summary);
  I.register_native_module("numpy._native", init_module_numpy_native);
  I.register_native_module("msl._profiler", init_module_msl_profiler);
  I.register_native_module("msl._comm", init_module_msl_comm);
  I.register_native_module("msl._export", init_module_msl_export);
}

}  // namespace msl
