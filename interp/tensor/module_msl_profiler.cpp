// The native module `msl._profiler`: what msl.Profiler and Model's step
// marks need from the profiler (kernels/trace.h, kernels/profile.h).
//
//   start()              starts a new timeline
//   stop(path)           stops it; writes it to `path` as Chrome Trace Event
//                        JSON (crash-safe: temporary file, fsync, rename);
//                        returns (the kernels' table, the Cells' table) (kernels/trace.h)
//   begin(name, category) / end()
//                        a span of the timeline on this thread (a training
//                        step, a user's region); spans nest
//   tracing()            whether a timeline is being recorded
//   enter_cell(scope) / exit_cell()
//                        the Cell whose construct runs (PyNative), for the
//                        kernels' scope (kernels/op_site.h)
#include <fmt/format.h>

#include <utility>
#include <vector>

#include "interp/builtins/builtins.h"
#include "interp/checkpoint/checkpoint.h"
#include "interp/core/native_args.h"
#include "kernels/op_site.h"
#include "kernels/trace.h"

namespace msl {

namespace {

struct OpenSpan {
  std::string name;
  std::string category;
  int64_t start;
};
thread_local std::vector<OpenSpan> tl_spans;

Value f_start(Interp& I, Args& a, Object*) {
  bind_positional(I, "start", a, 0, 0, nullptr);
  kernels::start_trace();
  return Value::none();
}

Value f_stop(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "stop", a, 1, 1, v);
  std::string path = arg_str(I, v[0], "stop() argument 'path'")->s;
  std::string table, cells;
  std::string json = kernels::stop_trace(&table, &cells);
  tl_spans.clear();
  try {
    checkpoint::write_file_atomically(path, json);
  } catch (const checkpoint::SystemError& e) {
    raise_os_error(I, e.err, e.path);
  } catch (const std::exception& e) {
    raise_exc(I, "OSError", fmt::format("cannot write the profiler timeline '{}': {}", path, e.what()));
  }
  return new_tuple({str_value(table), str_value(cells)});
}

Value f_begin(Interp& I, Args& a, Object*) {
  Value v[2];
  bind_positional(I, "begin", a, 2, 2, v);
  if (kernels::tracing())
    tl_spans.push_back({arg_str(I, v[0], "begin() argument 'name'")->s, arg_str(I, v[1], "begin() argument 'category'")->s,
                        kernels::trace_clock_ns()});
  return Value::none();
}

Value f_end(Interp& I, Args& a, Object*) {
  bind_positional(I, "end", a, 0, 0, nullptr);
  if (tl_spans.empty()) return Value::none();  // begun before the timeline started
  OpenSpan s = std::move(tl_spans.back());
  tl_spans.pop_back();
  // The category string must outlive the event: categories are a few fixed words.
  static const char* const kKnown[] = {"step", "user", "epoch"};
  const char* cat = "user";
  for (const char* k : kKnown)
    if (s.category == k) cat = k;
  if (kernels::tracing()) kernels::trace_event(std::move(s.name), cat, s.start, kernels::trace_clock_ns());
  return Value::none();
}

Value f_tracing(Interp& I, Args& a, Object*) {
  bind_positional(I, "tracing", a, 0, 0, nullptr);
  return Value::boolean(kernels::tracing());
}

}  // namespace

namespace {

thread_local std::vector<const std::string*> tl_outer_cells;

Value f_enter_cell(Interp& I, Args& a, Object*) {
  Value v[1];
  bind_positional(I, "enter_cell", a, 1, 1, v);
  const std::string* scope = kernels::intern_scope(arg_str(I, v[0], "enter_cell() argument 'scope'")->s);
  tl_outer_cells.push_back(kernels::exchange_cell_scope(scope));
  return Value::none();
}

Value f_exit_cell(Interp& I, Args& a, Object*) {
  bind_positional(I, "exit_cell", a, 0, 0, nullptr);
  if (!tl_outer_cells.empty()) {
    kernels::exchange_cell_scope(tl_outer_cells.back());
    tl_outer_cells.pop_back();
  }
  return Value::none();
}

}  // namespace

void init_module_msl_profiler(Interp& I, Module& m) {
  I.def_native(&m, "enter_cell", f_enter_cell);
  I.def_native(&m, "exit_cell", f_exit_cell);
  I.def_native(&m, "start", f_start);
  I.def_native(&m, "stop", f_stop);
  I.def_native(&m, "begin", f_begin);
  I.def_native(&m, "end", f_end);
  I.def_native(&m, "tracing", f_tracing);
}

}  // namespace msl
