// The limits an embedding host puts on a VM (include/msl/msl.h, Config):
// memory, wall-clock time, an abort the script cannot catch, the sandbox and
// sequence sizes. Only the public header is used, as a host would.
#include <doctest/doctest.h>
#include <msl/msl.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

using msl::embed::Config;
using msl::embed::ErrorInfo;
using msl::embed::Result;
using msl::embed::Status;
using msl::embed::Value;
using msl::embed::VM;

namespace {

struct Limited {
  std::vector<ErrorInfo> errors;
  VM vm;
  explicit Limited(Config c) : vm(configure(std::move(c))) {}
  Config configure(Config c) {
    c.on_error = [this](const ErrorInfo& e) { errors.push_back(e); };
    return c;
  }
  // Runs `src`; "" when it succeeded, else the error's "Type: message".
  std::string run(std::string_view src) {
    errors.clear();
    Result r = vm.run(src, "<limits>");
    if (r.ok()) return "";
    if (r.status == Status::Exit) return "exit " + std::to_string(r.exit_code);
    REQUIRE_FALSE(errors.empty());
    return errors.back().type + ": " + errors.back().message;
  }
  bool flag(std::string_view name) {
    auto v = vm.get_global(name);
    REQUIRE(v.has_value());
    return v->as_bool();
  }
};

constexpr size_t kMiB = size_t{1} << 20;

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST_CASE("memory_limit: an allocation past it is a MemoryError the script can catch; the VM goes on") {
  Config c;
  c.memory_limit = 48 * kMiB;
  Limited L(c);
  // 20M list items are 160 MiB: refused before anything is allocated.
  CHECK(L.run("x = [0] * 20_000_000") == "MemoryError: out of memory");
  L.run("ok = False\ntry:\n    x = [0] * 20_000_000\nexcept MemoryError:\n    ok = True");
  CHECK(L.flag("ok"));
  // The same program without a limit succeeds: it is the limit that refused.
  Limited free_vm(Config{});
  CHECK(free_vm.run("x = [0] * 20_000_000\ndel x") == "");
  // What is freed is given back: 40 rounds of 24 MiB under a 48 MiB limit.
  for (int i = 0; i < 40; ++i) REQUIRE(L.run("y = [1] * 3_000_000\ny = None") == "");
  // Across evaluations too: a list kept in a global counts until it goes.
  CHECK(L.run("keep = [2] * 3_000_000") == "");
  CHECK(L.run("more = [3] * 3_000_000") == "MemoryError: out of memory");
  CHECK(L.run("del keep") == "");
  CHECK(L.run("more = [3] * 3_000_000\ndel more") == "");
}

TEST_CASE("memory_limit counts tensor storage") {
  Config c;
  c.memory_limit = 64 * kMiB;
  Limited L(c);
  REQUIRE(L.run("import msl\nfrom msl import ops") == "");
  // 128 MiB of float32.
  CHECK(L.run("t = ops.zeros((8192, 4096), msl.float32)") == "MemoryError: out of memory");
  CHECK(L.run("t = ops.zeros((1024, 1024), msl.float32)\ns = float(t.sum())") == "");
  for (int i = 0; i < 20; ++i) REQUIRE(L.run("u = ops.ones((4096, 1024), msl.float32) * 2.0\nu = None") == "");
  Limited free_vm(Config{});
  REQUIRE(free_vm.run("import msl\nfrom msl import ops") == "");
  CHECK(free_vm.run("t = ops.zeros((8192, 4096), msl.float32)\nt = None") == "");
}

TEST_CASE("time_limit: an evaluation that runs past it ends, whatever it catches; the next one runs") {
  Config c;
  c.time_limit = std::chrono::milliseconds(300);
  Limited L(c);
  auto t0 = std::chrono::steady_clock::now();
  CHECK(L.run("while True:\n    pass") == "RuntimeError: time limit exceeded");
  CHECK(seconds_since(t0) < 5.0);
  t0 = std::chrono::steady_clock::now();
  CHECK(L.run("while True:\n    try:\n        while True:\n            pass\n    except BaseException:\n        pass") ==
        "RuntimeError: time limit exceeded");
  CHECK(L.run("while True:\n    try:\n        pass\n    finally:\n        while True:\n            pass") ==
        "RuntimeError: time limit exceeded");
  CHECK(L.run("import time\ntime.sleep(30)") == "RuntimeError: time limit exceeded");
  CHECK(seconds_since(t0) < 10.0);
  // Per evaluation: many short ones add up past the limit and all run.
  for (int i = 0; i < 8; ++i) {
    REQUIRE(L.run("import time\ntime.sleep(0.06)\nn = 0\nfor i in range(1000):\n    n += i") == "");
  }
  CHECK(L.vm.get_global("n")->as_int() == 499500);
}

TEST_CASE("abort() ends the running evaluation even if it catches everything; interrupt() it may catch") {
  Limited L(Config{});
  std::thread host([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    L.vm.interrupt();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    L.vm.abort();
  });
  auto t0 = std::chrono::steady_clock::now();
  std::string r = L.run(
      "caught = 0\n"
      "while True:\n"
      "    try:\n"
      "        while True:\n"
      "            pass\n"
      "    except BaseException:\n"
      "        caught += 1\n");
  host.join();
  CHECK(r == "RuntimeError: evaluation aborted");
  CHECK(L.vm.get_global("caught")->as_int() == 1);  // the interrupt, not the abort
  CHECK(seconds_since(t0) < 5.0);
  CHECK(L.run("after = 1 + 1") == "");
  // Nothing running: abort() does nothing, the next evaluation is not hit.
  L.vm.abort();
  CHECK(L.run("after = 3") == "");
}

TEST_CASE("sandbox: no files, folders or environment; the language and msl still work") {
  Config c;
  c.sandbox = true;
  Limited L(c);
  CHECK(L.run("f = open('/etc/hostname')") == "PermissionError: open() is not available in a sandboxed interpreter");
  CHECK(L.run("s = input()") == "PermissionError: input() is not available in a sandboxed interpreter");
  CHECK(L.run("import os\nnames = os.listdir('.')") ==
        "PermissionError: os.listdir() is not available in a sandboxed interpreter");
  CHECK(L.run("import os\nos.remove('x')") == "PermissionError: os.remove() is not available in a sandboxed interpreter");
  CHECK(L.run("import os\nok = os.path.exists('/')") ==
        "PermissionError: os.path.exists() is not available in a sandboxed interpreter");
  CHECK(L.run("import os\nok = os.path.join('a', 'b') == 'a/b' and len(os.environ) == 0") == "");
  CHECK(L.flag("ok"));
  CHECK(L.run("import msl\nfrom msl import nn\nnet = nn.Dense(2, 1)\nok = net(msl.ops.ones((3, 2), msl.float32)).shape == (3, 1)") ==
        "");
  CHECK(L.flag("ok"));
  CHECK(L.run("import msl\nmsl.save_checkpoint(nn.Dense(2, 1), '/tmp/sandboxed.ckpt')") ==
        "PermissionError: msl._checkpoint.write() is not available in a sandboxed interpreter");
  CHECK(L.run("import sys\nsys.exit(3)") == "exit 3");  // the VM's evaluation ends, not the host
  // Unsandboxed, the same calls reach the machine.
  Limited open_vm(Config{});
  CHECK(open_vm.run("import os\nok = os.path.exists('/') and len(os.listdir('/')) > 0") == "");
  CHECK(open_vm.flag("ok"));
}

TEST_CASE("max_sequence bounds repetition and materialisation") {
  Config c;
  c.max_sequence = 1000;
  Limited L(c);
  CHECK(L.run("a = [0] * 1000\nb = 'x' * 1000") == "");
  CHECK(L.run("a = [0] * 1001") == "MemoryError: repeated sequence is too long");
  CHECK(L.run("a = list(range(2000))") == "MemoryError: iterable is too long");
}
