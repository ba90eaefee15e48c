// The Debug device (device_debug.h): guarded pages, the access scopes its
// kernels run in, and the fault handler.
#include "kernels/device_debug.h"

#include <fmt/format.h>

#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "kernels/errors.h"

namespace msl::kernels {

namespace {

struct Block {
  size_t mapped;  // whole pages
  size_t bytes;   // what was asked for
  int open = 0;   // scopes (or a copy) holding it readable
  uint64_t generation;
};

// A block a scope opened: its address and generation (a block freed and
// another mapped at the same address inside the scope is not closed twice).
using OpenRef = std::pair<uintptr_t, uint64_t>;

std::mutex g_mu;
std::map<uintptr_t, Block>* g_blocks = new std::map<uintptr_t, Block>();  // never destroyed: freed at exit
uint64_t g_generation = 0;
thread_local std::vector<std::vector<OpenRef>> t_scopes;
struct sigaction g_previous;

size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

// The block containing address a, or null (g_mu held, or in the fault handler).
Block* find_block(uintptr_t a, uintptr_t* base) {
  auto it = g_blocks->upper_bound(a);
  if (it == g_blocks->begin()) return nullptr;
  --it;
  if (a >= it->first + it->second.mapped) return nullptr;
  *base = it->first;
  return &it->second;
}

void protect(uintptr_t base, const Block& b, int prot) {
  if (mprotect(reinterpret_cast<void*>(base), b.mapped, prot) != 0) {
    std::perror("debug device: mprotect");
    std::abort();
  }
}

void open_locked(uintptr_t base, Block& b) {
  if (b.open++ == 0) protect(base, b, PROT_READ | PROT_WRITE);
}

void close_locked(uintptr_t base, Block& b) {
  if (--b.open == 0) protect(base, b, PROT_NONE);
}

void on_fault(int sig, siginfo_t* info, void* context) {
  uintptr_t base = 0;
  Block* b = find_block(reinterpret_cast<uintptr_t>(info->si_addr), &base);
  if (!b) {
    // Not ours: hand the fault to whoever handled it before.
    if ((g_previous.sa_flags & SA_SIGINFO) && g_previous.sa_sigaction) {
      g_previous.sa_sigaction(sig, info, context);
      return;
    }
    sigaction(SIGSEGV, &g_previous, nullptr);
    return;  // the instruction faults again, now under the previous handler
  }
  char msg[200];
  int n = std::snprintf(msg, sizeof msg, "debug device: host access to device memory at %p, storage of %zu bytes\n",
                        info->si_addr, b->bytes);
  if (n > 0) (void)!write(2, msg, static_cast<size_t>(n));
  // Where the read came from (addr2line -e msl -f -C +OFFSET names the line).
  void* frames[32];
  backtrace_symbols_fd(frames, backtrace(frames, 32), 2);
  signal(SIGABRT, SIG_DFL);
  std::abort();
}

void install_fault_handler() {
  static std::once_flag once;
  std::call_once(once, debug_device_install_fault_handler);
}

class DebugDevice final : public Device {
 public:
  DebugDevice() : Device(DeviceType::Debug) {}
  std::string name() const override { return "Debug"; }

  void* allocate(size_t bytes, Stream) override {
    install_fault_handler();
    size_t mapped = (std::max<size_t>(bytes, 1) + page_size() - 1) / page_size() * page_size();
    void* p = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    uintptr_t base = reinterpret_cast<uintptr_t>(p);
    std::lock_guard<std::mutex> lock(g_mu);
    Block& b = (*g_blocks)[base] = Block{mapped, bytes, 0, ++g_generation};
    if (!t_scopes.empty()) {
      // Allocated by a running kernel: usable until its scope closes.
      open_locked(base, b);
      t_scopes.back().push_back({base, b.generation});
    }
    return p;
  }

  void deallocate(void* p, size_t, Stream) override {
    if (!p) return;
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_blocks->find(reinterpret_cast<uintptr_t>(p));
    if (it == g_blocks->end()) return;
    size_t mapped = it->second.mapped;
    g_blocks->erase(it);
    munmap(p, mapped);
  }

  void copy_to_host(void* dst, const void* src, size_t bytes) override { copy(dst, src, bytes); }
  void copy_from_host(void* dst, const void* src, size_t bytes) override { copy(dst, src, bytes); }
  void copy_within(void* dst, const void* src, size_t bytes) override { copy(dst, src, bytes); }
  void synchronize() override {}

 private:
  // Opens whichever of dst and src are Debug blocks for the copy.
  static void copy(void* dst, const void* src, size_t bytes) {
    if (bytes == 0) return;
    std::lock_guard<std::mutex> lock(g_mu);
    uintptr_t bases[2] = {0, 0};
    Block* blocks[2] = {find_block(reinterpret_cast<uintptr_t>(dst), &bases[0]),
                        find_block(reinterpret_cast<uintptr_t>(src), &bases[1])};
    if (blocks[0] == blocks[1]) blocks[1] = nullptr;
    for (int i = 0; i < 2; ++i)
      if (blocks[i]) open_locked(bases[i], *blocks[i]);
    std::memmove(dst, src, bytes);
    for (int i = 0; i < 2; ++i)
      if (blocks[i]) close_locked(bases[i], *blocks[i]);
  }
};

}  // namespace

void debug_device_install_fault_handler() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &g_previous);
}

Device* debug_device() {
  static DebugDevice* d = new DebugDevice();  // never destroyed, as the CPU device
  return d;
}

DebugAccess::DebugAccess(std::span<const Tensor> a, std::span<const Tensor> b) {
  std::lock_guard<std::mutex> lock(g_mu);
  t_scopes.emplace_back();
  std::vector<OpenRef>& opened = t_scopes.back();
  for (std::span<const Tensor> list : {a, b})
    for (const Tensor& t : list) {
      if (!t.defined() || t.device()->type() != DeviceType::Debug) continue;
      uintptr_t base = reinterpret_cast<uintptr_t>(t.storage()->data);
      auto it = g_blocks->find(base);
      if (it == g_blocks->end()) continue;
      open_locked(base, it->second);
      opened.push_back({base, it->second.generation});
    }
}

DebugAccess::~DebugAccess() {
  std::lock_guard<std::mutex> lock(g_mu);
  for (const OpenRef& r : t_scopes.back()) {
    auto it = g_blocks->find(r.first);
    if (it != g_blocks->end() && it->second.generation == r.second) close_locked(r.first, it->second);
  }
  t_scopes.pop_back();
}

void throw_no_host_kernel(const char* what, Device* dev) {
  throw ValueError(fmt::format("{}: no kernel for device {}", what, dev->name()));
}

size_t debug_device_live_blocks() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_blocks->size();
}

}  // namespace msl::kernels
