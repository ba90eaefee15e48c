// The Debug device: its memory is readable only inside its kernels (and
// through to_host), a host read elsewhere kills the process with a clear
// message, and a primitive refuses inputs on two devices.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include "kernels/device_debug.h"
#include "kernels/errors.h"
#include "kernels/primitives.h"

using namespace msl::kernels;

namespace {

Tensor debug_tensor(std::initializer_list<float> v) {
  Tensor host(DType::Float32, Dims{static_cast<int64_t>(v.size())});
  float* p = host.data<float>();
  for (float x : v) *p++ = x;
  return host.to_device(debug_device());
}

// Runs `f` in a child process; returns its stderr and how it ended.
struct ChildEnd {
  bool signaled = false;
  int signal = 0;
  int exit_code = -1;
  std::string err;
};

template <class F>
ChildEnd run_in_child(F f) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 2);
    debug_device_install_fault_handler();  // doctest installs its own crash handler per test case
    f();
    _exit(0);
  }
  close(fds[1]);
  ChildEnd end;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) end.err.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  end.signaled = WIFSIGNALED(status);
  if (end.signaled) end.signal = WTERMSIG(status);
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  return end;
}

}  // namespace

TEST_CASE("primitives on the debug device compute what the CPU computes, on the debug device") {
  Tensor a = debug_tensor({1, 2, 3}), b = debug_tensor({10, 20, 30});
  Tensor in[2] = {a, b};
  Tensor c = execute1(Prim::add, in);
  CHECK(c.device() == debug_device());
  CHECK(c.spec().device == DeviceType::Debug);
  Tensor h = c.to_host();
  CHECK(h.device() == cpu_device());
  CHECK(h.data<float>()[0] == 11);
  CHECK(h.data<float>()[2] == 33);
  CHECK(c.item_at(1) == 22);  // through copy_to_host
  // A strided view comes back with its own geometry.
  Tensor t = Tensor::view(c, Dims{2}, Dims{2}, 0).to_host();
  CHECK(t.item_at(0) == 11);
  CHECK(t.item_at(1) == 33);
  // clone and views stay on the device.
  CHECK(c.clone().device() == debug_device());
  CHECK(c.clone().item_at(2) == 33);
}

TEST_CASE("a 0-d CPU tensor goes with debug-device tensors; other mixes name both devices") {
  Tensor a = debug_tensor({1, 2});
  Tensor s = Tensor::scalar(DType::Float32, 5);
  Tensor in[2] = {s, a};  // the scalar first: the debug tensor still decides
  Tensor c = execute1(Prim::mul, in);
  CHECK(c.device() == debug_device());
  CHECK(c.item_at(1) == 10);

  Tensor cpu(DType::Float32, Dims{2});
  cpu.data<float>()[0] = cpu.data<float>()[1] = 1;
  Tensor mixed[2] = {cpu, a};
  CHECK_THROWS_WITH_AS(execute1(Prim::add, mixed), "add: input tensors are on different devices, CPU and Debug (move one with to_device)",
                       ValueError);
  std::vector<TensorSpec> out;
  TensorSpec specs[2] = {a.spec(), cpu.spec()};
  CHECK_THROWS_WITH_AS(infer(Prim::add, specs, {}, out),
                       "add: input tensors are on different devices, Debug and CPU (move one with to_device)",
                       ValueError);
}

TEST_CASE("a host read of debug-device memory outside a kernel kills the process with the address") {
  Tensor a = debug_tensor({1, 2, 3, 4});
  // Inside an access scope (as a kernel runs) the memory is readable.
  {
    DebugAccess scope(std::span<const Tensor>(&a, 1));
    CHECK(a.data<float>()[3] == 4);
  }
  ChildEnd end = run_in_child([&] {
    volatile float x = a.data<float>()[0];  // the planted host read
    (void)x;
  });
  CHECK(end.signaled);
  CHECK(end.signal == SIGABRT);
  CHECK(end.err.find("debug device: host access to device memory at 0x") != std::string::npos);
  CHECK(end.err.find("storage of 16 bytes") != std::string::npos);

  // A write is caught too, and so is a read after the scope closed.
  end = run_in_child([&] {
    { DebugAccess scope(std::span<const Tensor>(&a, 1)); }
    a.data<float>()[1] = 7;
  });
  CHECK(end.signal == SIGABRT);
  CHECK(end.err.find("debug device: host access") != std::string::npos);

  // The same code on the CPU device runs.
  Tensor h = a.to_host();
  end = run_in_child([&] {
    volatile float x = h.data<float>()[0];
    _exit(x == 1 ? 3 : 4);
  });
  CHECK_FALSE(end.signaled);
  CHECK(end.exit_code == 3);
}

TEST_CASE("a kernel's temporaries on the debug device are usable inside it and freed blocks are unmapped") {
  size_t live = debug_device_live_blocks();
  {
    Tensor a = debug_tensor({3, 1, 2});
    Tensor t = Tensor::view(a, Dims{3}, Dims{-1}, 2);  // reversed: assign copies through a temporary
    Tensor in[2] = {a, t};
    execute1(Prim::assign, in);
    Tensor h = a.to_host();
    CHECK(h.data<float>()[0] == 2);
    CHECK(h.data<float>()[2] == 3);
  }
  CHECK(debug_device_live_blocks() == live);
}

TEST_CASE("host scalars alone compute on the default device, views of them included") {
  Device* before = default_device();
  set_default_device(debug_device());
  Tensor s = Tensor::scalar(DType::Float32, 2);
  Tensor b = execute1(Prim::broadcast_to, std::span<const Tensor>(&s, 1), Attrs{{"shape", std::vector<int64_t>{3}}});
  Tensor sq[2] = {s, s};
  Tensor m = execute1(Prim::mul, sq);
  std::vector<TensorSpec> out;
  TensorSpec specs[1] = {s.spec()};
  infer(Prim::neg, specs, {}, out);
  set_default_device(before);
  CHECK(b.device() == debug_device());
  CHECK(b.item_at(2) == 2);
  CHECK(m.device() == debug_device());
  CHECK(m.item() == 4);
  CHECK(out[0].device == DeviceType::Debug);
}
