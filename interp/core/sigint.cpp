// SIGINT → KeyboardInterrupt for the `msl` command; the design is in sigint.h.
#include "interp/core/sigint.h"

#include <atomic>
#include <cerrno>

#include "interp/core/interp.h"

namespace msl {

namespace {

// Read by the handler: only lock-free atomics.
std::atomic<Interp*> g_interp{nullptr};
std::atomic<pthread_t> g_thread{};
static_assert(std::atomic<Interp*>::is_always_lock_free && std::atomic<pthread_t>::is_always_lock_free);

extern "C" void on_sigint(int) {
  int saved_errno = errno;
  if (Interp* I = g_interp.load()) {
    pthread_t target = g_thread.load();
    if (pthread_equal(pthread_self(), target))
      I->request_interrupt();
    else
      pthread_kill(target, SIGINT);  // its handler requests the interrupt and ends its system call
  }
  errno = saved_errno;
}

}  // namespace

SigintScope::SigintScope(Interp& I) {
  old_interp_ = g_interp.load();
  old_thread_ = g_thread.load();
  g_thread.store(pthread_self());
  g_interp.store(&I);
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking call fails with EINTR
  sigaction(SIGINT, &sa, &old_action_);
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  pthread_sigmask(SIG_UNBLOCK, &s, &old_mask_);
}

SigintScope::~SigintScope() {
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  sigaction(SIGINT, &old_action_, nullptr);
  g_interp.store(old_interp_);
  g_thread.store(old_thread_);
}

}  // namespace msl
