// libFuzzer target: parses and runs arbitrary bytes as an MSL program with a
// small step limit. Anything but a clean MSL error (a crash, an abort, an
// uncaught C++ exception, a sanitizer report, a hang) is a bug.
//
// The program runs sandboxed: no file writes, no `os`, no sleeping, so the
// fuzzer cannot damage the machine or stall on `time.sleep(1e9)`.
#include <cstddef>
#include <cstdint>
#include <string>

#include "interp/core/interp.h"

namespace {

msl::Value refuse_io(msl::Interp& I, msl::Args&, msl::Object*) {
  I.raise(I.exception_class("OSError").get(), "I/O is disabled while fuzzing");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  msl::Interp::Options opts;
  opts.step_limit = 20000;
  opts.recursion_limit = 200;
  opts.max_sequence = size_t{1} << 16;
  opts.argv = {"fuzz.msl"};
  msl::Interp I(opts);
  I.def_native(nullptr, "open", refuse_io);
  I.def_native(nullptr, "input", refuse_io);
  for (const char* m : {"os", "os.path", "time"}) I.register_native_module(m, [](msl::Interp&, msl::Module&) {});
  auto source = std::make_shared<msl::SourceFile>("fuzz.msl", std::string(reinterpret_cast<const char*>(data), size));
  try {
    I.run_source(source);
  } catch (msl::MslError& e) {
    (void)I.format_exception(e.exc);  // formatting the traceback must not crash either
  } catch (msl::MslExit&) {
  }
  return 0;
}
