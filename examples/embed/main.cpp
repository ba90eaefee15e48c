// A small C++ host embedding MSL through the one public header <msl/msl.h>.
//
// It registers native functions, runs an MSL snippet that defines a function
// and calls the natives, calls the MSL function from C++, reads and sets
// globals, receives an error through the callback, and stops a runaway
// `while True: pass` from a watchdog thread with VM::interrupt().
//
// The program checks its own results: every step prints what it did, and the
// exit status is 0 only when every check held (the test `examples.embed`
// runs it).
#include <msl/msl.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace {

int g_failed = 0;

void check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "  ok  " : "  FAIL", what.c_str());
  if (!ok) ++g_failed;
}

const char* kScript = R"msl(
# Defined in MSL, called from C++ below.
def weighted_total(prices, weights):
    # host_sum is implemented in C++
    return host_sum([p * w for p, w in zip(prices, weights)])

def describe(label):
    return greet(label) + " (" + str(len(label)) + " characters)"

threshold = 10
print("script loaded; threshold =", threshold)
)msl";

}  // namespace

int main() {
  using msl::embed::Value;

  // 1. A VM whose output and errors come back to us.
  std::string output;
  msl::embed::ErrorInfo last_error;
  int error_count = 0;
  msl::embed::Config config;
  config.output = [&](std::string_view text) {
    output += text;
    std::fwrite(text.data(), 1, text.size(), stdout);
  };
  config.on_error = [&](const msl::embed::ErrorInfo& e) {
    last_error = e;
    ++error_count;
  };
  config.argv = {"embed-example"};
  msl::embed::VM vm(config);
  std::printf("MSL %s embedded\n", msl::embed::VM::version());

  // 2. Native functions: host_sum(list) and greet(name).
  vm.define_function("host_sum", [](std::span<const Value> args) -> Value {
    if (args.size() != 1 || !args[0].is_list()) throw msl::embed::Error("TypeError", "host_sum() takes one list");
    double total = 0;
    for (const Value& v : args[0].items()) {
      if (!v.is_number()) throw msl::embed::Error("ValueError", "host_sum() got a " + v.type_name());
      total += v.as_float();
    }
    return total;
  });
  vm.define_function("greet", [](std::span<const Value> args) -> Value {
    return "hello, " + (args.empty() ? std::string("world") : args[0].as_str());
  });

  // 3. Run a snippet that defines MSL functions using the natives.
  msl::embed::Result r = vm.run(kScript, "example.msl");
  check(r.ok(), "the script runs");
  check(output == "script loaded; threshold = 10\n", "print() output reaches the output callback");

  // 4. Call the MSL function from C++ with values.
  r = vm.call("weighted_total", {Value::list({1.5, 2.0, 4.0}), Value::list({2, 3, 1})});
  std::printf("weighted_total(...) = %s\n", r.value.to_string().c_str());
  check(r.ok() && r.value.as_float() == 13.0, "weighted_total returns 1.5*2 + 2*3 + 4*1 = 13.0");
  r = vm.call("describe", {"模型"});
  std::printf("describe('模型') = %s\n", r.value.as_str().c_str());
  check(r.value.as_str() == "hello, 模型 (2 characters)", "strings cross in UTF-8; len() counts characters");

  // 5. Read and set globals.
  std::optional<Value> threshold = vm.get_global("threshold");
  check(threshold && threshold->as_int() == 10, "read the global threshold = 10");
  vm.set_global("threshold", 25);
  r = vm.eval("threshold * 2");
  check(r.ok() && r.value.as_int() == 50, "set threshold = 25 from C++; MSL sees it (threshold * 2 = 50)");

  // 6. Errors come through the callback, with type, message and location.
  r = vm.run("values = [1, 2, 'three']\ntotal = host_sum(values)\n", "broken.msl");
  check(r.status == msl::embed::Status::RuntimeError, "a failing run returns RuntimeError");
  std::printf("error callback got %s: %s at %s:%d:%d\n", last_error.type.c_str(), last_error.message.c_str(),
              last_error.file.c_str(), last_error.line, last_error.col);
  check(last_error.type == "ValueError" && last_error.line == 2 && last_error.file == "broken.msl",
        "the native's ValueError is reported at broken.msl line 2");
  r = vm.run("try:\n    host_sum('nope')\nexcept TypeError as e:\n    caught = str(e)\n");
  check(r.ok() && vm.get_global("caught")->as_str() == "host_sum() takes one list",
        "MSL code catches the native's TypeError with try/except");
  r = vm.run("def f(:\n", "syntax.msl");
  check(r.status == msl::embed::Status::CompileError && last_error.kind == msl::embed::ErrorKind::Compile,
        "a syntax error is a CompileError");

  // 7. Interrupt a runaway loop from another thread.
  auto start = std::chrono::steady_clock::now();
  std::thread watchdog([&vm] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    vm.interrupt();
  });
  r = vm.run("while True:\n    pass\n", "spin.msl");
  watchdog.join();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("the loop stopped after %.2f s with %s\n", seconds, last_error.type.c_str());
  check(r.status == msl::embed::Status::RuntimeError && last_error.type == "KeyboardInterrupt" && seconds < 10,
        "interrupt() stops `while True: pass` with KeyboardInterrupt");
  r = vm.eval("threshold + 1");
  check(r.ok() && r.value.as_int() == 26, "the VM is usable after the interrupt");

  // 8. sys.exit() does not exit the host.
  r = vm.run("import sys\nsys.exit(4)\n");
  check(r.status == msl::embed::Status::Exit && r.exit_code == 4, "sys.exit(4) returns Status::Exit with code 4");

  std::printf("%s (%d error reports received)\n", g_failed ? "SOME CHECKS FAILED" : "all checks passed", error_count);
  return g_failed ? 1 : 0;
}
